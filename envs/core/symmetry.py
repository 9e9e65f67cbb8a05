"""Board symmetries for data augmentation: observation cell maps plus action permutations.

A :class:`Symmetry` maps an observation (its grid cells; planes unchanged or
permuted) and the action space together, so that a training example
(observation, policy target, legal mask, outcome) stays a true example after
the map. Colours are respected: nothing swaps sides, so the outcome is
unchanged. Each game's descriptor lists its own (``envs/<game>/symmetry.py``);
the 8 maps of the square live here for any 8x8 game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .board8 import DIRECTIONS


@dataclass(frozen=True)
class Symmetry:
    """One board symmetry.

    ``cell_src[k]`` is the grid cell (row-major over H x W) whose planes land on
    cell ``k``; ``action_perm[a]`` is the image of action ``a``.
    """

    name: str
    cell_src: np.ndarray
    action_perm: np.ndarray
    #: ``plane_src[p]``: the plane that lands on plane ``p`` (None: planes unchanged).
    plane_src: np.ndarray | None = None

    def obs(self, obs: np.ndarray) -> np.ndarray:
        """Map observations ``(..., H, W, C)``."""
        *lead, h, w, c = obs.shape
        flat = obs.reshape(*lead, h * w, c)
        out = flat[..., self.cell_src, :]
        if self.plane_src is not None:
            out = out[..., self.plane_src]
        return out.reshape(obs.shape)

    def actions(self, x: np.ndarray) -> np.ndarray:
        """Map a per-action vector (policy target or legal mask) ``(..., A)``."""
        out = np.empty_like(x)
        out[..., self.action_perm] = x
        return out


def identity(h: int, w: int, num_actions: int) -> Symmetry:
    """Return the identity map of an H x W grid and ``num_actions`` actions."""
    return Symmetry("id", np.arange(h * w), np.arange(num_actions))


# -- the square -----------------------------------------------------------------------------------
#: The 8 symmetries of the square as maps of (file, rank) on an n x n board.
SQUARE_MAPS: dict[str, Callable[[int, int, int], tuple[int, int]]] = {
    "id": lambda f, r, n: (f, r),
    "rot90": lambda f, r, n: (n - r, f),
    "rot180": lambda f, r, n: (n - f, n - r),
    "rot270": lambda f, r, n: (r, n - f),
    "flip_files": lambda f, r, n: (n - f, r),
    "flip_ranks": lambda f, r, n: (f, n - r),
    "transpose": lambda f, r, n: (r, f),
    "antitranspose": lambda f, r, n: (n - r, n - f),
}


def square_map(name: str, square: int) -> int:
    """Return the image of an 8x8 square index (8 * rank + file) under symmetry ``name``."""
    f, r = SQUARE_MAPS[name](square & 7, square >> 3, 7)
    return 8 * r + f


def direction_map(name: str, d: int) -> int:
    """Return the image of direction ``d`` (0..7 = N, NE, ..., NW) under symmetry ``name``."""
    df, dr = DIRECTIONS[d]
    # the linear part of the map: image of the step vector
    f0, r0 = SQUARE_MAPS[name](0, 0, 0)
    f1, r1 = SQUARE_MAPS[name](df, dr, 0)
    return DIRECTIONS.index((f1 - f0, r1 - r0))
