"""Alpha-beta for Lines of Action on the compiled kernel: agents/alphabeta.py, move for move.

:class:`CompiledLoaAlphaBeta` is :class:`~.alphabeta.AlphaBetaAgent` with the tree below
the root (``_negamax``, ``_ordered``, ``_reward``, the transposition table) compiled with
numba on :mod:`boardzoo.envs.loa.kernel`. The iterative deepening, the root shuffle with the
agent's seed and the time control are the base class's own Python, so at a fixed depth and
seed the compiled search returns the same best move, the same score and the same node count
as the reference (tests/test_loa_kernel.py checks all three). ``alphabeta:...`` builds it
for LOA (:func:`.alphabeta.from_spec`); ``AlphaBetaAgent("loa", ...)`` stays the reference.

What it reproduces of the reference, and how:

* The table is a dict keyed by (black, white, side) that keeps every entry and is cleared
  before a search once it holds more than ``tt_size``; here an open-addressing table on the
  full key, doubled whenever half full, so it too never loses an entry (a lossy table of
  fixed size would cut different branches and change the scores).
* Move ordering: the reference's generation order, a stable sort by history score, then the
  ply's killers and the table's move in front.
* Repetition inside the search (spec 6.3): the keys of the path since the last capture,
  after the game's own history, as ``State.history`` would hold them.
* The one difference: under a time limit the reference reads the clock at every node, this
  search every :data:`CLOCK_EVERY` nodes (a clock read from compiled code costs about as much
  as a node), so a timed search may run a few microseconds past its deadline.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import njit, objmode, types
from numba.extending import intrinsic
from numba.types import Tuple, float64, int64, uint64

from boardzoo.envs.loa import kernel as K
from boardzoo.envs.loa.rules import State

from .alphabeta import EXACT, LOWER, MAX_DEPTH, UPPER, WIN, AlphaBetaAgent, _Timeout

#: Nodes between two reads of the clock under a time limit.
CLOCK_EVERY = 256
#: Slots of a new table (it doubles when half full).
INITIAL_TT_SLOTS = 1 << 16
# stats[]: nodes searched, entries in the table, set when the time ran out.
NODES, TT_COUNT, ABORTED = 0, 1, 2
NO_MOVE = -1
_INF = float("inf")

# Table rows: black, white, meta, value bits. meta: bit 0 occupied, bit 1 side, bits 2-3 the
# flag (EXACT, LOWER, UPPER), bits 4-13 move + 1 (0: none), bits 16- depth.
_U1, _U2, _U4, _U16 = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(16)
_U3, _U1023 = np.uint64(3), np.uint64(1023)
_HASH_B = np.uint64(0x9E3779B97F4A7C15)
_HASH_W = np.uint64(0xC2B2AE3D27D4EB4F)
_HASH_SHIFT = np.uint64(29)

# The entry points' argument types (C-contiguous arrays): with the signatures written out,
# numba compiles each once, typing no argument as a literal constant (why: a literal-typed
# copy of the recursive _negamax, once cached, calls a null pointer when loaded again).
_TABLE = uint64[:, ::1]
_ARRAYS = (_TABLE, int64[::1], int64[:, ::1], int64[::1], uint64[:, ::1], int64[:, ::1])


@intrinsic
def float_bits(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the IEEE-754 bits of a float64 as a uint64 (so the table is one array)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Reinterpret the bits."""
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(types.float64), codegen


