"""Monochromatic Whistling, PettingZoo AEC env, version 0.

Agents ``player_0`` (X, moves first) and ``player_1`` (O).
Actions and observation planes: :mod:`boardzoo.envs.whistling.actions`.
Rewards: +1 win, -1 loss, 0 draw, only when the game ends; ``max_moves`` truncates after
that many whole turns (both agents truncated, reward 0).
One action is ONE HOP: a chained capture takes several steps by the same agent
(``agent_selection`` does not change until the turn is complete); when a turn
completes, ``infos[agent]["turn"]`` holds its canonical notation.

"""

from typing import Any

from .aec import env_class, wrap
from .whistling.actions import WhistlingActions
from .whistling.spec import SPEC

raw_env = env_class(SPEC, __name__)


def env(**kwargs: Any) -> Any:
    """Return the Monochromatic Whistling env with PettingZoo's standard wrappers."""
    return wrap(raw_env(**kwargs))


__all__ = ["WhistlingActions", "env", "raw_env"]
