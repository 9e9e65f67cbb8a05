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
import time

import torch

from boardzoo.envs.core.registry import action_game
from boardzoo.training.backends import SelfPlayPool
from boardzoo.training.config import load_config
from boardzoo.training.configfiles import shipped_config
from boardzoo.training.network import build_net
from boardzoo.training.selfplay import play_games, selfplay_seed


def main() -> None:
    name = sys.argv[1]
    moves = sys.argv[2] if len(sys.argv) > 2 else "40"
    torch.set_num_threads(1)
    out = {}
    for w in (1, 2):
        cfg = load_config(shipped_config(name),
                          [f"selfplay.workers={w}", f"selfplay.max_moves={moves}"])
        g = action_game(cfg.game)
        torch.manual_seed(0)
        net = build_net(cfg, g).eval()
        seeds = [selfplay_seed(0, 1, i) for i in range(cfg.selfplay.games_per_iteration)]
        pool = SelfPlayPool(cfg) if w > 1 else None
        if pool:  # start the workers outside the timing
            pool.play(net, seeds[:2])
            pool.cpu = 0.0
        c0, t0 = time.process_time(), time.perf_counter()
        recs = pool.play(net, seeds) if pool else play_games(net, g, cfg, seeds)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0 + (pool.cpu if pool else 0)
        if pool:
            pool.close()
        pos = sum(len(r.obs) for r in recs)
        out[f"workers_{w}"] = {"positions": pos, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                             "positions_per_wall_s": round(pos / wall, 1),
                             "positions_per_cpu_s": round(pos / cpu, 1)}
        print(name, w, out[f"workers_{w}"], flush=True)
    out["wall_speedup"] = round(out["workers_2"]["positions_per_wall_s"]
                                / out["workers_1"]["positions_per_wall_s"], 2)
    print(json.dumps({"game": name, **out}))

if __name__ == "__main__":
    main()
