"""Negamax alpha-beta with iterative deepening, a transposition table and move ordering.

``alphabeta:D`` searches to depth D (whole turns); ``alphabeta:t=0.5s`` deepens
until the time is up and plays the best move of the last finished depth (time
limited play is not reproducible: it depends on the machine's speed). A per-move
time limit given to any agent (:meth:`Agent.set_move_time`, ``--movetime``) works as
``t=``; with both, the smaller counts, and with a depth too, whichever ends first. Move
ordering: the transposition-table move, then killer moves, then the history
heuristic. Root moves are shuffled once with the agent's seed so that equally
good moves vary from game to game. :func:`from_spec` builds each game's compiled search
(:mod:`.alphabeta_loa`, :mod:`.alphabeta_ultima`, :mod:`.alphabeta_whistling`), which
reproduces this one (docs/compiled.md).
"""

from __future__ import annotations

import importlib.resources
import random
import time
from pathlib import Path

from boardzoo.envs.core.game import BoardzooError, GameState, Move
from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.core.registry import get_spec

from .agent_spec import (
    AgentKind,
    AgentSpec,
    Option,
    Parser,
    UnknownAgentError,
    unquote,
    whole,
)
from .base import Agent
from .evaluation import Evaluator, get_evaluator
from .movetime import seconds

WIN = 1_000_000.0  # a won terminal position; minus the distance so that faster wins score more
EXACT, LOWER, UPPER = 0, 1, 2
MAX_DEPTH = 64
DEFAULT_DEPTH = 2  # a spec that names neither a depth nor a time


def _to_tt(value: float, ply: int) -> float:
    """Store win scores relative to this node, not the root (a TT hit may be at another ply)."""
    if value > WIN - 1000:
        return value + ply
    if value < -(WIN - 1000):
        return value - ply
    return value


def _from_tt(value: float, ply: int) -> float:
    """Undo :func:`_to_tt` for a node ``ply`` plies from the root."""
    if value > WIN - 1000:
        return value - ply
    if value < -(WIN - 1000):
        return value + ply
    return value


class _Timeout(Exception):
    """Raised inside the search when the time budget is spent."""


