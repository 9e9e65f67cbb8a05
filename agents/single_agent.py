"""A single-agent Gymnasium view of a boardzoo game: the learner plays one side, an agent the other.

:class:`SingleAgentEnv` drives the game's raw PettingZoo AEC env. The learner
acts through ``step``; the opponent, any boardzoo agent (a spec string such as
``random``, ``mcts:50``, ``checkpoint:PATH`` or ``sb3:MODEL.zip``, an :class:`Agent`, or
a model object with SB3's ``predict``, e.g. a frozen copy of the learner for self-play),
plays its whole turn inside ``reset``/``step``. It follows sb3-contrib's masking protocol
(:meth:`SingleAgentEnv.action_masks`) and also puts the mask in ``info``.

It lives with the agents because its opponent is one. Importing boardzoo registers
``boardzoo/<game>-single-v0`` with Gymnasium (entry point here), so
``gymnasium.make("boardzoo/loa-single-v0", opponent="mcts:50")`` works after ``import boardzoo``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from boardzoo.envs.aec import BoardGameEnv
from boardzoo.envs.core.actions import as_action
from boardzoo.envs.core.game import BoardzooError, MoveError
from boardzoo.envs.core.registry import UnknownGameError, game_names, get_spec

from .base import Agent, make_agent
from .env_adapter import EnvAgent
from .policy import PolicyAgent

LEARNER_SIDES = ("alternate", 0, 1)
ILLEGAL_MODES = ("raise", "penalty")


class SingleAgentError(BoardzooError):
    """Bad arguments to, or a bad call of, a :class:`SingleAgentEnv`."""


class SingleAgentEnv(gymnasium.Env):
    """One boardzoo game against a fixed opponent agent, from the learner's side.

    Observation: the AEC env's float32 planes from the learner's view (``Box(0, 1)``).
    Action: ``Discrete(A)``, the AEC env's encoding (one Whistling hop per step, so the
    learner acts several times in a row during its own capture chain). Reward: +1 win,
    -1 loss, 0 draw, only at the end; ``max_moves`` whole turns (both sides counted)
    truncate with reward 0. ``learner_side`` is 0, 1 or ``"alternate"`` (0 on the first
    episode after a seeded reset, then 1, 0, ...). An illegal action raises
    :class:`~boardzoo.envs.core.game.MoveError`, or with ``illegal="penalty"`` ends the
    episode with reward ``illegal_reward`` and ``info["illegal_action"] = True``.
    ``info`` holds ``action_mask`` (int8, as in the AEC observation), ``learner_side``
    and ``opponent_moves`` (the opponent's turns played since the last call).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "ansi", "rgb_array"],
                                          "render_fps": 2}

    def __init__(
        self,
        game: str,
        opponent: Any = "random",
        seed: int | None = None,
        learner_side: str | int = "alternate",
        max_moves: int | None = None,
        position: str | None = None,
        illegal: str = "raise",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        """Create the env; ``seed`` seeds the first reset (later ``reset(seed=...)`` reseeds)."""
        try:
            spec = get_spec(game)
        except UnknownGameError:
            raise SingleAgentError(f"unknown game {game!r}; choose one of: "
                                   f"{', '.join(game_names())}") from None
        if learner_side not in LEARNER_SIDES or isinstance(learner_side, bool):
            raise SingleAgentError(
                f"learner_side must be 0, 1 or 'alternate', got {learner_side!r}")
        if illegal not in ILLEGAL_MODES:
            raise SingleAgentError(f"illegal must be 'raise' or 'penalty', got {illegal!r}")
        if not isinstance(opponent, (str, Agent)):
            if not callable(getattr(opponent, "predict", None)):
                raise SingleAgentError(
                    f"opponent must be an agent spec string, an Agent, or a model with SB3's "
                    f"predict(), got {type(opponent).__name__}")
            opponent = PolicyAgent(opponent, game)
        self.game_name = game
        self.raw = BoardGameEnv(spec, render_mode=render_mode, max_moves=max_moves,
                                position=position)
        self.actions = self.raw.actions
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, shape=self.actions.observation_shape,
                                            dtype=np.float32)
        self.action_space = spaces.Discrete(self.actions.num_actions)
        self.learner_side_mode = learner_side
        self.illegal = illegal
        self.illegal_reward = float(illegal_reward)
        self.opponent_spec = opponent if isinstance(opponent, str) else None
        # Build the agent now so that a bad spec fails at construction, not at reset.
        agent = make_agent(opponent, game, seed) if isinstance(opponent, str) else opponent
        self.opponent = EnvAgent(agent)
        self.learner = 0
        self._first_seed = seed
        self._episodes = 0  # episodes since the last seeded reset (drives alternation)
        self._done = True

    # -- Gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game; the opponent moves first when the learner plays side 1.

        ``options={"position": TEXT}`` starts from that position text.
        """
        unknown = sorted(set(options or {}) - {"position"})
        if unknown:  # a misspelt option would otherwise start silently from the usual position
            raise SingleAgentError(f"reset takes only the option 'position', got {unknown}")
        if seed is None:
            seed = self._first_seed
        self._first_seed = None  # only the first reset may use it, even when given a seed
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0
            self._reseed_opponent(int(self.np_random.integers(2**31)))
        mode = self.learner_side_mode
        self.learner = self._episodes % 2 if mode == "alternate" else int(mode)
        self._episodes += 1
        self.raw.reset(options=options)
        self.opponent.agent.reset()
        # A fresh adapter: a Whistling plan left from an unfinished game must not replay.
        self.opponent = EnvAgent(self.opponent.agent)
        self._done = False
        played = self._play_opponent()
        if self._over():
            self._done = True
            raise SingleAgentError(
                f"the game is over before the learner's first move ({self.raw.game.to_text()!r})")
        return self._obs(), self._info(played)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponent's turn(s) until the learner is to act."""
        if self._done:
            raise SingleAgentError("step() called on a finished episode; call reset() first")
        action = self._check_action(action)
        if action is None:  # illegal, with illegal="penalty"
            self._done = True
            info = self._info([])
            info["illegal_action"] = True
            return self._obs(), self.illegal_reward, True, False, info
        self.raw.step(action)
        played = [] if self._over() else self._play_opponent()
        terminated = any(self.raw.terminations.values())
        truncated = not terminated and any(self.raw.truncations.values())
        reward = float(self.raw.rewards[self._name(self.learner)]) if terminated else 0.0
        self._done = terminated or truncated
        info = self._info(played)
        if self._done:
            info["result"] = self.raw.game.result() if terminated else "truncated"
        return self._obs(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Return a bool vector, True on the learner's legal actions (all False once over)."""
        if self._done or self._over():
            return np.zeros(self.actions.num_actions, dtype=bool)
        return self.actions.action_mask(self.raw.action_state).astype(bool)

    def render(self) -> str | np.ndarray | None:
        """Render as the AEC env does (``ansi`` text, ``rgb_array`` picture, ``human`` window)."""
        return self.raw.render()

    def close(self) -> None:
        """Close the AEC env (and its window in ``human`` mode)."""
        self.raw.close()

    # -- internals ----------------------------------------------------------------------
    def _name(self, side: int) -> str:
        return self.raw.possible_agents[side]

    def _over(self) -> bool:
        raw = self.raw
        return any(raw.terminations.values()) or any(raw.truncations.values())

    def _reseed_opponent(self, seed: int) -> None:
        """Rebuild a spec-string opponent with ``seed`` (an Agent object keeps its own rng)."""
        if self.opponent_spec is not None:
            self.opponent = EnvAgent(make_agent(self.opponent_spec, self.game_name, seed))

    def _play_opponent(self) -> list[str]:
        """Play the opponent's actions until the learner is to act or the game is over."""
        raw, turns = self.raw, []
        while not self._over() and raw.agent_selection != self._name(self.learner):
            raw.step(self.opponent.act(raw))
            turn = raw.infos[raw.possible_agents[1 - self.learner]].get("turn")
            if turn is not None:
                turns.append(turn)
        return turns

    def _check_action(self, action: Any) -> int | None:
        """Return the action as an int if legal; raise, or return None under the penalty."""
        try:
            value = as_action(action)  # the envs' one check: True and 8.0 are not actions
        except MoveError as exc:
            raise SingleAgentError(str(exc)) from None
        if not 0 <= value < self.actions.num_actions:
            raise SingleAgentError(
                f"action {value} is outside the action space 0..{self.actions.num_actions - 1}")
        if self.actions.action_mask(self.raw.action_state)[value]:
            return value
        if self.illegal == "penalty":
            return None
        legal = self.actions.legal_actions(self.raw.action_state)
        shown = ", ".join(map(str, legal[:10])) + (", ..." if len(legal) > 10 else "")
        raise MoveError(f"action {value} is not legal for the learner here; legal: {shown}")

    def _obs(self) -> np.ndarray:
        return self.actions.observation(self.raw.action_state, self.learner)

    def _info(self, opponent_moves: list[str]) -> dict[str, Any]:
        return {"action_mask": self.action_masks().astype(np.int8),
                "learner_side": self.learner, "opponent_moves": opponent_moves}


def make_single_agent(game: str, opponent: str | Agent = "random", **kwargs: Any) -> SingleAgentEnv:
    """Return a :class:`SingleAgentEnv` of ``game`` against ``opponent`` (see its arguments)."""
    return SingleAgentEnv(game, opponent, **kwargs)
