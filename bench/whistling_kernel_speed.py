"""The compiled Whistling kernel (envs/whistling/kernel.py) against the reference rules, in one
run: perft from the start, legal count + apply + evaluation on played positions, and the
worst maximum-capture positions (one stone among 16-20 scattered enemy stones, issue 44:
"Whistling's worst 20-stone positions at least as fast as today"); and the JIT's one-time
compile cost (a fresh process with an empty numba cache) and the cached load.

Usage: python bench/whistling_kernel_speed.py [--positions 2000] [--seeds 8] [--quick]
Every figure is measured here, reference and kernel alternating on the same machine, as wall
seconds (``time.perf_counter``) and CPU seconds of this process (``time.process_time``); on
a loaded machine compare the CPU figures and the ratios. The reference's layered search
expands with two threads, so its wall time can be below its CPU time. The last line printed
is one JSON object with every figure.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from whistling_chains import ISSUE, scattered  # noqa: E402

from boardzoo.envs.whistling import kernel as K  # noqa: E402
from boardzoo.envs.whistling.evaluation import whistling_eval  # noqa: E402
from boardzoo.envs.whistling.rules import START_TEXT, State  # noqa: E402

#: What the compile probe runs: every public kernel function once, timed from the import.
_COMPILE_PROBE = """
import time
t0, c0 = time.perf_counter(), time.process_time()
from boardzoo.envs.whistling import kernel as K
from boardzoo.envs.whistling.rules import State
s = State.start()
x, o = K.words(s.stones[0]), K.words(s.stones[1])
out = K.np.empty(K.NUM_ACTIONS, K.np.int64)
K.legal_count(x, o, 0, 0, False, K.COUNT_MEMO_NODES); K.legal_actions(x, o, 0, 0, -1, -1, out)
K.apply_hop(x, o, 0, 0, -1, -1, int(out[0])); K.legal_turns(x, o, 0, 0); K.result(x, o, 0, 0)
K.evaluate(x, o, 0, 0); K.perft_words(x, o, 0, 0, 2)
K.apply_turn(x, o, 0, 0, K.np.array([0, 1], K.np.int64))
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def clock() -> tuple[float, float]:
    """Return (wall, CPU) seconds now."""
    return time.perf_counter(), time.process_time()


def since(t: tuple[float, float]) -> tuple[float, float]:
    """Return the (wall, CPU) seconds since ``t``."""
    return time.perf_counter() - t[0], time.process_time() - t[1]


