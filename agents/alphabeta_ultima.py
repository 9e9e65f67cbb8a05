"""Alpha-beta for Ultima on the compiled kernel: agents/alphabeta.py, move for move.

:class:`CompiledUltimaAlphaBeta` is :class:`~.alphabeta.AlphaBetaAgent` with the tree below
the root compiled with numba on :mod:`boardzoo.envs.ultima.kernel` and the shared parts of
:mod:`.alphabeta_compiled`. The iterative deepening, the root shuffle with the agent's seed
and the time control are the base class's own Python, so at a fixed depth and seed it returns
the same best move, score and node count as the reference (tests/test_ultima_alphabeta.py
checks all three). ``alphabeta:...`` builds it for Ultima (:func:`.alphabeta.from_spec`), and
so does the network's leaf search (``leaf=D``); ``AlphaBetaAgent("ultima", ...)`` stays the
reference.

What it reproduces of the reference, and how:

* The table's key is the reference's ``State.key()``, (board, side), exactly: the 64 piece
  codes packed four bits each into four words, and the side; no hash stands for a position.
* Repetition inside the search (spec 9.4) compares the same exact keys: the path's positions
  since the last capture, after the game's own ``State.history``, as the reference's states
  would hold them (the kernel's Zobrist keys would do with a 2**-64 chance of a false draw;
  exact keys cost nothing measurable here).
* A node is judged as the reference judges it: its legal moves first (none: the mover loses),
  then bare kings, the no-capture rule, threefold repetition and the ply cap; the evaluation
  is the kernel's, bit for bit the reference's float.
"""

from __future__ import annotations

import numpy as np
from numba.types import Tuple, float64, int64, uint8, uint64

from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.ultima import kernel as K
from boardzoo.envs.ultima.learned_eval import judged_learned
from boardzoo.envs.ultima.rules import State
from boardzoo.envs.ultima.spec import SPEC

from ..envs.core.jit import njit
from .alphabeta import EXACT, LOWER, UPPER, WIN
from .alphabeta_compiled import (
    ABORTED,
    EVAL_ARGS,
    INF,
    NO_MOVE,
    CompiledAlphaBeta,
    cut_by_entry,
    from_tt,
    order_moves,
    reward,
    timed_out,
    to_tt,
    tt_probe,
    tt_store,
)

#: Move numbers: 64 * origin + destination.
ACTIONS = 64 * 64
#: Words of a key: the board in four, four bits a square, then the side to move.
KEY_WORDS = 5
_SHIFTS = (4 * (np.arange(64) % 16)).astype(np.uint64).reshape(4, 16)
_U4, _U15 = np.uint64(4), np.uint64(15)

# The entry points' argument types (C-contiguous arrays), written out so that numba compiles
# each once and types no argument as a literal (a literal-typed copy of a recursive function,
# once cached, calls a null pointer when loaded again: docs/compiled.md).
_TABLE = uint64[:, ::1]
_ARRAYS = (_TABLE, int64[::1], int64[:, ::1], int64[::1], uint64[:, ::1], int64[:, ::1],
           int64[:, ::1], int64[:, ::1], uint8[:, ::1])
EVAL_SCALE = SPEC.eval_scale


@njit(cache=True)
def _pack(b: np.ndarray, side: int, row: np.ndarray) -> None:
    """Write the exact key of (board ``b``, ``side``) into ``row``: ``State.key()`` as words."""
    for k in range(4):
        word = np.uint64(0)
        for s in range(16 * k + 15, 16 * k - 1, -1):
            word = word << _U4 | np.uint64(b[s])
        row[k] = word
    row[4] = np.uint64(side)


@njit(cache=True)
def _occurrences(path: np.ndarray, start: int, length: int) -> int:
    """Return how often ``path[length]`` occurs in ``path[start:length + 1]`` (itself too)."""
    count = 0
    for i in range(start, length + 1):
        same = True
        for k in range(KEY_WORDS):
            if path[i, k] != path[length, k]:
                same = False
                break
        if same:
            count += 1
    return count


# -- tree ---------------------------------------------------------------------------------


