"""Learning evidence: a trained network against fixed opponents (optionally training it first).

    python bench/train_learns.py --game ultima --checkpoint runs/ultima/best.pt \
        --games 40 --workers 2
    python bench/train_learns.py --run runs/loa              # a finished run's model.pt
    python bench/train_learns.py --config configs/loa.yaml   # train (runs/bench_loa), then play
    python bench/train_learns.py --config configs/ultima.yaml --untrained  # no training:
                                                             # what the priors alone reach
    python bench/train_learns.py --selfplay-speed            # batched vs unbatched vs workers

Matches (``--games`` games each, colours alternating, every pair of games opening
with ``--opening`` uniformly random moves, then the same opening with colours
swapped; games end by the rules only unless ``--max-moves``):

* the raw policy (``sims=0``: the most likely legal action, no search) against
  each ``--raw-vs`` opponent (default ``random``);
* the network with ``--sims`` simulations per action (Gumbel root candidates:
  ``--m``, default the network's ``play.gumbel_m``; forced actions below the root played
  through or searched: ``--forced``, default the network's ``play.skip_forced``) against each
  ``--opponents`` spec (default ``mcts:100``, ``greedy``, ``alphabeta:2``). With
  ``--movetime`` both sides stop at that limit a move: give the network a large ``--sims``
  to compare at equal time.

The games run through the arena (:func:`boardzoo.agents.arena.run_games`) in
``--workers`` processes, one torch thread each. The last line printed is one
JSON object: per opponent the W-D-L, score (``score_ci95``: its 95% interval's half-width)
and mean plies (``matches``, and ``scores`` for short), the CPU minutes of all games (this
process and its workers), and for a run its training budget and learning curve.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # the arena's spawned workers inherit it

import torch  # noqa: E402

from boardzoo.agents.agent_spec import spec_list  # noqa: E402
from boardzoo.agents.arena import Pairing, game_seed, run_games  # noqa: E402
from boardzoo.training.checkpoint import load  # noqa: E402
from boardzoo.training.config import from_saved, load_config, play_search  # noqa: E402
from boardzoo.training.search.roots import ROOT_RULES  # noqa: E402
from boardzoo.training.trainer import Trainer  # noqa: E402

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


def timed_selfplay(cfg, seeds: list[int]) -> dict:
    """Play ``seeds`` with a fresh network of ``cfg`` (seeded 0) in this process or its
    ``selfplay.workers``; return positions, wall and CPU seconds (the workers' included)."""
    from boardzoo.envs.core.registry import action_game
    from boardzoo.training.backends import SelfPlayPool
    from boardzoo.training.network import build_net
    from boardzoo.training.selfplay import play_games

    game = action_game(cfg.game)
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
    return {"positions": positions, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "positions_per_wall_s": round(positions / wall, 1),
            "positions_per_cpu_s": round(positions / cpu, 1)}


def selfplay_speed(cfg_path: str, games: int) -> dict:
    """Time the same self-play games three ways (wall and CPU seconds)."""
    from boardzoo.training.selfplay import selfplay_seed

    out = {}
    seeds = [selfplay_seed(0, 1, i) for i in range(games)]
    for label, overrides in (("one process, unbatched", ["selfplay.parallel_games=1"]),
                             (f"one process, batched x{games}",
                              [f"selfplay.parallel_games={games}"]),
                             (f"2 worker processes, batched x{games // 2} each",
                              [f"selfplay.parallel_games={games // 2}", "selfplay.workers=2"])):
        cfg = load_config(cfg_path, overrides + ["selfplay.max_moves=40"])
        out[label] = timed_selfplay(cfg, seeds)
        print(label, out[label], flush=True)
    return out


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished (reaped) children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pairings(net: str, opponent: str, games: int, seed: int, label: str,
             movetime: float | None = None) -> list[Pairing]:
    """``games`` games of ``net`` against ``opponent``: the net moves first in even games,
    and games 2k and 2k + 1 share their random opening; ``movetime``: both sides' limit."""
    out = []
    for g in range(games):
        gid = f"{label}|{g}"
        first, second = (net, opponent) if g % 2 == 0 else (opponent, net)
        out.append(Pairing(gid, first, second, game_seed(seed, gid),
                           opening_seed=game_seed(seed, f"{label}|opening|{g // 2}"),
                           movetime=movetime))
    return out


def tally(records: list[dict], net: str, opening: int = 0) -> dict:
    """The net's W-D-L, score and mean plies over ``records``, and each side's mean and
    max seconds per move (the random opening moves left out), so that strength can be
    compared at equal time too."""
    w = d = l_ = plies = capped = 0
    seconds: dict[str, list[float]] = {"net": [], "opponent": []}
    for r in records:
        seat = r["players"].index(net)
        s = r["scores"][seat]
        w, d, l_ = w + (s == 1.0), d + (s == 0.5), l_ + (s == 0.0)
        plies += r["plies"]
        capped += r["termination"] != "rules"
        for k, spent in enumerate(r.get("move_seconds", [])):
            if k >= opening:  # whole-turn moves alternate: ply k is players[k % 2]'s
                seconds["net" if k % 2 == seat else "opponent"].append(spent)
    n = max(len(records), 1)
    score = (w + d / 2) / n
    # the score's 95% interval half-width (normal approximation over the games' scores):
    # with 40 games it is about +-0.15, so a difference of a few wins is noise
    spread = math.sqrt(max((w + d / 4) / n - score * score, 0.0) / n)
    out = {"games": len(records), "wins": w, "draws": d, "losses": l_,
           "wdl": f"{w}-{d}-{l_}", "score": round(score, 3),
           "score_ci95": round(1.96 * spread, 3),
           "plies": round(plies / n, 1), "stopped_by_max_moves": capped}
    for side, values in seconds.items():
        out[f"{side}_s_per_move"] = round(sum(values) / max(len(values), 1), 4)
        out[f"{side}_max_s_per_move"] = round(max(values, default=0.0), 4)
    return out


def play_matches(game: str, checkpoint: str,
                 args: argparse.Namespace) -> tuple[dict[str, dict], str]:
    """Play every match through the arena; return the results by opponent and the spec of
    the searching network."""
    opts = f",sims={args.sims}" + (f",m={args.m}" if args.m else "") + (
        f",root={args.root}" if args.root else "") + (
        f",ptemp={args.ptemp:g}" if args.ptemp else "") + (
        f",forced={args.forced}" if args.forced else "") + (
        f",win1={args.win1}" if args.win1 else "") + (
        f",leaf={args.leaf}" if args.leaf else "") + (
        f",stop={args.stop}" if args.stop else "") + (
        f",batch={args.batch}" if args.batch > 1 else "")
    searched = f"checkpoint:{checkpoint}{opts}"
    raw = f"checkpoint:{checkpoint},sims=0"
    matches = [(f"raw_vs_{o}", raw, o) for o in args.raw_vs] + [
        (o, searched, o) for o in args.opponents]
    tasks = {label: pairings(net, opp, args.games, args.seed, label, args.movetime)
             for label, net, opp in matches}
    left = {label: len(t) for label, t in tasks.items()}
    done: dict[str, list[dict]] = {label: [] for label in tasks}
    start = time.perf_counter()
    everything = [p for label, _, _ in matches for p in tasks[label]]
    for record in run_games(game, everything, args.workers, args.max_moves or None, args.opening):
        label = record["id"].rsplit("|", 1)[0]
        done[label].append(record)
        left[label] -= 1
        if left[label] == 0:
            net = next(n for lb, n, _ in matches if lb == label)
            print(f"{label}: {tally(done[label], net, args.opening)} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
    return {label: tally(done[label], net, args.opening) for label, net, _ in matches}, searched


def untrained_net(cfg, path: Path) -> Path:
    """Write the config's fresh network (as a run's first iteration starts it) to ``path``."""
    from boardzoo.envs.core.registry import action_game
    from boardzoo.training.distill import save_model
    from boardzoo.training.network import build_net

    torch.manual_seed(cfg.seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model(cfg, build_net(cfg, action_game(cfg.game)), path,
               f"untrained {cfg.game} network (seed {cfg.seed}): its priors alone")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--checkpoint", help="model file or training checkpoint to play")
    src.add_argument("--run", help="a finished run folder (plays its --net file)")
    src.add_argument("--config", help="train with this config first (default when neither "
                     "--checkpoint nor --run: configs/loa.yaml)")
    ap.add_argument("--game", help="the checkpoint's game (checked against the file)")
    ap.add_argument("--set", action="append", default=[], help="config override k=v (--config)")
    ap.add_argument("--out", help="run folder for training (default runs/bench_<game>)")
    ap.add_argument("--untrained", action="store_true",
                    help="with --config: play the config's fresh network (seeded by its seed) "
                    "without training it, i.e. what its priors alone reach")
    ap.add_argument("--net", default="model.pt", help="network file in the run (model.pt is the "
                    "latest, best.pt the gated best)")
    ap.add_argument("--games", type=int, default=40, help="games per match (colours alternate)")
    ap.add_argument("--workers", type=int, default=1, help="arena worker processes")
    ap.add_argument("--sims", type=int, default=100, help="network's simulations per action")
    ap.add_argument("--m", type=int, default=0, help="Gumbel root candidates (default: the "
                    "network's play.gumbel_m)")
    ap.add_argument("--root", choices=list(ROOT_RULES),
                    help="search root (default: the net's play.root, else its mcts.root)")
    ap.add_argument("--ptemp", type=float, default=0.0,
                    help="policy softmax temperature of the search (default: the network's "
                         "play.policy_temperature)")
    ap.add_argument("--forced", choices=["skip", "search"],
                    help="forced actions below the root: played through (skip) or searched "
                         "(default: the network's play.skip_forced)")
    ap.add_argument("--win1", choices=["on", "off"],
                    help="look for wins in one in the search (default: the network's "
                         "play.win_in_one; Ultima's checkmates in one)")
    ap.add_argument("--leaf", type=int, default=0,
                    help="value each search leaf by an alpha-beta search of this many turns "
                         "(default: the network's play.leaf_depth; LOA and Ultima)")
    ap.add_argument("--stop", choices=["on", "off"],
                    help="stop a search once its remaining simulations cannot change its move "
                         "(default: the network's play.stop_early)")
    ap.add_argument("--batch", type=int, default=1,
                    help="leaves per network call of the searching network (batch=N; PUCT root)")
    ap.add_argument("--movetime", type=float, default=None,
                    help="per-move limit in seconds of both sides of every match (equal time: "
                         "give the network a large --sims); default none")
    ap.add_argument("--opponents", default="mcts:100,greedy,alphabeta:2",
                    help="comma-separated specs the searching network plays")
    ap.add_argument("--raw-vs", default="random",
                    help="comma-separated specs the raw policy (sims=0) plays")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--opening", type=int, default=2, help="random opening moves per game pair")
    ap.add_argument("--max-moves", type=int, default=0, help="stop a game after this many "
                    "moves as a draw (0: the rules' own end only)")
    ap.add_argument("--selfplay-speed", action="store_true")
    args = ap.parse_args()
    args.opponents, args.raw_vs = spec_list(args.opponents), spec_list(args.raw_vs)
    torch.set_num_threads(1)
    if args.selfplay_speed:
        print(json.dumps({"selfplay_speed": selfplay_speed(
            args.config or str(REPO / "configs" / "loa.yaml"), 16)}))
        return 0

    run = None
    if args.checkpoint:
        path = Path(args.checkpoint)
    elif args.run:
        run = Path(args.run)
        path = run / args.net
    elif args.untrained:
        if not args.config:
            ap.error("--untrained needs --config")
        path = untrained_net(load_config(args.config, args.set),
                             Path(args.out or "runs") / "untrained.pt")
    else:
        cfg = load_config(args.config or str(REPO / "configs" / "loa.yaml"), args.set)
        run = Path(args.out or f"runs/bench_{cfg.game}")
        resume = (run / "checkpoint.pt").exists()
        Trainer(cfg, run, resume=resume, progress=False).run()
        path = run / args.net
    data = load(path)
    game = data["game"]
    if args.game and args.game != game:
        ap.error(f"{path} is a {game} network, not {args.game}")
    cfg = from_saved(data["config"])
    play = play_search(cfg)
    result: dict = {"game": game, "checkpoint": str(path), "games_per_match": args.games,
                    "opening_moves": args.opening, "max_moves": args.max_moves,
                    "workers": args.workers, "sims": args.sims, "movetime": args.movetime,
                    "root": args.root or play.root, "m": args.m or play.gumbel_m,
                    "skip_forced": cfg.play.skip_forced if args.forced is None
                    else args.forced == "skip",
                    "win_in_one": cfg.play.win_in_one if args.win1 is None
                    else args.win1 == "on"}
    if run is not None:
        result["training"] = curve(run)
    c0, t0 = cpu_seconds(), time.perf_counter()
    matches, spec = play_matches(game, str(path), args)
    result["net_spec"] = spec
    result["matches"] = matches
    result["scores"] = {k: v["score"] for k, v in matches.items()}
    cpu = cpu_seconds() - c0
    result["cpu_minutes"] = round(cpu / 60, 2)
    result["cpu_seconds"] = round(cpu, 1)
    result["wall_minutes"] = round((time.perf_counter() - t0) / 60, 2)
    # issue 12's targets (stretch: alpha-beta), each only where its match was played
    thresholds = {"raw_vs_random": ("raw_policy_vs_random >= 0.90", 0.90),
                  "mcts:100": ("net vs mcts:100 >= 0.70", 0.70),
                  "greedy": ("net vs greedy >= 0.55", 0.55),
                  "alphabeta:2": ("stretch: net vs alphabeta:2 >= 0.50", 0.50),
                  "alphabeta:3": ("stretch: net vs alphabeta:3 >= 0.50", 0.50)}
    targets = {label: matches[key]["score"] >= bar
               for key, (label, bar) in thresholds.items() if key in matches}
    result["targets_met"] = targets
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
