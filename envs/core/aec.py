"""Shared PettingZoo AEC plumbing for boardzoo's two-player board games.

:class:`BoardGameEnv` owns everything the games have in common: agent names,
rewards, terminations, truncation at ``max_moves``, the
``{"observation", "action_mask"}`` dictionary, rendering dispatch and the
standard wrapper stack (:func:`wrap`). It drives an
:class:`~boardzoo.envs.core.actions.ActionGame`, the game's action encoding
and observation planes, which AlphaZero-style training uses directly.
A game's env subclasses it, sets ``actions`` and draws the ``rgb_array`` picture.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .actions import ActionGame
from .game import GameState


def wrap(raw: AECEnv) -> AECEnv:
    """Apply PettingZoo classic's standard wrappers (illegal move = -1 and game over)."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


class BoardGameEnv(AECEnv):
    """A two-player AEC env over an :class:`ActionGame` (one action = one step)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }
    #: The game's action encoding and observation planes.
    actions: ClassVar[ActionGame]

    def __init__(
        self,
        render_mode: str | None = None,
        max_moves: int | None = None,
        position: str | None = None,
    ) -> None:
        """Create the env; ``max_moves`` truncates after that many turns, ``position``
        starts every episode from that position text."""
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if max_moves is not None and max_moves < 1:
            raise ValueError(f"max_moves must be a positive number of turns, got {max_moves}")
        self.render_mode = render_mode
        self.max_moves = max_moves
        self.start_position = position
        self.state = self.actions.initial_state(position)  # fails early on bad text
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

    # -- PettingZoo API -----------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def game(self) -> GameState:
        """The rules-level state (position, history) of the current game."""
        return self.actions.game_state(self.state)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game; ``options={"position": TEXT}`` starts from that position."""
        if seed is not None:
            for i, agent in enumerate(self.possible_agents):
                self.action_spaces[agent].seed(seed + i)
        position = (options or {}).get("position", self.start_position)
        self.state = self.actions.initial_state(position)
        self.last_move = None
        self._turns_played = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.actions.to_move(self.state)]
        self._check_game_end()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.agent_name_mapping[agent]
        if agent == self.agent_selection and not self._is_over():
            mask = self.actions.action_mask(self.state)
        else:
            mask = np.zeros(self.actions.num_actions, dtype=np.int8)
        return {"observation": self.actions.observation(self.state, player), "action_mask": mask}

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self.rewards = dict.fromkeys(self.agents, 0)
        self.infos = {a: {} for a in self.agents}
        self.state, turn = self.actions.apply_action(self.state, int(action))
        if turn is not None:
            self.last_move = turn
            self._turns_played += 1
            self.infos[agent]["turn"] = turn
        self.agent_selection = self.possible_agents[self.actions.to_move(self.state)]
        self._check_game_end()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass one to env().")
            return None
        if self.render_mode == "human":
            print(self.render_ansi())  # "human" shows the text board on stdout
            return None
        if self.render_mode == "ansi":
            return self.render_ansi()
        return self.render_rgb()

    def close(self) -> None:
        pass

    # -- helpers for users --------------------------------------------------------
    def render_ansi(self) -> str:
        """Return the board as text with coordinates, the last move and the side to move."""
        lines = [self.game.render_text()]
        if self.last_move is not None:
            lines.append(f"last move: {self.last_move}")
        lines.append(self._status_line())
        return "\n".join(lines)

    def render_rgb(self) -> np.ndarray:
        """Return a picture of the board as an RGB uint8 array."""
        raise NotImplementedError

    @property
    def turns_played(self) -> int:
        """Number of whole turns completed in this episode (a Whistling chain is one turn)."""
        return self._turns_played

    def legal_actions(self) -> list[int]:
        """Return the actions the mask allows for the agent to act (none once over)."""
        return [] if self._is_over() else self.actions.legal_actions(self.state)

    def action_to_move_str(self, action: int) -> str:
        """Return the notation of a legal ``action`` in the current state (one hop or move)."""
        return self.actions.action_to_str(self.state, int(action))

    def move_str_to_action(self, text: str) -> int:
        """Return the action of move text (any accepted spelling) in the current state."""
        return self.actions.str_to_action(self.state, text)

    # -- internals ----------------------------------------------------------------
    def _status_line(self) -> str:
        if self.game.is_terminal():
            return f"result: {self.game.result()}"
        if self._truncated():
            return "result: truncated (max_moves)"
        return f"to move: {self.game.player_names[self.actions.to_move(self.state)]}"

    def _is_over(self) -> bool:
        return self.actions.is_terminal(self.state) or self._truncated()

    def _truncated(self) -> bool:
        return self.max_moves is not None and self._turns_played >= self.max_moves

    def _check_game_end(self) -> None:
        if self.actions.is_terminal(self.state):
            returns = self.actions.returns(self.state)
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = returns[i]
                self.terminations[a] = True
        elif self._truncated():
            for a in self.possible_agents:
                self.truncations[a] = True
