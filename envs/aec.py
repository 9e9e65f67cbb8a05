"""The one PettingZoo AEC environment over any boardzoo game descriptor.

:class:`BoardGameEnv` owns everything the games have in common: agent names,
rewards, terminations, truncation at ``max_moves``, the
``{"observation", "action_mask"}`` dictionary, rendering and the standard
wrapper stack (:func:`wrap`). Everything game-specific comes from the game's
:class:`~boardzoo.envs.core.spec.GameSpec`: its
:class:`~boardzoo.envs.core.actions.ActionGame` (action encoding and
observation planes, which AlphaZero-style training uses directly) and its
renderers. ``env_class(spec)`` binds a descriptor to a class, which is what
the ``*_v0`` modules export as ``raw_env``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core.actions import ActionGame, as_action
from .core.game import GameState, MoveError
from .core.registry import get_spec
from .core.spec import GameSpec
from .window import Window

#: The raw env's data that every step reads (PettingZoo's ``AECEnv.last``, the agent
#: iterator and the wrappers' own ``step``).
STEP_DATA = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos",
             "_cumulative_rewards")


def _raw_attribute(name: str) -> property:
    """Return a property that reads and writes attribute ``name`` of the raw env."""
    return property(lambda self: getattr(self._raw, name),
                    lambda self, value: setattr(self._raw, name, value))


class RawData:
    """Mixin of :func:`wrap`'s wrappers: :data:`STEP_DATA` read from the raw env in one
    look-up (why: a PettingZoo wrapper finds the raw env's attributes by a failed look-up and
    ``__getattr__`` per layer, about 1.5 us each on the development machine, so four layers
    made reading ``agent_selection`` cost as much as a whole LOA step)."""

    # The values are the same as through the layers: no wrapper of the stack sets attributes
    # of these names on itself (TerminateIllegalWrapper writes them on the raw env).

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        """Wrap ``env`` (the arguments of the wrapper class) and keep its raw env."""
        super().__init__(env, *args, **kwargs)
        self._raw = env.unwrapped  # private: BaseWrapper refuses to forward it outwards

    def action_space(self, agent: str) -> spaces.Space:
        """Return the raw env's action space of ``agent`` (no wrapper here changes it)."""
        return self._raw.action_space(agent)

    def legal_actions(self) -> list[int]:
        """Return the raw env's :meth:`BoardGameEnv.legal_actions`, in one look-up."""
        return self._raw.legal_actions()


for _name in STEP_DATA:
    setattr(RawData, _name, _raw_attribute(_name))


