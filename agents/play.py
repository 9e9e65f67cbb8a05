"""The one game loop: play agents against each other and return the game's record.

``boardzoo play`` (:func:`play_game`), the arena and the trainer's evaluation
matches all play through :func:`play_from`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from boardzoo.envs.core.game import GameState
from boardzoo.envs.core.registry import load_state

from .base import Agent


def play_from(
    state: GameState,
    agents: Sequence[Agent],
    max_moves: int | None = None,
    opening_moves: int = 0,
    opening_seed: int = 0,
    show: bool = False,
) -> dict[str, Any]:
    """Play ``agents[0]`` (first mover) against ``agents[1]`` from ``state``; return the record.

    The first ``opening_moves`` moves are uniformly random (seeded by ``opening_seed``) so
    that deterministic agents need not replay one game. A game stopped by ``max_moves``
    scores as a draw. The record holds ``players`` (specs), ``player_names``, ``scores``
    (1, 0.5 or 0, same order), ``winner`` (0, 1 or None), ``terminated`` (False when
    ``max_moves`` stopped it), ``result``, ``moves`` (canonical), ``plies``, ``seconds``,
    ``think_seconds`` (per agent), ``think_moves`` (moves each agent chose),
    ``max_move_seconds`` (each agent's longest move), ``move_seconds`` (per ply; 0 for a
    random opening move) and ``final_position``.
    """
    for agent in agents:
        agent.reset()
    opening = random.Random(opening_seed)
    moves: list[str] = []
    think, think_moves, longest = [0.0, 0.0], [0, 0], [0.0, 0.0]
    move_seconds: list[float] = []  # per ply: what a replay shows next to each move
    started = time.perf_counter()
    if show:
        print(state.render_text())
    while not state.is_terminal() and (max_moves is None or len(moves) < max_moves):
        side = state.to_move
        t0 = time.perf_counter()
        if len(moves) < opening_moves:
            move = opening.choice(list(state.legal_moves()))
            move_seconds.append(0.0)
        else:
            move = agents[side].select_move(state)
            spent = time.perf_counter() - t0
            think[side] += spent
            think_moves[side] += 1
            longest[side] = max(longest[side], spent)
            move_seconds.append(round(spent, 4))
        moves.append(state.move_to_str(move))
        state = state.apply(move)
        if show:
            print(f"\n{len(moves)}. {moves[-1]}\n{state.render_text()}")
    for agent in agents:
        agent.finish(state)
    terminated = state.is_terminal()
    winner = state.winner() if terminated else None
    return {
        "players": [a.spec for a in agents],
        "player_names": list(state.player_names),
        "scores": [0.5, 0.5] if winner is None else [1.0 - winner, float(winner)],
        "winner": winner,
        "terminated": terminated,
        "result": state.result() if terminated else "unfinished (max moves)",
        "moves": moves,
        "plies": len(moves),
        "seconds": round(time.perf_counter() - started, 4),
        "think_seconds": [round(t, 4) for t in think],
        "think_moves": think_moves,
        "max_move_seconds": [round(t, 4) for t in longest],
        "move_seconds": move_seconds,
        "final_position": state.to_text(),
    }


def play_game(
    game: str,
    agents: Sequence[Agent],
    position: str | None = None,
    max_moves: int | None = None,
    show: bool = False,
) -> dict[str, Any]:
    """Play one game of ``game`` from its start (or ``position`` text); see :func:`play_from`."""
    return play_from(load_state(game, position), agents, max_moves=max_moves, show=show)
