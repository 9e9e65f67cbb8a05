"""The Ultima board for the HTML replay viewer (same looks as :mod:`.render`)."""

from __future__ import annotations

from ..core.board_view import BoardView, board8_view
from .render import FROZEN, GLYPHS, LEGEND
from .rules import State


def pieces(state: State) -> list[str]:
    """Return the piece letter of each square, ``~`` added to a frozen one ("" where empty)."""
    frozen = state.frozen()
    return [(c + FROZEN if frozen >> s & 1 else c) if c else ""
            for s, c in enumerate(state.cells())]


def board_view() -> BoardView:
    """Return the Ultima board view."""
    return board8_view(GLYPHS, pieces, legend=LEGEND)
