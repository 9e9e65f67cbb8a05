"""Monochromatic Whistling: rules engine (:mod:`.rules`), notation, PettingZoo env (:mod:`.env`)."""

from .rules import CRUSH, PLAIN, WHISTLE, State, Turn

__all__ = ["CRUSH", "PLAIN", "WHISTLE", "State", "Turn"]