class TerminateIllegalWrapper(RawData, wrappers.TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper (an illegal action loses, -1) with :class:`RawData`."""


class AssertOutOfBoundsWrapper(RawData, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with :class:`RawData`."""

    def step(self, action: Any) -> None:
        # IntegerActionWrapper, outside this one, passes an int of the action space (or None
        # for a finished agent), for which PettingZoo's assertion holds: skip its gymnasium
        # call (why: about 1.5 us a step, a fifth of a raw LOA step); any other action
        # still meets it.
        if type(action) is int and 0 <= action < self.action_space(self.agent_selection).n:
            wrappers.BaseWrapper.step(self, action)
        else:
            super().step(action)


class OrderEnforcingWrapper(RawData, wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with :class:`RawData`: before ``reset`` its data
    still cannot be read."""

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's own class shows itself (not a subclass)


def _ordered_attribute(name: str) -> property:
    """Return :func:`_raw_attribute` of ``name`` that, as PettingZoo's OrderEnforcingWrapper,
    refuses to read it before ``reset``."""
    def get(self: OrderEnforcingWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)
    return property(get, lambda self, value: setattr(self._raw, name, value))


for _name in STEP_DATA:
    if _name != "_cumulative_rewards":  # the one OrderEnforcingWrapper lets through
        setattr(OrderEnforcingWrapper, _name, _ordered_attribute(_name))


class IntegerActionWrapper(RawData, wrappers.BaseWrapper):
    """Refuses a non-integer or out-of-range action with MoveError before the standard
    wrappers see it (why: they index the action mask with it, so ``True`` failed with a
    NumPy error, and 10**6 with a bare AssertionError), as the raw env does."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if action is None and (self.terminations.get(agent) or self.truncations.get(agent)):
            return super().step(action)
        action = as_action(action)
        n = self.action_space(agent).n
        if not 0 <= action < n:
            raise MoveError(f"action {action} is outside the action space 0..{n - 1}")
        return super().step(action)


def wrap(raw: AECEnv) -> AECEnv:
    """Apply PettingZoo classic's standard wrappers (illegal move = -1 and game over) and
    the integer check of actions."""
    env = TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(IntegerActionWrapper(env))


class BoardGameEnv(AECEnv):
    """A two-player AEC env over a game descriptor (one action = one step).

    Use ``BoardGameEnv(spec_or_name, ...)``, or a class bound by :func:`env_class`.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }
    #: The game's descriptor (set by :func:`env_class`, or per instance).
    spec: ClassVar[GameSpec | None] = None
    #: The game's action encoding and observation planes (the descriptor's ``actions``).
    actions: ClassVar[ActionGame]

    def __init__(
        self,
        game: GameSpec | str | None = None,
        render_mode: str | None = None,
        max_moves: int | None = None,
        position: str | None = None,
    ) -> None:
        """Create the env of ``game`` (a descriptor or a name; a bound class knows its own);
        ``max_moves`` truncates after that many turns, ``position`` starts every episode
        from that position text."""
        super().__init__()
        if game is not None:
            spec = get_spec(game) if isinstance(game, str) else game
            self.spec, self.actions = spec, spec.actions  # type: ignore[misc]
            self.metadata = {**self.metadata, "name": spec.env_name}
        if self.spec is None:
            raise TypeError("BoardGameEnv needs a game: BoardGameEnv('loa') or env_class(spec)")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if max_moves is not None and max_moves < 1:
            raise ValueError(f"max_moves must be a positive number of turns, got {max_moves}")
        self.render_mode = render_mode
        self.max_moves = max_moves
        self.start_position = position
        self.action_state = self.actions.initial_state(position)  # fails early on bad text
        self.possible_agents = ["player_0", "player_1"]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        n = self.actions.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    low=0.0, high=1.0, shape=self.actions.observation_shape, dtype=np.float32
                ),
                "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.last_move: str | None = None
        self._turns_played = 0
        #: The pygame window of ``render_mode="human"`` (pygame is imported only for it).
        self.window: Window | None = None
        if render_mode == "human" and self.spec.render_rgb is not None:
            self.window = Window(self.spec.long_name, self.metadata["render_fps"])

    # -- PettingZoo API -----------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def game(self) -> GameState:
        """The rules-level state (position, history) of the current game."""
        return self.actions.game_state(self.action_state)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; ``options={"position": TEXT}`` starts from that position."""
        if seed is not None:
            for i, agent in enumerate(self.possible_agents):
                self.action_spaces[agent].seed(seed + i)
        position = (options or {}).get("position", self.start_position)
        self.action_state = self.actions.initial_state(position)
        self.last_move = None
        self._turns_played = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.actions.to_move(self.action_state)]
        self._check_game_end()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        actions, state = self.actions, self.action_state
        if agent == self.agent_selection and not self._is_over():
            mask = actions.action_mask(state)
        else:
            mask = np.zeros(actions.num_actions, dtype=np.int8)
        return {"observation": actions.observation(state, self.agent_name_mapping[agent]),
                "action_mask": mask}

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        agents, actions = self.agents, self.actions
        self.rewards = dict.fromkeys(agents, 0)
        self.infos = infos = {a: {} for a in agents}
        state, turn = actions.apply_action(self.action_state, as_action(action))
        self.action_state = state
        if turn is not None:
            self.last_move = turn
            self._turns_played += 1
            infos[agent]["turn"] = turn
        self.agent_selection = self.possible_agents[actions.to_move(state)]
        if self._check_game_end():  # else every reward is 0: nothing to add up
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass one to env().")
            return None
        if self.render_mode == "human":
            self._render_window()
            return None
        if self.render_mode == "ansi":
            return self.render_ansi()
        return self.render_rgb()

    def close(self) -> None:
        if self.window is not None:
            self.window.close()

    # -- helpers for users --------------------------------------------------------
    def render_ansi(self) -> str:
        """Return the board as text with coordinates, the last move and the side to move."""
        spec = self.spec
        board = spec.render_text(self.action_state) if spec.render_text else self.game.render_text()
        lines = [board]
        if self.last_move is not None:
            lines.append(f"last move: {self.last_move}")
        lines.append(self._status_line())
        return "\n".join(lines)

    def render_rgb(self) -> np.ndarray:
        """Return a picture of the board as an RGB uint8 array."""
        if self.spec.render_rgb is None:
            raise NotImplementedError(f"{self.spec.name} has no picture; use render_mode='ansi'")
        return self.spec.render_rgb(self.action_state, self.last_move, self._status_line())

    @property
    def turns_played(self) -> int:
        """Number of whole turns completed in this episode (a Whistling chain is one turn)."""
        return self._turns_played

    def legal_actions(self) -> list[int]:
        """Return the actions the mask allows for the agent to act (none once over)."""
        return [] if self._is_over() else self.actions.legal_actions(self.action_state)

    def action_to_move_str(self, action: int) -> str:
        """Return the notation of a legal ``action`` in the current state (one hop or move)."""
        return self.actions.action_to_str(self.action_state, as_action(action))

    def move_str_to_action(self, text: str) -> int:
        """Return the action of move text (any accepted spelling) in the current state."""
        return self.actions.str_to_action(self.action_state, text)

    # -- internals ----------------------------------------------------------------
    def _render_window(self) -> None:
        """Show the picture in the window at ``metadata["render_fps"]`` (text on stdout for a
        game without a picture); once its user closes the window, show nothing more."""
        if self.window is None:
            print(self.render_ansi())
            return
        self.window.fps = self.metadata["render_fps"]  # read per frame: callers may change it
        self.window.show(self.render_rgb())
        self.window.events()  # an unserviced window counts as hung on most desktops
        self.window.tick()

    def _status_line(self) -> str:
        if self.game.is_terminal():
            return self.game.outcome()
        if self._truncated():
            return "result: truncated (max_moves)"
        return f"to move: {self.game.player_names[self.actions.to_move(self.action_state)]}"

    def _is_over(self) -> bool:
        return self.actions.is_terminal(self.action_state) or self._truncated()

    def _truncated(self) -> bool:
        return self.max_moves is not None and self._turns_played >= self.max_moves

    def _check_game_end(self) -> bool:
        """Mark both agents terminated (with the game's rewards) or truncated once the game
        is over; return whether it ended with rewards set."""
        if self.actions.is_terminal(self.action_state):
            returns = self.actions.returns(self.action_state)
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = returns[i]
                self.terminations[a] = True
            return True
        if self._truncated():
            for a in self.possible_agents:
                self.truncations[a] = True
        return False


def env_class(spec: GameSpec, module: str | None = None) -> type[BoardGameEnv]:
    """Return the AEC env class bound to ``spec`` (the ``raw_env`` a ``*_v0`` module exports).

    ``module`` (the exporting module's ``__name__``) makes the class picklable by name there.
    """
    name = "raw_env"
    cls = type(name, (BoardGameEnv,), {
        "__doc__": f"{spec.long_name} AEC env without wrappers (``{spec.env_name}``).",
        "spec": spec, "actions": spec.actions,
        "metadata": {**BoardGameEnv.metadata, "name": spec.env_name},
    })
    if module is not None:
        cls.__module__ = module
    return cls


def make_env(game: GameSpec | str, **kwargs: Any) -> AECEnv:
    """Return the env of ``game`` (a descriptor or a name) with the standard wrappers."""
    return wrap(BoardGameEnv(game, **kwargs))
