"""Whistling's augmentation: the hexagon symmetries that fix both sides' start stones.

Of the 12 symmetries of the hexagon (about u11), those that map each side's
start stones onto themselves: the rotations by 120 and 240 degrees (computed,
not assumed: :func:`whistling_symmetries` keeps exactly the maps that fix both
start sets). Distances are Euclidean, so the rules are invariant; a hop keeps
its distance and turns its direction, and the last-hop direction planes (3-8)
are permuted the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.symmetry import Symmetry
from .actions import NUM_ACTIONS, NUM_PLANES, decode, encode
from .hexgrid import CELLS, COORD_INDEX, DIRECTIONS, NUM_COLUMNS, NUM_ROWS, cells_of
from .rules import State


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


def start_fixing_maps() -> list[tuple[str, list[int], Callable[[int, int], tuple[int, int]]]]:
    """The hexagon symmetries that fix both sides' start stones (identity first), each as
    (name, cell map: cell -> its image, the map of grid offsets)."""
    start = State.start()
    sets = [set(cells_of(bb)) for bb in start.stones]
    cc, cr = 20, 11  # u11
    out = []
    for name, f in _hex_maps():
        cell_map = []
        for c, r in CELLS:
            dc, dr = f(c - cc, r - cr)
            cell_map.append(COORD_INDEX[(cc + dc, cr + dr)])
        if all({cell_map[x] for x in s} == s for s in sets):
            out.append((name, cell_map, f))
    return out


def whistling_symmetries() -> list[Symmetry]:
    """The hexagon symmetries that fix both sides' start stones (identity first)."""
    out = []
    for name, cell_map, f in start_fixing_maps():
        dir_map = [DIRECTIONS.index(f(dc, dr)) for dc, dr in DIRECTIONS]
        grid_src = np.arange(NUM_ROWS * NUM_COLUMNS)
        for i, (c, r) in enumerate(CELLS):
            c2, r2 = CELLS[cell_map[i]]
            grid_src[(r2 - 1) * NUM_COLUMNS + c2] = (r - 1) * NUM_COLUMNS + c
        perm = np.empty(NUM_ACTIONS, dtype=np.int64)
        for a in range(NUM_ACTIONS):
            cell, d, k = decode(a)
            perm[a] = encode(cell_map[cell], dir_map[d], k)
        planes = np.arange(NUM_PLANES)
        for d in range(6):
            planes[3 + dir_map[d]] = 3 + d
        out.append(Symmetry(name, grid_src, perm, planes))
    return out
