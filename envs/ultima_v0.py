"""Ultima (Baroque chess), PettingZoo AEC env, version 0 (see :mod:`boardzoo.envs.ultima.env`)."""

from .ultima.env import UltimaActions, env, raw_env

__all__ = ["UltimaActions", "env", "raw_env"]
