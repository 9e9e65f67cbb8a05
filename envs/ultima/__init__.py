"""Ultima (Baroque chess): rules (:mod:`.rules`), notation, action encoding (:mod:`.actions`),
evaluation, pictures, batched engine and the descriptor (:mod:`.spec`)."""

from .rules import START_TEXT, State

__all__ = ["START_TEXT", "State"]