class AlphaBetaAgent(Agent):
    """Negamax alpha-beta to a fixed depth or within a time budget per move."""

    def __init__(self, game: str, depth: int | None = None, seconds: float | None = None,
                 seed: int | None = None, evaluator: Evaluator | None = None,
                 tt_size: int = 200_000) -> None:
        #: Whether the depth was chosen (else it is the default, which a time limit lifts).
        self.depth_given = depth is not None
        self.depth = depth if depth is not None else MAX_DEPTH if seconds else DEFAULT_DEPTH
        self.seconds = seconds
        self.evaluate = evaluator or get_evaluator(game)
        self.rng = random.Random(seed)
        self.tt_size = tt_size
        self.tt: dict = {}
        self.killers: dict[int, list[Move]] = {}
        self.history: dict[Move, int] = {}
        self.counters = {"nodes": 0, "seconds": 0.0, "depth_sum": 0, "moves": 0}
        self._deadline = 0.0
        self._timed = False
        self.last_value = 0.0

    def reset(self) -> None:
        self.tt.clear()
        self.history.clear()

    def stats(self) -> dict[str, float]:
        return dict(self.counters)

    # -- root ----------------------------------------------------------------------------
    def select_move(self, state: GameState) -> Move:
        start = time.perf_counter()
        seconds = min((s for s in (self.seconds, self.move_time) if s), default=None)
        self._timed = bool(seconds)
        self._deadline = start + seconds if seconds else float("inf")
        max_depth = MAX_DEPTH if seconds and not self.depth_given else self.depth
        self._new_search()
        moves = list(state.legal_moves())
        self.rng.shuffle(moves)
        best, done = moves[0], 0
        if len(moves) > 1:
            for depth in range(1, max_depth + 1):
                try:
                    value, move = self._root(state, moves, depth)
                except _Timeout:
                    break
                best, done, self.last_value = move, depth, value
                moves.remove(move)
                moves.insert(0, move)  # search the last best move first at the next depth
                if abs(value) >= WIN - MAX_DEPTH:  # a forced result: deeper search won't change it
                    break
        self.counters["seconds"] += time.perf_counter() - start
        self.counters["depth_sum"] += done
        self.counters["moves"] += 1
        return best

    def search_value(self, state: GameState) -> float:
        """Return the value of ``state`` for its side to move, searched to the agent's depth
        (evaluation units; a won or lost end is about plus or minus :data:`WIN`)."""
        self._timed = False
        self._new_search()
        return self._negamax(state, self.depth, -2 * WIN, 2 * WIN, 0)

    def _new_search(self) -> None:
        """Forget the last search's killer moves; keep the table's memory bounded across a
        long game."""
        self.killers.clear()
        if len(self.tt) > self.tt_size:
            self.tt.clear()

    def _root(self, state: GameState, moves: list[Move], depth: int) -> tuple[float, Move]:
        """Search every root move to ``depth``; return the best value and move."""
        alpha, beta = -2 * WIN, 2 * WIN
        best_move, best_value = moves[0], -2 * WIN
        for move in moves:
            child = state.apply(move)
            value = self._child_value(state, child, depth - 1, alpha, beta, 1)
            if value > best_value:
                best_move, best_value = move, value
            alpha = max(alpha, value)
        return best_value, best_move

    def _child_value(self, state: GameState, child: GameState, depth: int, alpha: float,
                     beta: float, ply: int) -> float:
        """Return the value of ``child`` for the side to move in ``state``."""
        if child.to_move == state.to_move:  # same side moves again: no sign change
            return self._negamax(child, depth, alpha, beta, ply)
        return -self._negamax(child, depth, -beta, -alpha, ply)

    # -- tree ----------------------------------------------------------------------------
    def _negamax(self, state: GameState, depth: int, alpha: float, beta: float,
                 ply: int) -> float:
        """Return the value of ``state`` for its side to move, within (alpha, beta)."""
        self.counters["nodes"] += 1
        if self._timed and time.perf_counter() > self._deadline:
            raise _Timeout  # checked at every node: one node of Whistling can take a millisecond
        if state.is_terminal():
            r = state.returns()[state.to_move]
            return r * (WIN - ply) if r else 0.0
        if depth <= 0:
            return self.evaluate(state)
        key = state.key()
        entry = self.tt.get(key)
        tt_move = None
        if entry is not None:
            e_depth, e_value, e_flag, tt_move = entry
            e_value = _from_tt(e_value, ply)
            if e_depth >= depth:
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER and e_value >= beta:
                    return e_value
                if e_flag == UPPER and e_value <= alpha:
                    return e_value
        alpha0 = alpha
        best_value, best_move = -2 * WIN, None
        for move in self._ordered(state, tt_move, ply):
            value = self._child_value(state, state.apply(move), depth - 1, alpha, beta, ply + 1)
            if value > best_value:
                best_value, best_move = value, move
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    self._reward(move, depth, ply)
                    break
        flag = UPPER if best_value <= alpha0 else LOWER if best_value >= beta else EXACT
        self.tt[key] = (depth, _to_tt(best_value, ply), flag, best_move)
        return best_value

    def _ordered(self, state: GameState, tt_move: Move | None, ply: int) -> list[Move]:
        """Return the legal moves: TT move, killers, then by history score."""
        moves = list(state.legal_moves())
        history = self.history
        moves.sort(key=lambda m: -history.get(m, 0))
        front = [m for m in self.killers.get(ply, ()) if m in moves]
        if tt_move is not None and tt_move in moves:
            front = [tt_move] + [m for m in front if m != tt_move]
        if front:
            moves = front + [m for m in moves if m not in front]
        return moves

    def _reward(self, move: Move, depth: int, ply: int) -> None:
        """Remember a move that caused a cut-off (killer and history heuristics)."""
        self.history[move] = self.history.get(move, 0) + depth * depth
        killers = self.killers.setdefault(ply, [])
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]


