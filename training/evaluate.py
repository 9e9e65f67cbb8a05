"""Matches between a network agent and opponents, with colours alternating."""

from __future__ import annotations

from collections.abc import Callable

from boardzoo.agents.base import Agent, make_agent
from boardzoo.agents.play import play_game


def match(game: str, make_a: Callable[[int], Agent], make_b: Callable[[int], Agent],
          games: int, seed: int, max_moves: int | None = None) -> dict[str, float]:
    """Play ``games`` games of A against B (A moves first in even games); return A's results.

    Returns wins, draws, losses, score (wins + draws / 2, divided by games) and plies.
    """
    wins = draws = losses = plies = 0
    for g in range(games):
        a, b = make_a(seed * 1000 + 2 * g), make_b(seed * 1000 + 2 * g + 1)
        seat = g % 2  # A's seat
        record = play_game(game, [a, b] if seat == 0 else [b, a], max_moves=max_moves)
        s = record["scores"][seat]
        plies += record["plies"]
        if s == 1.0:
            wins += 1
        elif s == 0.0:
            losses += 1
        else:
            draws += 1
    n = max(games, 1)
    return {"games": games, "wins": wins, "draws": draws, "losses": losses,
            "score": (wins + draws / 2) / n, "plies": plies / n}


def spec_factory(spec: str, game: str) -> Callable[[int], Agent]:
    """Return ``seed -> agent`` for an agent spec (``random``, ``mcts:400``, ...)."""
    return lambda seed: make_agent(spec, game, seed)
