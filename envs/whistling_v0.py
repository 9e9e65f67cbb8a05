"""Monochromatic Whistling, PettingZoo AEC env, version 0 (see ``boardzoo.envs.whistling.env``)."""

from .whistling.env import WhistlingActions, env, raw_env

__all__ = ["WhistlingActions", "env", "raw_env"]
