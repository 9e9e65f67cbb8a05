"""The one agent interface shared by every game, and the spec-string factory.

Agents are built from spec strings (``random``, ``greedy``, ``mcts:400``,
``alphabeta:3``, ``alphabeta:t=0.5s``, ``human``, ``gui``, ``checkpoint:PATH``,
``engine:COMMAND``; the grammar is :mod:`.agent_spec`'s) by :func:`make_agent`. Each kind
maps to a factory ``factory(spec, game, seed)`` in :data:`AGENT_FACTORIES`, which checks the
parsed :class:`~.agent_spec.AgentSpec` against its kind's options; other packages add kinds
with :func:`register_agent`.
"""

from __future__ import annotations

import importlib
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from boardzoo.envs.core.game import BoardzooError, GameState, Move, echo

from .agent_spec import AgentKind, AgentSpec, UnknownAgentError, kind_of


class Forfeit(BoardzooError):
    """Raised by ``select_move`` (or ``reset``) of an agent that loses the game by misbehaving
    (an outside engine that crashed, answered an illegal move, ...); the game loop scores it
    as a loss with ``reason`` (docs/arena.md lists the reasons)."""

    #: Characters of ``detail`` kept (why: it may quote an engine's 1 MB ``bestmove`` line,
    #: and it goes into the game record).
    DETAIL_LIMIT = 200

    def __init__(self, reason: str, detail: str = "") -> None:
        if len(detail) > self.DETAIL_LIMIT:
            detail = f"{detail[:self.DETAIL_LIMIT]}... ({len(detail):,} characters)"
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class Agent(ABC):
    """Chooses whole-turn moves for any boardzoo game through the GameState protocol."""

    #: The spec string the agent was built from (``"mcts:400"``).
    spec: str = ""
    #: The name tables show (a spec's ``name=`` option; None: the spec, or what an outside
    #: engine calls itself).
    display_name: str | None = None
    #: Seconds the agent may think per move (None: no limit); searching agents read it.
    move_time: float | None = None
    #: The last move's search value for the side that moved, where the agent computes one
    #: (alpha-beta's score; ``boardzoo engine`` reports it as ``info score``), else None.
    last_value: float | None = None

    @abstractmethod
    def select_move(self, state: GameState) -> Move:
        """Return a legal move for the side to move in ``state`` (not terminal)."""

    def reset(self) -> None:
        """Forget anything kept from a previous game (e.g. a search tree)."""
        return None  # stateless agents keep nothing

    def stats(self) -> dict[str, float]:
        """Return search counters since construction (e.g. simulations, nodes, seconds)."""
        return {}

    def set_move_time(self, seconds: float | None) -> None:
        """Limit each move's thinking to ``seconds`` (None: no limit); agents that search stop
        there, agents that answer at once ignore it (see :mod:`boardzoo.agents.movetime`)."""
        self.move_time = seconds

    def set_node_limit(self, nodes: int | None) -> bool:
        """Limit each move's search to ``nodes`` nodes or simulations (None: as the spec
        says); return whether the agent can (one without such a budget returns False)."""
        return nodes is None

    def finish(self, state: GameState) -> None:
        """See the final position of a game ``play_from`` played (a window shows it)."""
        return None  # only agents that show the game to a person look

    def see_game(self, first: GameState, moves: Sequence[str]) -> None:
        """Learn the game so far (its first position and canonical moves) before
        ``select_move``; an outside engine passes them on, other agents need only the state."""
        return None

    def move_info(self) -> dict[str, float | int | str]:
        """Return what the agent said about its last move (an engine's depth, score), or {}."""
        return {}