DEPTH = Option("depth", whole(1, metavar="D"), "the search depth in whole turns (default 2; "
               "none under a time limit)")
#: ``alphabeta[:D][,t=S][,eval=E]``: the value is the depth (``alphabeta:3`` =
#: ``alphabeta:depth=3``).
AGENT_KIND = AgentKind("alphabeta", (
    DEPTH,
    Option("t", seconds(), "seconds per move: the search deepens until the time is up"),
    Option("eval", Parser(unquote, "hand, learned or a file's path", "hand|learned|FILE"),
           "the leaves' evaluation: hand (the default), learned (the one shipped, "
           "fitted to the shipped network; LOA) or the path of a boardzoo fit-eval file",
           default="hand"),
), value=DEPTH)


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> AlphaBetaAgent:
    """Build ``alphabeta:D`` or ``alphabeta:t=0.5s`` (or both: ``alphabeta:6,t=2s``); no depth
    means depth 2, or no depth limit under a time limit: the game's compiled search
    (:func:`searcher`), its leaves scored as ``eval=`` says."""
    opts = AGENT_KIND.bind(spec)
    learned = None if opts["eval"] == "hand" else load_learned_eval(game, opts["eval"])
    return searcher(game, depth=opts["depth"], seconds=opts["t"], seed=seed,
                    learned_eval=learned)


def shipped_eval(game: str) -> Path:
    """Return the path of the learned evaluation shipped for ``game`` (package data)."""
    return Path(str(importlib.resources.files("boardzoo.agents") / "nets" / f"{game}_eval.npz"))


def load_learned_eval(game: str, where: str) -> LearnedEval:
    """Return the learned evaluation ``where`` names for ``game`` (``learned``: the shipped
    one); UnknownAgentError if the game has none or the file cannot be used."""
    try:
        module = get_spec(game).learned_eval_inputs()
        path = shipped_eval(game) if where == "learned" else Path(where)
        if where == "learned" and not path.is_file():
            raise BoardzooError(f"no learned evaluation is shipped for {game}; fit one with "
                                "boardzoo fit-eval and give eval=FILE")
        return LearnedEval.load(path, game, module.SPARSE, module.DENSE)
    except BoardzooError as exc:
        raise UnknownAgentError(f"agent alphabeta: eval={where}: {exc}") from None


def searcher(game: str, depth: int | None = None, seconds: float | None = None,
             seed: int | None = None, learned_eval: LearnedEval | None = None,
             ) -> AlphaBetaAgent:
    """Return the alpha-beta search of ``game``: the compiled one of :mod:`.alphabeta_loa`,
    :mod:`.alphabeta_ultima` or :mod:`.alphabeta_whistling` (the same moves and scores, many
    times faster), this module's for any other game; ``learned_eval`` scores its leaves
    (games whose compiled search takes one)."""
    # imported here, so that numba loads only in processes that search these games
    if learned_eval is not None and game not in ("loa", "ultima", "whistling"):
        raise UnknownAgentError(f"agent alphabeta: {game}'s search takes no learned evaluation")
    if game == "loa":
        from .alphabeta_loa import CompiledLoaAlphaBeta

        return CompiledLoaAlphaBeta(depth=depth, seconds=seconds, seed=seed,
                                    learned_eval=learned_eval)
    if game == "ultima":
        from .alphabeta_ultima import CompiledUltimaAlphaBeta

        return CompiledUltimaAlphaBeta(depth=depth, seconds=seconds, seed=seed,
                                       learned_eval=learned_eval)
    if game == "whistling":
        from .alphabeta_whistling import CompiledWhistlingAlphaBeta

        return CompiledWhistlingAlphaBeta(depth=depth, seconds=seconds, seed=seed,
                                          learned_eval=learned_eval)
    return AlphaBetaAgent(game, depth=depth, seconds=seconds, seed=seed)
