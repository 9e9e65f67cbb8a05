"""Alpha-beta for Monochromatic Whistling on the compiled kernel: agents/alphabeta.py, move
for move.

:class:`CompiledWhistlingAlphaBeta` is :class:`~.alphabeta.AlphaBetaAgent` with the tree
below the root compiled with numba on :mod:`boardzoo.envs.whistling.kernel` and the shared
parts of :mod:`.alphabeta_compiled`. The iterative deepening, the root shuffle with the
agent's seed and the time control are the base class's own Python, so at a fixed depth and
seed it returns the same best move, score and node count as the reference
(tests/test_whistling_alphabeta.py checks all three). ``alphabeta:...`` builds it for
Whistling (:func:`.alphabeta.from_spec`); ``AlphaBetaAgent("whistling", ...)`` stays the
reference.

What it reproduces of the reference, and how:

* A move is a whole turn (a chain is one move), listed by the kernel in ``legal_moves()``'s
  order. The reference's killers and history are keyed by the :class:`~..envs.whistling.
  rules.Turn` (path, each hop's captures, kind), so here each turn gets a number: a plain
  move or a crush its start and destination (the path decides its capture), a whistling
  capture one from an exact table of turns (path and captured stones: those decide each
  hop's captures), kept across moves as the reference keeps its history.
* The table's key is ``State.key()``, (x, o, side, quiet), exactly: 13 words.
* A node is judged as the reference judges it: the kernel's result (spec 9) first, then the
  kernel's evaluation at depth 0, the table, and the turns.
* A position past the kernel's bounds (:class:`~..envs.whistling.kernel.ChainLimitError`)
  stops the search and raises that error, as the reference's ``legal_moves()`` would.
"""

from __future__ import annotations

import numpy as np
from numba import typeof
from numba.types import Tuple, float64, int64, uint64

from boardzoo.envs.core.jit_bits import bits_float, float_bits, lowest_square
from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.whistling import kernel as K
from boardzoo.envs.whistling.learned_eval import judged_learned
from boardzoo.envs.whistling.rules import State, Turn
from boardzoo.envs.whistling.spec import SPEC

from ..envs.core.jit import njit
from .alphabeta import EXACT, LOWER, UPPER, WIN
from .alphabeta_compiled import (
    ABORTED,
    EVAL_ARGS,
    INF,
    NO_MOVE,
    CompiledAlphaBeta,
    _grown,
    _slot,
    cut_by_entry,
    from_tt,
    key_hash,
    order_moves,
    reward,
    timed_out,
    to_tt,
    tt_probe,
    tt_store,
)

W = K.WORDS
#: Words of a position's key: x's stones, o's, then side | quiet << 1.
KEY_WORDS = 2 * W + 1
#: Words of a turn's key: the captured stones (a cell bitmask), then the path, seven cells
#: of 9 bits (cell + 1) a word: a path has at most MAX_STONES + 2 cells.
PATH_WORDS = (K.MAX_STONES + 2 + 6) // 7
TURN_WORDS = W + PATH_WORDS
#: Turn numbers: plain moves ``a * NC + b``, crushes ``PAIRS +`` that, whistling captures
#: ``2 * PAIRS +`` their row in the turn table.
PAIRS = K.NC * K.NC
#: Whistling captures a new agent numbers before its turn table and history double.
INITIAL_TURNS = 1 << 12
#: stats[REFUSED]: the kernel's status when a search was refused (ABORTED is then 2: the
#: evaluation, or 3: listing the turns).
REFUSED = 3
_NINE, _U1 = np.uint64(9), np.uint64(1)
#: Rows of the evaluation cache: the evaluation of a position at a depth-0 node, by its exact
#: key, one row a hash (a newer position takes the row: a lost entry is evaluated again). Why:
#: a leaf reached again (X's two moves in either order around one reply of O) is evaluated
#: again, since the table keeps no leaves: one leaf in ten of the depth-3 search from the start
#: (55,482 evaluations of 50,298 positions). 2**16 rows of 15 words.
EVAL_ROWS = 1 << 16

_TABLE = uint64[:, ::1]
# tt, stats, killers, history, turn table, turn count, boards, keys, turn keys, the kernel's
# leaf workspace, the evaluation cache
_ARRAYS = (_TABLE, int64[::1], int64[:, ::1], int64[::1], _TABLE, int64[::1],
           uint64[:, :, ::1], _TABLE, _TABLE, typeof(K.leaf_workspace()), _TABLE)
_RETURNS = (_TABLE, _TABLE, int64[::1])
EVAL_SCALE = SPEC.eval_scale


