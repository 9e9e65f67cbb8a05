"""Greedy agent: one ply of look-ahead with the game's evaluation, random among ties."""

from __future__ import annotations

import random

from boardzoo.envs.core.game import GameState, Move

from .agent_spec import AgentKind, AgentSpec
from .base import Agent
from .evaluation import Evaluator, get_evaluator

WIN = 1e9  # beats any evaluation: an immediate win is always taken


def move_value(state: GameState, move: Move, evaluate: Evaluator) -> float:
    """Return the value of ``move`` for the side to move in ``state`` after one ply."""
    me = state.to_move
    child = state.apply(move)
    if child.is_terminal():
        return WIN * child.returns()[me]
    value = evaluate(child)
    return value if child.to_move == me else -value


class GreedyAgent(Agent):
    """Plays the move whose resulting position evaluates best; seeded tie-breaks."""

    def __init__(self, game: str, seed: int | None = None,
                 evaluator: Evaluator | None = None) -> None:
        self.rng = random.Random(seed)
        self.evaluate = evaluator or get_evaluator(game)

    def select_move(self, state: GameState) -> Move:
        scored = [(move_value(state, m, self.evaluate), m) for m in state.legal_moves()]
        # Round so that float noise in equal evaluations does not break ties.
        best = max(round(v, 9) for v, _ in scored)
        return self.rng.choice([m for v, m in scored if round(v, 9) == best])


#: The kind ``greedy``: no options but ``name=``.
AGENT_KIND = AgentKind("greedy")


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> GreedyAgent:
    """Build ``greedy`` (no parameter)."""
    AGENT_KIND.bind(spec)
    return GreedyAgent(game, seed)
