"""Whistling's rules engine speed through its public API (rules.State, evaluation), optionally
side by side with another checkout's (``--before``: e.g. the Python rules engine the compiled
kernel replaced): perft from the start, legal count + one turn applied + the child's
evaluation on played positions, the kernel's time a search leaf (result and evaluation,
timed inside numba on positions two plies below the start and below played positions),
the worst maximum-capture positions (one stone among 16-20
scattered enemy stones, issue 44: "Whistling's worst 20-stone positions at least as fast as
today"); and the kernel's one-time compile cost (a fresh process with an empty numba cache)
and the cached load.

Usage: python bench/whistling_kernel_speed.py [--positions 2000] [--seeds 8] [--quick]
       [--before /path/to/other/.venv/bin/python]
Each section runs in a fresh process of each interpreter, the two alternating, as wall seconds
(``time.perf_counter``) and CPU seconds (``time.process_time``); on a loaded machine compare
the CPU figures and the ratios. The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from whistling_chains import ISSUE, scattered  # noqa: E402

from boardzoo.envs.whistling.evaluation import whistling_eval  # noqa: E402
from boardzoo.envs.whistling.rules import START_TEXT, State  # noqa: E402

#: What the compile probe runs: every public kernel function once, timed from the import.
_COMPILE_PROBE = """
import time
t0, c0 = time.perf_counter(), time.process_time()
from boardzoo.envs.whistling import kernel as K
x, o = K.words(7 << 300), K.words(0x70000000000)
out = K.np.empty(K.NUM_ACTIONS, K.np.int64)
K.legal_count(x, o, 0, 0, False, K.COUNT_MEMO_NODES); K.legal_actions(x, o, 0, 0, -1, -1, out)
K.apply_hop(x, o, 0, 0, -1, -1, int(out[0])); K.legal_turns(x, o, 0, 0); K.result(x, o, 0, 0)
K.evaluate(x, o, 0, 0); K.perft_words(x, o, 0, 0, 2)
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def clock() -> tuple[float, float]:
    """Return (wall, CPU) seconds now."""
    return time.perf_counter(), time.process_time()


def since(t: tuple[float, float]) -> tuple[float, float]:
    """Return the (wall, CPU) seconds since ``t``, rounded."""
    return round(time.perf_counter() - t[0], 3), round(time.process_time() - t[1], 3)


