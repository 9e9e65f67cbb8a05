"""Self-play on one core or two: one iteration of a shipped config's games played in this
process (``selfplay.workers=1``) and by two worker processes (``workers=2``, the seeds split
in two chunks: the same games), with the same fresh network, in one run.

Usage: python bench/selfplay_workers.py GAME [MAX_MOVES]   (GAME: a shipped config's name)

Wall and CPU seconds (the workers' included) and positions (training examples) per wall and
per CPU second of each; the last line printed is one JSON object with both and
``wall_speedup`` (positions per wall second, two workers over one).
"""

from __future__ import annotations

import json
import sys

from train_learns import timed_selfplay  # bench/ is this script's folder

from boardzoo.training.config import load_config
from boardzoo.training.configfiles import shipped_config
from boardzoo.training.selfplay import selfplay_seed


def main() -> None:
    name = sys.argv[1]
    moves = sys.argv[2] if len(sys.argv) > 2 else "40"
    out = {}
    for w in (1, 2):
        cfg = load_config(shipped_config(name),
                          [f"selfplay.workers={w}", f"selfplay.max_moves={moves}"])
        seeds = [selfplay_seed(0, 1, i) for i in range(cfg.selfplay.games_per_iteration)]
        out[f"workers_{w}"] = timed_selfplay(cfg, seeds)
        print(name, w, out[f"workers_{w}"], flush=True)
    out["wall_speedup"] = round(out["workers_2"]["positions_per_wall_s"]
                                / out["workers_1"]["positions_per_wall_s"], 2)
    print(json.dumps({"game": name, **out}))


if __name__ == "__main__":
    main()
