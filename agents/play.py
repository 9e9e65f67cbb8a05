"""Play one game between agents and return its record (used by ``boardzoo play``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..envs.core.registry import load_state
from .base import Agent


def play_game(
    game: str,
    agents: Sequence[Agent],
    position: str | None = None,
    max_moves: int | None = None,
    show: bool = False,
) -> dict[str, Any]:
    """Play ``agents[0]`` (first mover) against ``agents[1]``; return the game record.

    The record holds ``players`` (specs), ``player_names``, ``scores`` (1, 0.5
    or 0, same order), ``result``, ``moves`` (canonical), ``plies`` and
    ``seconds``. A game stopped by ``max_moves`` scores as a draw.
    """
    state = load_state(game, position)
    for agent in agents:
        agent.reset()
    moves: list[str] = []
    started = time.perf_counter()
    if show:
        print(state.render_text())
    while not state.is_terminal() and (max_moves is None or len(moves) < max_moves):
        move = agents[state.to_move].select_move(state)
        moves.append(state.move_to_str(move))
        state = state.apply(move)
        if show:
            print(f"\n{len(moves)}. {moves[-1]}\n{state.render_text()}")
    winner = state.winner()
    scores = [0.5, 0.5] if winner is None else [1.0 - winner, float(winner)]
    return {
        "players": [a.spec for a in agents],
        "player_names": list(state.player_names),
        "scores": scores,
        "result": state.result() if state.is_terminal() else "unfinished (max moves)",
        "moves": moves,
        "plies": len(moves),
        "seconds": round(time.perf_counter() - started, 4),
        "final_position": state.to_text(),
    }
