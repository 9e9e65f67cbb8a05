"""Ultima (Baroque chess), PettingZoo AEC env, version 0.

Agents ``player_0`` (White, moves first) and ``player_1`` (Black).
Actions and observation planes: :mod:`boardzoo.envs.ultima.actions`.
Rewards: +1 win, -1 loss, 0 draw, only when the game ends; ``max_moves`` truncates after
that many whole turns (both agents truncated, reward 0).
"""

from typing import Any

from .aec import env_class, wrap
from .ultima.actions import UltimaActions
from .ultima.spec import SPEC

raw_env = env_class(SPEC, __name__)


def env(**kwargs: Any) -> Any:
    """Return the Ultima (Baroque chess) env with PettingZoo's standard wrappers."""
    return wrap(raw_env(**kwargs))


__all__ = ["UltimaActions", "env", "raw_env"]
