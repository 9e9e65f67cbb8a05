"""How each game's Discrete actions and board sit on its observation grid (network geometry).

An :class:`ActionLayout` says that action ``cell * per_cell + j`` (``j <
per_cell``) starts at board cell ``cell``, whose planes are at flat grid index
``cell_grid[cell]`` of the ``H x W`` observation, and that the last ``extra``
actions (LOA's pass) belong to no cell.

* LOA: ``8 * square + direction``, pass = 512: 64 cells x 8, 1 extra.
* Ultima: ``64 * origin + destination``: 64 cells x 64.
* Whistling: ``(6 * cell + direction) * 20 + distance - 1`` with cells in board
  order on the 21 x 41 grid: 331 cells x 120.

A :class:`PairLayout` (the ``bilinear`` policy head) gives every action its
(from cell, to cell) pair of board cells, -1 where an action has no such cell,
plus a kind per action (actions of one kind share a learned bias). An
:class:`InternalGrid` says on which array the network's trunk runs when that
is not the observation grid (Whistling: axial hex coordinates, 21 x 21).

The per-game facts live in the game folders (``envs/ultima/layout.py``,
``envs/whistling/layout.py``, ``envs/whistling/axial.py``); the functions
below connect them by game name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActionLayout:
    cell_grid: np.ndarray
    per_cell: int
    extra: int = 0

    @property
    def num_actions(self) -> int:
        return len(self.cell_grid) * self.per_cell + self.extra


def action_layout(game_name: str, game) -> ActionLayout | None:
    """Return the layout of ``game``'s actions, or None if boardzoo does not know it."""
    if game_name == "loa":
        return ActionLayout(np.arange(64), 8, 1)
    if game_name == "ultima":
        return ActionLayout(np.arange(64), 64, 0)
    if game_name == "whistling":
        from boardzoo.envs.whistling.hexgrid import CELLS, MAX_DISTANCE, NUM_COLUMNS

        grid = np.array([(r - 1) * NUM_COLUMNS + c for c, r in CELLS])
        return ActionLayout(grid, 6 * MAX_DISTANCE, 0)
    return None


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


def pair_layout(game_name: str, game) -> PairLayout | None:
    """Return ``game``'s actions as cell pairs, or None if it has no such layout (LOA)."""
    if game_name == "ultima":
        from boardzoo.envs.ultima import layout

        return PairLayout(layout.action_cells(), np.arange(layout.NUM_SQUARES),
                          layout.action_kinds(), layout.NUM_KINDS)
    if game_name == "whistling":
        from boardzoo.envs.whistling import layout

        return PairLayout(layout.action_cells(), action_layout(game_name, game).cell_grid,
                          layout.action_kinds(), layout.NUM_KINDS)
    return None


def internal_grid(game_name: str, game) -> InternalGrid | None:
    """Return the internal array of ``game``'s board, or None if it has none."""
    if game_name == "whistling":
        from boardzoo.envs.whistling import axial

        return InternalGrid(axial.SIZE, axial.SIZE, axial.axial_source(), axial.HEX_KERNEL)
    return None
