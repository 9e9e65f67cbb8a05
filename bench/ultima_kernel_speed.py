"""Ultima's compiled kernel (envs/ultima/kernel.py) against the reference rules, in one run.

* perft leaves/s from the start position at depths 2 and 3: ``State.perft`` against the
  kernel's ``perft`` (both judge every node, repetition history included);
* movegen + apply + eval per second on played positions: for each position its legal
  moves, every move applied and every child evaluated (one depth-1 search step), counted
  in children; the reference through ``State`` and ``ultima_eval``, the kernel both called
  from a Python loop and from a compiled loop (what a compiled search gets);
* the JIT's one-time compile cost: a fresh process with an empty numba cache makes the
  first calls (legal moves, apply, evaluation, action prior, perft), then a second process
  loads the same functions from that cache.

Usage: python bench/ultima_kernel_speed.py [--positions 200] [--seconds 2]
The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

from boardzoo.envs.ultima import START_TEXT, State, kernel
from boardzoo.envs.ultima.evaluation import ultima_eval

# The first calls of every entry point a consumer needs, timed in a fresh process.
FIRST_CALLS = """
import time
wall, cpu = time.perf_counter(), time.process_time()
from boardzoo.envs.ultima import State, kernel
state = State.start()
board = kernel.board_of(state)
moves, caps, _ = kernel.legal(board, 0, 0, 0, 1)
kernel.apply(board, int(moves[0]), int(caps[0]))
kernel.child_key(int(kernel.history_of(state)[-1]), board, int(moves[0]), int(caps[0]))
kernel.evaluate(board, 0)
kernel.action_prior(board, 0)
kernel.perft_state(state, 2)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def first_call_cost(cache_dir: str) -> tuple[float, float]:
    """Return (wall, CPU) seconds of :data:`FIRST_CALLS` in a fresh process using
    ``cache_dir`` as numba's cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALLS], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[-2]), float(out[-1])


def best_rate(work, count: int, seconds: float) -> float:
    """Return ``count`` divided by the fastest of repeated calls of ``work`` (at least three,
    for at least ``seconds`` in all)."""
    best = float("inf")
    started = time.perf_counter()
    rounds = 0
    while rounds < 3 or time.perf_counter() - started < seconds:
        t = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t)
        rounds += 1
    return count / best


def played_states(count: int, seed: int) -> list[State]:
    """Return ``count`` non-terminal positions from seeded random games (every 5th ply)."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        state = State.start()
        for ply in range(200):
            if state.is_terminal():
                break
            if ply % 5 == 4:
                out.append(state)
            state = state.apply(rng.choice(state.legal_moves()))
    return out[:count]


def reference_step(states: list[State]) -> int:
    """Run the depth-1 step on the reference: fresh states, so nothing is cached."""
    children = 0
    for s in states:
        state = State(s.board, s.side, s.halfmove, s.fullmove)
        for move in state.legal_moves():
            ultima_eval(state.apply(move))
            children += 1
    return children


def kernel_step(boards: np.ndarray, sides: np.ndarray) -> int:
    """Run the depth-1 step on the kernel from a Python loop."""
    moves = np.empty(kernel.MAX_MOVES, np.int64)
    caps = np.empty(kernel.MAX_MOVES, np.int64)
    scratch_moves = np.empty(kernel.MAX_MOVES, np.int64)
    scratch_caps = np.empty(kernel.MAX_MOVES, np.int64)
    child = np.empty(64, np.uint8)
    children = 0
    for b, side in zip(boards, sides, strict=True):
        n = kernel.legal_moves(b, int(kernel.COLOUR[side]), moves, caps)
        for i in range(n):
            kernel.make_move(b, moves[i], caps[i], child)
            kernel.evaluate_into(child, 1 - side, scratch_moves, scratch_caps)
            children += 1
    return children


@njit
def compiled_step(boards: np.ndarray, sides: np.ndarray) -> float:
    """Run the depth-1 step on the kernel inside one compiled loop; return the values' sum."""
    moves = np.empty(kernel.MAX_MOVES, np.int64)
    caps = np.empty(kernel.MAX_MOVES, np.int64)
    scratch_moves = np.empty(kernel.MAX_MOVES, np.int64)
    scratch_caps = np.empty(kernel.MAX_MOVES, np.int64)
    child = np.empty(64, np.uint8)
    total = 0.0
    for k in range(len(boards)):
        side = sides[k]
        n = kernel.legal_moves(boards[k], kernel.COLOUR[side], moves, caps)
        for i in range(n):
            kernel.make_move(boards[k], moves[i], caps[i], child)
            total += kernel.evaluate_into(child, 1 - side, scratch_moves, scratch_caps)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=200, help="played positions")
    parser.add_argument("--seconds", type=float, default=2.0, help="least time per figure")
    args = parser.parse_args()
    figures: dict = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                     "numba": __import__("numba").__version__}

    with tempfile.TemporaryDirectory() as cache:
        wall, cpu = first_call_cost(cache)
        load_wall, load_cpu = first_call_cost(cache)
    figures["jit_first_calls_empty_cache_s"] = {"wall": round(wall, 2), "cpu": round(cpu, 2)}
    figures["jit_first_calls_cached_s"] = {"wall": round(load_wall, 2),
                                           "cpu": round(load_cpu, 2)}
    print(f"first calls, empty numba cache: {wall:.1f} s wall, {cpu:.1f} s CPU; "
          f"from the cache: {load_wall:.2f} s wall")

    start = State.from_text(START_TEXT)
    kernel.perft(START_TEXT, 2)  # load the compiled code before timing
    figures["perft_leaves_per_second"] = {}
    for depth in (2, 3):
        leaves = start.perft(depth)
        assert kernel.perft(START_TEXT, depth) == leaves
        ref = best_rate(lambda d=depth: State.from_text(START_TEXT).perft(d), leaves,
                        args.seconds)
        fast = best_rate(lambda d=depth: kernel.perft(START_TEXT, d), leaves, args.seconds)
        figures["perft_leaves_per_second"][str(depth)] = {
            "leaves": leaves, "reference": round(ref), "kernel": round(fast),
            "ratio": round(fast / ref, 1)}
        print(f"perft {depth} ({leaves} leaves): reference {ref:,.0f}/s, kernel {fast:,.0f}/s,"
              f" {fast / ref:.0f}x")

    states = played_states(args.positions, seed=7)
    boards = np.stack([kernel.board_of(s) for s in states])
    sides = np.array([s.side for s in states], dtype=np.int64)
    children = reference_step(states)
    assert kernel_step(boards, sides) == children
    compiled_step(boards, sides)  # compile the bench's own loop before timing
    ref = best_rate(lambda: reference_step(states), children, args.seconds)
    calls = best_rate(lambda: kernel_step(boards, sides), children, args.seconds)
    loop = best_rate(lambda: compiled_step(boards, sides), children, args.seconds)
    figures["movegen_apply_eval_per_second"] = {
        "positions": len(states), "children": children, "reference": round(ref),
        "kernel_python_loop": round(calls), "kernel_compiled_loop": round(loop),
        "ratio_python_loop": round(calls / ref, 1), "ratio_compiled_loop": round(loop / ref, 1)}
    print(f"movegen+apply+eval, {len(states)} played positions, {children} children: "
          f"reference {ref:,.0f}/s, kernel from Python {calls:,.0f}/s ({calls / ref:.0f}x), "
          f"kernel compiled loop {loop:,.0f}/s ({loop / ref:.0f}x)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
