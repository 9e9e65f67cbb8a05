"""How a game's Discrete actions sit on its observation grid (for a conv policy head).

An :class:`ActionLayout` says that action ``cell * per_cell + j`` (``j <
per_cell``) starts at board cell ``cell``, whose planes are at flat grid index
``cell_grid[cell]`` of the ``H x W`` observation, and that the last ``extra``
actions (LOA's pass) belong to no cell. Each game's descriptor gives its own.
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
