"""Seconds per move of an agent in a user's plain script against the CLI's setting, for one
or more installs of boardzoo side by side (issue 45: a script that built ``checkpoint:loa``
ran 53x slower than the CLI, which sets one torch thread).

    python bench/script_speed.py --python /work/wt-before/.venv/bin/python \
        --python .venv/bin/python --agent checkpoint:loa --moves 8

For each ``--python`` it runs two child processes, alternating: ``script`` builds
``make_agent(AGENT, GAME, 1)`` and times ``select_move`` over ``--moves`` positions (the
same positions every time: random plies from the start, seeded) with torch's default
threads, as a user's script would; ``cli`` first sets one thread as ``boardzoo play`` and
``tournament`` do. Each child also reports torch's thread count before and after its moves
(a library call must give the caller's setting back). The last line printed is one JSON
object: per install and mode the mean seconds per move and the thread counts, and the
ratio script / cli. ``--agent batched:N`` times ``BatchedEnv(GAME, N).step`` with random
actions instead (``--moves`` steps; ``s_per_move`` is then seconds per step).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, random, sys, time
mode, agent_spec, game, moves = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if mode == "cli":
    try:
        from boardzoo.envs.core.threads import one_torch_thread
    except ImportError:
        from boardzoo.agents.threads import one_torch_thread
    one_torch_thread()
import torch
if agent_spec.startswith("batched:"):  # BatchedEnv with random actions, the README's snippet
    from boardzoo.envs.core.batched import BatchedEnv
    env = BatchedEnv(game, int(agent_spec[8:]))
    env.reset(seed=0)
    before = torch.get_num_threads()
    env.step(env.random_actions())
    started = time.perf_counter()
    for _ in range(moves):
        env.step(env.random_actions())
    spent = time.perf_counter() - started
    print(json.dumps({"s_per_move": spent / moves, "steps_per_s": moves * env.num_envs / spent,
                      "threads_before": before, "threads_after": torch.get_num_threads()}))
    sys.exit(0)
from boardzoo.agents import make_agent
from boardzoo.envs.core.registry import load_state
agent = make_agent(agent_spec, game, 1)
rng = random.Random(7)
state, positions = load_state(game), []
while len(positions) < moves and not state.is_terminal():
    positions.append(state)
    state = state.apply(rng.choice(list(state.legal_moves())))
before = torch.get_num_threads()
agent.select_move(positions[0])  # warm-up: first-call costs are not the steady speed
started = time.perf_counter()
for s in positions:
    agent.select_move(s)
spent = time.perf_counter() - started
print(json.dumps({"s_per_move": spent / len(positions), "threads_before": before,
                  "threads_after": torch.get_num_threads()}))
"""


def run(python: str, mode: str, agent: str, game: str, moves: int) -> dict:
    """Run one child; return its JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([python, "-c", CHILD, mode, agent, game, str(moves)], env=env,
                         capture_output=True, text=True, check=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", action="append", required=True,
                   help="interpreter of an install (repeatable)")
    p.add_argument("--agent", default="checkpoint:loa")
    p.add_argument("--game", default="loa")
    p.add_argument("--moves", type=int, default=8)
    p.add_argument("--rounds", type=int, default=1, help="alternating repeats per install")
    args = p.parse_args(argv)
    results: dict[str, dict[str, list[dict]]] = {py: {"script": [], "cli": []}
                                                 for py in args.python}
    for _ in range(args.rounds):
        for py in args.python:
            for mode in ("script", "cli"):
                results[py][mode].append(run(py, mode, args.agent, args.game, args.moves))
                print(py, mode, results[py][mode][-1], flush=True)
    summary = {}
    for py, modes in results.items():
        mean = {m: sum(r["s_per_move"] for r in rs) / len(rs) for m, rs in modes.items()}
        summary[py] = {**{f"{m}_s_per_move": round(v, 4) for m, v in mean.items()},
                       "script_over_cli": round(mean["script"] / mean["cli"], 2),
                       "script_threads": [modes["script"][0]["threads_before"],
                                          modes["script"][0]["threads_after"]]}
    with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as f:
        load = f.read().split()[:3]
    print(json.dumps({"agent": args.agent, "game": args.game, "moves": args.moves,
                      "cpus": os.cpu_count(), "loadavg": load, "installs": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
