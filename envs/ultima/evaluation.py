"""Ultima's evaluation, action prior and win-in-one test for the agents and the networks.

The terms, their weights and why are in :mod:`.kernel` (``evaluate_into``, ``capture_values``,
``winning_move``), which computes them: material with piece values, frozen pieces discounted,
mobility and the best capture the mover has. These are the functions that the game's
descriptor names.
"""

from __future__ import annotations

import numpy as np

from ..core.game import GameState
from . import kernel
from .kernel import FROZEN_FACTOR, MAX_MOVES, VALUES, W_MOBILITY, W_THREAT, evaluate_into

__all__ = ["FROZEN_FACTOR", "VALUES", "W_MOBILITY", "W_THREAT", "capture_values",
           "ultima_eval", "winning_move"]

# scratch buffers of the kernel's move lists (single-threaded callers)
_MOVES, _CAPS = np.empty(MAX_MOVES, np.int64), np.empty(MAX_MOVES, np.int64)
_WORK = np.empty(64, np.uint8)


def ultima_eval(state: GameState) -> float:
    """Return the Ultima evaluation for the side to move."""
    return float(evaluate_into(state.array(), state.to_move, _MOVES, _CAPS))  # type: ignore[attr-defined]


def capture_values(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """Return the legal moves that capture and the material each takes (pawn = 1).

    The policy prior of Ultima networks (``model.policy_prior``): a capture's worth, the
    rule of thumb that orders captures first (most valuable victims first) in a search.
    """
    moves, caps = state.legal_arrays()  # type: ignore[attr-defined]
    out_moves = np.empty(len(moves), dtype=np.int64)
    out_values = np.empty(len(moves), dtype=np.float32)
    k = kernel.capture_values(state.array(), moves, caps, len(moves), out_moves, out_values)  # type: ignore[attr-defined]
    return out_moves[:k], out_values[:k]


def winning_move(state: GameState) -> int | None:
    """Return a legal move that wins at once (the opponent is left without a legal move), or
    None; only checking moves are tried (see ``kernel.winning_move``)."""
    if state.is_terminal():
        return None
    moves, caps = state.legal_arrays()  # type: ignore[attr-defined]
    move = kernel.winning_move(state.array(), state.to_move, moves, caps, len(moves),  # type: ignore[attr-defined]
                               _WORK, _MOVES, _CAPS)
    return None if move < 0 else int(move)
