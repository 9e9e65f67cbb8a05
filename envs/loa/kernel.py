"""Lines of Action rules compiled with numba: :mod:`.rules` written for speed.

The same bitboards as the reference engine (``black``, ``white``: bit ``8 * rank + file``,
here ``numpy.uint64``), the same move numbers (``8 * origin + direction``, :data:`PASS` =
512) and the same tables, as numpy arrays. :mod:`.rules` stays the readable reference;
tests/test_loa_kernel.py checks that this module agrees with it move for move, result for
result and evaluation for evaluation (bit for bit). Every function is ``@njit(cache=True)``:
the public ones carry their signature, so importing this module compiles them once in a fresh
environment (a few seconds, docs/compiled.md) and later imports load the machine code from
numba's cache. Bitboards may be passed as Python ints or ``numpy.uint64`` (a signature
converts either; numba would otherwise type a Python int below 2**63 as int64); move buffers
are C-contiguous int64 arrays of :data:`MAX_MOVES`.

Repetition (spec 6.3) needs the earlier positions: :func:`repetitions` counts them in a
``(n, 3)`` uint64 array of (black, white, side) rows (the reference keeps them as
``State.history``, which a capture clears); :func:`judge` takes the answer as ``repeated``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from . import evaluation as _evaluation
from . import rules as _rules

BLACK, WHITE = _rules.BLACK, _rules.WHITE
PASS = _rules.PASS
MOVE_CAP = _rules.MOVE_CAP  # plies; spec 6.2
#: Room for every move of one position: at most 8 per piece (one per direction) or the pass.
MAX_MOVES = 8 * 64

#: Results of :func:`judge`: the game goes on, a side has won (spec 6.1), or a draw by the
#: move cap (6.2) or by threefold repetition (6.3).
ONGOING, BLACK_WINS, WHITE_WINS, DRAW_MOVE_CAP, DRAW_REPETITION = 0, 1, 2, 3, 4

# Why typed constants: numba types a bare int literal as int64, and uint64 (op) int64 is
# float64, which would silently round a bitboard.
ONE = np.uint64(1)
ZERO = np.uint64(0)
EIGHT = np.uint64(8)

# LINE[sq, d % 4]: every square of the whole line through sq in direction d, sq included.
LINE = np.array(_rules.LINE, dtype=np.uint64)
# TARGET[sq, d, n]: square n steps from sq in direction d, or -1 off the board.
TARGET = np.array(_rules.TARGET, dtype=np.int64)
# BETWEEN[sq, d, n]: the n-1 squares strictly between sq and its target n steps away.
BETWEEN = np.array(_rules.BETWEEN, dtype=np.uint64)

_NOT_A = np.uint64(_rules._NOT_A)
_NOT_H = np.uint64(_rules._NOT_H)

# Evaluation (envs/loa/evaluation.py): the same weights and packed-spread table.
W_GROUPS = _evaluation.W_GROUPS
W_SPREAD = _evaluation.W_SPREAD
MIN_SPREAD = np.array(_evaluation.MIN_SPREAD, dtype=np.int64)
_SPREAD_TOP = len(_evaluation.MIN_SPREAD) - 1


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the number of set bits of a uint64 (one machine instruction)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Emit LLVM's ctpop."""
        return builder.ctpop(args[0])

    return types.int64(types.uint64), codegen


