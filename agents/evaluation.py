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

from boardzoo.envs.core.registry import UnknownGameError, get_spec
from boardzoo.envs.core.spec import Evaluator, GameSpec, zero_evaluation

zero = zero_evaluation

__all__ = ["Evaluator", "get_evaluator", "get_playout_cap", "get_scale", "zero"]


#: What a game without a descriptor gets (a bare GameState class, e.g. a test's toy game).
_NO_SPEC = GameSpec(name="", long_name="", state_cls=object, actions=None,  # type: ignore
                    max_game_length=0)


def _spec(game: str) -> GameSpec:
    try:
        return get_spec(game)
    except UnknownGameError:
        return _NO_SPEC


def get_evaluator(game: str) -> Evaluator:
    """Return the static evaluation of game ``game`` (:func:`zero` for an unknown game)."""
    return _spec(game).evaluate


def get_scale(game: str) -> float:
    """Return the evaluation scale of ``game`` for squashing into [-1, 1]."""
    return _spec(game).eval_scale


def get_playout_cap(game: str) -> int:
    """Return the default MCTS playout length cap of ``game``."""
    return _spec(game).playout_cap
