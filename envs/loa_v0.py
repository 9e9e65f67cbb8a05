"""Lines of Action, PettingZoo AEC env, version 0.

Agents ``player_0`` (Black, moves first) and ``player_1`` (White).
Actions and observation planes: :mod:`boardzoo.envs.loa.actions`.
Rewards: +1 win, -1 loss, 0 draw, only when the game ends; ``max_moves`` truncates after
that many whole turns (both agents truncated, reward 0).
"""

from typing import Any

from .aec import env_class, wrap
from .loa.actions import LoaActions
from .loa.spec import SPEC

raw_env = env_class(SPEC, __name__)


def env(**kwargs: Any) -> Any:
    """Return the Lines of Action env with PettingZoo's standard wrappers."""
    return wrap(raw_env(**kwargs))


__all__ = ["LoaActions", "env", "raw_env"]