@intrinsic
def lowest_square(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the index of the lowest set bit of a non-zero uint64 (count trailing zeros)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Emit LLVM's cttz (zero input allowed: it answers 64)."""
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(types.uint64), codegen


@njit("uint64(int64)", cache=True)
def bit(square: int) -> np.uint64:
    """Return the bitboard of one square."""
    return ONE << np.uint64(square)


@njit(cache=True)
def _grow(x: np.uint64) -> np.uint64:
    """Return x plus its 8-neighbourhood, as a bitboard."""
    xa, xh = x & _NOT_H, x & _NOT_A  # pieces that may step east / west
    row = x | (xa << ONE) | (xh >> ONE)
    return row | (row << EIGHT) | (row >> EIGHT)  # uint64 shifts drop what leaves the board


@njit("boolean(uint64)", cache=True)
def is_connected(pieces: np.uint64) -> bool:
    """Return True when all pieces of a bitboard form one 8-connected group."""
    if pieces == ZERO:
        return False
    group = pieces & (~pieces + ONE)
    while True:
        grown = _grow(group) & pieces
        if grown == group:
            return group == pieces
        group = grown


@njit("int64(uint64, uint64, int64)", cache=True)
def destination(black: np.uint64, white: np.uint64, move: int) -> int:
    """Return the destination square of a (non-pass) move in this position."""
    origin, d = move >> 3, move & 7
    n = popcount(LINE[origin, d & 3] & (black | white))
    return TARGET[origin, d, n]


@njit("int64(uint64, uint64, int64[::1])", cache=True)
def generate(own: np.uint64, enemy: np.uint64, out: np.ndarray) -> int:
    """Write the moves of ``own`` into ``out`` in the reference's order; return their count."""
    occ = own | enemy
    count = 0
    pieces = own
    while pieces:
        s = lowest_square(pieces)
        pieces &= pieces - ONE
        for o in range(4):
            n = popcount(LINE[s, o] & occ)
            for d in (o, o + 4):
                t = TARGET[s, d, n]
                # legal: on the board, no own piece on the destination, no enemy piece jumped
                if t >= 0 and (own >> np.uint64(t)) & ONE == ZERO \
                        and enemy & BETWEEN[s, d, n] == ZERO:
                    out[count] = 8 * s + d
                    count += 1
    return count


@njit("int64(uint64[:, ::1], int64, int64, uint64, uint64, int64)", cache=True)
def repetitions(history: np.ndarray, start: int, stop: int, black: np.uint64, white: np.uint64,
                side: int) -> int:
    """Return how often (black, white, side) occurs in rows ``start:stop`` of ``history``."""
    count = 0
    s = np.uint64(side)
    for i in range(start, stop):
        if history[i, 0] == black and history[i, 1] == white and history[i, 2] == s:
            count += 1
    return count


@njit("int64(uint64, uint64, int64, int64, boolean)", cache=True)
def judge(black: np.uint64, white: np.uint64, side: int, ply: int, repeated: bool) -> int:
    """Return the result code by spec 6.1-6.4, judging the side not to move as mover;
    ``repeated``: the position occurred twice before (this is the third time)."""
    if side == BLACK:
        own, other = black, white
    else:
        own, other = white, black
    if is_connected(other):  # the mover: the side not to move
        return WHITE_WINS if side == BLACK else BLACK_WINS
    if is_connected(own):
        return BLACK_WINS if side == BLACK else WHITE_WINS
    if ply >= MOVE_CAP:
        return DRAW_MOVE_CAP
    if repeated:
        return DRAW_REPETITION
    return ONGOING


@njit("int64(uint64, uint64, int64, int64, boolean, int64[::1])", cache=True)
def legal_moves(black: np.uint64, white: np.uint64, side: int, ply: int, repeated: bool,
                out: np.ndarray) -> int:
    """Write the legal actions into ``out`` (none when the game is over, the pass when
    nothing else is legal, spec 4); return their count."""
    if judge(black, white, side, ply, repeated) != ONGOING:
        return 0
    if side == BLACK:
        count = generate(black, white, out)
    else:
        count = generate(white, black, out)
    if count == 0:
        out[0] = PASS
        count = 1
    return count


@njit("Tuple((uint64, uint64, boolean))(uint64, uint64, int64, int64)", cache=True)
def apply_move(black: np.uint64, white: np.uint64, side: int,
               move: int) -> tuple[np.uint64, np.uint64, bool]:
    """Return (black, white, captured) after ``move`` by ``side`` (the side to move)."""
    if move == PASS:
        return black, white, False
    origin = move >> 3
    t = bit(destination(black, white, move))
    step = bit(origin) | t
    if side == BLACK:
        captured = white & t != ZERO
        black ^= step
        white &= ~t
    else:
        captured = black & t != ZERO
        white ^= step
        black &= ~t
    return black, white, captured


@njit(cache=True)
def _perft(black: np.uint64, white: np.uint64, side: int, ply: int, depth: int,
           moves: np.ndarray) -> int:
    """Count leaf move sequences of ``depth`` plies, with ``moves[k]`` the buffer of depth k."""
    buf = moves[depth]
    n = legal_moves(black, white, side, ply, False, buf)
    if depth <= 1:
        return n if depth == 1 else 1
    total = 0
    for i in range(n):
        b, w, _ = apply_move(black, white, side, buf[i])
        total += _perft(b, w, 1 - side, ply + 1, depth - 1, moves)
    return total


@njit("int64(uint64, uint64, int64, int64, int64)", cache=True)
def perft(black: np.uint64, white: np.uint64, side: int, ply: int, depth: int) -> int:
    """Count leaf move sequences of ``depth`` plies; repetition is ignored (spec 9)."""
    moves = np.empty((max(depth, 1) + 1, MAX_MOVES), dtype=np.int64)
    return _perft(black, white, side, ply, depth, moves)


# -- evaluation (envs/loa/evaluation.py) -----------------------------------------------


@njit("int64(uint64)", cache=True)
def groups(pieces: np.uint64) -> int:
    """Return the number of 8-connected groups of a bitboard."""
    count = 0
    while pieces:
        group = pieces & (~pieces + ONE)
        while True:
            grown = _grow(group) & pieces
            if grown == group:
                break
            group = grown
        pieces &= ~group
        count += 1
    return count


@njit(cache=True)
def _round_half_even(total: int, n: int) -> int:
    """Return Python's ``round(total / n)`` for n > 0 (ties to even), in integers."""
    q, r = divmod(total, n)
    if 2 * r > n or (2 * r == n and q % 2 == 1):
        return q + 1
    return q


@njit("float64(uint64)", cache=True)
def side_score(pieces: np.uint64) -> float:
    """Return how close one side's pieces are to connecting (higher is better, 0 is best)."""
    n = popcount(pieces)
    if n <= 1:
        return 0.0
    sum_r = 0
    sum_f = 0
    rest = pieces
    while rest:
        s = lowest_square(rest)
        rest &= rest - ONE
        sum_r += s >> 3
        sum_f += s & 7
    # Spread: total king-distance to the (rounded) centre of mass beyond the packed minimum.
    # The reference rounds the float mean; for these small sums that is exactly the integer
    # ties-to-even rounding below (a tie is exactly representable, and no other mean lies
    # within rounding error of one).
    r0 = _round_half_even(sum_r, n)
    f0 = _round_half_even(sum_f, n)
    spread = 0
    rest = pieces
    while rest:
        s = lowest_square(rest)
        rest &= rest - ONE
        spread += max(abs((s >> 3) - r0), abs((s & 7) - f0))
    excess = max(0, spread - MIN_SPREAD[min(n, _SPREAD_TOP)]) / n
    return -W_GROUPS * (groups(pieces) - 1) - W_SPREAD * excess


@njit("float64(uint64, uint64, int64)", cache=True)
def evaluate(black: np.uint64, white: np.uint64, side: int) -> float:
    """Return the LOA evaluation for the side to move (own score minus the opponent's)."""
    if side == BLACK:
        return side_score(black) - side_score(white)
    return side_score(white) - side_score(black)


# -- glue for Python callers ---------------------------------------------------------------


def position_of(state: _rules.State) -> tuple[np.uint64, np.uint64, int, int]:
    """Return (black, white, side, ply) of a reference state, typed for the kernel."""
    black, white = state.bb
    return np.uint64(black), np.uint64(white), state.side, state.ply


def history_of(state: _rules.State, spare: int = 0) -> np.ndarray:
    """Return the state's repetition history as uint64 rows (black, white, side), followed by
    ``spare`` zero rows for a search to append to."""
    rows = np.zeros((len(state.history) + spare, 3), dtype=np.uint64)
    if state.history:
        rows[: len(state.history)] = np.array(state.history, dtype=np.uint64)
    return rows
