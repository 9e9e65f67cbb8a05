"""Pillow pictures of 8x8 boards for the ``rgb_array`` render mode (LOA, Ultima)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .board8 import FILES, square_name

LIGHT = (238, 218, 181)
DARK = (181, 136, 99)
HIGHLIGHT = (246, 226, 107)
FRAME = (60, 45, 35)
TEXT = (240, 240, 240)
#: Default pixels per square of :func:`draw_board8`.
CELL = 64


@dataclass(frozen=True)
class Glyph:
    """How one kind of piece is drawn: a disc with a fill, an outline and a label."""

    fill: tuple[int, int, int]
    outline: tuple[int, int, int]
    label: str = ""
    label_color: tuple[int, int, int] = (0, 0, 0)


@dataclass(frozen=True)
class PictureCells:
    """Where the board cells sit in the ``render_rgb`` picture (clicks and markers in a window).

    Cells are numbered as the game descriptor's ``action_cells`` numbers them.
    """

    #: ``cell_at(x, y)``: the board cell under pixel (x, y), or None off the board.
    cell_at: Callable[[float, float], int | None]
    #: ``centre(cell)``: the pixel (x, y) of a cell's centre.
    centre: Callable[[int], tuple[float, float]]
    #: Pixels across one cell (markers are drawn in proportion).
    size: float
    #: ``name(cell)``: the cell's name in the game's notation (``"e4"``).
    name: Callable[[int], str]


def font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def _corner(sq: int, cell: int) -> tuple[int, int]:
    """Return the pixel of square ``sq``'s top-left corner (a1 bottom-left, a margin around)."""
    return cell // 2 + (sq % 8) * cell, cell // 2 + (7 - sq // 8) * cell


def board8_centre(sq: int, cell: int = CELL) -> tuple[float, float]:
    """Return the pixel (x, y) of square ``sq``'s centre in a :func:`draw_board8` picture."""
    x0, y0 = _corner(sq, cell)
    return x0 + cell / 2, y0 + cell / 2


def board8_square_at(x: float, y: float, cell: int = CELL) -> int | None:
    """Return the square under pixel (x, y) of a :func:`draw_board8` picture, None off the board."""
    f, row = int((x - cell // 2) // cell), int((y - cell // 2) // cell)
    return 8 * (7 - row) + f if 0 <= f < 8 and 0 <= row < 8 else None


def draw_board8(
    cells: list[str | None],
    glyphs: Mapping[str, Glyph],
    highlight: Iterable[int] = (),
    legend: Mapping[str, str] | None = None,
    caption: str = "",
    cell: int = CELL,
) -> np.ndarray:
    """Return an RGB uint8 picture of 64 cells (index = 8*rank+file, a1 bottom-left).

    ``highlight`` marks squares (e.g. the last move); ``legend`` maps piece
    letters to names and is drawn below the board with ``caption``.
    """
    margin = cell // 2
    board_px = 8 * cell
    legend_rows = 0 if not legend else (len(legend) + 3) // 4
    footer = (legend_rows + (1 if caption else 0)) * (cell // 2) + (8 if legend or caption else 0)
    image = Image.new("RGB", (board_px + 2 * margin, board_px + 2 * margin + footer), FRAME)
    draw = ImageDraw.Draw(image)
    big = font(cell // 3)
    small = font(cell // 4)
    marked = set(highlight)
    for sq in range(64):
        f, r = sq % 8, sq // 8
        x0, y0 = _corner(sq, cell)
        color = HIGHLIGHT if sq in marked else (LIGHT if (f + r) % 2 else DARK)
        draw.rectangle([x0, y0, x0 + cell - 1, y0 + cell - 1], fill=color)
        piece = cells[sq]
        if piece is None:
            continue
        g = glyphs[piece]
        pad = cell // 8
        draw.ellipse(
            [x0 + pad, y0 + pad, x0 + cell - pad, y0 + cell - pad],
            fill=g.fill, outline=g.outline, width=max(2, cell // 20),
        )
        if g.label:
            draw.text((x0 + cell / 2, y0 + cell / 2), g.label, fill=g.label_color, font=big,
                      anchor="mm")
    for i in range(8):
        draw.text((margin + i * cell + cell / 2, margin / 2), FILES[i], fill=TEXT, font=small,
                  anchor="mm")
        draw.text((margin + i * cell + cell / 2, margin + board_px + margin / 2), FILES[i],
                  fill=TEXT, font=small, anchor="mm")
        draw.text((margin / 2, margin + (7 - i) * cell + cell / 2), str(i + 1), fill=TEXT,
                  font=small, anchor="mm")
        draw.text((margin + board_px + margin / 2, margin + (7 - i) * cell + cell / 2),
                  str(i + 1), fill=TEXT, font=small, anchor="mm")
    y = board_px + 2 * margin
    if legend:
        items = list(legend.items())
        col_w = (board_px + 2 * margin) // 4
        for i, (letter, name) in enumerate(items):
            x = 4 + (i % 4) * col_w
            yy = y + (i // 4) * (cell // 2)
            g = glyphs[letter]
            d = cell // 3
            draw.ellipse([x, yy + 4, x + d, yy + 4 + d], fill=g.fill, outline=g.outline, width=2)
            if g.label:
                draw.text((x + d / 2, yy + 4 + d / 2), g.label, fill=g.label_color, font=small,
                          anchor="mm")
            draw.text((x + d + 6, yy + 4 + d / 2), name, fill=TEXT, font=small, anchor="lm")
        y += legend_rows * (cell // 2)
    if caption:
        draw.text((margin, y + cell // 4), caption, fill=TEXT, font=small, anchor="lm")
    return np.asarray(image, dtype=np.uint8)


#: Where the squares of a :func:`draw_board8` picture are (LOA, Ultima).
BOARD8_CELLS = PictureCells(board8_square_at, board8_centre, CELL, square_name)