def compile_cost() -> dict:
    """Return the wall and CPU seconds from import to every numba entry point answered in a
    fresh process: with an empty numba cache (the one-time compile) and again with that cache
    (a load)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = {}
        for name in ("first_call_empty_cache", "first_call_cached"):
            done = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, check=True,
                                  capture_output=True, text=True)
            wall, cpu = map(float, done.stdout.split()[-2:])
            out[f"{name}_wall_s"], out[f"{name}_cpu_s"] = round(wall, 2), round(cpu, 2)
    return out


def perft_times(reps: int) -> dict:
    """Return the (wall, CPU) seconds of ``State.perft`` from the start at depths 1-3."""
    State.start().perft(1)  # loaded before timing
    out = {}
    for depth, n in ((1, reps * 50), (2, reps), (3, 1)):
        t = clock()
        for _ in range(n):
            leaves = State.from_text(START_TEXT).perft(depth)
        out[f"depth{depth}"] = {"leaves": leaves, "runs": n, "s": since(t)}
    return out


def played_positions(n: int, seed: int) -> list[State]:
    """Return ``n`` non-terminal positions of seeded random games from the start."""
    rng, out = random.Random(seed), []
    while len(out) < n:
        state = State.start()
        for _ in range(rng.randint(0, 40)):
            if state.is_terminal():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_terminal():
            out.append(state)
    return out


def count_apply_eval(n: int) -> dict:
    """Return the seconds of legal count + one turn applied + the child's evaluation on
    ``n`` played positions (a fresh State each time: nothing cached)."""
    rows = [(s.stones, s.side, s.quiet, s.legal_moves()[0]) for s in played_positions(n, 7)]
    t = clock()
    total = 0.0
    for (x, o), side, quiet, turn in rows:
        state = State(x, o, side, quiet)
        state.legal_count()
        total += whistling_eval(state.play(turn))
    return {"positions": n, "s": since(t), "sum_of_values": total}


def leaf_positions(per_root: int, seed: int) -> list[State]:
    """Return positions two plies below the start and below four positions of seeded random
    games (the leaves of a depth-2 search from there), ``per_root`` from each."""
    rng = random.Random(seed)
    roots = [State.start()] + played_positions(4, seed)
    out: list[State] = []
    for root in roots:
        children = [c for c in (root.play(t) for t in root.legal_moves()) if not c.is_terminal()]
        for _ in range(per_root):
            child = rng.choice(children)
            out.append(child.play(rng.choice(child.legal_moves())))
    return out


def leaf_times(per_root: int) -> dict:
    """Return the kernel's microseconds a search leaf (its result and evaluation: what the
    compiled alpha-beta asks at depth 0), timed inside numba over the positions of
    :func:`leaf_positions`: ``judge`` on a kept workspace where the kernel has it, else
    ``result`` and ``evaluate``; and the sum of the values (the same before and after)."""
    import numpy as np
    from numba import njit

    from boardzoo.envs.whistling import kernel as K

    states = leaf_positions(per_root, 3)
    x = np.array([K.words(s.stones[0]) for s in states])
    o = np.array([K.words(s.stones[1]) for s in states])
    side = np.array([s.side for s in states], np.int64)
    quiet = np.array([s.quiet for s in states], np.int64)
    values = np.empty(len(states))
    if hasattr(K, "judge"):
        @njit
        def run(x, o, side, quiet, values, lw):  # noqa: ANN001, ANN202
            for i in range(x.shape[0]):
                values[i] = K.judge(x[i], o[i], side[i], quiet[i], True, lw)[1]

        args: tuple = (x, o, side, quiet, values, K.leaf_workspace())
    else:
        @njit
        def run(x, o, side, quiet, values):  # noqa: ANN001, ANN202
            for i in range(x.shape[0]):
                if K.result(x[i], o[i], side[i], quiet[i]) == K.ONGOING:
                    values[i] = K.evaluate(x[i], o[i], side[i], quiet[i])[0]

        args = (x, o, side, quiet, values)
    run(*args)  # compiled (its callees loaded from numba's cache) before timing
    best = (1e9, 1e9)
    for _ in range(3):
        t = clock()
        run(*args)
        best = min(best, since(t))
    per = 1e6 / len(states)
    return {"positions": len(states), "with_capture": sum(s.max_capture() > 0 for s in states),
            "us_per_leaf": [round(best[0] * per, 2), round(best[1] * per, 2)],
            "sum_of_values": float(values.sum())}


def worst_positions(seeds: int) -> dict:
    """Return the legal count's seconds on the issue's 16-stone position and on ``seeds``
    positions of one stone among 20 scattered enemy stones."""
    out = {}
    State(1, 2, 0).legal_count()  # loaded first
    for name, text in [("issue", ISSUE)] + [(f"seed{s}", scattered(s, 20)) for s in range(seeds)]:
        t = clock()
        try:
            count: int | str = State.from_text(text).legal_count()
        except Exception as e:  # refused past the engine's memory bound
            count = f"refused: {type(e).__name__}"
        out[name] = {"count": count, "s": since(t)}
    return out


SECTIONS = {"perft": lambda a: perft_times(a.perft_reps),
            "count_apply_eval": lambda a: count_apply_eval(a.positions),
            "leaf": lambda a: leaf_times(a.positions),
            "worst": lambda a: worst_positions(a.seeds)}


def run_section(python: str, name: str, args: argparse.Namespace) -> dict:
    """Run one section in a fresh process of ``python`` and return its figures."""
    cmd = [python, __file__, "--section", name, "--positions", str(args.positions),
           "--seeds", str(args.seeds), "--perft-reps", str(args.perft_reps)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def ratios(before: object, after: object) -> object:
    """Return before / after of every (wall, CPU) pair in two matching figure trees."""
    if isinstance(before, dict):
        return {k: ratios(before[k], after[k]) for k in before if k in after
                and isinstance(before[k], (dict, list))}
    if isinstance(before, list) and len(before) == 2:
        return [round(b / max(a, 1e-6), 2) for b, a in zip(before, after, strict=True)]
    return None


def main() -> None:
    """Measure everything once and print the figures, the last line one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=8, help="20-stone scattered positions")
    ap.add_argument("--perft-reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the compile probe")
    ap.add_argument("--before", help="another checkout's python, measured alternately")
    ap.add_argument("--section", choices=sorted(SECTIONS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.section:
        print(json.dumps(SECTIONS[args.section](args)))
        return
    figures: dict = {"machine_load_1min": round(os.getloadavg()[0], 2)}
    if not args.quick:
        figures["jit"] = compile_cost()
        print("jit", json.dumps(figures["jit"]), flush=True)
    for name in SECTIONS:
        row = {}
        if args.before:
            row["before"] = run_section(args.before, name, args)
        row["after"] = run_section(sys.executable, name, args)
        if args.before:
            row["ratio_before_over_after"] = ratios(row["before"], row["after"])
        figures[name] = row
        print(name, json.dumps(row), flush=True)
    figures["machine_load_1min_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
