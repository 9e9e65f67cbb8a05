"""The LOA board for the HTML replay viewer (same looks as :mod:`.render`)."""

from __future__ import annotations

from ..core.board_view import BoardView, board8_view
from .render import GLYPHS, LEGEND
from .rules import State


def pieces(state: State) -> list[str]:
    """Return the piece letter of each square ("" where empty)."""
    return [c or "" for c in state.cells()]


def board_view() -> BoardView:
    """Return the LOA board view."""
    return board8_view(GLYPHS, pieces, legend=LEGEND)
