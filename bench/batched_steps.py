"""Random-play steps/s of a batched engine (mask -> uniform legal action -> step, with
auto-reset) next to PettingZoo's chess_v6 AEC env measured in the same run.

Usage: python bench/batched_steps.py --game loa [--batch 256,1024,4096,16384]
       [--device cpu|cuda] [--seconds 3] [--threads 1]
A step is one game's action, so a batch of N stepped once counts N steps. Each batch size
in ``--batch`` runs ``--seconds`` (best of 3 slices); the last line printed is one JSON
object for the fastest batch (with every batch's figure under ``sweep``).

Needs the ``dev`` extra (``pip install -e ".[dev]"``): PettingZoo's chess_v6 imports ``chess``
(python-chess) (docs/performance.md).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import resource
import time

import torch
from env_steps import PEERS, random_play

from boardzoo.envs.core.batched import BatchedEnv
from boardzoo.envs.core.registry import batched_game

SLICES = 3


def rss_mb() -> float:
    """Return this process's resident memory now, in MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    """Return this process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_batch(game: str, batch: int, device: str, seconds: float) -> dict:
    """Play random games on ``batch`` boards for ``seconds``; return the rate and memory."""
    gc.collect()
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    before, peak_before = rss_mb(), peak_rss_mb()
    env = BatchedEnv(batched_game(game, device), batch)
    env.reset(seed=0)
    for _ in range(3):  # warm-up: first-call allocations
        env.step(env.random_actions())
    best, games, cpu_best = 0.0, 0, 0.0
    for _ in range(SLICES):
        if cuda:
            torch.cuda.synchronize()
        started, cpu_started, calls = time.perf_counter(), time.process_time(), 0
        while time.perf_counter() - started < seconds / SLICES:
            env.legal_mask()
            _, _, ended = env.step(env.random_actions())
            games += int(ended.sum()) if calls % 16 == 0 else 0  # sampled: .sum syncs on GPU
            calls += 1
        if cuda:
            torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        best = max(best, calls * batch / wall)
        cpu_best = max(cpu_best, calls * batch / max(cpu, 1e-9))
    if cuda:
        memory = torch.cuda.max_memory_allocated() / 2**20
    else:  # resident growth; the peak counter only moves once earlier peaks are passed
        memory = max(rss_mb() - before, peak_rss_mb() - peak_before)
    del env
    return {"steps_per_s": round(best), "steps_per_cpu_s": round(cpu_best),
            "peak_memory_mb": round(memory, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", required=True, help="a game with envs/<game>/batched.py")
    parser.add_argument("--batch", default="256,1024,4096,16384",
                        help="batch size, or a comma-separated list to sweep")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per batch size")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (1 is fastest on a loaded 2-core machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    batched_game(args.game, args.device)  # unknown game or no engine: fail before timing
    chess_env = importlib.import_module(PEERS["chess_v6"]).env
    chess_steps, chess_time = 0, 0.0
    sweep = {}
    for batch in (int(b) for b in args.batch.split(",")):
        # chess slices between the batch runs, so a change in machine load hits both alike
        steps, _, elapsed = random_play(chess_env, args.seconds / 2, seed=batch)
        chess_steps, chess_time = chess_steps + steps, chess_time + elapsed
        sweep[batch] = run_batch(args.game, batch, args.device, args.seconds)
        print(f"{args.game} batch {batch:>6}: {sweep[batch]['steps_per_s']:>12,} steps/s "
              f"({sweep[batch]['steps_per_cpu_s']:,} per CPU second), "
              f"{sweep[batch]['peak_memory_mb']} MiB")
    chess = chess_steps / chess_time
    print(f"chess_v6: {chess:,.0f} random-play AEC steps/s")
    best = max(sweep, key=lambda b: sweep[b]["steps_per_s"])
    print(json.dumps({
        "game": args.game, "batch": best, "device": args.device, "threads": args.threads,
        **sweep[best], "chess_v6_steps_per_s": round(chess),
        "ratio_vs_chess": round(sweep[best]["steps_per_s"] / chess, 1),
        "load_avg_1min": os.getloadavg()[0],
        "sweep": {str(b): v for b, v in sweep.items()},
    }))


if __name__ == "__main__":
    main()
