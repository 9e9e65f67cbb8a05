"""Games/s of one tournament on the local process pool and on a local Ray instance.

Plays the same round robin (default: LOA, greedy vs random, 200 games) with the
local backend (``--workers`` spawned processes) and with the Ray backend (a
local Ray instance with ``--workers`` CPUs), alternating ``--repeats`` times and
keeping each backend's best time (the machine is shared, so the best is the
least disturbed; the first run's time, which includes the Ray workers' imports,
is reported too). The Ray instance is started once, before the timed runs, as a
cluster would be; its start-up time is reported apart. The local pool spawns its
processes in every run, as ``boardzoo tournament`` does. Both backends must give
the same records. The last stdout line is one JSON object. Needs the ``ray`` extra
(``pip install -e ".[ray]"``).

    python bench/ray_vs_local.py [--game loa] [--agents greedy,random] [--games 200]
                                 [--workers 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from boardzoo.agents.agent_spec import spec_list
from boardzoo.agents.arena import run_tournament
from boardzoo.agents.distributed import connect


def timed(out: Path, backend: str, args: argparse.Namespace) -> tuple[float, list[dict]]:
    """Play the tournament into a fresh folder; return (wall seconds, records)."""
    agents = spec_list(args.agents)
    t0 = time.perf_counter()
    records = run_tournament(args.game, agents, args.games, out, seed=args.seed,
                             workers=args.workers, progress=False, backend=backend)
    return time.perf_counter() - t0, records


def key(records: list[dict]) -> dict[str, tuple]:
    """Return what both backends must agree on: id -> (moves, scores, seed)."""
    return {r["id"]: (tuple(r["moves"]), tuple(r["scores"]), r["seed"]) for r in records}


def main() -> None:
    """Time both backends and print the figures (last line: JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="loa")
    parser.add_argument("--agents", default="greedy,random", help="agent specs")
    parser.add_argument("--games", type=int, default=200, help="games per pair")
    parser.add_argument("--workers", type=int, default=2, help="processes / Ray CPUs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    load = os.getloadavg()[0]  # before our own runs: how busy the machine already was
    t0 = time.perf_counter()
    conn = connect(None, num_cpus=args.workers)  # run_tournament reuses this instance
    startup = time.perf_counter() - t0
    best = {"local": float("inf"), "ray": float("inf")}
    first: dict[str, float] = {}
    seen: dict[str, dict] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(args.repeats):
                for backend in ("local", "ray"):
                    seconds, records = timed(Path(tmp) / f"{backend}{rep}", backend, args)
                    best[backend] = min(best[backend], seconds)
                    first.setdefault(backend, seconds)
                    seen[backend] = key(records)
                    print(f"{backend}: {len(records)} games in {seconds:.2f} s", flush=True)
    finally:
        conn.close()
    assert seen["local"] == seen["ray"], "the backends gave different games"
    games = len(seen["ray"])
    figures = {"game": args.game, "agents": args.agents, "games": games,
               "workers": args.workers, "repeats": args.repeats,
               "ray_version": conn.ray.__version__,
               "load_avg_before": round(load, 2)}
    for backend in ("local", "ray"):
        figures[backend] = {"seconds": round(best[backend], 3),
                            "games_per_s": round(games / best[backend], 2),
                            "first_run_seconds": round(first[backend], 3)}
    figures["ray"]["startup_s"] = round(startup, 2)
    figures["ray_over_local"] = round(best["local"] / best["ray"], 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
