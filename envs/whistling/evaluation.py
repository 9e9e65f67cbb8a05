"""Monochromatic Whistling evaluation: material plus safety (captures each side has ready).

The evaluation runs in the compiled kernel (:func:`.kernel.evaluate`, where its weights
``W_NOW`` and ``W_EXPOSED`` live): material, plus ``W_NOW`` x the capture the side to move
must make now, minus ``W_EXPOSED`` x the capture the opponent would have if it were to move.
"""

from __future__ import annotations

from ..core.game import GameState
from . import kernel


def whistling_eval(state: GameState) -> float:
    """Return the Whistling evaluation for the side to move."""
    x, o = state.stones  # type: ignore[attr-defined]
    return kernel.evaluation(x, o, state.to_move, state.quiet)  # type: ignore[attr-defined]
