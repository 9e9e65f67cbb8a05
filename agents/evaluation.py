"""Static evaluation per game, from the point of view of the side to move.

An evaluator maps a non-terminal :class:`GameState` to a float: positive is good
for ``state.to_move``. Units are roughly "one piece" (one LOA group, one Ultima
pawn, one Whistling stone); the game's ``eval_scale`` turns them into a win
probability for MCTS playout cut-offs. Search handles terminal states itself.
Each game's descriptor names its evaluation (``envs/<game>/evaluation.py``);
a game without one gets :func:`zero`, so greedy plays randomly and alpha-beta
searches for forced results only.
"""

from __future__ import annotations

import math

from boardzoo.envs.core.registry import UnknownGameError, get_spec
from boardzoo.envs.core.spec import DEFAULT_PLAYOUT_CAP, Evaluator, GameSpec, zero_evaluation

zero = zero_evaluation

__all__ = ["Evaluator", "as_value", "get_evaluator", "get_playout_cap", "get_scale",
           "static_value", "zero"]


def _spec(game: str) -> GameSpec | None:
    """Return the descriptor of ``game``, or None for a bare GameState class (a test's toy)."""
    try:
        return get_spec(game)
    except UnknownGameError:
        return None


def get_evaluator(game: str) -> Evaluator:
    """Return the static evaluation of game ``game`` (:func:`zero` for an unknown game)."""
    spec = _spec(game)
    return spec.evaluate if spec else zero


def get_scale(game: str) -> float:
    """Return the evaluation scale of ``game`` for squashing into [-1, 1] (1 if unknown)."""
    spec = _spec(game)
    return spec.eval_scale if spec else 1.0


def as_value(score: float, scale: float) -> float:
    """Return ``score`` (evaluation units) as a value in (-1, 1), ``tanh(score / scale)``: how
    every search and training target in boardzoo reads an evaluation or a search score."""
    return math.tanh(score / scale)


def static_value(game: str, state) -> float:
    """Return the static evaluation of ``state`` as a value for the player to move."""
    return as_value(get_evaluator(game)(state), get_scale(game))


def get_playout_cap(game: str) -> int:
    """Return the default MCTS playout length cap of ``game`` (40 plies if unknown)."""
    spec = _spec(game)
    return spec.playout_cap if spec else DEFAULT_PLAYOUT_CAP
