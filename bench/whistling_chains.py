"""Time and peak memory of Whistling's maximum-capture search on one stone among many
scattered enemy stones (issue 23, docs/whistling.md "Worst cases"), optionally side by side
with another checkout's (``--before DIR``: its ``.venv``, e.g. the Python rules engine the
kernel replaced).

Each position runs in a fresh child process (why: peak RSS is per process), which answers
``legal_count()`` (what ``boardzoo perft whistling 1`` prints), with ``--list`` then the
env's legal hops at the turn's start (``WhistlingActions.legal_actions``, the action mask:
they need every chain node's best, where a count does not), and reports CPU seconds, peak
RSS, the count, N and the hops, or the refusal; ``answer_wall_s`` is the questions' wall
time (the engine loaded before the clock starts), ``wall_s`` the child's, start included.
With ``--before`` each position runs in both checkouts, one after the other.

Usage: python bench/whistling_chains.py [--stones 20] [--seeds 5] [--first-seed 0]
       [--timeout 120] [--list] [--before DIR]
The issue's 16-stone position is always measured first. The last line printed is one JSON
object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

from boardzoo.envs.whistling.hexgrid import BIT, NEIGHBOUR_MASKS, NUM_CELLS
from boardzoo.envs.whistling.rules import State

#: The issue's position: one X stone among 16 scattered O stones, 146,404 maximal turns.
ISSUE = "D6/p2,m3,r6,F6,x8,C9,e11,x12,z12,j14,A15,C15,I15,m17,m19,G19 x 0"

#: What a child process runs (argv: position text, "list" or "count"): any checkout's State.
_CHILD = """
import json, resource, sys, time
from boardzoo.envs.core.game import PositionError
from boardzoo.envs.whistling.actions import HopState, WhistlingActions
from boardzoo.envs.whistling.rules import State
State(1, 2, 0).legal_count()  # the engine loaded before the clock starts
state = State.from_text(sys.argv[1])
t0, w0 = time.process_time(), time.perf_counter()
try:
    out = {"count": state.legal_count(), "n": state.max_capture()}
    if sys.argv[2] == "list":
        out["hops"] = WhistlingActions().legal_actions(HopState(state))
except PositionError as e:
    out = {"refused": str(e)}
out["cpu_s"] = round(time.process_time() - t0, 2)
out["answer_wall_s"] = round(time.perf_counter() - w0, 2)
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


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


def child(text: str, timeout: float, listing: bool, checkout: str | None = None) -> dict:
    """Measure ``text`` in a fresh Python process (this one's interpreter, or ``checkout``'s
    ``.venv`` in that directory), killed after ``timeout`` seconds."""
    python = os.path.join(checkout, ".venv", "bin", "python") if checkout else sys.executable
    cmd = [python, "-c", _CHILD, text, "list" if listing else "count"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True,
                              cwd=checkout)
        out = json.loads(done.stdout.splitlines()[-1])
    except subprocess.TimeoutExpired:
        out = {"timeout_s": timeout}
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    return out


def summary(rows: list[dict]) -> dict:
    """Return the counts and worst figures of the measured scattered positions."""
    answered = [r for r in rows if "count" in r]
    return {
        "answered": len(answered), "refused": sum("refused" in r for r in rows),
        "timed_out": sum("timeout_s" in r for r in rows),
        "max_cpu_s": max((r["cpu_s"] for r in answered), default=None),
        "max_answer_wall_s": max((r["answer_wall_s"] for r in answered), default=None),
        "max_peak_rss_mb": max((r["peak_rss_mb"] for r in rows if "peak_rss_mb" in r),
                               default=None)}


def main() -> None:
    """Measure the issue's position and the seeded scattered ones; print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stones", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--list", action="store_true", help="also list the hops at the start")
    ap.add_argument("--before", help="another checkout (with its .venv), measured alike")
    args = ap.parse_args()
    texts = [ISSUE] + [scattered(s, args.stones)
                       for s in range(args.first_seed, args.first_seed + args.seeds)]
    sides = {"new": None} if not args.before else {"before": args.before, "new": None}
    rows: dict[str, list[dict]] = {name: [] for name in sides}
    for text in texts:
        for name, checkout in sides.items():
            rows[name].append({"position": text,
                               **child(text, args.timeout, args.list, checkout)})
            print(json.dumps({"engine": name, **rows[name][-1]}), flush=True)
    figures: dict = {"stones": args.stones, "seeds": args.seeds, "list": args.list,
                     "load_average": [round(x, 2) for x in os.getloadavg()]}
    for name in sides:
        figures[name] = {"issue": rows[name][0], **summary(rows[name][1:]),
                         "positions": rows[name][1:]}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
