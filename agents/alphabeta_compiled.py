"""What the compiled alpha-beta searches share: agents/alphabeta.py's table, move ordering,
killers and history in numba, and the agent class that drives them.

A game's search module (:mod:`.alphabeta_loa`, :mod:`.alphabeta_ultima`) writes its own
``_negamax`` on its rules kernel and calls these for the rest, so that every compiled search
reproduces :class:`~.alphabeta.AlphaBetaAgent` the same way (docs/compiled.md, "Exactness"):

* The reference's table is a dict keyed by ``state.key()`` that keeps every entry and is
  cleared before a search once it holds more than ``tt_size``; here an open-addressing table
  on the full key (a row of uint64 words, exact: no hash stands for a position), doubled
  whenever half full, so it too never loses an entry (a lossy table of fixed size would cut
  different branches and change the scores).
* Move ordering: the rules' generation order, a stable sort by history score, then the ply's
  killers and the table's move in front.
* Under a time limit the reference reads the clock at every node, a compiled search every
  :data:`CLOCK_EVERY` nodes (a clock read from compiled code costs about as much as a node).

Every function is ``@njit(cache=True)`` without a signature: the games call them with the
same argument types (typed constants, never literals, so each compiles once).
"""

from __future__ import annotations

import time

import numpy as np
from numba import objmode
from numba.types import float64

from ..envs.core.game import GameState
from ..envs.core.jit import njit
from ..envs.core.jit_bits import bits_float, float_bits
from ..envs.core.learned_eval import NO_WEIGHTS, LearnedEval
from .alphabeta import EXACT, LOWER, MAX_DEPTH, UPPER, WIN, AlphaBetaAgent, _Timeout

#: Nodes between two reads of the clock under a time limit.
CLOCK_EVERY = 256
#: Slots of a new table (it doubles when half full).
INITIAL_TT_SLOTS = 1 << 12
# stats[]: nodes searched, entries in the table, set when the time ran out.
NODES, TT_COUNT, ABORTED = 0, 1, 2
NO_MOVE = -1
INF = float("inf")
#: The compiled searches' last two argument types: the learned evaluation's weights and its
#: hidden-layer scratch (weights without rows: the hand-made evaluation).
EVAL_ARGS = (float64[:, ::1], float64[::1])

# A table row: the key's words, then meta and the value's bits. meta: bit 0 occupied, bits
# 2-3 the flag (EXACT, LOWER, UPPER), bits 4-39 move + 1 (0: none; Whistling's move numbers
# are its search's turn numbers, which can pass 2**16), bits 40- depth.
_U1, _U2, _U4, _U40 = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(40)
_U3, _MOVE_BITS = np.uint64(3), np.uint64((1 << 36) - 1)
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)
_S31, _S32 = np.uint64(31), np.uint64(32)


@njit(cache=True)
def clock() -> float:
    """Return ``time.perf_counter()`` (the reference's clock) from compiled code."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def timed_out(stats: np.ndarray, deadline: float) -> bool:
    """Count a node; return whether the deadline has passed (read every CLOCK_EVERY nodes),
    marking the search aborted."""
    stats[NODES] += 1
    if deadline < INF and stats[NODES] % CLOCK_EVERY == 0 and clock() > deadline:
        stats[ABORTED] = 1
        return True
    return False


@njit(cache=True)
def to_tt(value: float, ply: int) -> float:
    """Store win scores relative to this node, not the root (a TT hit may be at another ply)."""
    if value > WIN - 1000:
        return value + ply
    if value < -(WIN - 1000):
        return value - ply
    return value


@njit(cache=True)
def from_tt(value: float, ply: int) -> float:
    """Undo :func:`to_tt` for a node ``ply`` plies from the root."""
    if value > WIN - 1000:
        return value - ply
    if value < -(WIN - 1000):
        return value + ply
    return value


# -- transposition table ------------------------------------------------------------------


@njit(cache=True)
def key_hash(key: np.ndarray) -> np.uint64:
    """Return the hash of a key's words (a table of 2**k rows takes its low k bits)."""
    h = np.uint64(0)
    for k in range(key.shape[0]):
        # multiply, then fold the high bits down: a key differing only in a word's high
        # bits must still land in another slot
        h = (h ^ key[k]) * _MIX1
        h ^= h >> _S31
    h *= _MIX2
    h ^= h >> _S32
    return h


@njit(cache=True)
def _slot(tt: np.ndarray, key: np.ndarray) -> int:
    """Return the row holding ``key`` (its words), or the empty row where it belongs."""
    width = key.shape[0]
    i = np.int64(key_hash(key) & np.uint64(tt.shape[0] - 1))
    last = tt.shape[0] - 1
    while True:
        if tt[i, width] == 0:
            return i
        same = True
        for k in range(width):
            if tt[i, k] != key[k]:
                same = False
                break
        if same:
            return i
        i = i + 1 if i < last else 0  # linear probing; the table is never more than half full