@njit(cache=True)
def _pack(x: np.ndarray, o: np.ndarray, side: int, quiet: int, row: np.ndarray) -> None:
    """Write the exact key of the position, ``State.key()`` as words, into ``row``."""
    for w in range(W):
        row[w] = x[w]
        row[W + w] = o[w]
    row[2 * W] = np.uint64(side) | np.uint64(quiet) << _U1


@njit(cache=True)
def _turn_key(path: np.ndarray, caps: np.ndarray, n: int, ecell: np.ndarray,
              row: np.ndarray) -> None:
    """Write the key of one listed whistling capture (its captured cells, its path) into
    ``row``."""
    row[:] = 0
    for i in range(n - 1):
        rest = caps[i]
        while rest != 0:
            c = ecell[lowest_square(rest)]
            rest &= rest - _U1
            row[c >> 6] |= _U1 << np.uint64(c & 63)
    for i in range(n):
        w = W + i // 7
        row[w] |= np.uint64(path[i] + 1) << (_NINE * np.uint64(i % 7))


@njit(cache=True)
def _number(turns: np.ndarray, count: np.ndarray, history: np.ndarray,
            key: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Return (the turn's number, the turn table, the history), numbering a new turn (the
    table doubles when half full, the history with the numbers)."""
    width = key.shape[0]
    i = _slot(turns, key)
    if turns[i, width] == 0:
        if 2 * (count[0] + 1) > turns.shape[0]:
            turns = _grown(turns, width)
            i = _slot(turns, key)
        if 2 * PAIRS + count[0] == history.shape[0]:
            bigger = np.zeros(2 * history.shape[0], np.int64)
            bigger[:history.shape[0]] = history
            history = bigger
        turns[i, :width] = key
        count[0] += 1
        turns[i, width] = np.uint64(count[0])  # number + 1: 0 marks an empty row
    return 2 * PAIRS + np.int64(turns[i, width]) - 1, turns, history


@njit(cache=True)
def _refuse(stats: np.ndarray, why: int, status: int) -> None:
    """Mark the search refused by the kernel (``why``: 2 evaluating, 3 listing)."""
    stats[ABORTED] = why
    stats[REFUSED] = status


@njit(cache=True)
def _cached(cache: np.ndarray, key: np.ndarray) -> tuple[int, bool]:
    """Return (the row of ``key`` in the evaluation cache, whether it holds its value)."""
    i = np.int64(key_hash(key) & np.uint64(cache.shape[0] - 1))
    if cache[i, KEY_WORDS] == 0:
        return i, False
    for k in range(KEY_WORDS):
        if cache[i, k] != key[k]:
            return i, False
    return i, True


@njit(cache=True)
def _leaf(boards: np.ndarray, side: int, quiet: int, depth: int, ply: int,
          stats: np.ndarray, lw: tuple, cache: np.ndarray, key: np.ndarray,
          weights: np.ndarray, hidden: np.ndarray) -> tuple[bool, float]:
    """Return (True, value) for a finished game, a depth-0 node or a refused evaluation,
    else (False, 0): the kernel's result, and at depth 0 its evaluation (the learned one
    where ``weights`` has rows), in one call (an evaluation already in ``cache`` is the
    position's: only unfinished positions go in)."""
    x, o = boards[ply, 0], boards[ply, 1]
    row, known = -1, False
    if depth <= 0:
        _pack(x, o, side, quiet, key)
        row, known = _cached(cache, key)
        if known:
            return True, bits_float(cache[row, KEY_WORDS + 1])
    if depth <= 0 and weights.shape[0]:
        r, z, status = judged_learned(x, o, side, quiet, lw, weights, hidden)
        value = EVAL_SCALE * z
    else:
        r, value, status = K.judge(x, o, side, quiet, depth <= 0, lw)
    if r == K.DRAW:
        return True, 0.0
    if r != K.ONGOING:
        won = (r == K.X_WINS) == (side == 0)
        return True, (WIN - ply) if won else -1.0 * (WIN - ply)
    if depth > 0:
        return False, 0.0
    if status != K.OK:
        _refuse(stats, np.int64(2), status)
        return True, value
    for k in range(KEY_WORDS):
        cache[row, k] = key[k]
    cache[row, KEY_WORDS], cache[row, KEY_WORDS + 1] = _U1, float_bits(value)
    return True, value


@njit(cache=True)
def _local_order(ids: np.ndarray, n: int, tt_move: int, killers: np.ndarray,
                 history: np.ndarray) -> np.ndarray:
    """Return the rows of the node's turns in the reference's order (order_moves on the
    rows, with the turns' history, killers and table move)."""
    scores = np.empty(n, np.int64)
    local_tt, local_killers = np.int64(NO_MOVE), np.full(2, NO_MOVE, np.int64)
    for i in range(n):
        scores[i] = history[ids[i]]
        if ids[i] == tt_move:
            local_tt = i
        for k in range(2):
            if ids[i] == killers[k]:
                local_killers[k] = i
    rows = np.arange(n)
    order_moves(rows, n, local_tt, local_killers, scores)
    return rows


@njit(Tuple((float64, *_RETURNS))(*_ARRAYS, float64, int64, int64, int64, float64, float64,
                                 int64, *EVAL_ARGS), cache=True)
def _negamax(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
             turns: np.ndarray, count: np.ndarray, boards: np.ndarray, keys: np.ndarray,
             tkeys: np.ndarray, lw: tuple, cache: np.ndarray, deadline: float, side: int,
             quiet: int, depth: int, alpha: float, beta: float, ply: int, weights: np.ndarray,
             hidden: np.ndarray) -> tuple:
    """Return (value of ``boards[ply]`` for ``side`` to move within (alpha, beta), the table,
    the turn table, the history); ``ply`` is the distance from the root."""
    if timed_out(stats, deadline):
        return 0.0, tt, turns, history
    done, value = _leaf(boards, side, quiet, depth, ply, stats, lw, cache, keys[ply], weights,
                        hidden)
    if done or stats[ABORTED]:
        return value, tt, turns, history
    key = keys[ply]
    _pack(boards[ply, 0], boards[ply, 1], side, quiet, key)
    found, e_depth, e_value, e_flag, tt_move = tt_probe(tt, key)
    if found:
        e_value = from_tt(e_value, ply)
        if cut_by_entry(e_depth, e_value, e_flag, depth, alpha, beta):
            return e_value, tt, turns, history
    own, enemy = K._mover(boards[ply, 0], boards[ply, 1], side)
    kind, path, caps, lens, ecell, n, status = K._turns(own, enemy, quiet)
    if status != K.OK:
        _refuse(stats, np.int64(3), status)
        return 0.0, tt, turns, history
    ids = np.empty(n, np.int64)
    for i in range(n):
        if kind[i] != K.WHISTLE:  # the start and destination say all
            ids[i] = (PAIRS if kind[i] == K.CRUSH else 0) + path[i, 0] * K.NC + path[i, 1]
            continue
        _turn_key(path[i], caps[i], lens[i], ecell, tkeys[ply])
        ids[i], turns, history = _number(turns, count, history, tkeys[ply])
    order = _local_order(ids, n, tt_move, killers[ply], history)
    alpha0 = alpha
    best_value, best_move = -2 * WIN, NO_MOVE
    for j in range(n):
        i = order[j]
        q = K.child_into(own, enemy, quiet, kind[i], path[i], caps[i], lens[i], ecell,
                         boards[ply + 1, side], boards[ply + 1, 1 - side])
        child, tt, turns, history = _negamax(tt, stats, killers, history, turns, count,
                                             boards, keys, tkeys, lw, cache, deadline,
                                             1 - side, q, depth - 1, -beta, -alpha, ply + 1,
                                             weights, hidden)
        if stats[ABORTED]:
            return 0.0, tt, turns, history
        value = -child
        if value > best_value:
            best_value, best_move = value, ids[i]
        if value > alpha:
            alpha = value
            if alpha >= beta:
                reward(killers[ply], history, ids[i], depth)
                break
    flag = UPPER if best_value <= alpha0 else LOWER if best_value >= beta else EXACT
    tt = tt_store(tt, stats, key, depth, to_tt(best_value, ply), flag, best_move)
    return best_value, tt, turns, history


@njit(Tuple((float64, int64, *_RETURNS))(*_ARRAYS, float64, int64, int64, int64[::1], int64,
                                         *EVAL_ARGS), cache=True)
def search_root(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
                turns: np.ndarray, count: np.ndarray, boards: np.ndarray, keys: np.ndarray,
                tkeys: np.ndarray, lw: tuple, cache: np.ndarray, deadline: float, side: int,
                quiet: int, root_rows: np.ndarray, depth: int, weights: np.ndarray,
                hidden: np.ndarray) -> tuple:
    """Search the root's turns (``boards[0]``; ``root_rows``: their rows in the kernel's
    list, in the order to search) to ``depth``; return (best value, best row, the table,
    the turn table, the history), like the reference's ``_root``."""
    own, enemy = K._mover(boards[0, 0], boards[0, 1], side)
    kind, path, caps, lens, ecell, n, status = K._turns(own, enemy, quiet)
    alpha, beta = -2 * WIN, 2 * WIN
    best_row, best_value = root_rows[0], -2 * WIN
    for i in root_rows:
        q = K.child_into(own, enemy, quiet, kind[i], path[i], caps[i], lens[i], ecell,
                         boards[1, side], boards[1, 1 - side])
        child, tt, turns, history = _negamax(tt, stats, killers, history, turns, count,
                                             boards, keys, tkeys, lw, cache, deadline,
                                             1 - side, q, depth - 1, -beta, -alpha, 1,
                                             weights, hidden)
        if stats[ABORTED]:
            break
        value = -child
        if value > best_value:
            best_row, best_value = i, value
        if value > alpha:  # alpha = max(alpha, value), keeping the first of equals
            alpha = value
    return best_value, best_row, tt, turns, history


class CompiledWhistlingAlphaBeta(CompiledAlphaBeta):
    """:class:`AlphaBetaAgent` for Whistling with its tree search compiled (same moves and
    scores)."""

    def __init__(self, depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, tt_size: int = 200_000,
                 learned_eval: LearnedEval | None = None) -> None:
        # the history is the turn table's (it grows with the numbered turns); no move buffer
        super().__init__("whistling", KEY_WORDS, 2 * PAIRS + INITIAL_TURNS, 0, depth=depth,
                         seconds=seconds, seed=seed, tt_size=tt_size,
                         learned_eval=learned_eval)
        self._stats = np.zeros(4, dtype=np.int64)
        self._turns = np.zeros((2 * INITIAL_TURNS, TURN_WORDS + 1), dtype=np.uint64)
        self._count = np.zeros(1, dtype=np.int64)
        self._boards = np.zeros((self.plies + 1, 2, W), dtype=np.uint64)
        self._keys = np.zeros((self.plies + 1, KEY_WORDS), dtype=np.uint64)
        self._tkeys = np.zeros((self.plies + 1, TURN_WORDS), dtype=np.uint64)
        self._leaf = K.leaf_workspace()
        self._evals = np.zeros((EVAL_ROWS, KEY_WORDS + 2), dtype=np.uint64)

    def reset(self) -> None:
        super().reset()
        self._turns[:] = 0
        self._count[0] = 0

    def _position(self, state: State) -> tuple[int, int]:
        """Set the root's stones; return (side, quiet)."""
        self._boards[0, 0] = K.words(state.stones[0])
        self._boards[0, 1] = K.words(state.stones[1])
        return state.side, state.quiet

    def _finish(self) -> None:
        """Raise the kernel's refusal when a node passed its bounds (else the base class's
        time-out check)."""
        if self._stats[ABORTED] >= 2:
            what = "the maximum-capture search" if self._stats[ABORTED] == 2 else \
                "listing the turns"
            self._stats[ABORTED] = 0
            self.counters["nodes"] += int(self._stats[0])
            raise K._refused(int(self._stats[REFUSED]), what)
        super()._finish()

    def _root(self, state: State, moves: list, depth: int) -> tuple[float, Turn]:  # type: ignore[override]
        """Search every root turn to ``depth`` in the compiled kernel; raise _Timeout when
        the time ran out."""
        listed = state.legal_moves()
        row_of = {turn: i for i, turn in enumerate(listed)}
        side, quiet = self._position(state)
        deadline = self._start()
        value, row, self._tt, self._turns, self._scores = search_root(
            self._tt, self._stats, self._killers, self._scores, self._turns, self._count,
            self._boards, self._keys, self._tkeys, self._leaf, self._evals, deadline, side,
            quiet, np.array([row_of[m] for m in moves], dtype=np.int64), depth, self._weights,
            self._hidden)
        self._finish()
        return float(value), listed[int(row)]

    def search_value(self, state: State) -> float:  # type: ignore[override]
        """Return the value of ``state`` for its side to move, searched to the agent's depth."""
        self._timed = False
        self._new_search()
        side, quiet = self._position(state)
        self._start()
        value, self._tt, self._turns, self._scores = _negamax(
            self._tt, self._stats, self._killers, self._scores, self._turns, self._count,
            self._boards, self._keys, self._tkeys, self._leaf, self._evals, INF, side, quiet,
            self.depth, -2 * WIN, 2 * WIN, 0, self._weights, self._hidden)
        self._finish()
        return float(value)

    def learned_value(self, state: State) -> float:
        """Return the learned evaluation of an unfinished ``state`` for its side to move, in
        search units."""
        _, z, _ = judged_learned(K.words(state.stones[0]), K.words(state.stones[1]),
                                 state.side, state.quiet, self._leaf, self._weights,
                                 self._hidden)
        return EVAL_SCALE * z
