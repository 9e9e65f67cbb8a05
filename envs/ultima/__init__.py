"""Ultima (Baroque chess): rules engine (:mod:`.rules`, :mod:`.movegen`), notation and the
PettingZoo env (:mod:`.env`)."""

from .rules import START_TEXT, State

__all__ = ["START_TEXT", "State"]
