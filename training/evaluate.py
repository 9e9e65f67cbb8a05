"""Matches between a network agent and opponents: colours alternate, openings vary.

Deterministic agents (a network without noise, alpha-beta) would replay the
same two games over and over, so every pair of games starts with
``opening_moves`` uniformly random whole-turn moves (seeded per pair), and the
two games of a pair swap colours over that same opening.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from boardzoo.agents.arena.play import play_from
from boardzoo.agents.base import Agent, make_agent
from boardzoo.envs.core.registry import load_state


def match(game: str, make_a: Callable[[int], Agent], make_b: Callable[[int], Agent],
          games: int, seed: int, max_moves: int | None = None,
          opening_moves: int = 2, names: tuple[str, str] = ("A", "B"),
          on_game: Callable[[dict[str, Any]], None] | None = None) -> dict[str, float]:
    """Play ``games`` games of A against B (A moves first in even games); return A's results.

    Returns games, wins, draws, losses, score ((wins + draws / 2) / games) and mean plies.
    ``on_game`` receives each game's games.jsonl line (:meth:`~boardzoo.agents.arena.records.
    GameRecord.line`: ``players`` named by ``names``, ``seed`` = the opening's seed), in
    playing order.
    """
    wins = draws = losses = plies = 0
    for g in range(games):
        a, b = make_a(seed * 1000 + 2 * g), make_b(seed * 1000 + 2 * g + 1)
        seat = g % 2  # A's seat
        agents = [a, b] if seat == 0 else [b, a]
        record = play_from(load_state(game), agents, max_moves=max_moves,
                           opening_moves=opening_moves, opening_seed=seed * 1000 + g // 2)
        scores, n = record.scores, record.plies
        if on_game is not None:
            players = [names[0], names[1]] if seat == 0 else [names[1], names[0]]
            on_game(record.line(f"{players[0]}|{players[1]}|{g + 1}", game, players,
                                seed * 1000 + g // 2, [p.stats() for p in agents]))
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


class Evaluator:
    """A run's evaluation: the raw policy against ``random``, the network with search against
    each baseline and against the best network so far (the promotion gate), every game kept
    in the run's eval_games.jsonl."""

    def __init__(self, cfg: Any, game: Any, run: Any) -> None:
        """``cfg``: the run's Config; ``game``: its ActionGame; ``run``: its RunDir."""
        self.cfg = cfg
        self.game = game
        self.run = run

    def net_agent(self, state_dict: dict[str, Any], sims: int, seed: int) -> Agent:
        """Return the network with weights ``state_dict`` as a player (its ``play`` search)."""
        from .agent import NetAgent
        from .network import build_net

        net = build_net(self.cfg, self.game)
        net.load_state_dict(state_dict)
        net.eval()
        return NetAgent(self.cfg.game, net, self.cfg, sims, seed)

    def evaluate(self, iteration: int, latest: dict[str, Any], best: dict[str, Any],
                 best_iteration: int, progress: Callable[[int, int], None] | None = None,
                 ) -> tuple[list[dict[str, Any]], bool]:
        """Play the evaluation of ``iteration`` (weights ``latest``); return its rows and
        whether the latest network replaces the best (``best``, from ``best_iteration``);
        ``progress(done, total)`` follows its games."""
        e, game = self.cfg.eval, self.cfg.game
        cap = (self.cfg.selfplay.max_moves if e.max_moves < 0
               else e.max_moves if e.max_moves > 0 else None)
        om = e.opening_moves
        rows: list[dict[str, Any]] = []
        seed = self.cfg.seed * 100003 + iteration
        if e.games == 0:
            return rows, True  # nothing to gate on: the latest network counts as the best
        net = f"net@{iteration}"
        self.run.drop_eval_games_from(iteration)

        total = e.games * (int(e.raw_vs_random) + len(e.baselines) + int(e.vs_best))
        done = [0]

        def keep(record: dict[str, Any]) -> None:
            self.run.keep_eval_game(iteration, record)
            done[0] += 1
            if progress is not None:
                progress(done[0], total)

        if e.raw_vs_random:
            r = match(game, lambda s: self.net_agent(latest, 0, s), spec_factory("random", game),
                      e.games, seed, cap, om, (f"{net},sims=0", "random"), keep)
            rows.append({"opponent": "raw_policy_vs_random", **r})
        for spec in e.baselines:
            r = match(game, lambda s: self.net_agent(latest, e.simulations, s),
                      spec_factory(spec, game), e.games, seed, cap, om, (net, spec), keep)
            rows.append({"opponent": spec, **r})
        promoted = not e.vs_best  # without a gate the latest network is the best
        if e.vs_best:
            r = match(game, lambda s: self.net_agent(latest, e.simulations, s),
                      lambda s: self.net_agent(best, e.simulations, s),
                      e.games, seed, cap, om, (net, f"net@{best_iteration} (best)"), keep)
            promoted = r["score"] >= e.promote_threshold
            rows.append({"opponent": f"best(iter {best_iteration})", **r})
        return rows, promoted
