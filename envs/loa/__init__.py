"""Lines of Action: rules (:mod:`.rules`), notation, action encoding (:mod:`.actions`),
evaluation, pictures, batched engine and the descriptor (:mod:`.spec`)."""

from .rules import PASS, State, is_connected

__all__ = ["PASS", "State", "is_connected"]
