"""Alpha-beta for Lines of Action on the compiled kernel: agents/alphabeta.py, move for move.

:class:`CompiledLoaAlphaBeta` is :class:`~.alphabeta.AlphaBetaAgent` with the tree below
the root (``_negamax``, ``_ordered``, ``_reward``, the transposition table) compiled with
numba on :mod:`boardzoo.envs.loa.kernel`, its leaves scored by the hand-made evaluation or
a learned one (``learned_eval``, :mod:`boardzoo.envs.loa.learned_eval`). The iterative
deepening, the root shuffle with the agent's seed and the time control are the base class's
own Python, so at a fixed depth and seed the compiled search returns the same best move, the
same score and the same node count as the reference (tests/test_loa_kernel.py checks all
three; tests/test_learned_eval.py with a learned evaluation). ``alphabeta:...`` builds it for
LOA (:func:`.alphabeta.from_spec`); ``AlphaBetaAgent("loa", ...)`` stays the reference.

What it reproduces of the reference, and how:

* The table (:mod:`.alphabeta_compiled`'s) is keyed by (black, white, side), the
  reference's ``State.key()``; the move ordering, killers and history are the shared ones.
* Repetition inside the search (spec 6.3): the keys of the path since the last capture,
  after the game's own history, as ``State.history`` would hold them.
* The one difference: under a time limit the reference reads the clock at every node, this
  search every :data:`~.alphabeta_compiled.CLOCK_EVERY` nodes, so a timed search may run a
  few microseconds past its deadline.
"""

from __future__ import annotations

import numpy as np
from numba.types import Tuple, float64, int64, uint64

from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.loa import kernel as K
from boardzoo.envs.loa.learned_eval import evaluate as learned
from boardzoo.envs.loa.rules import State
from boardzoo.envs.loa.spec import SPEC

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

# The entry points' argument types (C-contiguous arrays): with the signatures written out,
# numba compiles each once, typing no argument as a literal constant (why: a literal-typed
# copy of the recursive _negamax, once cached, calls a null pointer when loaded again).
_TABLE = uint64[:, ::1]
_ARRAYS = (_TABLE, int64[::1], int64[:, ::1], int64[::1], uint64[:, ::1], int64[:, ::1])
EVAL_SCALE = SPEC.eval_scale


@njit(cache=True)
def _ordered(black: np.uint64, white: np.uint64, side: int, tt_move: int,
             killers: np.ndarray, history: np.ndarray, buf: np.ndarray) -> int:
    """Write the legal moves of an unfinished game into ``buf``: TT move, killers, then by
    history score; return their count."""
    n = K.moves_of(black, white, side, buf)
    order_moves(buf, n, tt_move, killers, history)
    return n


# -- tree ---------------------------------------------------------------------------------


@njit(cache=True)
def _leaf_value(black: np.uint64, white: np.uint64, side: int, gply: int, depth: int,
                ply: int, path: np.ndarray, start: int, length: int, weights: np.ndarray,
                hidden: np.ndarray) -> tuple[bool, float]:
    """Return (True, value) for a finished game or a depth-0 node, else (False, 0); a
    depth-0 node is scored by the learned evaluation ``weights`` where it has rows."""
    repeated = K.repetitions(path, start, length, black, white, side) >= 2
    result = K.judge(black, white, side, gply, repeated)
    if result == K.BLACK_WINS or result == K.WHITE_WINS:
        won = (result == K.BLACK_WINS) == (side == K.BLACK)
        return True, (WIN - ply) if won else -1.0 * (WIN - ply)
    if result != K.ONGOING:
        return True, 0.0
    if depth <= 0:
        if weights.shape[0]:
            return True, EVAL_SCALE * learned(black, white, side, weights, hidden)
        return True, K.evaluate(black, white, side)
    return False, 0.0


@njit(Tuple((float64, _TABLE))(*_ARRAYS, float64, uint64, uint64, int64, int64, int64, float64,
                               float64, int64, int64, int64, *EVAL_ARGS), cache=True)