class RandomAgent(Agent):
    """Uniformly random over the legal moves; seeded."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def select_move(self, state: GameState) -> Move:
        return self.rng.choice(list(state.legal_moves()))


#: The agent option that allows a file to be unpickled (running any code it holds).
TRUST_OPTION = "trust_code"


def require_trust(spec: AgentSpec, unpickles: str) -> None:
    """Raise UnknownAgentError unless ``spec`` has the flag ``trust_code``."""
    if TRUST_OPTION not in spec.flags:
        kind = spec.kind
        raise UnknownAgentError(f"agent {kind}: loading a saved folder unpickles {unpickles}, "
                                f"which runs any code they hold; add ,{TRUST_OPTION} "
                                f"({kind}:PATH,{TRUST_OPTION}) only for files you trust as code")


AgentFactory = Callable[[AgentSpec, str, int | None], Agent]


@dataclass(frozen=True)
class LazyFactory:
    """A factory that imports ``module`` and calls its ``name`` on first use; picklable, so
    worker processes and Ray tasks get the same registry entry (why lazy: greedy, MCTS and
    the learned agent pull in modules, torch included, that other commands never need)."""

    module: str
    name: str
    #: Optional extra that the module needs (named in the error when it is missing).
    extra: str = ""
    #: What the agent's loader unpickles, for kinds that cannot load a file without running
    #: the code it may hold: the spec must then say ``trust_code`` (checked before any import).
    unpickles: str = ""

    def __call__(self, spec: AgentSpec, game: str, seed: int | None) -> Agent:
        if self.unpickles:
            require_trust(spec, self.unpickles)
        try:
            module = importlib.import_module(self.module)
        except ModuleNotFoundError as exc:
            if not self.extra or (exc.name and self.module.startswith(exc.name)):
                raise
            raise UnknownAgentError(f"this agent needs the optional extra {self.extra!r} "
                                    f"(pip install 'boardzoo[{self.extra}]'): {exc}") from None
        return getattr(module, self.name)(spec, game, seed)


#: The kind ``random``: no options but ``name=``.
AGENT_KIND = AgentKind("random")


def random_agent(spec: AgentSpec, game: str, seed: int | None) -> RandomAgent:
    """Build ``random`` (no parameter)."""
    AGENT_KIND.bind(spec)
    return RandomAgent(seed)


#: Agent kind -> factory(spec, game_name, seed), which checks the spec's options.
#: Layers above add kinds with :func:`register_agent` (the package root adds ``checkpoint``,
#: the learned agent of boardzoo.training).
AGENT_FACTORIES: dict[str, AgentFactory] = {
    "random": random_agent,
    "greedy": LazyFactory(f"{__package__}.greedy", "from_spec"),
    "mcts": LazyFactory(f"{__package__}.mcts", "from_spec"),
    "alphabeta": LazyFactory(f"{__package__}.alphabeta", "from_spec"),
    "human": LazyFactory(f"{__package__}.human", "from_spec"),
    "gui": LazyFactory(f"{__package__}.gui", "from_spec", "gui"),
    "openspiel_mcts": LazyFactory(f"{__package__}.openspiel_bots", "mcts_agent", "openspiel"),
    "sb3": LazyFactory(f"{__package__}.sb3_policy", "from_spec", "sb3"),
    "rllib": LazyFactory(f"{__package__}.rllib_support", "from_spec", "rllib",
                         "its pickle files (RLlib's class_and_ctor_args.pkl, module_state.pkl)"),
    "engine": LazyFactory(f"{__package__}.engine", "from_spec"),
}
#: Kinds that wait for a person; automatic matches (evaluation baselines) refuse them.
INTERACTIVE_KINDS = frozenset({"human", "gui"})


def register_agent(kind: str, factory: AgentFactory) -> None:
    """Add or replace the factory of agent ``kind`` (a picklable one, such as a
    :class:`LazyFactory`, also reaches worker processes)."""
    AGENT_FACTORIES[kind.lower()] = factory


def make_agent(spec: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec string such as ``random`` or ``mcts:400`` for ``game``; a
    ``name=`` option names it in tables (:attr:`Agent.display_name`), its ``spec`` stays
    whole."""
    factory = AGENT_FACTORIES.get(kind_of(spec))
    if factory is None:
        raise UnknownAgentError(
            f"unknown agent {echo(spec)}; choose one of: {', '.join(sorted(AGENT_FACTORIES))}"
        )
    parsed = AgentSpec.parse(spec)
    agent = factory(parsed, game, seed)
    agent.spec = parsed.text
    agent.display_name = parsed.name
    return agent


def check_spec(spec: str, game: str) -> None:
    """Raise UnknownAgentError now if ``spec`` cannot build an agent (used before tournaments)."""
    make_agent(spec, game, 0)
