"""Make a balanced opening suite: positions after a few random plies that a fixed search
scores near even (the shipped ``agents/arena/openings/GAME.txt``; docs/arena.md#openings).

    python bench/make_openings.py --game loa --plies 4 --depth 3 --count 100 \
        --max-eval 0.15 --seed 1 --out agents/arena/openings/loa.txt

Lines of ``--plies`` uniformly random moves from the start are drawn (seeded by
``--seed``); a line is kept when it is new, the game is not over, and ``alphabeta:DEPTH``
(fixed depth, so the suite does not depend on the machine's speed) scores the position
within ``--max-eval`` of a draw on the win-probability scale ``tanh(value / eval_scale)``
(the scale the game's descriptor gives MCTS cut-offs). The file starts with comment lines
that say how it was made; each line is the moves, one opening a line. The last line
printed is one JSON object: lines drawn, kept, and the mean and largest |score| kept.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from boardzoo.agents.alphabeta import searcher
from boardzoo.agents.arena.openings import random_line
from boardzoo.agents.evaluation import as_value, get_scale
from boardzoo.envs.core.registry import load_state


def balanced_lines(game: str, plies: int, depth: int, count: int, max_eval: float,
                   seed: int, max_draws: int) -> tuple[list[tuple[list[str], float]], int]:
    """Return up to ``count`` (moves, score) lines and how many lines were drawn."""
    rng = random.Random(seed)
    search = searcher(game, depth=depth, seed=seed)
    scale = get_scale(game)
    kept: list[tuple[list[str], float]] = []
    seen: set[tuple[str, ...]] = set()
    drawn = 0
    while len(kept) < count and drawn < max_draws:
        drawn += 1
        moves = random_line(game, plies, rng)
        state = load_state(game)
        for text in moves:
            state = state.apply(state.parse_move(text))
        if state.is_terminal() or moves in seen:
            continue
        seen.add(moves)
        search.reset()
        score = as_value(search.search_value(state), scale)
        if abs(score) <= max_eval:
            kept.append((list(moves), score))
    return kept, drawn


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", required=True)
    p.add_argument("--plies", type=int, default=4)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--max-eval", type=float, default=0.15)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-draws", type=int, default=100_000)
    p.add_argument("--out", default=None, help="the suite file (default: print it)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    kept, drawn = balanced_lines(args.game, args.plies, args.depth, args.count, args.max_eval,
                                 args.seed, args.max_draws)
    header = [
        f"# Balanced {args.game} openings: {len(kept)} lines of {args.plies} random plies",
        f"# (seed {args.seed}) that alphabeta:{args.depth} scores within {args.max_eval} of a "
        "draw (tanh(value / eval_scale)).",
        f"# Made by: python bench/make_openings.py --game {args.game} --plies {args.plies} "
        f"--depth {args.depth} --count {args.count} --max-eval {args.max_eval} "
        f"--seed {args.seed}",
    ]
    text = "\n".join([*header, *(" ".join(m) for m, _ in kept)]) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    scores = [abs(s) for _, s in kept]
    print(json.dumps({"game": args.game, "drawn": drawn, "kept": len(kept),
                      "mean_abs_score": round(sum(scores) / len(scores), 4) if scores else None,
                      "max_abs_score": round(max(scores), 4) if scores else None,
                      "seconds": round(time.perf_counter() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
