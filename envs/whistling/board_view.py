"""The Whistling board for the HTML replay viewer: the hexagons of :mod:`.render`."""

from __future__ import annotations

import math

from ..core.board_view import BoardView, Label
from ..core.draw import Glyph
from . import render
from .actions import HopState
from .hexgrid import BIT, CELLS, COLUMNS, NUM_CELLS, NUM_COLUMNS, NUM_ROWS
from .notation import spell

#: Token of each side's stones (X moves first and plays the dark stones, as in the picture).
TOKENS = ("x", "o")
GLYPHS = {t: Glyph(fill=render.STONE[i][0], outline=render.STONE[i][1])
          for i, t in enumerate(TOKENS)}
#: The colour key: which stones are the side ``x`` and which ``o`` of the notation.
LEGEND = {"x": "x (moves first)", "o": "o (moves second)"}


def pieces(state: HopState) -> list[str]:
    """Return the stone token of each cell ("" where empty), as the board stands mid-turn."""
    x, o, _, _ = render.ACTIONS.board(state)
    return ["x" if x & BIT[c] else "o" if o & BIT[c] else "" for c in range(NUM_CELLS)]


def marked(state: HopState, last_move: str | None) -> list[int]:
    """Return the cells of the last move's path."""
    return list(spell(last_move).path) if last_move else []


def board_view() -> BoardView:
    """Return the Whistling board view, laid out as the ``rgb_array`` picture."""
    side, margin, dx, dy = render.HEX_SIDE, render._MARGIN, render._DX, render._DY
    width = int(2 * margin + dx * (NUM_COLUMNS + 1))
    height = int(2 * margin + 2 * side + dy * (NUM_ROWS - 1))
    corners = [(side * math.cos(math.radians(a)), side * math.sin(math.radians(a)))
               for a in range(-90, 270, 60)]
    centres = [render.cell_centre(c) for c in range(NUM_CELLS)]
    shapes = [[(cx + ddx, cy + ddy) for ddx, ddy in corners] for cx, cy in centres]
    labels = []
    for c in range(NUM_COLUMNS):
        px = margin + dx * (c + 1)
        labels += [Label(px, margin / 2, COLUMNS[c]), Label(px, height - margin / 2, COLUMNS[c])]
    for r in range(1, NUM_ROWS + 1):
        first = min(c for c, rr in CELLS if rr == r)
        py = margin + side + dy * (r - 1)
        labels += [Label(margin + dx * (first - 1) - 6, py, str(r)),
                   Label(margin + dx * (NUM_COLUMNS - first + 2) + 6, py, str(r))]
    return BoardView(width, height, render.BACKGROUND, shapes, centres,
                     [render.BOARD_FILL] * NUM_CELLS, render.BOARD_EDGE, render.HIGHLIGHT,
                     side * 0.62, GLYPHS, labels, pieces, marked, LEGEND)
