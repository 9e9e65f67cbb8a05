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


def game_log(agents: list[AlphaBetaAgent], state: GameState,
             max_ply: int) -> list[tuple[object, float, int]]:
    """Play ``agents`` (one a side) from ``state`` up to ply ``max_ply``; return each move with
    the mover's value and node count, so two pairs of searches can be compared move by move."""
    log = []
    while not state.is_terminal() and state.ply < max_ply:
        agent = agents[state.to_move]
        move = agent.select_move(state)
        log.append((move, agent.last_value, agent.stats()["nodes"]))
        state = state.apply(move)
    return log
