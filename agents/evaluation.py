"""Static evaluation per game, from the point of view of the side to move.

An evaluator maps a non-terminal :class:`GameState` to a float: positive is good
for ``state.to_move``. Units are roughly "one piece" (one LOA group, one Ultima
pawn, one Whistling stone), so :data:`SCALES` turns them into a win probability
for MCTS playout cut-offs. Search handles terminal states itself. Games without
an entry (e.g. test games) get :func:`zero`, so greedy plays randomly and
alpha-beta searches for forced results only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from boardzoo.envs.core.game import GameState

Evaluator = Callable[[GameState], float]


def zero(state: GameState) -> float:
    """Return 0: the evaluation of a game we know nothing about."""
    return 0.0


#: Game name -> evaluator; other packages may add entries. Filled lazily from _BUILTIN.
EVALUATORS: dict[str, Evaluator] = {}
# Imported on first use so that one game's absence does not break the others.
_BUILTIN = {
    "loa": ("eval_loa", "loa_eval"),
    "ultima": ("eval_ultima", "ultima_eval"),
    "whistling": ("eval_whistling", "whistling_eval"),
}
#: Game name -> evaluation that MCTS squashes to a value of tanh(1) = 0.76 in [-1, 1].
SCALES: dict[str, float] = {"loa": 4.0, "ultima": 3.0, "whistling": 3.0}
#: Game name -> MCTS playout length cap. Short where an evaluation exists (why: long random
#: LOA playouts measured weaker, 0/6 against greedy at 40 plies vs 2/6 at 8, and cost 4x more).
PLAYOUT_CAPS: dict[str, int] = {"loa": 8, "ultima": 8, "whistling": 8}
DEFAULT_PLAYOUT_CAP = 40


def get_evaluator(game: str) -> Evaluator:
    """Return the evaluator of game ``game`` (:func:`zero` for an unknown game)."""
    if game not in EVALUATORS and game in _BUILTIN:
        module, name = _BUILTIN[game]
        EVALUATORS[game] = getattr(importlib.import_module(f"boardzoo.agents.{module}"), name)
    return EVALUATORS.get(game, zero)


def get_scale(game: str) -> float:
    """Return the evaluation scale of ``game`` for squashing into [-1, 1]."""
    return SCALES.get(game, 1.0)


def get_playout_cap(game: str) -> int:
    """Return the default MCTS playout length cap of ``game``."""
    return PLAYOUT_CAPS.get(game, DEFAULT_PLAYOUT_CAP)
