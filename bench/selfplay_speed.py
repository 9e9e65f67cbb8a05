"""Self-play games/hour of the batched path (selfplay.engine: batched) against the single-env
reference path, with the same fresh network, simulations and seeds, in one run.

Usage: python bench/selfplay_speed.py --game loa [--config FILE] [--games 64] [--simulations 32]
       [--max-moves M] [--root gumbel|puct] [--threads 1] [--repeats 1]
       [--engine both|reference|batched] [--parallel-games N] [--before OLD_CHECKOUT ...]

The network is a fresh default one from ``configs/<game>.yaml`` (or ``--config``; its
priors, ``model.value_prior`` / ``model.policy_prior``, included: the batched path computes
them in torch), seeded, and
both paths play ``--games`` games with ``parallel_games`` = games, so each
network call takes every game's leaf in both. Games/hour is games over wall
seconds (best of ``--repeats``, the paths alternating); CPU seconds and
positions/second are printed too, since the two paths draw different random
games (their lengths differ) and a shared machine makes wall time noisy.
``--engine`` times one path only (then ``ratio`` is absent). Positions are
the training examples the games produced; actions are all actions played,
forced ones (a single legal action, played without a search and not kept as
an example) included; with ``--parallel-games`` smaller than ``--games`` the
games run in waves, as ``selfplay.parallel_games`` makes the trainer do.
The last line printed is one JSON object (game, games, simulations,
games_per_hour_batched, games_per_hour_reference, ratio, and details).

``--before DIR`` (repeatable) compares checkouts: this script then runs each older
checkout's own ``bench/selfplay_speed.py`` (with its ``.venv``) and this one's, each in
a subprocess with the other arguments, taking turns for ``--repeats`` rounds (the order
reversed every other round), and its JSON line holds each checkout's best positions per
CPU-second of each engine (``runs``: every run's JSON line) and the ratios of this
checkout's to each older one's (``vs``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import torch

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.config import load_config
from boardzoo.training.network import build_net
from boardzoo.training.search.roots import ROOT_RULES
from boardzoo.training.selfplay import play_games, selfplay_seed

REPO = Path(__file__).resolve().parent.parent


def timed(play) -> dict[str, float]:
    """Run ``play()``; return its wall and CPU seconds, games and positions."""
    w, c = time.perf_counter(), time.process_time()
    records = play()
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    return {"wall_s": wall, "cpu_s": cpu, "games": len(records),
            "positions": sum(len(r.obs) for r in records),
            "actions": sum(r.length for r in records),
            "forced": sum(getattr(r, "forced", 0) for r in records),
            "capped": sum(r.capped for r in records)}


def passed_on_arguments() -> list[str]:
    """Return this script's arguments without ``--before`` and ``--repeats`` (and values)."""
    out, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
        elif arg in ("--before", "--repeats"):
            skip = True
        elif not arg.startswith(("--before=", "--repeats=")):
            out.append(arg)
    return out


