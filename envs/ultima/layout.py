"""Ultima's actions as (origin, destination) squares, for a policy head that scores pairs.

Action ``64 * origin + destination`` (squares ``8 * rank + file``) moves the piece
on ``origin`` to ``destination``; captures follow from the move, so one pair is
one action. The *kind* of an action is its displacement (rank step, file step),
one of 15 x 15, so that a network can learn one bias per step shape.
"""

from __future__ import annotations

import numpy as np

NUM_SQUARES = 64
NUM_KINDS = 15 * 15


def action_cells() -> np.ndarray:
    """Return the ``(4096, 2)`` array of (origin, destination) squares of every action."""
    a = np.arange(NUM_SQUARES * NUM_SQUARES)
    return np.stack([a // NUM_SQUARES, a % NUM_SQUARES], axis=1).astype(np.int64)


def move_cells(state: object, action: int) -> tuple[int, int]:
    """Return the (origin, destination) squares of action ``action`` (in any position)."""
    return divmod(int(action), NUM_SQUARES)


def action_kinds() -> np.ndarray:
    """Return each action's displacement kind ``15 * (rank step + 7) + file step + 7``."""
    pairs = action_cells()
    dr = (pairs[:, 1] >> 3) - (pairs[:, 0] >> 3)
    df = (pairs[:, 1] & 7) - (pairs[:, 0] & 7)
    return (15 * (dr + 7) + df + 7).astype(np.int64)
