"""OpenSpiel bots and boardzoo agents in both directions (needs the ``openspiel`` extra).

:class:`AgentBot` lets any boardzoo agent play in OpenSpiel; ``openspiel_mcts``
(:class:`OpenSpielMCTSAgent`) is OpenSpiel's MCTSBot as a boardzoo agent. The
games themselves are :mod:`boardzoo.envs.openspiel`.
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

from boardzoo.envs.core.game import BoardzooError, GameState, Move
from boardzoo.envs.openspiel import BoardzooState, load

from .agent_spec import AgentKind, AgentSpec, Option, choice, number, whole
from .base import Agent, UnknownAgentError
from .env_adapter import EnvAgent
from .evaluation import get_evaluator, get_scale


class AgentBot(pyspiel.Bot):
    """An OpenSpiel bot that plays a boardzoo Agent's whole-turn moves, hop by hop."""

    def __init__(self, agent: Agent) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self._driver = EnvAgent(agent)  # plans the whole turn, returns one action a call

    def restart_at(self, state: BoardzooState) -> None:
        self._driver = EnvAgent(self.agent)
        self.agent.reset()

    def step(self, state: BoardzooState) -> int:
        if state.mid_turn and not self._driver.planned:
            raise BoardzooError("AgentBot cannot take over a turn another player started")
        return self._driver.act_on(state.actions, state.action_state)


class HeuristicEvaluator(mcts.Evaluator):
    """OpenSpiel MCTS leaf evaluator from boardzoo's static evaluation (no rollouts):
    tanh(evaluation / scale) for the side to move, uniform priors."""

    def __init__(self, game: str) -> None:
        self.evaluate_position = get_evaluator(game)
        self.scale = get_scale(game)

    def evaluate(self, state: BoardzooState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        game = state.game_state  # mid-chain: the position before the turn, same mover
        # evaluation.as_value's squashing, in numpy's tanh: it differs from math.tanh in the
        # last bit for about a quarter of inputs, and this bot's searches stay as they were
        value = float(np.tanh(self.evaluate_position(game) / self.scale))
        return np.array([value, -value] if game.to_move == 0 else [-value, value])

    def prior(self, state: BoardzooState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's MCTSBot as a boardzoo agent: ``openspiel_mcts:N`` (N simulations with
    OpenSpiel's random rollouts) or ``openspiel_mcts:N,leaf=eval`` (boardzoo's evaluation at
    the leaves); ``c=`` sets the UCT constant. In Whistling each hop gets its own search."""

    def __init__(self, game: str, simulations: int = 100, seed: int | None = None,
                 leaf: str = "rollout", uct_c: float = 2.0) -> None:
        if simulations < 1 or leaf not in ("rollout", "eval") or not uct_c >= 0:
            raise UnknownAgentError(f"openspiel_mcts needs simulations >= 1, leaf=rollout or "
                                    f"leaf=eval and c >= 0, got {simulations}, {leaf!r}, {uct_c}")
        self.game = load(game)
        self.simulations = simulations
        rng = np.random.RandomState(None if seed is None else seed % 2**32)
        evaluator = (HeuristicEvaluator(game) if leaf == "eval"
                     else mcts.RandomRolloutEvaluator(1, rng))
        self.bot = mcts.MCTSBot(self.game, uct_c, simulations, evaluator, random_state=rng)
        self._searches = 0
        self._seconds = 0.0

    def select_move(self, state: GameState) -> Move:
        started = time.perf_counter()
        spiel = self.game.state_from(state)
        spiel.apply_action(self.bot.step(spiel))
        self._searches += 1
        while spiel.mid_turn:
            spiel.apply_action(self.bot.step(spiel))
            self._searches += 1
        self._seconds += time.perf_counter() - started
        return state.parse_move(spiel.last_turn)

    def stats(self) -> dict[str, float]:
        return {"searches": self._searches, "simulations": self._searches * self.simulations,
                "seconds": round(self._seconds, 4)}


SIMS = Option("sims", whole(1), "simulations per search", 100)
#: ``openspiel_mcts[:N][,leaf=rollout|eval][,c=X]``: the value is the simulations.
AGENT_KIND = AgentKind("openspiel_mcts", (
    SIMS,
    Option("leaf", choice("rollout", "eval"), "leaves valued by random rollouts or by "
           "boardzoo's evaluation", "rollout"),
    Option("c", number(0), "the UCT exploration constant", 2.0),
), value=SIMS)


def mcts_agent(spec: AgentSpec, game: str, seed: int | None) -> OpenSpielMCTSAgent:
    """Agent factory of ``openspiel_mcts[:N][,leaf=rollout|eval][,c=2.0]`` (N = 100)."""
    opts = AGENT_KIND.bind(spec)
    return OpenSpielMCTSAgent(game, opts["sims"], seed, opts["leaf"], opts["c"])
