"""Monochromatic Whistling evaluation: material plus safety (captures each side has ready)."""

from __future__ import annotations

from ..core.game import GameState

W_NOW = 0.8  # the side to move must capture its best capture now: most of it is banked
W_EXPOSED = 0.4  # stones the opponent could take if it were to move: at risk, not yet lost


def whistling_eval(state: GameState) -> float:
    """Return the Whistling evaluation for the side to move."""
    me = state.to_move
    stones = state.stones  # type: ignore[attr-defined]
    material = stones[me].bit_count() - stones[1 - me].bit_count()
    now = state.max_capture()  # type: ignore[attr-defined]
    # The same position with the opponent to move shows which of our stones hang.
    flipped = type(state)(stones[0], stones[1], 1 - me, 0, state.ply)
    exposed = flipped.max_capture()
    return material + W_NOW * now - W_EXPOSED * exposed
