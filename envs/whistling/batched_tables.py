"""Geometry tables of the batched Whistling engine, built once per device from :mod:`.hexgrid`.

Every table has one extra row for the *sentinel* cell ``SENT = 331``: rays and
zone lists are padded with it, boards are padded with one column that is
"occupied" (so a ray stops there) and never an enemy stone (so it is never
captured), and writes into it are thrown away.
"""

from __future__ import annotations

import torch

from .hexgrid import (
    CELLS,
    MAX_DISTANCE,
    NUM_CELLS,
    NUM_COLUMNS,
    NUM_ROWS,
    PROJ,
    RAYS,
    ZONES,
    cells_of,
)

SENT = NUM_CELLS  # the padding cell
PADDED = NUM_CELLS + 1
#: Actions per cell: 6 directions x 20 distances.
PER_CELL = 6 * MAX_DISTANCE
#: Slot number of "no enemy stone" in the per-game slot tables: the left-stone sets are
#: int64 bitmasks with at most 21 bits set, so ``(left >> NO_SLOT) & 1`` is always 0.
NO_SLOT = 63
NEG = -(1 << 20)  # below every closer-rule projection (|PROJ| < 200)


def _zone_steps() -> list[list[list[list[int]]]]:
    """Return, per cell, direction and hop length k (index k - 1), the cells its whistle
    zone has that the zone of the hop one cell shorter lacks (at most two: one per side)."""
    out = []
    for cell in range(NUM_CELLS):
        per_d = []
        for d in range(6):
            zones = ZONES[cell][d]
            steps = []
            for k in range(1, MAX_DISTANCE + 1):
                if k >= len(zones):
                    steps.append([])
                    continue
                if zones[k - 1] & ~zones[k]:
                    raise AssertionError("whistle zones must grow with the hop length")
                new = cells_of(zones[k] & ~zones[k - 1])
                if len(new) > 2:
                    raise AssertionError("a zone gains at most one cell on each side")
                steps.append(new)
            per_d.append(steps)
        out.append(per_d)
    return out


def _build() -> dict[str, torch.Tensor]:
    """Return the tables on the CPU."""
    ray = torch.full((PADDED, 6, MAX_DISTANCE + 1), SENT, dtype=torch.int64)
    znew = torch.full((PADDED, 6, MAX_DISTANCE, 2), SENT, dtype=torch.int64)
    for cell in range(NUM_CELLS):
        for d in range(6):
            cells = RAYS[cell][d]
            if cells:
                ray[cell, d, : len(cells)] = torch.tensor(cells)
    for cell, per_d in enumerate(_zone_steps()):
        for d, steps in enumerate(per_d):
            for k, new in enumerate(steps):
                for j, z in enumerate(new):
                    znew[cell, d, k, j] = z
    proj = torch.zeros((PADDED, 6), dtype=torch.int32)  # int32: less memory traffic
    proj[:NUM_CELLS] = torch.tensor(PROJ, dtype=torch.int32).T
    grid = torch.full((NUM_ROWS * NUM_COLUMNS,), SENT, dtype=torch.int64)
    for cell, (c, r) in enumerate(CELLS):
        grid[(r - 1) * NUM_COLUMNS + c] = cell
    return {
        "ray": ray, "step1": ray[:, :, 0].contiguous(), "znew": znew, "proj": proj,
        "grid_cell": grid, "ks": torch.arange(MAX_DISTANCE), "dirs": torch.arange(6),
        "opposite": (torch.arange(6) + 3) % 6,
        "prefix": torch.arange(MAX_DISTANCE) < torch.arange(MAX_DISTANCE + 1).unsqueeze(1),
        "w21": (32 - torch.arange(MAX_DISTANCE + 1)).to(torch.uint8),
    }


_CPU = _build()
_CACHE: dict[torch.device, dict[str, torch.Tensor]] = {}


def tables(device: torch.device) -> dict[str, torch.Tensor]:
    """Return the tables on ``device`` (built once per device).

    ``ray[cell, d]``: the ray's cells, then SENT (21 entries, so every ray ends in SENT);
    ``znew[cell, d, k - 1]``: the zone cells the hop of k cells adds (SENT-padded);
    ``proj[cell, d]``: hexgrid.PROJ; ``grid_cell``: the cell (or SENT) of each
    point of the observation grid, row by row;
    ``step1`` = ``ray[:, :, 0]``; ``prefix[r]``: 20 bools, the first r True; ``w21``: the
    weights of ``batched_search.first_one``.
    """
    got = _CACHE.get(device)
    if got is None:
        got = _CACHE[device] = {k: v.to(device) for k, v in _CPU.items()}
    return got
