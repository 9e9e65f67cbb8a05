"""Static priors the network corrects: the value prior (``model.value_prior``) and the
policy prior (``model.policy_prior``).

A ``value_prior`` network outputs ``tanh(prior + residual)``: ``prior`` is the
game's static evaluation of the position from the side to move (the game
descriptor's ``evaluate``) divided by its ``eval_scale``, the same squashing
MCTS playout cut-offs and self-play adjudication use. It is computed here from
action states (for Whistling the position before the turn in progress, whose side
to move is the player acting).

A ``policy_prior`` network adds ``policy_prior`` x the game's action prior
(:attr:`boardzoo.envs.core.spec.GameSpec.action_prior`, e.g. the material an Ultima
capture takes) to its policy logits: :func:`action_prior` gives it per legal action,
:func:`dense_action_prior` as a ``(B, num_actions)`` array for a batch of states.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from boardzoo.envs.core.registry import get_spec


def static_prior(game_name: str, game, states: Sequence[Any]) -> np.ndarray:
    """Return evaluation / scale of each action state for its player to act, as float32."""
    spec = get_spec(game_name)
    evaluate, scale = spec.evaluate, spec.eval_scale
    out = np.zeros(len(states), dtype=np.float32)
    for i, s in enumerate(states):
        g = game.game_state(s)
        if not g.is_terminal():
            v = evaluate(g) / scale
            out[i] = v if g.to_move == game.to_move(s) else -v
    return out


def action_prior(game_name: str, state: Any, actions: np.ndarray) -> np.ndarray:
    """Return the action prior of each of ``actions`` (legal in ``state``), float32."""
    n = get_spec(game_name).actions.num_actions
    return dense_action_prior(game_name, [state], n)[0][np.asarray(actions, dtype=np.int64)]


def dense_action_prior(game_name: str, states: Sequence[Any], num_actions: int) -> np.ndarray:
    """Return the action prior of every action of each state as ``(B, num_actions)`` float32."""
    prior = get_spec(game_name).action_prior
    out = np.zeros((len(states), num_actions), dtype=np.float32)
    for i, s in enumerate(states):
        scored, scores = prior(s)
        out[i, scored] = scores
    return out
