"""How a game's Discrete actions sit on its observation grid (for a conv policy head).

An :class:`ActionLayout` says that action ``cell * per_cell + j`` (``j <
per_cell``) starts at board cell ``cell``, whose planes are at flat grid index
``cell_grid[cell]`` of the ``H x W`` observation, and that the last ``extra``
actions (LOA's pass) belong to no cell. Each game's descriptor gives its own.

A :class:`PairLayout` (for a ``bilinear`` policy head) gives every action its
(from cell, to cell) pair of board cells, -1 where an action has no such cell,
plus a kind per action (actions of one kind share a learned bias). An
:class:`InternalGrid` says on which array a network's trunk runs when that is
not the observation grid (Whistling: axial hex coordinates, 21 x 21).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActionLayout:
    """Actions laid out cell-major over the observation grid, plus ``extra`` cell-less ones."""

    cell_grid: np.ndarray
    per_cell: int
    extra: int = 0

    @property
    def num_actions(self) -> int:
        """The size of the action space this layout covers."""
        return len(self.cell_grid) * self.per_cell + self.extra


@dataclass(frozen=True)
class PairLayout:
    """Every action as a (from cell, to cell) pair of board cells, for a pair-scoring head.

    ``pairs[a] = (from, to)`` are board-cell numbers (``-1``: no cell, e.g. a hop off the
    board); board cell ``i`` sits at flat observation grid index ``cell_grid[i]``;
    ``kinds[a] < num_kinds`` is the action's kind (one learned bias per kind).
    """

    pairs: np.ndarray
    cell_grid: np.ndarray
    kinds: np.ndarray
    num_kinds: int

    @property
    def num_actions(self) -> int:
        """Return the number of actions covered."""
        return len(self.pairs)


@dataclass(frozen=True)
class InternalGrid:
    """The array a network's trunk runs on, filled from the observation grid.

    Internal cell ``k`` (row-major over ``height x width``) takes the planes of flat
    observation grid index ``source[k]``, or stays zero where ``source[k]`` is -1 (not a
    board cell); 3 x 3 convolutions are multiplied by ``kernel_mask`` (1: neighbour used).
    """

    height: int
    width: int
    source: np.ndarray
    kernel_mask: np.ndarray

    def inverse(self, grid_points: int) -> np.ndarray:
        """Return, per flat observation grid index, its internal cell or -1."""
        inv = np.full(grid_points, -1, dtype=np.int64)
        on = self.source >= 0
        inv[self.source[on]] = np.flatnonzero(on)
        return inv
