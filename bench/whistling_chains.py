"""Time and peak memory of Whistling's maximum-capture search on one stone among many
scattered enemy stones (issue 23, docs/whistling.md "Worst cases").

Each position runs in a fresh child process (why: peak RSS is per process), which answers
``legal_count()`` (what ``boardzoo perft whistling 1`` prints) and reports CPU seconds, peak
RSS, the count and N, or the refusal; ``answer_wall_s`` is the search's wall time (the
compiled kernel's, loaded from numba's cache before the clock starts), ``wall_s`` the
child's, start included.

Usage: python bench/whistling_chains.py [--stones 20] [--seeds 5] [--first-seed 0]
       [--timeout 120]
The issue's 16-stone position is always measured first. The last line printed is one JSON
object with every figure.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

from boardzoo.envs.whistling.hexgrid import BIT, NEIGHBOUR_MASKS, NUM_CELLS
from boardzoo.envs.whistling.rules import State

#: The issue's position: one X stone among 16 scattered O stones, 146,404 maximal turns.
ISSUE = "D6/p2,m3,r6,F6,x8,C9,e11,x12,z12,j14,A15,C15,I15,m17,m19,G19 x 0"


def scattered(seed: int, stones: int) -> str:
    """Return a position: one X stone (to move) and ``stones`` O stones, no two of the
    ``stones + 1`` on neighbouring cells, at seeded random cells."""
    rng = random.Random(seed)
    cells: list[int] = []
    taken = 0
    for c in rng.sample(range(NUM_CELLS), NUM_CELLS):
        if not taken & BIT[c]:
            cells.append(c)
            taken |= BIT[c] | NEIGHBOUR_MASKS[c]
            if len(cells) == stones + 1:
                break
    return State(BIT[cells[0]], sum(BIT[c] for c in cells[1:]), 0).to_text()


def measure(text: str) -> dict:
    """Answer ``legal_count()`` of one position in this process and return the figures."""
    from boardzoo.envs.core.game import PositionError

    State(1, 2, 0).legal_count()  # the engine loaded before the clock starts
    state = State.from_text(text)
    t0, w0 = time.process_time(), time.perf_counter()
    try:
        out = {"count": state.legal_count(), "n": state.max_capture()}
    except PositionError as e:
        out = {"refused": str(e)}
    out["cpu_s"] = round(time.process_time() - t0, 2)
    out["answer_wall_s"] = round(time.perf_counter() - w0, 2)  # the search, not the start
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def child(text: str, timeout: float) -> dict:
    """Measure ``text`` in a fresh Python process (killed after ``timeout`` seconds)."""
    cmd = [sys.executable, __file__, "--one", text]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
        out = json.loads(done.stdout.splitlines()[-1])
    except subprocess.TimeoutExpired:
        out = {"timeout_s": timeout}
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    return {"position": text, **out}


def main() -> None:
    """Measure the issue's position and the seeded scattered ones; print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stones", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process's position
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    texts = [ISSUE] + [scattered(s, args.stones)
                       for s in range(args.first_seed, args.first_seed + args.seeds)]
    rows = []
    for text in texts:
        rows.append(child(text, args.timeout))
        print(json.dumps(rows[-1]), flush=True)
    answered = [r for r in rows[1:] if "count" in r]
    print(json.dumps({
        "stones": args.stones, "seeds": args.seeds, "issue": rows[0],
        "answered": len(answered), "refused": sum("refused" in r for r in rows[1:]),
        "timed_out": sum("timeout_s" in r for r in rows[1:]),
        "max_cpu_s": max((r["cpu_s"] for r in answered), default=None),
        "max_answer_wall_s": max((r["answer_wall_s"] for r in answered), default=None),
        "max_peak_rss_mb": max((r["peak_rss_mb"] for r in rows[1:] if "peak_rss_mb" in r),
                               default=None),
        "positions": rows[1:]}))


if __name__ == "__main__":
    main()
