"""Board symmetries for data augmentation: observation cell maps plus action permutations.

A :class:`Symmetry` maps an observation (its grid cells; planes unchanged) and
the action space together, so that a training example (observation, policy
target, legal mask, outcome) stays a true example after the map. Colours are
respected: nothing swaps sides, so the outcome is unchanged.

* LOA: all 8 symmetries of the square. The rules only use lines, directions and
  8-connectivity, which every rotation and reflection keep, so a mapped legal
  move is legal in the mapped position (tested).
* Ultima: none. The only candidate is the left-right mirror, and Abbott's array
  is not mirror-symmetric (I/O and K/W trade places), so it is not used.
* Whistling: of the 12 symmetries of the hexagon (about u11), those that map
  each side's start stones onto themselves: the rotations by 120 and 240
  degrees (computed, not assumed: :func:`whistling_symmetries` keeps exactly
  the maps that fix both start sets). Distances are Euclidean, so the rules
  are invariant; a hop keeps its distance and turns its direction, and the
  last-hop direction planes (3-8) are permuted the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


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
    return Symmetry("id", np.arange(h * w), np.arange(num_actions))


# -- LOA -----------------------------------------------------------------------------------
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
    from boardzoo.envs.core.board8 import DIRECTIONS

    df, dr = DIRECTIONS[d]
    # the linear part of the map: image of the step vector
    f0, r0 = SQUARE_MAPS[name](0, 0, 0)
    f1, r1 = SQUARE_MAPS[name](df, dr, 0)
    return DIRECTIONS.index((f1 - f0, r1 - r0))


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


# -- Whistling ----------------------------------------------------------------------------------
def _hex_maps() -> list[tuple[str, Callable[[int, int], tuple[int, int]]]]:
    """The 12 symmetries of the hexagon as maps of grid offsets (dc, dr) from the centre.

    Grid offsets relate to axial coordinates (a, b) with E = (1, 0), SE = (0, 1) by
    dc = 2a + b, dr = b; a 60-degree turn (E -> SE) is (a, b) -> (-b, a + b) and the mirror
    in the E-W line is (dc, dr) -> (dc, -dr).
    """

    def turn(k: int, mirror: bool) -> Callable[[int, int], tuple[int, int]]:
        def f(dc: int, dr: int) -> tuple[int, int]:
            if mirror:
                dr = -dr
            a, b = (dc - dr) // 2, dr
            for _ in range(k):
                a, b = -b, a + b
            return 2 * a + b, b

        return f

    return [(f"{'mirror+' if m else ''}rot{60 * k}", turn(k, m))
            for m in (False, True) for k in range(6)]


def whistling_symmetries(game) -> list[Symmetry]:
    """The hexagon symmetries that fix both sides' start stones (identity first)."""
    from boardzoo.envs.whistling.env import NUM_PLANES, decode, encode
    from boardzoo.envs.whistling.hexgrid import (
        CELLS,
        COORD_INDEX,
        DIRECTIONS,
        NUM_COLUMNS,
        NUM_ROWS,
        cells_of,
    )

    start = game.state_cls.start()
    sets = [set(cells_of(bb)) for bb in start.stones]
    cc, cr = 20, 11  # u11
    out = []
    for name, f in _hex_maps():
        cell_map = []
        for c, r in CELLS:
            dc, dr = f(c - cc, r - cr)
            cell_map.append(COORD_INDEX[(cc + dc, cr + dr)])
        if any({cell_map[x] for x in s} != s for s in sets):
            continue
        dir_map = [DIRECTIONS.index(f(dc, dr)) for dc, dr in DIRECTIONS]
        grid_src = np.arange(NUM_ROWS * NUM_COLUMNS)
        for i, (c, r) in enumerate(CELLS):
            c2, r2 = CELLS[cell_map[i]]
            grid_src[(r2 - 1) * NUM_COLUMNS + c2] = (r - 1) * NUM_COLUMNS + c
        perm = np.empty(game.num_actions, dtype=np.int64)
        for a in range(game.num_actions):
            cell, d, k = decode(a)
            perm[a] = encode(cell_map[cell], dir_map[d], k)
        planes = np.arange(NUM_PLANES)
        for d in range(6):
            planes[3 + dir_map[d]] = 3 + d
        out.append(Symmetry(name, grid_src, perm, planes))
    return out


def symmetries(game_name: str, game) -> list[Symmetry]:
    """Return the symmetries used to augment ``game`` (identity first)."""
    h, w = game.observation_shape[:2]
    if game_name == "loa":
        return loa_symmetries(game.num_actions)
    if game_name == "whistling":
        return whistling_symmetries(game)
    custom = getattr(game, "symmetries", None)  # a game may ship its own later
    if callable(custom):
        return [identity(h, w, game.num_actions), *custom()]
    return [identity(h, w, game.num_actions)]
