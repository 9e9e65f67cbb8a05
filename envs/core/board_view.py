"""Vector pictures of boards for the HTML replay viewer (drawn by the browser, not Pillow).

A :class:`BoardView` holds what never changes during a game (the cells' shapes and
colours, the coordinates) once, and turns each position into one piece token per cell,
so a page can hold every position of many games in little space. The looks follow the
``rgb_array`` renderers (same colours, same highlighted cells).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .board8 import FILES, parse_square
from .draw import DARK, FRAME, HIGHLIGHT, LIGHT, TEXT, Glyph

Rgb = tuple[int, int, int]


def hex_colour(rgb: Rgb) -> str:
    """Return ``#rrggbb`` of an RGB triple."""
    return "#" + "".join(f"{c:02x}" for c in rgb)


@dataclass(frozen=True)
class Label:
    """A coordinate or caption text drawn at a fixed place on the board picture."""

    x: float
    y: float
    text: str


@dataclass(frozen=True)
class BoardView:
    """A board as SVG-ready geometry plus functions from an action state to what it shows."""

    #: Picture size in pixels (the SVG viewBox).
    width: int
    height: int
    #: Colour around the board.
    background: Rgb
    #: Outline points of each cell, in cell order.
    cells: Sequence[Sequence[tuple[float, float]]]
    #: Centre of each cell (where a piece is drawn).
    centres: Sequence[tuple[float, float]]
    #: Fill of each cell when not highlighted.
    cell_fills: Sequence[Rgb]
    #: Outline colour of the cells (None: no outline).
    cell_edge: Rgb | None
    #: Fill of a highlighted cell (the last move's).
    highlight: Rgb
    #: Radius of a piece disc.
    radius: float
    #: Look of each piece token.
    glyphs: Mapping[str, Glyph]
    #: Coordinates around the board.
    labels: Sequence[Label]
    #: ``pieces(action_state)``: one token per cell, "" where the cell is empty.
    pieces: Callable[[Any], list[str]]
    #: ``marked(action_state, last_move)``: the cells to highlight.
    marked: Callable[[Any, str | None], list[int]]
    #: What each piece token stands for (``"K": "king"``, ``"x": "x, moves first"``): the key
    #: shown beside the board.
    legend: Mapping[str, str] = field(default_factory=dict)


def board8_view(glyphs: Mapping[str, Glyph], pieces: Callable[[Any], list[str]],
                cell: int = 64, legend: Mapping[str, str] | None = None) -> BoardView:
    """Return the view of an 8x8 board drawn like ``draw_board8`` (a1 bottom-left)."""
    margin = cell // 2
    size = 8 * cell + 2 * margin
    shapes, centres, fills = [], [], []
    for sq in range(64):
        f, r = sq % 8, sq // 8
        x0, y0 = margin + f * cell, margin + (7 - r) * cell
        shapes.append([(x0, y0), (x0 + cell, y0), (x0 + cell, y0 + cell), (x0, y0 + cell)])
        centres.append((x0 + cell / 2, y0 + cell / 2))
        fills.append(LIGHT if (f + r) % 2 else DARK)
    labels = []
    for i in range(8):
        mid = margin + i * cell + cell / 2
        labels += [Label(mid, margin / 2, FILES[i]), Label(mid, size - margin / 2, FILES[i]),
                   Label(margin / 2, margin + (7 - i) * cell + cell / 2, str(i + 1)),
                   Label(size - margin / 2, margin + (7 - i) * cell + cell / 2, str(i + 1))]
    return BoardView(size, size, FRAME, shapes, centres, fills, None, HIGHLIGHT,
                     cell * 3 / 8, glyphs, labels, pieces, move_squares, dict(legend or {}))


def move_squares(state: Any, last_move: str | None) -> list[int]:
    """Return the from and to squares of an 8x8 move text (``d1-d3``, ``a1a5xa2``); none for
    no move or a pass."""
    if not last_move or last_move == "pass":
        return []
    second = 3 if last_move[2] in "-x" else 2  # LOA writes d1-d3 / b4xb7, Ultima a1a5xa2
    return [parse_square(last_move[:2]), parse_square(last_move[second:second + 2])]


__all__ = ["TEXT", "BoardView", "Label", "board8_view", "hex_colour", "move_squares"]