@njit(cache=True)
def _leaf_value(b: np.ndarray, side: int, halfmove: int, gply: int, depth: int, ply: int,
                path: np.ndarray, start: int, length: int, moves: np.ndarray,
                caps: np.ndarray, weights: np.ndarray,
                hidden: np.ndarray) -> tuple[bool, float, int]:
    """Return (True, value, 0) for a finished game or a depth-0 node, else (False, 0, the
    number of legal moves, written into ``moves`` and ``caps``); a depth-0 node is scored by
    the learned evaluation ``weights`` where it has rows."""
    occurrences = _occurrences(path, start, length)
    n = np.int64(0)
    if depth <= 0 and weights.shape[0]:
        result, z = judged_learned(b, side, halfmove, gply, occurrences, moves, caps,
                                   weights, hidden)
        value = EVAL_SCALE * z
    elif depth <= 0:  # judged and evaluated in one pass: the same result and float
        result, value = K.judged_evaluation(b, side, halfmove, gply, occurrences, moves, caps)
    else:
        n = K.legal_moves(b, K.COLOUR[side], moves, caps)
        result, value = K.judge(b, side, halfmove, gply, occurrences, n), 0.0
    if result == K.WHITE_WINS or result == K.BLACK_WINS:
        won = (result == K.WHITE_WINS) == (side == 0)
        return True, (WIN - ply) if won else -1.0 * (WIN - ply), n
    if result != K.ONGOING:
        return True, 0.0, n
    return depth <= 0, value, n


@njit(Tuple((float64, _TABLE))(*_ARRAYS, float64, int64, int64, int64, int64, float64,
                               float64, int64, int64, int64, *EVAL_ARGS), cache=True)
def _negamax(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
             path: np.ndarray, moves: np.ndarray, caps: np.ndarray, capmap: np.ndarray,
             boards: np.ndarray, deadline: float, side: int, halfmove: int, gply: int,
             depth: int, alpha: float, beta: float, ply: int, start: int,
             length: int, weights: np.ndarray, hidden: np.ndarray) -> tuple[float, np.ndarray]:
    """Return (value of ``boards[ply]`` for ``side`` to move within (alpha, beta), the
    table); ``gply`` is the game's ply, ``ply`` the distance from the root, and
    ``path[start:length + 1]`` the repetition history, this position (written here) last."""
    if timed_out(stats, deadline):
        return 0.0, tt
    b = boards[ply]
    key = path[length]
    _pack(b, side, key)
    done, value, n = _leaf_value(b, side, halfmove, gply, depth, ply, path, start, length,
                                 moves[ply], caps[ply], weights, hidden)
    if done:
        return value, tt
    found, e_depth, e_value, e_flag, tt_move = tt_probe(tt, key)
    if found:
        e_value = from_tt(e_value, ply)
        if cut_by_entry(e_depth, e_value, e_flag, depth, alpha, beta):
            return e_value, tt
    buf, cmap = moves[ply], capmap[ply]
    for i in range(n):  # the ordering moves moves only: their captures stay findable
        cmap[buf[i]] = caps[ply, i]
    order_moves(buf, n, tt_move, killers[ply], history)
    alpha0 = alpha
    best_value, best_move = -2 * WIN, NO_MOVE
    for i in range(n):
        move = buf[i]
        m = cmap[move]
        K.make_move(b, move, m, boards[ply + 1])
        # a capture can never be undone: the child's history starts with the child
        child, tt = _negamax(tt, stats, killers, history, path, moves, caps, capmap, boards,
                             deadline, 1 - side, 0 if m else halfmove + 1, gply + 1,
                             depth - 1, -beta, -alpha, ply + 1,
                             length + 1 if m else start, length + 1, weights, hidden)
        if stats[ABORTED]:
            return 0.0, tt
        value = -child
        if value > best_value:
            best_value, best_move = value, move
        if value > alpha:
            alpha = value
            if alpha >= beta:
                reward(killers[ply], history, move, depth)
                break
    flag = UPPER if best_value <= alpha0 else LOWER if best_value >= beta else EXACT
    tt = tt_store(tt, stats, key, depth, to_tt(best_value, ply), flag, best_move)
    return best_value, tt


@njit(Tuple((float64, int64, _TABLE))(*_ARRAYS, float64, int64, int64, int64, int64,
                                      int64[::1], int64, *EVAL_ARGS), cache=True)