def compare_checkouts(before: list[str], repeats: int) -> None:
    """Run this bench in each older checkout and in this one, taking turns; print each
    run's line, then one JSON object of the best positions per CPU-second and ratios."""
    checkouts = [str(Path(b).resolve()) for b in before] + [str(REPO)]
    argv = passed_on_arguments() + ["--repeats", "1"]
    runs: dict[str, list[dict]] = {c: [] for c in checkouts}
    for r in range(repeats):
        for c in checkouts if r % 2 == 0 else checkouts[::-1]:
            python = str(Path(c) / ".venv" / "bin" / "python")
            out = subprocess.run([python, str(Path(c) / "bench" / "selfplay_speed.py"), *argv],
                                 check=True, capture_output=True, text=True, cwd=c).stdout
            line = json.loads(out.strip().splitlines()[-1])
            runs[c].append(line)
            rates = {k: v for k, v in line.items() if k.startswith("positions_per_cpu_s_")}
            print(f"{c}: {rates}", flush=True)
    best = {c: {k[len("positions_per_cpu_s_"):]: max(run[k] for run in rs)
                for k in rs[0] if k.startswith("positions_per_cpu_s_")}
            for c, rs in runs.items()}
    new = best[str(REPO)]
    vs = {c: {engine: round(new[engine] / rate, 3) for engine, rate in best[c].items()
              if engine in new}
          for c in checkouts[:-1]}
    print(json.dumps({"positions_per_cpu_s": best, "vs": vs, "repeats": repeats,
                      "arguments": argv[:-2], "runs": runs}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="loa")
    parser.add_argument("--config", default=None,
                        help="config file (default: configs/<game>.yaml; its game is played)")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--simulations", type=int, default=None,
                        help="simulations per action (default: the config's)")
    parser.add_argument("--max-moves", type=int, default=None,
                        help="cap on actions per game (default: the config's)")
    parser.add_argument("--root", choices=list(ROOT_RULES), default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="device of the batched path")
    parser.add_argument("--engine", choices=["both", "reference", "batched"], default="both")
    parser.add_argument("--parallel-games", type=int, default=None,
                        help="games sharing one network batch (default: --games)")
    parser.add_argument("--before", action="append", default=[],
                        help="an older checkout (with its .venv) to run beside this one")
    args = parser.parse_args()
    if args.before:
        compare_checkouts(args.before, args.repeats)
        return
    torch.set_num_threads(args.threads)
    width = args.parallel_games or args.games
    sets = [f"selfplay.games_per_iteration={args.games}", f"selfplay.parallel_games={width}",
            "selfplay.workers=1"]
    if args.simulations is not None:
        sets.append(f"mcts.simulations={args.simulations}")
    if args.max_moves is not None:
        sets.append(f"selfplay.max_moves={args.max_moves}")
    if args.root is not None:
        sets.append(f"mcts.root={args.root}")
    cfg = load_config(args.config or REPO / "configs" / f"{args.game}.yaml", sets)
    args.game = cfg.game
    game = action_game(args.game)
    names = ["batched", "reference"] if args.engine == "both" else [args.engine]
    engine = batched_game(args.game, args.device) if "batched" in names else None
    torch.manual_seed(cfg.seed)
    net = build_net(cfg, game).eval()
    dev_net = build_net(cfg, game).to(args.device).eval()
    dev_net.load_state_dict(net.state_dict())
    seeds = [selfplay_seed(cfg.seed, 1, g) for g in range(args.games)]
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in names}
    for r in range(args.repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            if name == "batched":
                res = timed(lambda: play_games_batched(dev_net, engine, cfg, seeds))
            else:
                res = timed(lambda: play_games(net, game, cfg, seeds))
            runs[name].append(res)
            print(f"{name:9s} {res['games']} games, {res['actions']} actions, "
                  f"{res['positions']} positions ({res['forced']} forced actions, "
                  f"{res['capped']} capped): {res['wall_s']:.1f} s wall, "
                  f"{res['cpu_s']:.1f} s CPU", flush=True)
    best = {k: min(v, key=lambda x: x["wall_s"]) for k, v in runs.items()}
    gph = {k: b["games"] / b["wall_s"] * 3600 for k, b in best.items()}
    out = {"game": args.game, "games": args.games, "parallel_games": width,
           "simulations": cfg.mcts.simulations,
           **{f"games_per_hour_{k}": round(v, 1) for k, v in gph.items()},
           "root": cfg.mcts.root, "max_moves": cfg.selfplay.max_moves, "device": args.device,
           "threads": args.threads, "repeats": args.repeats}
    if len(gph) == 2:
        out["ratio"] = round(gph["batched"] / gph["reference"], 3)
    for k, b in best.items():
        cpu = max(b["cpu_s"], 1e-9)
        out[f"positions_per_s_{k}"] = round(b["positions"] / b["wall_s"], 1)
        out[f"positions_per_cpu_s_{k}"] = round(b["positions"] / cpu, 1)
        out[f"actions_per_cpu_s_{k}"] = round(b["actions"] / cpu, 1)
        out[f"forced_fraction_{k}"] = round(b["forced"] / max(b["actions"], 1), 3)
        out[f"cpu_s_{k}"] = round(b["cpu_s"], 1)
        out[f"avg_length_{k}"] = round(b["actions"] / b["games"], 1)
    if len(gph) == 2:
        out["cpu_ratio_positions"] = round(out["positions_per_cpu_s_batched"]
                                           / out["positions_per_cpu_s_reference"], 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