def compile_cost() -> dict:
    """Return the wall and CPU seconds from import to every public function answered in a
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


def perft_rates(reps: int) -> dict:
    """Return perft leaves per second from the start at depths 1 and 2, both engines."""
    out = {}
    start = State.from_text(START_TEXT)
    x, o = K.words(start.stones[0]), K.words(start.stones[1])
    K.perft_words(x, o, 0, 0, 1)  # compiled (or loaded) before timing
    for depth, n in ((1, reps * 50), (2, reps)):
        t = clock()
        for _ in range(n):
            leaves = State.from_text(START_TEXT).perft(depth)
        ref = since(t)
        t = clock()
        for _ in range(n):
            got, status = K.perft_words(x, o, 0, 0, depth)
        ker = since(t)
        assert int(got) == leaves and status == K.OK, (depth, got, leaves)
        out[f"depth{depth}"] = {
            "leaves": leaves, "runs": n,
            "reference_leaves_per_s": round(leaves * n / ref[0]),
            "kernel_leaves_per_s": round(leaves * n / ker[0]),
            "ratio_wall": round(ref[0] / ker[0], 1), "ratio_cpu": round(ref[1] / ker[1], 1)}
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


def count_apply_eval(positions: list[State]) -> dict:
    """Return positions per second of legal count + one turn applied + the child's
    evaluation, both engines (a fresh reference State each time: nothing cached)."""
    rows = []
    for s in positions:
        turn = s.legal_moves()[0]
        rows.append((s.stones[0], s.stones[1], s.side, s.quiet, turn,
                     K.words(s.stones[0]), K.words(s.stones[1]),
                     np.array(turn.path, np.int64)))
    _, _, side, quiet, _, wx, wo, path = rows[0]  # load every function before timing
    K.evaluate(*K.apply_turn(wx, wo, side, quiet, path))
    K.legal_count(wx, wo, side, quiet, False, K.COUNT_MEMO_NODES)
    t = clock()
    ref_values = []
    for x, o, side, quiet, turn, *_ in rows:
        state = State(x, o, side, quiet)
        state.legal_count()
        ref_values.append(whistling_eval(state.play(turn)))
    ref = since(t)
    t = clock()
    ker_values = []
    for _, _, side, quiet, _, wx, wo, path in rows:
        K.legal_count(wx, wo, side, quiet, False, K.COUNT_MEMO_NODES)
        a, b, s2, q2 = K.apply_turn(wx, wo, side, quiet, path)
        ker_values.append(K.evaluate(a, b, s2, q2)[0])
    ker = since(t)
    assert ref_values == ker_values
    n = len(rows)
    return {"positions": n, "reference_per_s": round(n / ref[0]),
            "kernel_per_s": round(n / ker[0]), "ratio_wall": round(ref[0] / ker[0], 1),
            "ratio_cpu": round(ref[1] / ker[1], 1)}


def worst_positions(seeds: int) -> dict:
    """Return the legal count's time on the issue's 16-stone position and on ``seeds`` seeded
    positions of one stone among 20 scattered enemy stones, both engines."""
    rows = []
    K.legal_count(K.words(1), K.words(2), 0, 0, False, K.COUNT_MEMO_NODES)  # loaded first
    for name, text in [("issue", ISSUE)] + [(f"seed{s}", scattered(s, 20)) for s in range(seeds)]:
        state = State.from_text(text)
        wx, wo = K.words(state.stones[0]), K.words(state.stones[1])
        t = clock()
        try:
            ref_count = State.from_text(text).legal_count()
        except Exception as e:  # the reference refuses past its memory bound
            ref_count = f"refused: {type(e).__name__}"
        ref = since(t)
        t = clock()
        _, got, status = K.legal_count(wx, wo, state.side, state.quiet, False,
                                       K.COUNT_MEMO_NODES)
        ker = since(t)
        if status != K.OK:
            got = f"kernel status {status}"
        else:
            got = int(got)
            assert isinstance(ref_count, str) or got == ref_count, (name, got, ref_count)
        rows.append({"position": name, "count": got, "reference_wall_s": round(ref[0], 3),
                     "reference_cpu_s": round(ref[1], 3), "kernel_wall_s": round(ker[0], 3),
                     "kernel_cpu_s": round(ker[1], 3),
                     "ratio_wall": round(ref[0] / max(ker[0], 1e-6), 2)})
        print(json.dumps(rows[-1]), flush=True)
    return {"rows": rows,
            "reference_wall_total_s": round(sum(r["reference_wall_s"] for r in rows), 2),
            "kernel_wall_total_s": round(sum(r["kernel_wall_s"] for r in rows), 2),
            "worst_ratio_wall": min(r["ratio_wall"] for r in rows)}


def main() -> None:
    """Measure everything once and print the figures, the last line one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=8, help="20-stone scattered positions")
    ap.add_argument("--perft-reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the compile probe")
    args = ap.parse_args()
    figures: dict = {"machine_load_1min": round(os.getloadavg()[0], 2)}
    if not args.quick:
        figures["jit"] = compile_cost()
        print("jit", json.dumps(figures["jit"]), flush=True)
    figures["perft"] = perft_rates(args.perft_reps)
    print("perft", json.dumps(figures["perft"]), flush=True)
    figures["count_apply_eval"] = count_apply_eval(played_positions(args.positions, 7))
    print("count_apply_eval", json.dumps(figures["count_apply_eval"]), flush=True)
    figures["worst"] = worst_positions(args.seeds)
    figures["machine_load_1min_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