@njit(cache=True)
def _grown(tt: np.ndarray, width: int) -> np.ndarray:
    """Return a table of twice the rows holding every entry of ``tt``."""
    new = np.zeros((2 * tt.shape[0], tt.shape[1]), dtype=np.uint64)
    key = np.empty(width, dtype=np.uint64)  # a contiguous key, as _slot is compiled for
    for i in range(tt.shape[0]):
        if tt[i, width] != 0:
            for k in range(width):
                key[k] = tt[i, k]
            j = _slot(new, key)
            for k in range(tt.shape[1]):
                new[j, k] = tt[i, k]
    return new


@njit(cache=True)
def tt_store(tt: np.ndarray, stats: np.ndarray, key: np.ndarray, depth: int, value: float,
             flag: int, move: int) -> np.ndarray:
    """Set the entry of ``key``, like ``tt[key] = ...``; return the table, grown when it was
    half full."""
    width = key.shape[0]
    i = _slot(tt, key)
    if tt[i, width] == 0:
        if 2 * (stats[TT_COUNT] + 1) > tt.shape[0]:
            tt = _grown(tt, width)
            i = _slot(tt, key)
        stats[TT_COUNT] += 1
        for k in range(width):
            tt[i, k] = key[k]
    tt[i, width] = (_U1 | np.uint64(flag) << _U2 | np.uint64(move + 1) << _U4
                    | np.uint64(depth) << _U40)
    tt[i, width + 1] = float_bits(value)
    return tt


@njit(cache=True)
def tt_probe(tt: np.ndarray, key: np.ndarray) -> tuple[bool, int, float, int, int]:
    """Return (found, depth, stored value, flag, move) of the key's entry."""
    width = key.shape[0]
    i = _slot(tt, key)
    meta = tt[i, width]
    if meta == 0:
        return False, 0, 0.0, EXACT, NO_MOVE
    return (True, np.int64(meta >> _U40), bits_float(tt[i, width + 1]),
            np.int64((meta >> _U2) & _U3), np.int64((meta >> _U4) & _MOVE_BITS) - 1)


@njit(cache=True)
def cut_by_entry(e_depth: int, e_value: float, e_flag: int, depth: int, alpha: float,
                 beta: float) -> bool:
    """Return whether a stored entry decides the node without searching it."""
    if e_depth < depth:
        return False
    return (e_flag == EXACT or (e_flag == LOWER and e_value >= beta)
            or (e_flag == UPPER and e_value <= alpha))


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
def order_moves(buf: np.ndarray, n: int, tt_move: int, killers: np.ndarray,
                history: np.ndarray) -> None:
    """Order the first ``n`` moves of ``buf`` (the rules' order) as the reference does: TT
    move, killers, then by history score."""
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


@njit(cache=True)
def reward(killers: np.ndarray, history: np.ndarray, move: int, depth: int) -> None:
    """Remember a move that caused a cut-off (killer and history heuristics)."""
    history[move] += depth * depth
    if killers[0] != move and killers[1] != move:
        killers[1] = killers[0]
        killers[0] = move


# -- the agent ----------------------------------------------------------------------------


class CompiledAlphaBeta(AlphaBetaAgent):
    """:class:`AlphaBetaAgent` whose tree below the root a game's compiled ``_negamax``
    searches; the iterative deepening, the root shuffle and the clock stay the base class's."""

    def __init__(self, game: str, key_words: int, actions: int, max_moves: int,
                 depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, tt_size: int = 200_000,
                 learned_eval: LearnedEval | None = None) -> None:
        super().__init__(game, depth=depth, seconds=seconds, seed=seed, tt_size=tt_size)
        #: The learned evaluation at the leaves (None: the hand-made one).
        self.learned_eval = learned_eval
        self._weights = NO_WEIGHTS if learned_eval is None else learned_eval.weights
        self._hidden = np.zeros(1) if learned_eval is None else learned_eval.scratch()
        if learned_eval is not None:  # the Python tree (AlphaBetaAgent) scores leaves alike
            self.evaluate = self.learned_value
        #: Plies a search may reach (the deepest iteration, the root and one spare).
        self.plies = max(self.depth, MAX_DEPTH) + 2
        self._tt = np.zeros((INITIAL_TT_SLOTS, key_words + 2), dtype=np.uint64)
        self._stats = np.zeros(3, dtype=np.int64)
        self._scores = np.zeros(actions, dtype=np.int64)  # the history heuristic
        self._killers = np.full((self.plies, 2), NO_MOVE, dtype=np.int64)
        self._moves = np.empty((self.plies, max_moves), dtype=np.int64)

    def learned_value(self, state: GameState) -> float:
        """Return the learned evaluation of an unfinished ``state`` for its side to move, in
        search units (each game's search computes it on its kernel)."""
        raise NotImplementedError

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

    def _start(self) -> float:
        """Reset the node count and the abort flag; return the deadline of this search."""
        self._stats[NODES] = 0
        self._stats[ABORTED] = 0
        return self._deadline if self._timed else INF

    def _finish(self) -> None:
        """Add the search's nodes to the counters; raise _Timeout when the time ran out."""
        self.counters["nodes"] += int(self._stats[NODES])
        if self._stats[ABORTED]:
            raise _Timeout
