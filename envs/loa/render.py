"""Pictures of LOA positions (black and white discs on an 8x8 board)."""

from __future__ import annotations

import numpy as np

from ..core.board8 import parse_square
from ..core.draw import Glyph, draw_board8
from .rules import State

GLYPHS = {
    "b": Glyph(fill=(20, 20, 20), outline=(200, 200, 200)),
    "w": Glyph(fill=(250, 250, 250), outline=(30, 30, 30)),
}
LEGEND = {"b": "black", "w": "white"}


def render_rgb(state: State, last_move: str | None, caption: str) -> np.ndarray:
    """Return a picture of ``state`` with ``last_move``'s squares lit and ``caption`` below."""
    marked: list[int] = []
    if last_move not in (None, "pass"):
        marked = [parse_square(last_move[:2]), parse_square(last_move[3:])]
    if last_move:
        caption += f"   last move: {last_move}"
    return draw_board8(state.cells(), GLYPHS, highlight=marked,
                       legend=LEGEND, caption=caption)
