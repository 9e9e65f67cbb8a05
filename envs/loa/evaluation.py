"""Lines of Action evaluation: connectedness (groups) and concentration (spread).

The terms, their weights and why are in :mod:`.kernel` (``side_score``), which computes them;
:func:`loa_eval` is the evaluator that the game's descriptor names for the agents.
"""

from __future__ import annotations

from ..core.game import GameState
from .kernel import MIN_SPREAD, W_GROUPS, W_SPREAD, evaluate, groups, side_score

__all__ = ["MIN_SPREAD", "W_GROUPS", "W_SPREAD", "groups", "loa_eval", "side_score"]


def loa_eval(state: GameState) -> float:
    """Return the LOA evaluation for the side to move (own score minus the opponent's)."""
    black, white = state.bb  # type: ignore[attr-defined]
    return evaluate(black, white, state.to_move)
