"""Random-play AEC steps/s of every boardzoo env next to PettingZoo's chess_v6 and
connect_four_v3 in the same run, plus perft leaves/s of each boardzoo rules engine.

Usage: python bench/env_steps.py [--seconds 3] [--policy mask|legal] [--before OLD_CHECKOUT]
Each env runs with PettingZoo's standard wrappers (``env()``, as a user gets it) and each
boardzoo env also without them (``raw_env()``, "raw": the env's own cost). The random policy
draws from the indices of ``obs["action_mask"]`` (``--policy mask``, the default) or from the
env's ``legal_actions()`` where it has one (``--policy legal``: the same draws, so the same
games, without scanning the mask; PettingZoo's envs keep the mask). The mask is read as
``np.flatnonzero(mask.view(bool))``: numpy finds the ones of a bool array about ten times
faster than those of the int8 mask PettingZoo's convention gives (32 against 365 us for
Whistling's 39,720 actions on this machine), a cost of the policy, not of the env. The last
line printed is one JSON object with every figure.

``--before DIR`` (repeatable) also runs this script on each older checkout's boardzoo (its
``.venv``), taking turns with this one for ``--repeats`` rounds, and adds ``vs``: this
checkout's raw steps/s and ratios to chess_v6 over each older one's, per run pair.

Needs the ``dev`` extra (``pip install -e ".[dev]"``): PettingZoo's chess_v6 imports ``chess``
(python-chess) and connect_four_v3 imports pygame (docs/performance.md).
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from boardzoo.envs.core.registry import GAMES, UnknownGameError, load_state

PEERS = {"chess_v6": "pettingzoo.classic.chess_v6",
         "connect_four_v3": "pettingzoo.classic.connect_four_v3"}
ROUNDS = 3
PERFT_DEPTH = {"loa": 4, "ultima": 3, "whistling": 2}


def random_play(make_env, seconds: float, seed: int = 0,
                policy: str = "mask") -> tuple[int, int | None, float]:
    """Play uniformly random legal actions through the AEC API for ``seconds``, drawn from the
    mask's legal indices, or from ``legal_actions()`` with ``policy="legal"`` where the env has it.

    Returns (AEC steps, whole turns or None if the env does not count them, elapsed seconds).
    """
    rng = np.random.default_rng(seed)
    env = make_env()
    counts_turns = hasattr(env.unwrapped, "turns_played")
    listed = policy == "legal" and hasattr(env, "legal_actions")
    steps, turns, started = 0, 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        if counts_turns:
            turns += env.unwrapped.turns_played
        env.reset(seed=int(rng.integers(1 << 31)))
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            elif listed:  # the same list, ascending, as the mask's indices
                action = int(rng.choice(env.legal_actions()))
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"].view(bool))))
            env.step(action)
            steps += 1
            if agent is not None and time.perf_counter() - started >= seconds:
                break
    elapsed = time.perf_counter() - started
    if counts_turns:
        turns += env.unwrapped.turns_played
    env.close()
    return steps, (turns if counts_turns else None), elapsed


def compare(args: argparse.Namespace) -> None:
    """Run this script on this checkout and each ``--before`` checkout in turns; print
    every run's figures and this checkout's ratios to the older ones'."""
    here = str(Path(__file__).resolve())
    own = ["--seconds", str(args.seconds), "--policy", args.policy]
    checkouts = [("now", sys.executable)] + [
        (old, str(Path(old) / ".venv" / "bin" / "python")) for old in args.before]
    runs: dict[str, list[dict]] = {name: [] for name, _ in checkouts}
    for round_ in range(args.repeats):
        order = checkouts if round_ % 2 == 0 else checkouts[::-1]
        for name, python in order:
            out = subprocess.run([python, here, *own], capture_output=True, text=True,
                                 cwd="/", check=True).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
            raw = runs[name][-1]["raw_steps_per_second"]
            print(f"round {round_ + 1}, {name}: raw steps/s {raw}", flush=True)
    vs: dict[str, dict] = {}
    for old, _ in checkouts[1:]:
        vs[old] = {}
        for key in ("raw_steps_per_second", "ratio_to_chess_v6"):
            vs[old][key] = {
                env: [round(new[key][env] / before[key][env], 2)
                      for new, before in zip(runs["now"], runs[old], strict=True)
                      if env in before[key]]
                for env in runs["now"][0][key] if env.split("_v")[0] in GAMES}
    print(json.dumps({"policy": args.policy, "runs": runs, "vs": vs}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per env")
    parser.add_argument("--policy", choices=("mask", "legal"), default="mask",
                        help="draw from the mask's indices or from legal_actions()")
    parser.add_argument("--before", action="append", default=[], metavar="OLD_CHECKOUT",
                        help="also run on an older checkout's .venv, in turns with this one")
    parser.add_argument("--repeats", type=int, default=2, help="rounds with --before")
    args = parser.parse_args()
    if args.before:
        compare(args)
        return
    figures: dict[str, Any] = {"policy": args.policy, "steps_per_second": {},
                               "turns_per_second": {},
                                "raw_steps_per_second": {}, "perft_leaves_per_second": {}}
    envs, raw = {}, {}
    for game in GAMES:
        try:
            module = importlib.import_module(f"boardzoo.envs.{game}_v0")
        except (ModuleNotFoundError, UnknownGameError):
            print(f"{game}: not available, skipped")
            continue
        envs[f"{game}_v0"], raw[f"{game}_v0 raw"] = module.env, module.raw_env
    for name, module in PEERS.items():
        envs[name] = importlib.import_module(module).env
    envs.update(raw)
    # Envs take turns in short slices, so a change in machine load hits all of them alike.
    totals = {name: [0, 0, 0.0] for name in envs}
    for round_ in range(ROUNDS):
        for name, make_env in envs.items():
            steps, turns, elapsed = random_play(make_env, args.seconds / ROUNDS, round_,
                                                args.policy)
            totals[name][0] += steps
            totals[name][1] = None if turns is None else totals[name][1] + turns
            totals[name][2] += elapsed
    for name, (steps, turns, elapsed) in totals.items():
        rate = steps / elapsed
        if name in raw:
            figures["raw_steps_per_second"][name.split()[0]] = round(rate, 1)
            print(f"{name:>16}: {rate:10,.0f} random-play AEC steps/s without the wrappers")
            continue
        figures["steps_per_second"][name] = round(rate, 1)
        line = f"{name:>16}: {rate:10,.0f} random-play AEC steps/s"
        if turns is not None:
            figures["turns_per_second"][name] = round(turns / elapsed, 1)
            line += f" ({turns / elapsed:,.0f} whole turns/s)"
        print(line)
    chess = figures["steps_per_second"]["chess_v6"]
    figures["ratio_to_chess_v6"] = {
        name: round(rate / chess, 2) for name, rate in figures["steps_per_second"].items()
    }
    for game in GAMES:
        if f"{game}_v0" not in envs:
            continue
        state, depth = load_state(game), PERFT_DEPTH[game]
        started = time.perf_counter()
        leaves = state.perft(depth)
        seconds = time.perf_counter() - started
        figures["perft_leaves_per_second"][game] = round(leaves / seconds, 1)
        figures.setdefault("perft", {})[game] = {"depth": depth, "leaves": leaves,
                                                 "seconds": round(seconds, 3)}
        print(f"{game:>16}: perft({depth}) = {leaves} in {seconds:.2f} s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
