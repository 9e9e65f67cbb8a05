"""Lines of Action, PettingZoo AEC env, version 0 (see :mod:`boardzoo.envs.loa.env`)."""

from .loa.env import LoaActions, env, raw_env

__all__ = ["LoaActions", "env", "raw_env"]
