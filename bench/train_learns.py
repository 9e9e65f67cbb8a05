"""Learning evidence: train (or reuse) a run, then play its network against fixed baselines.

    python bench/train_learns.py                       # configs/loa.yaml into runs/bench_loa
    python bench/train_learns.py --run runs/loa        # evaluate an existing run, no training
    python bench/train_learns.py --selfplay-speed      # batched vs unbatched vs worker processes

Evaluation (colours alternate, seeds fixed):

* the raw policy (no search, most likely legal action) against ``random``;
* the network with ``--sims`` simulations per action against ``mcts:N`` (random
  playouts with evaluation cut-offs, agents/mcts.py) for each ``--mcts N``.

The last line printed is one JSON object: the run's training budget (wall and
CPU minutes, iterations, games), the learning curve summary from metrics.csv,
every match result, and whether the issue's targets were met.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import torch

from boardzoo.agents import make_agent
from boardzoo.training.config import load_config
from boardzoo.training.evaluate import match, spec_factory
from boardzoo.training.trainer import Trainer

REPO = Path(__file__).resolve().parent.parent


def curve(run: Path) -> dict:
    with open(run / "metrics.csv", newline="") as f:
        m = list(csv.DictReader(f))
    with open(run / "eval.csv", newline="") as f:
        e = list(csv.DictReader(f))
    return {
        "iterations": len(m),
        "wall_minutes": round(float(m[-1]["elapsed_s"]) / 60, 2),
        "cpu_minutes": round(float(m[-1]["cpu_s"]) / 60, 2),
        "selfplay_games": sum(int(r["games"]) for r in m),
        "games_per_hour_last": round(float(m[-1]["games_per_hour"])),
        "loss_first_last": [round(float(m[0]["loss"]), 3), round(float(m[-1]["loss"]), 3)],
        "policy_loss_first_last": [round(float(m[0]["policy_loss"]), 3),
                                   round(float(m[-1]["policy_loss"]), 3)],
        "value_loss_first_last": [round(float(m[0]["value_loss"]), 3),
                                  round(float(m[-1]["value_loss"]), 3)],
        "avg_length_first_last": [round(float(m[0]["avg_length"]), 1),
                                  round(float(m[-1]["avg_length"]), 1)],
        "eval": [{k: r[k] for k in ("iteration", "cpu_s", "opponent", "wins", "draws",
                                    "losses")} for r in e],
    }


def selfplay_speed(cfg_path: str, games: int) -> dict:
    """Time the same self-play games three ways (wall and CPU seconds)."""
    from boardzoo.envs.core.registry import action_game
    from boardzoo.training.network import build_net
    from boardzoo.training.selfplay import SelfPlayPool, play_games, selfplay_seed

    out = {}
    base = load_config(cfg_path)
    game = action_game(base.game)
    seeds = [selfplay_seed(0, 1, i) for i in range(games)]
    for label, overrides in (("one process, unbatched", ["selfplay.parallel_games=1"]),
                             (f"one process, batched x{games}",
                              [f"selfplay.parallel_games={games}"]),
                             (f"2 worker processes, batched x{games // 2} each",
                              [f"selfplay.parallel_games={games // 2}", "selfplay.workers=2"])):
        cfg = load_config(cfg_path, overrides + ["selfplay.max_moves=40"])
        torch.set_num_threads(1)
        torch.manual_seed(0)
        net = build_net(cfg, game).eval()
        pool = SelfPlayPool(cfg) if cfg.selfplay.workers > 1 else None
        if pool is not None:
            pool.play(net, seeds[:2])  # start the workers outside the timing
            pool.cpu = 0.0
        c0 = time.process_time()
        t0 = time.perf_counter()
        recs = pool.play(net, seeds) if pool else play_games(net, game, cfg, seeds)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0 + (pool.cpu if pool else 0.0)
        if pool:
            pool.close()
        positions = sum(len(r.obs) for r in recs)
        out[label] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                      "positions_per_wall_s": round(positions / wall, 1),
                      "positions_per_cpu_s": round(positions / cpu, 1)}
        print(label, out[label], flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "loa.yaml"))
    ap.add_argument("--set", action="append", default=[], help="config override k=v")
    ap.add_argument("--run", help="evaluate this finished run instead of training one")
    ap.add_argument("--out", help="run folder for training (default runs/bench_<game>)")
    ap.add_argument("--net", default="model.pt", help="network file in the run (model.pt is the "
                    "latest, best.pt the gated best)")
    ap.add_argument("--raw-games", type=int, default=40)
    ap.add_argument("--games", type=int, default=40, help="games per mcts opponent")
    ap.add_argument("--sims", type=int, default=100, help="network's simulations per action")
    ap.add_argument("--root", choices=["puct", "gumbel"],
                    help="search root in evaluation (default: the one the net was trained with)")
    ap.add_argument("--mcts", type=int, action="append", help="mcts:N opponents (default 400)")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--opening", type=int, default=2, help="random opening moves per game pair")
    ap.add_argument("--selfplay-speed", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.selfplay_speed:
        print(json.dumps({"selfplay_speed": selfplay_speed(args.config, 16)}))
        return 0

    if args.run:
        run = Path(args.run)
    else:
        cfg = load_config(args.config, args.set)
        run = Path(args.out or f"runs/bench_{cfg.game}")
        resume = (run / "checkpoint.pt").exists()
        Trainer(cfg, run, resume=resume, progress=False).run()
    data = torch.load(run / args.net, weights_only=True)
    game = data["game"]
    spec = f"checkpoint:{run / args.net}"
    root = args.root or data["config"]["mcts"]["root"]
    result: dict = {"game": game, "run": str(run), "net": args.net, "eval_root": root,
                    "training": curve(run)}

    t = time.perf_counter()
    raw = match(game, lambda s: make_agent(spec + ",sims=0", game, s),
                spec_factory("random", game), args.raw_games, args.seed, None, args.opening)
    result["raw_policy_vs_random"] = {**raw, "seconds": round(time.perf_counter() - t)}
    print("raw policy vs random:", result["raw_policy_vs_random"], flush=True)
    for n in args.mcts or [400]:
        t = time.perf_counter()
        r = match(game, lambda s: make_agent(f"{spec},sims={args.sims},root={root}", game, s),
                  spec_factory(f"mcts:{n}", game), args.games, args.seed, None, args.opening)
        result[f"net_sims{args.sims}_vs_mcts{n}"] = {**r, "seconds": round(time.perf_counter() - t)}
        print(f"net+{args.sims} sims vs mcts:{n}:", result[f"net_sims{args.sims}_vs_mcts{n}"],
              flush=True)
    targets = {"raw_policy_vs_random >= 0.95": raw["score"] >= 0.95}
    key = f"net_sims{args.sims}_vs_mcts400"
    if key in result:
        targets["net+MCTS vs mcts:400 >= 0.70"] = result[key]["score"] >= 0.70
    result["targets_met"] = targets
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
