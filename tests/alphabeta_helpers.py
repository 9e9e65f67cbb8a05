"""What the compiled alpha-beta tests share: the check that a compiled search reproduces the
reference search of agents/alphabeta.py on one position."""

from __future__ import annotations

from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.envs.core.game import GameState


def assert_same_search(reference: AlphaBetaAgent, compiled: AlphaBetaAgent,
                       state: GameState) -> None:
    """Assert that both searches (same depth and seed) find the same best move, score and
    node count from ``state``."""
    assert compiled.select_move(state) == reference.select_move(state), state.to_text()
    assert compiled.last_value == reference.last_value, state.to_text()
    assert compiled.stats()["nodes"] == reference.stats()["nodes"], state.to_text()
