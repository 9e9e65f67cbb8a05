"""Ultima from scratch: an evaluation learned from self-play alone, played against ``greedy``.

    python bench/scratch_eval.py --fit-seeds 0 1 --games 40 --seed 2026

For each fit seed, ``boardzoo fit-eval --selfplay GENERATIONS --game ultima`` (no network, no
hand-made value: training/eval_scratch.py), then ``boardzoo match alphabeta:DEPTH,eval=FILE
OPPONENT`` (game pairs of ``--openings`` with colours swapped). The last line printed is one
JSON object: per fit seed the fit's CPU seconds and learned weights, the match's W-D-L, score
and its 95% interval's half-width, mean plies and both sides' seconds a move; and the pooled
score over all seeds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch
from equal_time import side

from boardzoo.agents.arena.pairs import score_stats
from boardzoo.agents.arena.records import read_games
from boardzoo.cli import main as boardzoo
from boardzoo.training.eval_scratch import fit_selfplay


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit-seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--generations", type=int, default=2)
    ap.add_argument("--fit-games", type=int, default=5000, help="games a generation")
    ap.add_argument("--depth", type=int, default=2, help="the learned side's alpha-beta depth")
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026, help="the match's seed")
    ap.add_argument("--openings", default="random:4")
    ap.add_argument("--out", default=None, help="folder for the files (default: a temporary one)")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the fit as `fit-eval --threads 1` makes it, bit for bit
    runs, pooled = [], [0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        for fit_seed in args.fit_seeds:
            cpu0 = time.process_time()
            learned, gens = fit_selfplay("ultima", args.generations, args.fit_games,
                                         seed=fit_seed)
            fit_cpu = time.process_time() - cpu0
            path = out / f"scratch_{fit_seed}.npz"
            learned.save(path)
            spec = f"alphabeta:{args.depth},eval={path}"
            match = out / f"match_{fit_seed}"
            code = boardzoo(["match", "--game", "ultima", "--games", str(args.games), "--seed",
                             str(args.seed), "--openings", args.openings, "--no-progress",
                             "--no-html", "--no-png", "--out", str(match), spec, args.opponent])
            if code:
                return code
            records = read_games(match / "games.jsonl")
            scores = [r["scores"][r["players"].index(spec)] for r in records]
            wdl = [scores.count(0.0), scores.count(0.5), scores.count(1.0)]
            pooled = [p + n for p, n in zip(pooled, wdl, strict=True)]
            stats = score_stats(wdl)
            runs.append({
                "fit_seed": fit_seed, "fit_cpu_s": round(fit_cpu, 1),
                "weights": {k: round(v, 3) for k, v in gens[-1].weights.items()},
                "wdl": f"{wdl[2]}-{wdl[1]}-{wdl[0]}", "score": round(stats["score"], 3),
                "score_ci95": round(stats["score_ci95"], 3),
                "plies": round(sum(r["plies"] for r in records) / len(records), 1),
                "learned_side": side(records, spec), "opponent_side": side(records, args.opponent),
            })
            print(json.dumps(runs[-1]), flush=True)
    stats = score_stats(pooled)
    print(json.dumps({"game": "ultima", "opponent": args.opponent, "depth": args.depth,
                      "generations": args.generations, "fit_games": args.fit_games,
                      "match_seed": args.seed, "openings": args.openings, "runs": runs,
                      "pooled_wdl": f"{pooled[2]}-{pooled[1]}-{pooled[0]}",
                      "pooled_score": round(stats["score"], 3),
                      "pooled_ci95": round(stats["score_ci95"], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
