"""The static-evaluation prior of the value head (``model.value_prior``).

A ``value_prior`` network outputs ``tanh(prior + residual)``: ``prior`` is the
game's static evaluation of the position from the side to move (the game
descriptor's ``evaluate``) divided by its ``eval_scale``, the same squashing
MCTS playout cut-offs and self-play adjudication use. It is computed here from
action states (for Whistling the position before the turn in progress, whose side
to move is the player acting).
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
