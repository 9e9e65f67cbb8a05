"""The one agent interface shared by every game, and the spec-string factory."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable

from boardzoo.envs.core.game import BoardzooError, GameState, Move


class UnknownAgentError(BoardzooError):
    """An agent spec that names no known agent or has bad parameters."""


class Agent(ABC):
    """Chooses whole-turn moves for any boardzoo game through the GameState protocol."""

    #: The spec string the agent was built from (``"mcts:400"``).
    spec: str = ""

    @abstractmethod
    def select_move(self, state: GameState) -> Move:
        """Return a legal move for the side to move in ``state`` (not terminal)."""

    def reset(self) -> None:
        """Forget anything kept from a previous game (e.g. a search tree)."""


class RandomAgent(Agent):
    """Uniformly random over the legal moves; seeded."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def select_move(self, state: GameState) -> Move:
        return self.rng.choice(list(state.legal_moves()))


#: Agent kind -> factory(arg, game_name, seed). ``arg`` is the text after ``kind:`` or None.
AGENT_FACTORIES: dict[str, Callable[[str | None, str, int | None], Agent]] = {
    "random": lambda arg, game, seed: RandomAgent(seed),
}


def make_agent(spec: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec string such as ``random`` or ``mcts:400`` for ``game``."""
    kind, _, arg = spec.strip().partition(":")
    factory = AGENT_FACTORIES.get(kind.lower())
    if factory is None:
        raise UnknownAgentError(
            f"unknown agent {spec!r}; choose one of: {', '.join(sorted(AGENT_FACTORIES))}"
        )
    agent = factory(arg or None, game, seed)
    agent.spec = spec.strip()
    return agent
