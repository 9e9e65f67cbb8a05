"""Monochromatic Whistling: rules (:mod:`.rules`), notation, action encoding (:mod:`.actions`),
evaluation, pictures, batched engine and the descriptor (:mod:`.spec`)."""

from .rules import CRUSH, PLAIN, WHISTLE, State, Turn

__all__ = ["CRUSH", "PLAIN", "WHISTLE", "State", "Turn"]
