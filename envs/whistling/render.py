"""Pictures of Whistling positions: real hexagons drawn with Pillow, and the text board."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from ..core.draw import PictureCells, font
from .actions import HopState, WhistlingActions
from .hexgrid import BIT, CELL_NAMES, CELLS, COLUMNS, NUM_CELLS, NUM_COLUMNS, NUM_ROWS
from .notation import spell
from .rules import SIDES, diagram

ACTIONS = WhistlingActions()

HEX_SIDE = 16
_DX = HEX_SIDE * math.sqrt(3) / 2  # pixels per column step (two columns = one cell)
_DY = HEX_SIDE * 1.5  # pixels per row
_MARGIN = 28
BOARD_FILL = (224, 196, 150)
BOARD_EDGE = (110, 80, 50)
HIGHLIGHT = (246, 226, 107)
BACKGROUND = (60, 45, 35)
TEXT = (240, 240, 240)
STONE = {0: ((25, 25, 25), (200, 200, 200)), 1: ((245, 245, 245), (30, 30, 30))}


def cell_centre(cell: int) -> tuple[float, float]:
    """Return the pixel (x, y) of ``cell``'s centre in a :func:`draw_board` picture."""
    c, r = CELLS[cell]
    return _MARGIN + _DX * (c + 1), _MARGIN + HEX_SIDE + _DY * (r - 1)


_CENTRES = np.array([cell_centre(cell) for cell in range(NUM_CELLS)])


def cell_at(x: float, y: float) -> int | None:
    """Return the cell whose hexagon holds pixel (x, y) of a :func:`draw_board` picture, or None."""
    offsets = np.abs(_CENTRES - (x, y))
    cell = int(np.argmin((offsets**2).sum(axis=1)))
    dx, dy = offsets[cell]
    # pointy-top hexagon: vertical sides at the inradius, slanted sides at 30 degrees
    inradius = HEX_SIDE * math.sqrt(3) / 2
    return cell if dx <= inradius and dx / 2 + dy * math.sqrt(3) / 2 <= inradius else None


#: Where the cells of a :func:`draw_board` picture are.
PICTURE_CELLS = PictureCells(cell_at, cell_centre, 2 * _DX, CELL_NAMES.__getitem__)


def draw_board(x: int, o: int, highlight: set[int] = frozenset(), moving: int = -1,
               caption: str = "") -> np.ndarray:
    """Return an RGB uint8 picture of the hexagonal board with stones and coordinates."""
    width = int(2 * _MARGIN + _DX * (NUM_COLUMNS + 1))
    height = int(2 * _MARGIN + 2 * HEX_SIDE + _DY * (NUM_ROWS - 1)) + 24
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    small = font(11)
    corners = [(HEX_SIDE * math.cos(math.radians(a)), HEX_SIDE * math.sin(math.radians(a)))
               for a in range(-90, 270, 60)]  # pointy-top hexagons: rows are horizontal
    for cell in range(NUM_CELLS):
        cx, cy = cell_centre(cell)
        fill = HIGHLIGHT if cell in highlight else BOARD_FILL
        draw.polygon([(cx + dx, cy + dy) for dx, dy in corners], fill=fill, outline=BOARD_EDGE)
        side = 0 if x & BIT[cell] else 1 if o & BIT[cell] else -1
        if side >= 0:
            rad = HEX_SIDE * 0.62
            inner, edge = STONE[side]
            draw.ellipse([cx - rad, cy - rad, cx + rad, cy + rad], fill=inner, outline=edge,
                         width=2)
            if cell == moving:
                draw.ellipse([cx - rad - 3, cy - rad - 3, cx + rad + 3, cy + rad + 3],
                             outline=(220, 40, 40), width=3)
    for c in range(NUM_COLUMNS):
        px = _MARGIN + _DX * (c + 1)
        draw.text((px, _MARGIN / 2), COLUMNS[c], fill=TEXT, font=small, anchor="mm")
        draw.text((px, height - 24 - _MARGIN / 2), COLUMNS[c], fill=TEXT, font=small,
                  anchor="mm")
    for r in range(1, NUM_ROWS + 1):
        first = min(c for c, rr in CELLS if rr == r)
        py = _MARGIN + HEX_SIDE + _DY * (r - 1)
        draw.text((_MARGIN + _DX * (first - 1), py), str(r), fill=TEXT, font=small, anchor="rm")
        draw.text((_MARGIN + _DX * (NUM_COLUMNS - first + 2), py), str(r), fill=TEXT,
                  font=small, anchor="lm")
    if caption:
        # 14 px: at 11 px the default font's spaces all but vanish ("tomove:")
        draw.text((_MARGIN / 2, height - 12), caption, fill=TEXT, font=font(14), anchor="lm")
    return np.asarray(image, dtype=np.uint8)


def render_rgb(state: HopState, last_move: str | None, caption: str) -> np.ndarray:
    """Return a picture of the board as it stands mid-turn, the turn's or last move's cells lit."""
    x, o, cell, _ = ACTIONS.board(state)
    marked: set[int] = set()
    if cell >= 0:
        marked = set(state.path)
        caption += f"   turn in progress: {ACTIONS.turn_so_far(state)}"
    elif last_move:
        marked = set(spell(last_move).path)
        caption += f"   last move: {last_move}"
    return draw_board(x, o, marked, cell, caption)


def render_text(state: HopState) -> str:
    """Return the seed-style text board (mid-chain: as it stands, the mover in capitals)."""
    x, o, cell, _ = ACTIONS.board(state)
    marks = {cell: SIDES[state.game.side].upper()} if cell >= 0 else None
    lines = [diagram(x, o, marks)]
    if cell >= 0:
        lines.append(f"turn in progress: {ACTIONS.turn_so_far(state)}")
    return "\n".join(lines)
