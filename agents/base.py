"""The one agent interface shared by every game, and the spec-string factory.

Agents are built from spec strings (``random``, ``greedy``, ``mcts:400``,
``alphabeta:3``, ``alphabeta:t=0.5s``, ``human``, ``checkpoint:PATH``) by
:func:`make_agent`. Each kind maps to a factory ``factory(arg, game, seed)`` in
:data:`AGENT_FACTORIES`; other packages add kinds with :func:`register_agent`.
"""

from __future__ import annotations

import importlib
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
        return None  # stateless agents keep nothing

    def stats(self) -> dict[str, float]:
        """Return search counters since construction (e.g. simulations, nodes, seconds)."""
        return {}


class RandomAgent(Agent):
    """Uniformly random over the legal moves; seeded."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def select_move(self, state: GameState) -> Move:
        return self.rng.choice(list(state.legal_moves()))


AgentFactory = Callable[[str | None, str, int | None], Agent]


def _lazy(module: str, name: str) -> AgentFactory:
    """Return a factory that imports ``boardzoo.agents.<module>.<name>`` on first use."""

    def factory(arg: str | None, game: str, seed: int | None) -> Agent:
        return getattr(importlib.import_module(f"boardzoo.agents.{module}"), name)(arg, game, seed)

    return factory


#: Module that registers the ``checkpoint`` kind when imported (the training issue's hook).
CHECKPOINT_MODULE = "boardzoo.training.agent"


def _checkpoint(arg: str | None, game: str, seed: int | None) -> Agent:
    """Load the training package, which replaces this entry with the real checkpoint factory."""
    try:
        importlib.import_module(CHECKPOINT_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name and CHECKPOINT_MODULE.startswith(exc.name):
            raise UnknownAgentError(
                "checkpoint agents need boardzoo.training, which is not available yet"
            ) from exc
        raise
    factory = AGENT_FACTORIES.get("checkpoint")
    if factory is None or factory is _checkpoint:
        raise UnknownAgentError(f"{CHECKPOINT_MODULE} did not register the 'checkpoint' agent")
    return factory(arg, game, seed)


def _openspiel_mcts(arg: str | None, game: str, seed: int | None) -> Agent:
    """OpenSpiel's MCTSBot as an agent; needs the optional ``openspiel`` extra."""
    try:
        module = importlib.import_module("boardzoo.envs.openspiel")
    except ModuleNotFoundError as exc:
        raise UnknownAgentError(f"openspiel_mcts needs OpenSpiel: {exc}") from exc
    return module.mcts_agent(arg, game, seed)


#: Agent kind -> factory(arg, game_name, seed). ``arg`` is the text after ``kind:`` or None.
AGENT_FACTORIES: dict[str, AgentFactory] = {
    "random": lambda arg, game, seed: RandomAgent(seed),
    "greedy": _lazy("greedy", "from_spec"),
    "mcts": _lazy("mcts", "from_spec"),
    "alphabeta": _lazy("alphabeta", "from_spec"),
    "human": _lazy("human", "from_spec"),
    "openspiel_mcts": _openspiel_mcts,
    # Placeholder: boardzoo.training.agent calls register_agent("checkpoint", ...) on import.
    "checkpoint": _checkpoint,
}


def register_agent(kind: str, factory: AgentFactory) -> None:
    """Add or replace the factory of agent ``kind`` (how boardzoo.training adds ``checkpoint``)."""
    AGENT_FACTORIES[kind.lower()] = factory


def no_arg(kind: str, arg: str | None) -> None:
    """Raise UnknownAgentError if a parameterless agent kind was given a parameter."""
    if arg is not None:
        raise UnknownAgentError(f"agent {kind!r} takes no parameter (got {kind}:{arg})")


def make_agent(spec: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec string such as ``random`` or ``mcts:400`` for ``game``."""
    kind, _, arg = spec.strip().partition(":")
    factory = AGENT_FACTORIES.get(kind.lower())
    if factory is None:
        raise UnknownAgentError(
            f"unknown agent {spec!r}; choose one of: {', '.join(sorted(AGENT_FACTORIES))}"
        )
    if kind.lower() == "random":
        no_arg("random", arg or None)
    agent = factory(arg or None, game, seed)
    agent.spec = spec.strip()
    return agent


def check_spec(spec: str, game: str) -> None:
    """Raise UnknownAgentError now if ``spec`` cannot build an agent (used before tournaments)."""
    make_agent(spec, game, 0)
