"""Python against compiled for one game, in one run: perft leaves/s from the start (the
protocol's Python recursion over ``State``, one position object per node, against the kernel's
perft), alpha-beta nodes/s from the start (agents/alphabeta.py's Python search against the
compiled one; best moves, scores and node counts must agree) and the JIT's one-time compile
cost (docs/compiled.md). Both sides now run on the compiled rules (``State`` asks the kernel),
so "old" measures what Python costs around them; docs/compiled.md keeps the figures measured
against the Python rules engine that the kernel replaced.

Usage: python bench/compiled_speed.py --game loa [--perft-depth 3] [--ab-depths 3,4]
The last line printed is one JSON object with every figure. Old and new take turns, round by
round, so a change in the machine's load hits both alike; read the ratios.
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
from collections.abc import Callable

from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.envs.loa.rules import State

ROUNDS = 3
MIN_SECONDS = 0.3  # per measurement and round: repeat a fast call until it takes this long

_COMPILE = """
import time
import numba, boardzoo.agents.alphabeta  # not part of the compile
t = time.perf_counter()
import boardzoo.envs.loa.rules, boardzoo.agents.alphabeta_loa  # the kernel, the search
print(time.perf_counter() - t)
"""


def jit_seconds() -> tuple[float, float]:
    """Return seconds to import the compiled modules with an empty numba cache (the one-time
    compile) and then with that cache filled (every later process)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [float(subprocess.run([sys.executable, "-c", _COMPILE], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()[-1])
                for _ in range(2)]
    return runs[0], runs[1]


def rate(work: Callable[[], int]) -> float:
    """Return units of work per second of ``work()`` (which returns its units), repeated for
    at least :data:`MIN_SECONDS`."""
    units, start = 0, time.perf_counter()
    while True:
        units += work()
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_SECONDS:
            return units / elapsed


def python_perft(state: State, depth: int) -> int:
    """Count leaf move sequences by a Python recursion over ``State`` (an object per node)."""
    if depth <= 1:
        return len(state.legal_moves()) if depth == 1 else 1
    return sum(python_perft(state.apply(m, track_history=False), depth - 1)
               for m in state.legal_moves())


def perft_rates(depth: int) -> dict:
    """Return perft leaves/s from the start, old (:func:`python_perft`) and new (the kernel's
    perft), best round of each."""
    start = State.start()
    leaves = start.perft(depth)
    assert python_perft(start, depth) == leaves
    old, new = [], []
    for _ in range(ROUNDS):
        old.append(rate(lambda: python_perft(start, depth)))
        new.append(rate(lambda: start.perft(depth)))
    return {"depth": depth, "leaves": leaves, "old_leaves_per_s": round(max(old)),
            "new_leaves_per_s": round(max(new)), "speedup": round(max(new) / max(old), 1)}


def search(agent: AlphaBetaAgent, state: State) -> tuple[int, float, int, float]:
    """Return (best move, score, nodes, seconds) of one search by a fresh agent."""
    start = time.perf_counter()
    move = agent.select_move(state)
    return move, agent.last_value, agent.stats()["nodes"], time.perf_counter() - start


def alphabeta_rates(depth: int) -> dict:
    """Return alpha-beta nodes/s from the start at ``depth``, old (agents/alphabeta.py) and new
    (the compiled search), fresh agents, seed 0, best round of each, and whether best move,
    score and node count agree."""
    from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta

    state = State.start()
    old, new = [], []
    for _ in range(ROUNDS):
        old.append(search(AlphaBetaAgent("loa", depth=depth, seed=0), state))
        new.append(search(CompiledLoaAlphaBeta(depth=depth, seed=0), state))
    agree = all(o[:3] == n[:3] for o, n in zip(old, new, strict=True))
    move, score, nodes = old[0][:3]
    old_rate, new_rate = (nodes / min(r[3] for r in runs) for runs in (old, new))
    return {"depth": depth, "best_move": state.move_to_str(move), "score": score,
            "nodes": nodes, "agree": agree, "old_nodes_per_s": round(old_rate),
            "new_nodes_per_s": round(new_rate), "speedup": round(new_rate / old_rate, 1)}


def position_set_agreement(count: int, depth: int, seed: int = 0) -> str:
    """Return how many of ``count`` positions from seeded random games get the same best move,
    score and node count from both searches at ``depth``, as ``"k/count"``."""
    from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta

    rng = random.Random(seed)
    same = 0
    for i in range(count):
        state = State.start()
        for _ in range(rng.randint(0, 40)):
            if state.is_terminal():
                break
            state = state.apply(rng.choice(state.legal_moves()))
        if state.is_terminal():
            state = State.start()
        old = search(AlphaBetaAgent("loa", depth=depth, seed=i), state)
        new = search(CompiledLoaAlphaBeta(depth=depth, seed=i), state)
        same += old[:3] == new[:3]
    return f"{same}/{count}"


def main() -> None:
    """Measure and print every figure, the JSON object last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=["loa"], default="loa",
                        help="the game (only LOA has a compiled kernel so far)")
    parser.add_argument("--perft-depth", type=int, default=3)
    parser.add_argument("--ab-depths", default="3,4", help="alpha-beta depths, comma-separated")
    parser.add_argument("--positions", type=int, default=10,
                        help="positions of random games on which both searches must agree")
    args = parser.parse_args()
    compile_s, load_s = jit_seconds()
    print(f"JIT: {compile_s:.1f} s to compile once (empty cache), {load_s:.2f} s to load "
          "from the cache in a later process")
    figures: dict = {"game": args.game, "python": platform.python_version(),
                     "machine": platform.machine(), "cpus": os.cpu_count(),
                     "jit_compile_s": round(compile_s, 2), "jit_cached_load_s": round(load_s, 2)}
    figures["perft"] = perft_rates(args.perft_depth)
    p = figures["perft"]
    print(f"perft {p['depth']} from the start ({p['leaves']:,} leaves): old "
          f"{p['old_leaves_per_s']:,} leaves/s, new {p['new_leaves_per_s']:,} ({p['speedup']}x)")
    figures["alphabeta"] = []
    for depth in (int(d) for d in args.ab_depths.split(",")):
        a = alphabeta_rates(depth)
        figures["alphabeta"].append(a)
        print(f"alphabeta:{depth} from the start ({a['nodes']:,} nodes, best {a['best_move']}, "
              f"score {a['score']:.4g}, agree {a['agree']}): old {a['old_nodes_per_s']:,} "
              f"nodes/s, new {a['new_nodes_per_s']:,} ({a['speedup']}x)")
    figures["positions_agree_depth3"] = position_set_agreement(args.positions, 3)
    print(f"best move, score and nodes agree at depth 3 on "
          f"{figures['positions_agree_depth3']} positions of random games")
    print(json.dumps(figures))
    if not all(a["agree"] for a in figures["alphabeta"]) or \
            not figures["positions_agree_depth3"].startswith(f"{args.positions}/"):
        sys.exit("the compiled search disagrees with the Python search")


if __name__ == "__main__":
    main()
