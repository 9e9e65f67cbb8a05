"""How each game's Discrete actions sit on its observation grid (for the conv policy head).

An :class:`ActionLayout` says that action ``cell * per_cell + j`` (``j <
per_cell``) starts at board cell ``cell``, whose planes are at flat grid index
``cell_grid[cell]`` of the ``H x W`` observation, and that the last ``extra``
actions (LOA's pass) belong to no cell.

* LOA: ``8 * square + direction``, pass = 512: 64 cells x 8, 1 extra.
* Ultima: ``64 * origin + destination``: 64 cells x 64.
* Whistling: ``(6 * cell + direction) * 20 + distance - 1`` with cells in board
  order on the 21 x 41 grid: 331 cells x 120.
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
