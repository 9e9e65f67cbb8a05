"""Whistling move generation on cell bitmasks: the :class:`Turn` type, one stone's capturing
hops and the scan of a side's plain slides, capturers and crushes (used by :mod:`.rules`
and :mod:`.chains`).

Speed notes (why the code looks like this): the closer rule along a direction
``u`` reduces to ``2k < max_E <u, E - S>`` (spec section 4 with D's metric), so
the longest allowed hop per (stone, direction) costs one subtraction once the
six maxima over the enemy stones are known; the nearest blocker on a ray is
one bit trick on ``occupied & RAY_MASKS``; whistle zones are precomputed
bitmasks (:mod:`.hexgrid`).
"""

from __future__ import annotations

from typing import NamedTuple

from .hexgrid import BIT, CELLS, NUM_CELLS, OPPOSITE, PROJ, RAY_MASKS, RAYS, SWEEPS, ZONES, cells_of
from .notation import CRUSH

_NO_CAPTURE = (0,)
# Directions a chain hop may not take after a hop in direction d (straight on or back);
# index 6 (= -1) is the first hop of a turn, which may go anywhere.
_BANNED = tuple((d, OPPOSITE[d]) for d in range(6)) + ((-1, -1),)


class Turn(NamedTuple):
    """One whole turn: cells visited (start, then each hop's destination), captures, kind."""

    path: tuple[int, ...]
    #: Bitmask of the enemy stones each hop captures (``(0,)`` for a plain move).
    caps: tuple[int, ...]
    kind: int  # PLAIN, WHISTLE or CRUSH

    @property
    def captured(self) -> int:
        """Return the bitmask of every stone this turn captures."""
        out = 0
        for c in self.caps:
            out |= c
        return out

    @property
    def count(self) -> int:
        """Return the number of stones this turn captures."""
        return sum(c.bit_count() for c in self.caps)


def _extremes(enemy_cells: list[int]) -> list[int]:
    """Return max over the enemy stones of PROJ[d] for each direction d (closer-rule bound)."""
    return [max(map(p.__getitem__, enemy_cells)) for p in PROJ]


#: LINE_POS[d][i]: position of cell i along lines of direction d (steps = difference).
LINE_POS: tuple[tuple[int, ...], ...] = tuple(
    tuple(c >> 1 if d in (0, 3) else r for c, r in CELLS) for d in range(6)
)
#: GEOM[s]: per direction with a non-empty ray from cell s, everything the move
#: generator needs, unpacked in one go (why: attribute and index lookups dominate).
GEOM: tuple[tuple[tuple, ...], ...] = tuple(
    tuple(
        (d, len(RAYS[s][d]), RAY_MASKS[s][d], LINE_POS[d], LINE_POS[d][s], PROJ[d][s],
         SWEEPS[s][d], ZONES[s][d], RAYS[s][d])
        for d in range(6) if RAYS[s][d]
    )
    for s in range(NUM_CELLS)
)
_new = tuple.__new__  # builds a Turn without NamedTuple's Python-level __new__


def capture_hops(cell: int, last: int, occ: int, enemy: int,
                  extremes: dict[int, list[int]]) -> list[tuple[int, int, int]]:
    """Return (direction, destination, captured mask) of every capturing hop from ``cell``.

    ``extremes`` caches the closer-rule maxima per enemy set; they are only computed when
    some free ray passes an enemy stone at all (why: most chain nodes are dead ends).
    """
    out = []
    banned = _BANNED[last]
    mx = None
    for d, n, rmask, lpd, lps, ps, sweeps, zones, ray in GEOM[cell]:
        if d in banned:
            continue
        b = occ & rmask
        if b:
            free = (lpd[(b & -b).bit_length() - 1] - lps - 1 if d < 3
                    else lps - lpd[b.bit_length() - 1] - 1)
        else:
            free = n
        if free < 3 or not sweeps[free] & enemy:
            continue
        if mx is None:
            mx = extremes.get(enemy)
            if mx is None:
                mx = extremes[enemy] = _extremes(cells_of(enemy))
        closer = (mx[d] - ps - 1) >> 1  # the largest k with 2k < <u, E - S>
        k_max = free if free < closer else closer
        if k_max >= 3 and sweeps[k_max] & enemy:
            for k in range(3, k_max + 1):
                c = zones[k] & enemy
                if c:
                    out.append((d, ray[k - 1], c))
    return out


def _scan(own: int, enemy: int) -> tuple[list[tuple[int, int, int]], list[int], list[Turn],
                                         list[int]]:
    """Return (plain slides as (cell, ray, longest k), stones with a capturing hop, crushes,
    closer-rule maxima) for the side with stones ``own`` against ``enemy``."""
    mx = _extremes(cells_of(enemy))
    occ = own | enemy
    plain: list[tuple[int, int, int]] = []
    crushes: list[Turn] = []
    capturers: list[int] = []
    for s in cells_of(own):
        captures = False
        for d, n, rmask, lpd, lps, ps, sweeps, zones, ray in GEOM[s]:
            b = occ & rmask
            if b:
                if d < 3:
                    first = (b & -b).bit_length() - 1
                    free = lpd[first] - lps - 1
                else:
                    first = b.bit_length() - 1
                    free = lps - lpd[first] - 1
                if not free:
                    if enemy & BIT[first]:
                        crushes.append(_new(Turn, ((s, first), (BIT[first],), CRUSH)))
                    continue
            else:
                free = n
            closer = (mx[d] - ps - 1) >> 1
            k_max = free if free < closer else closer
            if k_max <= 0:
                continue
            plain.append((s, ray, k_max))
            if not captures and k_max >= 3 and sweeps[k_max] & enemy:
                captures = any(zones[k] & enemy for k in range(3, k_max + 1))
        if captures:
            capturers.append(s)
    return plain, capturers, crushes, mx
