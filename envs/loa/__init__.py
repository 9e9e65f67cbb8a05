"""Lines of Action: rules engine (:mod:`.rules`), notation and the PettingZoo env (:mod:`.env`)."""

from .rules import PASS, State, is_connected

__all__ = ["PASS", "State", "is_connected"]
