"""Matches between a network agent and opponents: colours alternate, openings vary.

Deterministic agents (a network without noise, alpha-beta) would replay the
same two games over and over, so every pair of games starts with
``opening_moves`` uniformly random whole-turn moves (seeded per pair), and the
two games of a pair swap colours over that same opening.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from boardzoo.agents.base import Agent, make_agent
from boardzoo.agents.play import play_from
from boardzoo.envs.core.registry import load_state


def play_one(game: str, agents: list[Agent], opening_moves: int, opening_seed: int,
             max_moves: int | None = None) -> dict[str, Any]:
    """Play one game (``agents[0]`` moves first); return its record (``agents.play``)."""
    return play_from(load_state(game), agents, max_moves=max_moves,
                     opening_moves=opening_moves, opening_seed=opening_seed)


def match(game: str, make_a: Callable[[int], Agent], make_b: Callable[[int], Agent],
          games: int, seed: int, max_moves: int | None = None,
          opening_moves: int = 2, names: tuple[str, str] = ("A", "B"),
          on_game: Callable[[dict[str, Any]], None] | None = None) -> dict[str, float]:
    """Play ``games`` games of A against B (A moves first in even games); return A's results.

    Returns games, wins, draws, losses, score ((wins + draws / 2) / games) and mean plies.
    ``on_game`` receives each game's record as a games.jsonl line (``id``, ``game``,
    ``players`` named by ``names``, ``seed`` = the opening's seed, ...), in playing order.
    """
    wins = draws = losses = plies = 0
    for g in range(games):
        a, b = make_a(seed * 1000 + 2 * g), make_b(seed * 1000 + 2 * g + 1)
        seat = g % 2  # A's seat
        record = play_one(game, [a, b] if seat == 0 else [b, a], opening_moves,
                          seed * 1000 + g // 2, max_moves)
        scores, n = record["scores"], record["plies"]
        if on_game is not None:
            players = [names[0], names[1]] if seat == 0 else [names[1], names[0]]
            on_game({**record, "id": f"{players[0]}|{players[1]}|{g + 1}", "game": game,
                     "players": players, "seed": seed * 1000 + g // 2})
        plies += n
        s = scores[seat]
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
