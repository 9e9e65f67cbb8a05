"""LOA's augmentation: all 8 symmetries of the square.

The rules only use lines, directions and 8-connectivity, which every rotation
and reflection keep, so a mapped legal move is legal in the mapped position
(tested).
"""

from __future__ import annotations

import numpy as np

from ..core.symmetry import SQUARE_MAPS, Symmetry, direction_map, square_map


def loa_symmetries(num_actions: int = 513) -> list[Symmetry]:
    """The 8 square symmetries with LOA's action encoding (8 * origin + direction, 512 pass)."""
    out = []
    for name in SQUARE_MAPS:
        cell_src = np.empty(64, dtype=np.int64)
        perm = np.empty(num_actions, dtype=np.int64)
        for s in range(64):
            cell_src[square_map(name, s)] = s  # obs is [rank, file]: cell index = 8 * rank + file
            for d in range(8):
                perm[8 * s + d] = 8 * square_map(name, s) + direction_map(name, d)
        perm[512:] = np.arange(512, num_actions)
        out.append(Symmetry(name, cell_src, perm))
    return out
