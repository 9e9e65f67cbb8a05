"""Two agents at equal time: ``boardzoo match`` with the same ``--movetime`` for both, summed up.

    python bench/equal_time.py --game loa --movetime 0.3 --games 40 --seed 2026 \
        alphabeta:t=0.3s,eval=learned alphabeta:t=0.3s

The match runs through the arena (game pairs from ``--openings``, default 4 random plies, with
colours swapped; ``--workers`` processes), into ``--out`` (default a temporary folder). The
last line printed is one JSON object: A's W-D-L and score with its 95% interval's half-width,
and for each side its mean seconds a move, the longest move, and for searches that count
them nodes a second and mean depth; plus the CPU and wall minutes of the whole match.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from boardzoo.agents.arena.pairs import score_stats
from boardzoo.agents.arena.records import read_games
from boardzoo.cli import main as boardzoo


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def side(records: list[dict], spec: str) -> dict:
    """Mean seconds a move, the longest move, nodes a second and mean depth of ``spec``."""
    think = moves = nodes = node_seconds = depth = depth_moves = 0.0
    longest = 0.0
    for r in records:
        i = r["players"].index(spec)
        think += r["think_seconds"][i]
        moves += r["think_moves"][i]
        longest = max(longest, r["max_move_seconds"][i])
        stats = (r.get("agent_stats") or [{}, {}])[i] or {}
        if "nodes" in stats:
            nodes += stats["nodes"]
            node_seconds += stats.get("seconds", 0.0)
        if "depth_sum" in stats:
            depth += stats["depth_sum"]
            depth_moves += stats.get("moves", 0)
    out = {"s_per_move": round(think / max(moves, 1), 4), "max_s_per_move": round(longest, 4)}
    if node_seconds:
        out["nodes_per_s"] = round(nodes / node_seconds)
    if depth_moves:
        out["mean_depth"] = round(depth / depth_moves, 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", metavar="A")
    ap.add_argument("b", metavar="B")
    ap.add_argument("--game", required=True)
    ap.add_argument("--movetime", type=float, required=True)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--openings", default="random:4")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", default=None, help="match folder (default: a temporary one)")
    args = ap.parse_args()
    if args.a == args.b:
        ap.error("A and B must differ (name one of them: ,name=...)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        started, cpu0 = time.time(), cpu_seconds()
        code = boardzoo(["match", "--game", args.game, "--movetime", str(args.movetime),
                         "--games", str(args.games), "--seed", str(args.seed), "--openings",
                         args.openings, "--workers", str(args.workers), "--no-progress",
                         "--no-html", "--no-png", "--out", str(out), args.a, args.b])
        if code:
            return code
        records = read_games(out / "games.jsonl")
        wall, cpu = time.time() - started, cpu_seconds() - cpu0
    scores = [r["scores"][r["players"].index(args.a)] for r in records]
    stats = score_stats([scores.count(0.0), scores.count(0.5), scores.count(1.0)])
    summary = {
        "game": args.game, "a": args.a, "b": args.b, "movetime": args.movetime,
        "games": len(records), "seed": args.seed, "openings": args.openings,
        "wdl": f"{scores.count(1.0)}-{scores.count(0.5)}-{scores.count(0.0)}",
        "score": round(stats["score"], 3), "score_ci95": round(stats["score_ci95"], 3),
        "plies": round(sum(r["plies"] for r in records) / len(records), 1),
        "a_side": side(records, args.a), "b_side": side(records, args.b),
        "cpu_minutes": round(cpu / 60, 2), "wall_minutes": round(wall / 60, 2),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