@intrinsic
def bits_float(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the float64 whose IEEE-754 bits are the uint64 ``x``."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Reinterpret the bits."""
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


@njit(cache=True)
def _clock() -> float:
    """Return ``time.perf_counter()`` (the reference's clock) from compiled code."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def _to_tt(value: float, ply: int) -> float:
    """Store win scores relative to this node, not the root (a TT hit may be at another ply)."""
    if value > WIN - 1000:
        return value + ply
    if value < -(WIN - 1000):
        return value - ply
    return value


@njit(cache=True)
def _from_tt(value: float, ply: int) -> float:
    """Undo :func:`_to_tt` for a node ``ply`` plies from the root."""
    if value > WIN - 1000:
        return value - ply
    if value < -(WIN - 1000):
        return value + ply
    return value


# -- transposition table ------------------------------------------------------------------


@njit(cache=True)
def _slot(tt: np.ndarray, black: np.uint64, white: np.uint64, side: int) -> int:
    """Return the row holding key (black, white, side), or the empty row where it belongs."""
    mask = np.uint64(tt.shape[0] - 1)
    s = np.uint64(side)
    h = black * _HASH_B ^ white * _HASH_W ^ s
    h ^= h >> _HASH_SHIFT
    i = np.int64(h & mask)
    last = tt.shape[0] - 1
    while True:
        meta = tt[i, 2]
        if meta == 0:
            return i
        if tt[i, 0] == black and tt[i, 1] == white and (meta >> _U1) & _U1 == s:
            return i
        i = i + 1 if i < last else 0  # linear probing; the table is never more than half full


@njit(cache=True)
def _grown(tt: np.ndarray) -> np.ndarray:
    """Return a table of twice the rows holding every entry of ``tt``."""
    new = np.zeros((2 * tt.shape[0], 4), dtype=np.uint64)
    for i in range(tt.shape[0]):
        meta = tt[i, 2]
        if meta != 0:
            j = _slot(new, tt[i, 0], tt[i, 1], np.int64((meta >> _U1) & _U1))
            new[j] = tt[i]
    return new


@njit(cache=True)
def _store(tt: np.ndarray, stats: np.ndarray, black: np.uint64, white: np.uint64, side: int,
           depth: int, value: float, flag: int, move: int) -> np.ndarray:
    """Set the entry of (black, white, side), like ``tt[key] = ...``; return the table,
    grown when it was half full."""
    i = _slot(tt, black, white, side)
    if tt[i, 2] == 0:
        if 2 * (stats[TT_COUNT] + 1) > tt.shape[0]:
            tt = _grown(tt)
            i = _slot(tt, black, white, side)
        stats[TT_COUNT] += 1
    tt[i, 0] = black
    tt[i, 1] = white
    tt[i, 2] = (_U1 | np.uint64(side) << _U1 | np.uint64(flag) << _U2
                | np.uint64(move + 1) << _U4 | np.uint64(depth) << _U16)
    tt[i, 3] = float_bits(value)
    return tt


@njit(cache=True)
def _probe(tt: np.ndarray, black: np.uint64, white: np.uint64,
           side: int) -> tuple[bool, int, float, int, int]:
    """Return (found, depth, stored value, flag, move) of the key's entry."""
    i = _slot(tt, black, white, side)
    meta = tt[i, 2]
    if meta == 0:
        return False, 0, 0.0, EXACT, NO_MOVE
    return (True, np.int64(meta >> _U16), bits_float(tt[i, 3]), np.int64((meta >> _U2) & _U3),
            np.int64((meta >> _U4) & _U1023) - 1)


# -- move ordering ------------------------------------------------------------------------


@njit(cache=True)
def _to_front(buf: np.ndarray, n: int, move: int) -> None:
    """Move ``move`` (if among the first n) to the front, keeping the others' order."""
    for j in range(n):
        if buf[j] == move:
            for k in range(j, 0, -1):
                buf[k] = buf[k - 1]
            buf[0] = move
            return


@njit(cache=True)
def _ordered(black: np.uint64, white: np.uint64, side: int, tt_move: int,
             killers: np.ndarray, history: np.ndarray, buf: np.ndarray) -> int:
    """Write the legal moves of an unfinished game into ``buf``: TT move, killers, then by
    history score; return their count."""
    n = K.moves_of(black, white, side, buf)
    for i in range(1, n):  # insertion sort: stable, like the reference's list.sort
        m = buf[i]
        h = history[m]
        j = i - 1
        while j >= 0 and history[buf[j]] < h:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = m
    # Front, last first: [TT move, killer 0, killer 1], a killer equal to the TT move once.
    for k in (1, 0):
        killer = killers[k]
        if killer != NO_MOVE and killer != tt_move:
            _to_front(buf, n, killer)
    if tt_move != NO_MOVE:
        _to_front(buf, n, tt_move)
    return n


@njit(cache=True)
def _reward(killers: np.ndarray, history: np.ndarray, move: int, depth: int) -> None:
    """Remember a move that caused a cut-off (killer and history heuristics)."""
    history[move] += depth * depth
    if killers[0] != move and killers[1] != move:
        killers[1] = killers[0]
        killers[0] = move


# -- tree ---------------------------------------------------------------------------------


@njit(cache=True)
def _leaf_value(black: np.uint64, white: np.uint64, side: int, gply: int, depth: int,
                ply: int, path: np.ndarray, start: int, length: int) -> tuple[bool, float]:
    """Return (True, value) for a finished game or a depth-0 node, else (False, 0)."""
    repeated = K.repetitions(path, start, length, black, white, side) >= 2
    result = K.judge(black, white, side, gply, repeated)
    if result == K.BLACK_WINS or result == K.WHITE_WINS:
        won = (result == K.BLACK_WINS) == (side == K.BLACK)
        return True, (WIN - ply) if won else -1.0 * (WIN - ply)
    if result != K.ONGOING:
        return True, 0.0
    if depth <= 0:
        return True, K.evaluate(black, white, side)
    return False, 0.0


@njit(cache=True)
def _cut_by_entry(e_depth: int, e_value: float, e_flag: int, depth: int, alpha: float,
                  beta: float) -> bool:
    """Return whether a stored entry decides the node without searching it."""
    if e_depth < depth:
        return False
    return (e_flag == EXACT or (e_flag == LOWER and e_value >= beta)
            or (e_flag == UPPER and e_value <= alpha))


@njit(Tuple((float64, _TABLE))(*_ARRAYS, float64, uint64, uint64, int64, int64, int64, float64,
                               float64, int64, int64, int64), cache=True)
def _negamax(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
             path: np.ndarray, moves: np.ndarray, deadline: float, black: np.uint64,
             white: np.uint64, side: int, gply: int, depth: int, alpha: float, beta: float,
             ply: int, start: int, length: int) -> tuple[float, np.ndarray]:
    """Return (value of the position for its side to move within (alpha, beta), the table);
    ``gply`` is the game's ply, ``ply`` the distance from the root, ``path[start:length]``
    the repetition history."""
    stats[NODES] += 1
    if deadline < _INF and stats[NODES] % CLOCK_EVERY == 0 and _clock() > deadline:
        stats[ABORTED] = 1
        return 0.0, tt
    done, value = _leaf_value(black, white, side, gply, depth, ply, path, start, length)
    if done:
        return value, tt
    found, e_depth, e_value, e_flag, tt_move = _probe(tt, black, white, side)
    if found:
        e_value = _from_tt(e_value, ply)
        if _cut_by_entry(e_depth, e_value, e_flag, depth, alpha, beta):
            return e_value, tt
    buf = moves[ply]
    n = _ordered(black, white, side, tt_move, killers[ply], history, buf)
    path[length, 0], path[length, 1], path[length, 2] = black, white, np.uint64(side)
    alpha0 = alpha
    best_value, best_move = -2 * WIN, NO_MOVE
    for i in range(n):
        move = buf[i]
        b, w, captured = K.apply_move(black, white, side, move)
        # a capture can never be undone: the child's history starts with this position
        child, tt = _negamax(tt, stats, killers, history, path, moves, deadline, b, w,
                             1 - side, gply + 1, depth - 1, -beta, -alpha, ply + 1,
                             length if captured else start, length + 1)
        if stats[ABORTED]:
            return 0.0, tt
        value = -child
        if value > best_value:
            best_value, best_move = value, move
        if value > alpha:
            alpha = value
            if alpha >= beta:
                _reward(killers[ply], history, move, depth)
                break
    flag = UPPER if best_value <= alpha0 else LOWER if best_value >= beta else EXACT
    tt = _store(tt, stats, black, white, side, depth, _to_tt(best_value, ply), flag, best_move)
    return best_value, tt


@njit(Tuple((float64, int64, _TABLE))(*_ARRAYS, float64, uint64, uint64, int64, int64, int64,
                                      int64[::1], int64), cache=True)
def search_root(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
                path: np.ndarray, moves: np.ndarray, deadline: float, black: np.uint64,
                white: np.uint64, side: int, gply: int, length: int, root_moves: np.ndarray,
                depth: int) -> tuple[float, int, np.ndarray]:
    """Search every root move to ``depth`` in the given order; return (best value, best move,
    the table), like the reference's ``_root`` (``path[:length]``: the game's history)."""
    alpha, beta = -2 * WIN, 2 * WIN
    best_move, best_value = root_moves[0], -2 * WIN
    path[length, 0], path[length, 1], path[length, 2] = black, white, np.uint64(side)
    for i in range(root_moves.shape[0]):
        move = root_moves[i]
        b, w, captured = K.apply_move(black, white, side, move)
        child, tt = _negamax(tt, stats, killers, history, path, moves, deadline, b, w,
                             1 - side, gply + 1, depth - 1, -beta, -alpha, 1,
                             length if captured else 0, length + 1)
        if stats[ABORTED]:
            break
        value = -child
        if value > best_value:
            best_move, best_value = move, value
        if value > alpha:  # alpha = max(alpha, value), keeping the first of equals
            alpha = value
    return best_value, best_move, tt


class CompiledLoaAlphaBeta(AlphaBetaAgent):
    """:class:`AlphaBetaAgent` for LOA with its tree search compiled (same moves and scores)."""

    def __init__(self, depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, tt_size: int = 200_000) -> None:
        super().__init__("loa", depth=depth, seconds=seconds, seed=seed, tt_size=tt_size)
        plies = max(self.depth, MAX_DEPTH) + 2
        self._tt = np.zeros((INITIAL_TT_SLOTS, 4), dtype=np.uint64)
        self._stats = np.zeros(3, dtype=np.int64)
        self._scores = np.zeros(K.PASS + 1, dtype=np.int64)  # the history heuristic
        self._killers = np.full((plies, 2), NO_MOVE, dtype=np.int64)
        self._moves = np.empty((plies, K.MAX_MOVES), dtype=np.int64)

    def reset(self) -> None:
        super().reset()
        self._tt[:] = 0
        self._stats[TT_COUNT] = 0
        self._scores[:] = 0

    def _new_search(self) -> None:
        """Forget the last search's killer moves; clear the table past ``tt_size`` entries."""
        self._killers[:] = NO_MOVE
        if self._stats[TT_COUNT] > self.tt_size:
            self._tt[:] = 0
            self._stats[TT_COUNT] = 0

    def _root(self, state: State, moves: list, depth: int) -> tuple[float, int]:  # type: ignore[override]
        """Search every root move to ``depth`` in the compiled kernel; raise _Timeout when
        the time ran out."""
        black, white, side, ply = K.position_of(state)
        path = K.history_of(state, spare=self._moves.shape[0] + 1)
        self._stats[NODES] = 0
        self._stats[ABORTED] = 0
        deadline = self._deadline if self._timed else _INF
        value, move, self._tt = search_root(
            self._tt, self._stats, self._killers, self._scores, path, self._moves, deadline,
            black, white, side, ply, len(state.history), np.array(moves, dtype=np.int64),
            depth)
        self.counters["nodes"] += int(self._stats[NODES])
        if self._stats[ABORTED]:
            raise _Timeout
        return float(value), int(move)

    def search_value(self, state: State) -> float:  # type: ignore[override]
        """Return the value of ``state`` for its side to move, searched to the agent's depth."""
        self._timed = False
        self._new_search()
        black, white, side, ply = K.position_of(state)
        path = K.history_of(state, spare=self._moves.shape[0] + 1)
        self._stats[NODES] = 0
        self._stats[ABORTED] = 0
        # _negamax at the root, called from Python: one compiled entry point fewer
        value, self._tt = _negamax(self._tt, self._stats, self._killers, self._scores, path,
                                   self._moves, _INF, black, white, side, ply, self.depth,
                                   -2 * WIN, 2 * WIN, 0, 0, len(state.history))
        self.counters["nodes"] += int(self._stats[NODES])
        return float(value)
