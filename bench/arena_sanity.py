"""Sanity figures for the classical agents, per available game.

Plays a small round robin of random, greedy, mcts:200 and alphabeta:2 per game
(through the arena, so results land in OUT/<game>/games.jsonl and can be
resumed), then reports: mcts:200's result against random (target: >= 90%),
alphabeta:2's against greedy (target: >= 70%), agent speeds (MCTS
simulations/s, alpha-beta nodes/s, averaged over the tournament's moves) and
the rating table. The last stdout line is one JSON object of the figures.

    python bench/arena_sanity.py [--games loa,ultima,whistling] [--games-per-pair 10]
                                 [--workers 1] [--out results/arena_sanity] [--resume]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from boardzoo.agents.arena import report, run_tournament
from boardzoo.envs.core.registry import GAMES, UnknownGameError, state_class

AGENTS = ["random", "greedy", "mcts:200", "alphabeta:2"]
TARGETS = {("mcts:200", "random"): 0.9, ("alphabeta:2", "greedy"): 0.7}


def head_to_head(records: list[dict], agent: str, opponent: str) -> dict:
    """Return wins, draws, losses and score share of ``agent`` against ``opponent``."""
    w = d = n = 0
    for r in records:
        if set(r["players"]) == {agent, opponent}:
            s = r["scores"][r["players"].index(agent)]
            n += 1
            w += s == 1.0
            d += s == 0.5
    return {"games": n, "wins": w, "draws": d, "losses": n - w - d,
            "win_rate": round(w / n, 3) if n else None,
            "score": round((w + d / 2) / n, 3) if n else None}


def speed(records: list[dict], agent: str, counter: str) -> float | None:
    """Return ``counter`` per second of search summed over every game ``agent`` played."""
    total = seconds = 0.0
    for r in records:
        for spec, stats in zip(r["players"], r["agent_stats"], strict=True):
            if spec == agent:
                total += stats.get(counter, 0)
                seconds += stats.get("seconds", 0)
    return round(total / seconds) if seconds else None


def main() -> None:
    """Run the round robins and print the figures (last line: JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game names")
    parser.add_argument("--games-per-pair", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/arena_sanity")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    figures: dict = {}
    for game in args.games.split(","):
        try:
            state_class(game)
        except UnknownGameError as exc:
            print(f"{game}: skipped ({exc})")
            continue
        started = time.perf_counter()
        out = Path(args.out) / game
        records = run_tournament(game, AGENTS, args.games_per_pair, out, seed=args.seed,
                                 workers=args.workers, resume=args.resume)
        rep = report.build(records, AGENTS)
        report.write(rep, out)
        fig = {f"{a} vs {b}": {**head_to_head(records, a, b), "target": t}
               for (a, b), t in TARGETS.items()}
        fig["mcts_simulations_per_s"] = speed(records, "mcts:200", "simulations")
        fig["alphabeta_nodes_per_s"] = speed(records, "alphabeta:2", "nodes")
        fig["mean_plies"] = rep["mean_plies"]
        fig["ratings"] = {row["agent"]: [row["rating"], row["ci95"]] for row in rep["ranking"]}
        fig["wall_seconds"] = round(time.perf_counter() - started, 1)
        figures[game] = fig
        print(f"\n## {game}\n")
        print(report.markdown(rep))
        for key in TARGETS:
            h = fig[f"{key[0]} vs {key[1]}"]
            verdict = "ok" if h["score"] is not None and h["score"] >= TARGETS[key] else "BELOW"
            print(f"{key[0]} vs {key[1]}: {h['wins']}-{h['draws']}-{h['losses']} "
                  f"(score {h['score']}, target {TARGETS[key]}: {verdict})")
        print(f"speeds: MCTS {fig['mcts_simulations_per_s']} simulations/s, "
              f"alpha-beta {fig['alphabeta_nodes_per_s']} nodes/s; "
              f"{fig['wall_seconds']} s wall", flush=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
