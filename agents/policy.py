"""Any policy with SB3's ``predict`` as a boardzoo agent (no framework import needed).

:class:`PolicyAgent` wraps a model object with ``predict(obs, action_masks=...,
deterministic=...)`` (Stable-Baselines3 and sb3-contrib models have it). The
policy sees what :class:`~boardzoo.agents.single_agent.SingleAgentEnv` shows a
learner: the game's observation planes from the mover's view, and the legal-action
mask. A turn of several actions (a Whistling chain) is played action by action. A
model that ignores the mask and picks an illegal action plays the first legal one
instead (counted in ``stats()["illegal"]``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from boardzoo.envs.core.game import GameState, Move
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.core.threads import scoped_threads

from .agent_spec import AgentKind, Option, Parser, flag, unquote
from .base import TRUST_OPTION, Agent, UnknownAgentError


class ActionAgent(Agent):
    """An agent that chooses one action at a time over the game's action encoding
    (``self.actions``) and plays a whole turn as the actions that make it up."""

    actions: Any
    #: perf_counter time by which this move's actions must be chosen (None: no time limit);
    #: one deadline for the whole turn, so a Whistling chain's hops share the move's time.
    move_deadline: float | None = None
    #: Torch threads for choosing a move (one position at a time: one thread is fastest);
    #: the caller's count is restored after each move (None: leave it as it is).
    threads: int | None = 1

    def select_action(self, state: Any) -> int:
        """Return the action to take in action state ``state``."""
        raise NotImplementedError

    @scoped_threads
    def select_move(self, state: GameState) -> Move:
        limit = self.move_time
        self.move_deadline = None if limit is None else time.perf_counter() + limit
        actions = self.actions
        s = actions.from_game_state(state)
        while True:
            s, text = actions.apply_action(s, self.select_action(s))
            if text is not None:
                return state.parse_move(text)


class PolicyAgent(ActionAgent):
    """Plays a model with SB3's ``predict`` action by action through the game's encoding."""

    def __init__(self, model: Any, game: str, deterministic: bool = True) -> None:
        if not callable(getattr(model, "predict", None)):
            raise UnknownAgentError(f"a policy opponent needs a predict() method, "
                                    f"got {type(model).__name__}")
        self.model = model
        self.actions = get_spec(game).actions
        self.deterministic = deterministic
        self.counters = {"actions": 0, "illegal": 0}

    def select_action(self, state: Any) -> int:
        """Return the model's action in action state ``state`` (legal, see the module doc)."""
        actions = self.actions
        obs = actions.observation(state, actions.to_move(state))
        mask = actions.action_mask(state).astype(bool)
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        action = int(np.asarray(action).reshape(-1)[0])
        self.counters["actions"] += 1
        if 0 <= action < len(mask) and mask[action]:
            return action
        self.counters["illegal"] += 1
        return int(np.flatnonzero(mask)[0])

    def stats(self) -> dict[str, float]:
        return dict(self.counters)


def model_kind(kind: str, what: str, trust: str) -> AgentKind:
    """Return the options of ``KIND:PATH[,stochastic][,trust_code]``, the spec of an agent that
    plays a saved model of another framework (``sb3``, ``rllib``); ``what`` is what PATH
    names, ``trust`` what ``trust_code`` allows."""
    path = Option("path", Parser(unquote, what, "PATH"), what)
    return AgentKind(kind, (flag("stochastic", "sample the policy's action instead of taking "
                                 "its most likely one"),
                            flag(TRUST_OPTION, trust)), value=path, required=True)


def check_observation_shape(kind: str, where: str, shape: tuple[int, ...], game: str) -> None:
    """Raise UnknownAgentError if a saved model's observation ``shape`` is not ``game``'s."""
    want = tuple(get_spec(game).actions.observation_shape)
    if tuple(shape) != want:
        raise UnknownAgentError(f"{kind}: {where!r} was trained on observations "
                                f"{tuple(shape)}, {game} has {want}")