def search_root(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
                path: np.ndarray, moves: np.ndarray, caps: np.ndarray, capmap: np.ndarray,
                boards: np.ndarray, deadline: float, side: int, halfmove: int, gply: int,
                length: int, root_moves: np.ndarray, depth: int, weights: np.ndarray,
                hidden: np.ndarray) -> tuple[float, int, np.ndarray]:
    """Search every root move (``boards[0]``, ``path[length]`` its key) to ``depth`` in the
    given order; return (best value, best move, the table), like the reference's ``_root``."""
    b = boards[0]
    n = K.legal_moves(b, K.COLOUR[side], moves[0], caps[0])
    for i in range(n):
        capmap[0, moves[0, i]] = caps[0, i]
    alpha, beta = -2 * WIN, 2 * WIN
    best_move, best_value = root_moves[0], -2 * WIN
    for i in range(root_moves.shape[0]):
        move = root_moves[i]
        m = capmap[0, move]
        K.make_move(b, move, m, boards[1])
        child, tt = _negamax(tt, stats, killers, history, path, moves, caps, capmap, boards,
                             deadline, 1 - side, 0 if m else halfmove + 1, gply + 1,
                             depth - 1, -beta, -alpha, 1, length + 1 if m else 0, length + 1,
                             weights, hidden)
        if stats[ABORTED]:
            break
        value = -child
        if value > best_value:
            best_move, best_value = move, value
        if value > alpha:  # alpha = max(alpha, value), keeping the first of equals
            alpha = value
    return best_value, best_move, tt


def history_rows(state: State, spare: int) -> np.ndarray:
    """Return ``state.history`` as key rows (:func:`_pack`'s), the current position's last,
    followed by ``spare`` rows for the search's path."""
    n = len(state.history)
    raw = np.frombuffer(b"".join(state.history), dtype=np.uint8).reshape(n, 65)
    path = np.zeros((n + spare, KEY_WORDS), dtype=np.uint64)
    # the squares' nibbles never overlap, so their sum is their bitwise or
    path[:n, :4] = (raw[:, :64].reshape(n, 4, 16).astype(np.uint64) << _SHIFTS).sum(axis=2)
    path[:n, 4] = raw[:, 64] == ord("b")
    return path


class CompiledUltimaAlphaBeta(CompiledAlphaBeta):
    """:class:`AlphaBetaAgent` for Ultima with its tree search compiled (same moves and
    scores)."""

    def __init__(self, depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, tt_size: int = 200_000,
                 learned_eval: LearnedEval | None = None) -> None:
        super().__init__("ultima", KEY_WORDS, ACTIONS, K.MAX_MOVES, depth=depth,
                         seconds=seconds, seed=seed, tt_size=tt_size,
                         learned_eval=learned_eval)
        self._caps = np.empty_like(self._moves)
        self._capmap = np.empty((self.plies, ACTIONS), dtype=np.int64)  # written before read
        self._boards = np.empty((self.plies + 1, 64), dtype=np.uint8)

    def _position(self, state: State) -> tuple[np.ndarray, int]:
        """Set the root's board; return the path (the game's history first) and the root's
        row in it."""
        self._boards[0] = np.frombuffer(state.board, dtype=np.uint8)
        return history_rows(state, self.plies + 1), len(state.history) - 1

    def _root(self, state: State, moves: list, depth: int) -> tuple[float, int]:  # type: ignore[override]
        """Search every root move to ``depth`` in the compiled kernel; raise _Timeout when
        the time ran out."""
        path, length = self._position(state)
        deadline = self._start()
        value, move, self._tt = search_root(
            self._tt, self._stats, self._killers, self._scores, path, self._moves, self._caps,
            self._capmap, self._boards, deadline, state.side, state.halfmove, state.ply, length,
            np.array(moves, dtype=np.int64), depth, self._weights, self._hidden)
        self._finish()
        return float(value), int(move)

    def search_value(self, state: State) -> float:  # type: ignore[override]
        """Return the value of ``state`` for its side to move, searched to the agent's depth."""
        self._timed = False
        self._new_search()
        path, length = self._position(state)
        self._start()
        # _negamax at the root, called from Python: one compiled entry point fewer
        value, self._tt = _negamax(
            self._tt, self._stats, self._killers, self._scores, path, self._moves, self._caps,
            self._capmap, self._boards, INF, state.side, state.halfmove, state.ply, self.depth,
            -2 * WIN, 2 * WIN, 0, 0, length, self._weights, self._hidden)
        self._finish()
        return float(value)

    def learned_value(self, state: State) -> float:
        """Return the learned evaluation of an unfinished ``state`` for its side to move, in
        search units."""
        b = np.frombuffer(bytearray(state.board), dtype=np.uint8)
        moves, caps = np.empty(K.MAX_MOVES, np.int64), np.empty(K.MAX_MOVES, np.int64)
        _, z = judged_learned(b, state.side, 0, 0, 1, moves, caps, self._weights, self._hidden)
        return EVAL_SCALE * z
