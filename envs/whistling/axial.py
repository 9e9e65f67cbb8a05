"""Whistling's hex board in axial coordinates: a 21 x 21 array for hex convolutions.

The observation draws the board on a 21 x 41 grid (two columns per cell). In
axial coordinates ``(a, b)`` about u11 with E = (1, 0) and SE = (0, 1) (grid
offsets ``dc = 2a + b``, ``dr = b``) the 331 cells are ``|a|, |b|, |a + b| <=
10``. Stored at array ``[b + 10, a + 10]``, a cell's six neighbours are the 3 x 3
neighbourhood minus its top-left and bottom-right corners (:data:`HEX_KERNEL`),
so a 3 x 3 convolution with that kernel mask sees exactly the hex neighbours.
"""

from __future__ import annotations

import numpy as np

from .hexgrid import CELLS, NUM_COLUMNS

RADIUS = 10
SIZE = 2 * RADIUS + 1
CENTRE_COLUMN, CENTRE_ROW = 20, 11  # u11
#: 3 x 3 kernel mask of the hex neighbourhood on the axial array (1: used).
HEX_KERNEL = np.array([[0, 1, 1], [1, 1, 1], [1, 1, 0]], dtype=np.float32)


def axial_of(column: int, row: int) -> tuple[int, int]:
    """Return the axial array position ``(b + 10, a + 10)`` of grid column and row."""
    b = row - CENTRE_ROW
    a = (column - CENTRE_COLUMN - b) // 2
    return b + RADIUS, a + RADIUS


def axial_index() -> np.ndarray:
    """Return the flat axial array index (``SIZE * row + column``) of every cell, in board order."""
    return np.array([SIZE * r + c for r, c in (axial_of(*cr) for cr in CELLS)], dtype=np.int64)


def axial_source() -> np.ndarray:
    """Return, per flat axial array position, the observation grid index of its cell or -1."""
    src = np.full(SIZE * SIZE, -1, dtype=np.int64)
    for k, (c, r) in zip(axial_index(), CELLS, strict=True):
        src[k] = (r - 1) * NUM_COLUMNS + c
    return src
