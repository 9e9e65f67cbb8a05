"""The Lines of Action rules (spec: shared/rules/loa.md), compiled with numba.

This module is LOA's rules engine for the CPU: :class:`.rules.State` (the position that the
env, the agents, the CLI and self-play hold), the observation planes of :mod:`.actions`, the
evaluation of :mod:`.evaluation` and the compiled alpha-beta (agents/alphabeta_loa.py) all
call it. The torch batched engine (:mod:`.batched`) is the other engine, for GPUs; the two are
checked against each other and the shared vectors (tests/test_loa_kernel.py).

Positions are two 64-bit bitboards, ``black`` and ``white`` (bit ``8 * rank + file``, a1 = 0,
h8 = 63; here ``numpy.uint64``), the side to move (:data:`BLACK` or :data:`WHITE`) and the
ply. A move is an ``int``: ``8 * origin + direction`` (directions 0..7 = N, NE, E, SE, S, SW,
W, NW), or :data:`PASS` (512). That is also the env's action number, so encoding a move for
the env costs nothing. The distance of a move is the number of pieces on its whole line, so the
destination is a table lookup once the line count is known (``popcount`` of a precomputed line
mask).

Repetition (spec 6.3) needs the earlier positions: :func:`repetitions` counts them in a
``(n, 3)`` uint64 array of (black, white, side) rows (``State.history`` keeps them as tuples,
and a capture clears them); :func:`judge` takes the answer as ``repeated``.

Every function is ``@njit(cache=True)``: the public ones carry their signature, so importing
this module compiles them once in a fresh environment (a few seconds, docs/compiled.md) and
later imports load the machine code from numba's cache. Nothing imports this module before a
LOA position is made, so the other games never load numba. Bitboards may be passed as Python
ints or ``numpy.uint64`` (a signature converts either; numba would otherwise type a Python int
below 2**63 as int64); move buffers are C-contiguous int64 arrays of :data:`MAX_MOVES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.bits import mask_of
from ..core.board8 import RAYS
from ..core.jit import njit
from ..core.jit_bits import lowest_square, popcount

if TYPE_CHECKING:
    from .rules import State

BLACK, WHITE = 0, 1
PASS = 512
MOVE_CAP = 400  # plies; spec 6.2
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

# -- tables (spec 1 and 3) -----------------------------------------------------------------

# LINE[sq, d % 4]: every square of the whole line through sq in direction d, sq included.
LINE = np.array([[mask_of(RAYS[s][d]) | mask_of(RAYS[s][d + 4]) | (1 << s) for d in range(4)]
                 for s in range(64)], dtype=np.uint64)
# TARGET[sq, d, n]: square n steps from sq in direction d, or -1 off the board.
TARGET = np.array([[[RAYS[s][d][n - 1] if 0 < n <= len(RAYS[s][d]) else -1 for n in range(9)]
                    for d in range(8)] for s in range(64)], dtype=np.int64)
# BETWEEN[sq, d, n]: the n-1 squares strictly between sq and its target n steps away.
BETWEEN = np.array([[[mask_of(RAYS[s][d][: max(n - 1, 0)]) for n in range(9)]
                     for d in range(8)] for s in range(64)], dtype=np.uint64)

_NOT_A = np.uint64(((1 << 64) - 1) & ~mask_of(range(0, 64, 8)))  # every square but file a
_NOT_H = np.uint64(((1 << 64) - 1) & ~mask_of(range(7, 64, 8)))  # every square but file h


@njit("uint64(int64)", cache=True)
def bit(square: int) -> np.uint64:
    """Return the bitboard of one square."""
    return ONE << np.uint64(square)


# -- connection (spec 5) ---------------------------------------------------------------------


@njit(cache=True)
def _grow(x: np.uint64) -> np.uint64:
    """Return x plus its 8-neighbourhood (the squares adjacent to a piece), as a bitboard."""
    xa, xh = x & _NOT_H, x & _NOT_A  # pieces that may step east / west
    row = x | (xa << ONE) | (xh >> ONE)
    return row | (row << EIGHT) | (row >> EIGHT)  # uint64 shifts drop what leaves the board


@njit("boolean(uint64)", cache=True)
def is_connected(pieces: np.uint64) -> bool:
    """Return True when all pieces of a bitboard form one 8-connected group (a single piece
    is connected; no piece is not)."""
    if pieces == ZERO:
        return False
    group = pieces & (~pieces + ONE)  # flood fill from the lowest piece
    while True:
        grown = _grow(group) & pieces
        if grown == group:
            return group == pieces
        group = grown


# -- moves (spec 3 and 4) --------------------------------------------------------------------


@njit("int64(uint64, uint64, int64)", cache=True)
def destination(black: np.uint64, white: np.uint64, move: int) -> int:
    """Return the destination square of a (non-pass) move in this position: as many squares
    along its direction as the whole line holds pieces of both colours (spec 3.1)."""
    origin, d = move >> 3, move & 7
    n = popcount(LINE[origin, d & 3] & (black | white))
    return TARGET[origin, d, n]


@njit("int64(uint64, uint64, int64[::1])", cache=True)
def generate(own: np.uint64, enemy: np.uint64, out: np.ndarray) -> int:
    """Write the moves of ``own`` into ``out`` (by origin square, then line N-S, NE-SW, E-W,
    SE-NW, each line's two directions in that order); return their count."""
    occ = own | enemy
    count = 0
    pieces = own
    while pieces:
        s = lowest_square(pieces)
        pieces &= pieces - ONE
        for o in range(4):
            n = popcount(LINE[s, o] & occ)  # both directions along a line go n squares
            for d in (o, o + 4):
                t = TARGET[s, d, n]
                # legal: on the board (3.2), no enemy piece jumped (3.3), no own piece on the
                # destination (3.4)
                if t >= 0 and (own >> np.uint64(t)) & ONE == ZERO \
                        and enemy & BETWEEN[s, d, n] == ZERO:
                    out[count] = 8 * s + d
                    count += 1
    return count


@njit("Tuple((uint64, uint64, boolean))(uint64, uint64, int64, int64)", cache=True)
def apply_move(black: np.uint64, white: np.uint64, side: int,
               move: int) -> tuple[np.uint64, np.uint64, bool]:
    """Return (black, white, captured) after ``move`` by ``side`` (the side to move): the piece
    goes to its destination and an enemy piece there is removed for good (spec 3.4); a pass
    changes nothing (spec 4)."""
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


# -- the end of the game (spec 6) ------------------------------------------------------------


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
    # 6.1: the mover (the side not to move) wins a connection, a simultaneous one too
    if is_connected(other):
        return WHITE_WINS if side == BLACK else BLACK_WINS
    if is_connected(own):
        return BLACK_WINS if side == BLACK else WHITE_WINS
    if ply >= MOVE_CAP:  # 6.2: after the connection test, so a win on the 400th ply stands
        return DRAW_MOVE_CAP
    if repeated:  # 6.3
        return DRAW_REPETITION
    return ONGOING


@njit("int64(uint64, uint64, int64, int64[::1])", cache=True)
def moves_of(black: np.uint64, white: np.uint64, side: int, out: np.ndarray) -> int:
    """Write the legal actions of an unfinished game into ``out``: the moves of the side to
    move, or the pass when it has none (spec 4); return their count."""
    if side == BLACK:
        count = generate(black, white, out)
    else:
        count = generate(white, black, out)
    if count == 0:
        out[0] = PASS
        count = 1
    return count


@njit("int64(uint64, uint64, int64, int64, boolean, int64[::1])", cache=True)
def legal_moves(black: np.uint64, white: np.uint64, side: int, ply: int, repeated: bool,
                out: np.ndarray) -> int:
    """Write the legal actions into ``out`` (none when the game is over, spec 6.5); return
    their count."""
    if judge(black, white, side, ply, repeated) != ONGOING:
        return 0
    return moves_of(black, white, side, out)


@njit("void(uint64, uint64, int64, int8[::1])", cache=True)
def mark_legal(black: np.uint64, white: np.uint64, side: int, mask: np.ndarray) -> None:
    """Set ``mask[action] = 1`` for every legal action of an unfinished game (the env's
    action mask)."""
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    for i in range(moves_of(black, white, side, buf)):
        mask[buf[i]] = 1


@njit("boolean(uint64, uint64, int64, int64)", cache=True)
def is_legal(black: np.uint64, white: np.uint64, side: int, move: int) -> bool:
    """Return whether ``move`` is a legal action of an unfinished game."""
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    for i in range(moves_of(black, white, side, buf)):
        if buf[i] == move:
            return True
    return False


@njit("Tuple((boolean, uint64, uint64, boolean, int64))(uint64, uint64, int64, int64)",
      cache=True)
def play(black: np.uint64, white: np.uint64, side: int,
         move: int) -> tuple[bool, np.uint64, np.uint64, bool, int]:
    """Return (legal, black, white, captured, destination) for ``move`` by ``side`` in an
    unfinished game: :func:`is_legal`, then :func:`apply_move` and the destination (-1 for
    the pass) when it is legal (why: the env's step, one call instead of three)."""
    if not is_legal(black, white, side, move):
        return False, black, white, False, -1
    b, w, captured = apply_move(black, white, side, move)
    return True, b, w, captured, -1 if move == PASS else destination(black, white, move)


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


# -- observation planes (envs/loa/actions.py) ----------------------------------------------


@njit("void(uint64, uint64, boolean, int64, float32[:, :, ::1])", cache=True)
def planes(own: np.uint64, other: np.uint64, black: bool, ply: int, out: np.ndarray) -> None:
    """Fill the (8, 8, 5) observation of :mod:`.actions`: own pieces, the opponent's, 1 if the
    observer plays Black, ply / 400 (capped) and a plane of ones."""
    colour = 1.0 if black else 0.0
    progress = min(ply, MOVE_CAP) / MOVE_CAP  # float64, then rounded to float32 once
    for s in range(64):
        r, f = s >> 3, s & 7
        out[r, f, 0] = (own >> np.uint64(s)) & ONE
        out[r, f, 1] = (other >> np.uint64(s)) & ONE
        out[r, f, 2] = colour
        out[r, f, 3] = progress
        out[r, f, 4] = 1.0


# -- evaluation (envs/loa/evaluation.py) -----------------------------------------------------

# Least possible sum of king-distances to the centre of n packed pieces: 0, 1 x8, 2 x16, ...
_RING = [0] + [1] * 8 + [2] * 16
MIN_SPREAD = np.array([sum(_RING[:n]) for n in range(len(_RING) + 1)], dtype=np.int64)
_SPREAD_TOP = len(_RING)

# Weights, in "one extra group" units (why: a player wins by getting down to one group).
# Tuned by self-play at depths 1 and 2: spread 4 beat spread 1 (plus 0.25 x centre-of-mass
# off-centre distance) 72% and 77%; the centre term itself measured no gain and was dropped.
W_GROUPS = 1.0
W_SPREAD = 4.0


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


@njit("float64(uint64, int64)", cache=True)
def excess_spread(pieces: np.uint64, n: int) -> float:
    """Return the spread beyond the packed minimum, per piece, of ``n`` >= 2 pieces."""
    sum_r = 0
    sum_f = 0
    rest = pieces
    while rest:
        s = lowest_square(rest)
        rest &= rest - ONE
        sum_r += s >> 3
        sum_f += s & 7
    # Spread: total king-distance to the centre of mass, rounded to a square (Python's
    # round() of the mean, ties to even, as the evaluation was tuned with; for these small
    # sums that is exactly the integer rounding below), beyond the packed minimum.
    r0 = _round_half_even(sum_r, n)
    f0 = _round_half_even(sum_f, n)
    spread = 0
    rest = pieces
    while rest:
        s = lowest_square(rest)
        rest &= rest - ONE
        spread += max(abs((s >> 3) - r0), abs((s & 7) - f0))
    return max(0, spread - MIN_SPREAD[min(n, _SPREAD_TOP)]) / n


@njit("float64(uint64)", cache=True)
def side_score(pieces: np.uint64) -> float:
    """Return how close one side's pieces are to connecting (higher is better, 0 is best)."""
    n = popcount(pieces)
    if n <= 1:
        return 0.0
    return -W_GROUPS * (groups(pieces) - 1) - W_SPREAD * excess_spread(pieces, n)


@njit("float64(uint64, uint64, int64)", cache=True)
def evaluate(black: np.uint64, white: np.uint64, side: int) -> float:
    """Return the LOA evaluation for the side to move (own score minus the opponent's)."""
    if side == BLACK:
        return side_score(black) - side_score(white)
    return side_score(white) - side_score(black)


# -- glue for Python callers ---------------------------------------------------------------


def position_of(state: State) -> tuple[np.uint64, np.uint64, int, int]:
    """Return (black, white, side, ply) of a state, typed for the kernel."""
    black, white = state.bb
    return np.uint64(black), np.uint64(white), state.side, state.ply


def history_of(state: State, spare: int = 0) -> np.ndarray:
    """Return the state's repetition history as uint64 rows (black, white, side), followed by
    ``spare`` zero rows for a search to append to."""
    rows = np.zeros((len(state.history) + spare, 3), dtype=np.uint64)
    if state.history:
        rows[: len(state.history)] = np.array(state.history, dtype=np.uint64)
    return rows