def _negamax(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
             path: np.ndarray, moves: np.ndarray, deadline: float, black: np.uint64,
             white: np.uint64, side: int, gply: int, depth: int, alpha: float, beta: float,
             ply: int, start: int, length: int, weights: np.ndarray,
             hidden: np.ndarray) -> tuple[float, np.ndarray]:
    """Return (value of the position for its side to move within (alpha, beta), the table);
    ``gply`` is the game's ply, ``ply`` the distance from the root, ``path[start:length]``
    the repetition history."""
    if timed_out(stats, deadline):
        return 0.0, tt
    done, value = _leaf_value(black, white, side, gply, depth, ply, path, start, length,
                              weights, hidden)
    if done:
        return value, tt
    # path[length] is this position's row: the table's key and its children's history
    path[length, 0], path[length, 1], path[length, 2] = black, white, np.uint64(side)
    key = path[length]
    found, e_depth, e_value, e_flag, tt_move = tt_probe(tt, key)
    if found:
        e_value = from_tt(e_value, ply)
        if cut_by_entry(e_depth, e_value, e_flag, depth, alpha, beta):
            return e_value, tt
    buf = moves[ply]
    n = _ordered(black, white, side, tt_move, killers[ply], history, buf)
    alpha0 = alpha
    best_value, best_move = -2 * WIN, NO_MOVE
    for i in range(n):
        move = buf[i]
        b, w, captured = K.apply_move(black, white, side, move)
        # a capture can never be undone: the child's history starts with this position
        child, tt = _negamax(tt, stats, killers, history, path, moves, deadline, b, w,
                             1 - side, gply + 1, depth - 1, -beta, -alpha, ply + 1,
                             length if captured else start, length + 1, weights, hidden)
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


@njit(Tuple((float64, int64, _TABLE))(*_ARRAYS, float64, uint64, uint64, int64, int64, int64,
                                      int64[::1], int64, *EVAL_ARGS), cache=True)
def search_root(tt: np.ndarray, stats: np.ndarray, killers: np.ndarray, history: np.ndarray,
                path: np.ndarray, moves: np.ndarray, deadline: float, black: np.uint64,
                white: np.uint64, side: int, gply: int, length: int, root_moves: np.ndarray,
                depth: int, weights: np.ndarray, hidden: np.ndarray,
                ) -> tuple[float, int, np.ndarray]:
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
                             length if captured else 0, length + 1, weights, hidden)
        if stats[ABORTED]:
            break
        value = -child
        if value > best_value:
            best_move, best_value = move, value
        if value > alpha:  # alpha = max(alpha, value), keeping the first of equals
            alpha = value
    return best_value, best_move, tt


class CompiledLoaAlphaBeta(CompiledAlphaBeta):
    """:class:`AlphaBetaAgent` for LOA with its tree search compiled (same moves and scores)."""

    def __init__(self, depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, tt_size: int = 200_000,
                 learned_eval: LearnedEval | None = None) -> None:
        # key: black, white, side (State.key())
        super().__init__("loa", 3, K.PASS + 1, K.MAX_MOVES, depth=depth, seconds=seconds,
                         seed=seed, tt_size=tt_size, learned_eval=learned_eval)

    def learned_value(self, state: State) -> float:
        """Return the learned evaluation of ``state`` for its side to move, in search units."""
        black, white, side, _ = K.position_of(state)
        return EVAL_SCALE * learned(black, white, side, self._weights, self._hidden)

    def _root(self, state: State, moves: list, depth: int) -> tuple[float, int]:  # type: ignore[override]
        """Search every root move to ``depth`` in the compiled kernel; raise _Timeout when
        the time ran out."""
        black, white, side, ply = K.position_of(state)
        path = K.history_of(state, spare=self.plies + 1)
        deadline = self._start()
        value, move, self._tt = search_root(
            self._tt, self._stats, self._killers, self._scores, path, self._moves, deadline,
            black, white, side, ply, len(state.history), np.array(moves, dtype=np.int64),
            depth, self._weights, self._hidden)
        self._finish()
        return float(value), int(move)

    def search_value(self, state: State) -> float:  # type: ignore[override]
        """Return the value of ``state`` for its side to move, searched to the agent's depth."""
        self._timed = False
        self._new_search()
        black, white, side, ply = K.position_of(state)
        path = K.history_of(state, spare=self.plies + 1)
        self._start()
        # _negamax at the root, called from Python: one compiled entry point fewer
        value, self._tt = _negamax(self._tt, self._stats, self._killers, self._scores, path,
                                   self._moves, INF, black, white, side, ply, self.depth,
                                   -2 * WIN, 2 * WIN, 0, 0, len(state.history),
                                   self._weights, self._hidden)
        self._finish()
        return float(value)
