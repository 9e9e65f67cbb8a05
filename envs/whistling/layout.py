"""Whistling's hop actions as (from cell, landing cell) pairs, for a pair-scoring policy head.

Action ``(6 * cell + direction) * 20 + distance - 1`` hops from ``cell`` along
``direction`` for ``distance`` cells; the landing cell is fixed by the three, so
every on-board pair of cells on one line is exactly one action. A hop that
would leave the board has no landing cell (-1): it is never legal. The kind of
an action is ``direction * 20 + distance - 1`` (120 kinds).
"""

from __future__ import annotations

import numpy as np

from .hexgrid import MAX_DISTANCE, NUM_CELLS, RAYS

NUM_KINDS = 6 * MAX_DISTANCE


def action_cells() -> np.ndarray:
    """Return the ``(39720, 2)`` array of (from cell, landing cell or -1) of every action."""
    out = np.full((NUM_CELLS * NUM_KINDS, 2), -1, dtype=np.int64)
    for cell in range(NUM_CELLS):
        for d in range(6):
            ray = RAYS[cell][d]
            for k in range(1, MAX_DISTANCE + 1):
                a = (6 * cell + d) * MAX_DISTANCE + k - 1
                out[a, 0] = cell
                if k <= len(ray):
                    out[a, 1] = ray[k - 1]
    return out


def action_kinds() -> np.ndarray:
    """Return each action's kind ``direction * 20 + distance - 1``."""
    return np.arange(NUM_CELLS * NUM_KINDS, dtype=np.int64) % NUM_KINDS
