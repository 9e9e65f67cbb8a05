"""Python against compiled for one game, in one run: perft leaves/s from the start, alpha-beta
nodes/s from the start (agents/alphabeta.py's Python search against the compiled one; best
moves, scores and node counts must agree), the JIT's one-time compile cost
(docs/compiled.md) and, for Ultima, midgame searches and the network's leaf search per
position; for Whistling, searches on positions of random games.

The rules of all three games are their compiled kernels (``State`` asks them), so "old"
perft measures what Python costs around them: the protocol's Python recursion over ``State``
(one position object per node) against the kernel's, and "old" search is the Python search
over ``State``; docs/compiled.md keeps the figures measured against the Python rules engines
that the kernels replaced. ``--before DIR`` adds the search of an older checkout (its own
``.venv``, e.g. the Python rules before the kernels), timed once in a subprocess in the same
run.

Usage: python bench/compiled_speed.py --game loa [--perft-depth 3] [--ab-depths 3,4]
       python bench/compiled_speed.py --game ultima [--perft-depth 3] [--ab-depths 2,3]
           [--leaf-positions 50]
       python bench/compiled_speed.py --game whistling [--perft-depth 2] [--ab-depths 2,3]
           [--before /path/to/old/checkout]
The last line printed is one JSON object with every figure. Old and new take turns, round by
round, so a change in the machine's load hits both alike; read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.envs.core.game import GameState

ROUNDS = 3
MIN_SECONDS = 0.3  # per measurement and round: repeat a fast call until it takes this long
MIDGAME_DEPTHS = (2, 3)  # Ultima's midgame searches (the reference takes seconds at depth 3)

_COMPILE = """
import time
import numba, boardzoo.agents.alphabeta{before}  # not part of the compile
t = time.perf_counter()
import {modules}
print(time.perf_counter() - t)
"""


@dataclass
class Game:
    """What the bench needs of one game: its rules, both searches and both perfts."""

    name: str
    state_cls: Any
    compiled: Callable[..., AlphaBetaAgent]
    #: Old and new perft of a position: depth -> count.
    old_perft: Callable[[GameState, int], int]
    new_perft: Callable[[GameState, int], int]
    #: What the JIT's timing imports first (not timed), and the compiled modules (timed).
    jit_before: str
    jit_modules: str


def python_perft(state: GameState, depth: int) -> int:
    """Count leaf move sequences by a Python recursion over ``State`` (an object per node;
    LOA's without its repetition history)."""
    if depth <= 1:
        return len(state.legal_moves()) if depth == 1 else 1
    if state.name == "loa":
        children = (state.apply(m, track_history=False) for m in state.legal_moves())  # type: ignore[call-arg]
    else:
        children = (state.apply(m) for m in state.legal_moves())
    return sum(python_perft(child, depth - 1) for child in children)


def whistling_python_perft(state: GameState, depth: int) -> int:
    """Count leaf turn sequences by a Python recursion over Whistling's ``State``."""
    if depth <= 1:
        return state.legal_count() if depth == 1 else 1  # type: ignore[attr-defined]
    return sum(whistling_python_perft(state.play(m), depth - 1)  # type: ignore[attr-defined]
               for m in state.legal_moves())


def load_game(name: str) -> Game:
    """Return the bench's view of ``name`` (imports its compiled modules)."""
    if name == "loa":
        from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta
        from boardzoo.envs.loa.rules import State as LoaState

        return Game("loa", LoaState, CompiledLoaAlphaBeta, python_perft,
                    lambda state, depth: state.perft(depth), "",
                    "boardzoo.envs.loa.rules, boardzoo.agents.alphabeta_loa")
    if name == "whistling":
        from boardzoo.agents.alphabeta_whistling import CompiledWhistlingAlphaBeta
        from boardzoo.envs.whistling.rules import State as WhistlingState

        return Game("whistling", WhistlingState, CompiledWhistlingAlphaBeta,
                    whistling_python_perft, lambda state, depth: state.perft(depth), "",
                    "boardzoo.envs.whistling.rules, boardzoo.agents.alphabeta_whistling")
    from boardzoo.agents.alphabeta_ultima import CompiledUltimaAlphaBeta
    from boardzoo.envs.ultima.rules import State as UltimaState

    return Game("ultima", UltimaState, CompiledUltimaAlphaBeta, python_perft,
                lambda state, depth: state.perft(depth), "",
                "boardzoo.envs.ultima.rules, boardzoo.agents.alphabeta_ultima")


def jit_seconds(game: Game) -> tuple[float, float]:
    """Return seconds to import the compiled modules with an empty numba cache (the one-time
    compile) and then with that cache filled (every later process)."""
    code = _COMPILE.format(before=game.jit_before, modules=game.jit_modules)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [float(subprocess.run([sys.executable, "-c", code], env=env, check=True,
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


def perft_rates(game: Game, depth: int) -> dict:
    """Return perft leaves/s from the start, old and new, best round of each."""
    start = game.state_cls.start()
    leaves = game.old_perft(start, depth)
    assert game.new_perft(start, depth) == leaves
    old, new = [], []
    for _ in range(ROUNDS):
        old.append(rate(lambda: game.old_perft(start, depth)))
        new.append(rate(lambda: game.new_perft(start, depth)))
    return {"depth": depth, "leaves": leaves, "old_leaves_per_s": round(max(old)),
            "new_leaves_per_s": round(max(new)), "speedup": round(max(new) / max(old), 1)}


def search(agent: AlphaBetaAgent, state: GameState) -> tuple[int, float, int, float]:
    """Return (best move, score, nodes, seconds) of one search by a fresh agent."""
    start = time.perf_counter()
    move = agent.select_move(state)
    return move, agent.last_value, agent.stats()["nodes"], time.perf_counter() - start


def alphabeta_rates(game: Game, depth: int, state: GameState | None = None,
                    rounds: int = ROUNDS) -> dict:
    """Return alpha-beta nodes/s at ``depth`` from ``state`` (the start by default), old
    (agents/alphabeta.py) and new (the compiled search), fresh agents, seed 0, best round of
    each, and whether best move, score and node count agree."""
    state = state or game.state_cls.start()
    old, new = [], []
    for _ in range(rounds):
        old.append(search(AlphaBetaAgent(game.name, depth=depth, seed=0), state))
        new.append(search(game.compiled(depth=depth, seed=0), state))
    agree = all(r[:3] == old[0][:3] for r in old + new)
    move, score, nodes = old[0][:3]
    old_rate, new_rate = (nodes / min(r[3] for r in runs) for runs in (old, new))
    return {"depth": depth, "best_move": state.move_to_str(move), "score": score,
            "nodes": nodes, "agree": agree, "old_nodes_per_s": round(old_rate),
            "new_nodes_per_s": round(new_rate), "speedup": round(new_rate / old_rate, 1)}


def random_states(game: Game, count: int, seed: int) -> list[GameState]:
    """Return ``count`` unfinished positions of seeded random games (0-40 plies)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = game.state_cls.start()
        for _ in range(rng.randint(0, 40)):
            if state.is_terminal():
                break
            state = state.apply(rng.choice(state.legal_moves()))
        out.append(game.state_cls.start() if state.is_terminal() else state)
    return out


def midgame_states(game: Game, count: int, seed: int) -> list[GameState]:
    """Return ``count`` unfinished positions at plies 16-64 of games between compiled
    ``alphabeta:1`` players after 6 random plies (captures made, pieces traded: what a
    network's search meets, unlike the crowded boards of random play)."""
    rng = random.Random(seed)
    out: list[GameState] = []
    while len(out) < count:
        players = [game.compiled(depth=1, seed=rng.randrange(1 << 30)) for _ in range(2)]
        state = game.state_cls.start()
        for ply in range(65):
            if state.is_terminal():
                break
            if ply >= 16 and ply % 8 == 0:
                out.append(state)
            move = (rng.choice(state.legal_moves()) if ply < 6
                    else players[state.to_move].select_move(state))
            state = state.apply(move)
    return out[:count]


def position_set_agreement(game: Game, states: list[GameState], depth: int) -> str:
    """Return how many of ``states`` get the same best move, score and node count from both
    searches at ``depth``, as ``"k/count"``."""
    same = 0
    for i, state in enumerate(states):
        old = search(AlphaBetaAgent(game.name, depth=depth, seed=i), state)
        new = search(game.compiled(depth=depth, seed=i), state)
        same += old[:3] == new[:3]
    return f"{same}/{len(states)}"


def midgame_rates(game: Game, states: list[GameState], depth: int) -> dict:
    """Return old and new nodes/s over ``states`` at ``depth`` (the reference once per
    position, it takes seconds; the compiled search best of three) and their agreement."""
    nodes, old_s, new_s, same = 0, 0.0, 0.0, 0
    for i, state in enumerate(states):
        old = search(AlphaBetaAgent(game.name, depth=depth, seed=i), state)
        new = [search(game.compiled(depth=depth, seed=i), state) for _ in range(ROUNDS)]
        nodes += old[2]
        old_s += old[3]
        new_s += min(n[3] for n in new)
        same += old[:3] == new[0][:3]
    return {"depth": depth, "positions": len(states), "nodes": nodes,
            "agree": f"{same}/{len(states)}", "old_nodes_per_s": round(nodes / old_s),
            "new_nodes_per_s": round(nodes / new_s), "speedup": round(old_s / new_s, 1)}


def leaf_search_times(states: list[GameState], depth: int) -> dict:
    """Return the network's leaf search (``LeafSearch(game, depth)``, one searcher for every
    position as in a game) per position: wall and CPU milliseconds, old and new; the values
    must be equal."""
    from boardzoo.training.search.leaf import LeafSearch

    new = LeafSearch("ultima", depth)
    old = LeafSearch("ultima", depth)
    old.searcher = AlphaBetaAgent("ultima", depth=depth)  # the reference, same table rules
    walls: dict[str, list[float]] = {"old": [], "new": []}
    cpus: dict[str, float] = {"old": 0.0, "new": 0.0}
    same = 0
    for state in states:
        values = {}
        for name, leaf in (("old", old), ("new", new)):
            wall, cpu = time.perf_counter(), time.process_time()
            values[name] = leaf(state)
            walls[name].append(1000 * (time.perf_counter() - wall))
            cpus[name] += 1000 * (time.process_time() - cpu)
        same += values["old"] == values["new"]
    n = len(states)
    out: dict = {"depth": depth, "positions": n, "values_equal": f"{same}/{n}"}
    for name in ("old", "new"):
        out[f"{name}_ms_mean"] = round(statistics.fmean(walls[name]), 3)
        out[f"{name}_ms_median"] = round(statistics.median(walls[name]), 3)
        out[f"{name}_ms_max"] = round(max(walls[name]), 3)
        out[f"{name}_cpu_ms_mean"] = round(cpus[name] / n, 3)
    out["speedup"] = round(out["old_ms_mean"] / out["new_ms_mean"], 1)
    # a network search of 100 simulations values about 100 leaves a move
    out["new_s_per_move_at_100_sims"] = round(out["new_ms_mean"] * 100 / 1000, 3)
    return out


_BEFORE = """
import json, time
from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.envs.{game}.rules import State
state = State.start()
agent = AlphaBetaAgent("{game}", depth={depth}, seed=0)
t = time.perf_counter()
move = agent.select_move(state)
print(json.dumps([state.move_to_str(move), agent.last_value, agent.stats()["nodes"],
                  time.perf_counter() - t]))
"""


def before_rate(checkout: str, game: str, depth: int) -> dict:
    """Return the search of an older checkout (its ``.venv``) at ``depth`` from the start,
    seed 0, timed once (its import and JIT load not counted)."""
    python = os.path.join(checkout, ".venv", "bin", "python")
    out = subprocess.run([python, "-c", _BEFORE.format(game=game, depth=depth)], check=True,
                         capture_output=True, text=True, cwd=checkout).stdout
    move, score, nodes, seconds = json.loads(out.split("\n")[-2])
    return {"depth": depth, "best_move": move, "score": score, "nodes": nodes,
            "nodes_per_s": round(nodes / seconds)}


def report_alphabeta(a: dict, where: str) -> None:
    """Print one alpha-beta figure."""
    print(f"alphabeta:{a['depth']} {where} ({a['nodes']:,} nodes, best {a['best_move']}, "
          f"score {a['score']:.4g}, agree {a['agree']}): old {a['old_nodes_per_s']:,} "
          f"nodes/s, new {a['new_nodes_per_s']:,} ({a['speedup']}x)")


def ultima_figures(game: Game, figures: dict, leaf_positions: int) -> bool:
    """Measure Ultima's midgame searches and leaf search into ``figures``; return whether
    every search agreed."""
    states = midgame_states(game, max(leaf_positions, 4), seed=1)
    figures["midgame"] = []
    for depth in MIDGAME_DEPTHS:
        m = midgame_rates(game, states[:4], depth)
        figures["midgame"].append(m)
        print(f"alphabeta:{depth} on {m['positions']} midgame positions ({m['nodes']:,} "
              f"nodes, agree {m['agree']}): old {m['old_nodes_per_s']:,} nodes/s, new "
              f"{m['new_nodes_per_s']:,} ({m['speedup']}x)")
    leaf = leaf_search_times(states[:leaf_positions], 2)
    figures["leaf_search"] = leaf
    print(f"LeafSearch('ultima', 2) on {leaf['positions']} midgame positions (values equal "
          f"{leaf['values_equal']}): old {leaf['old_ms_mean']} ms a position, new "
          f"{leaf['new_ms_mean']} ms (median {leaf['new_ms_median']}, max "
          f"{leaf['new_ms_max']}, CPU {leaf['new_cpu_ms_mean']}); 100 leaves: "
          f"{leaf['new_s_per_move_at_100_sims']} s a move")
    return (all(m["agree"] == f"{m['positions']}/{m['positions']}" for m in figures["midgame"])
            and leaf["values_equal"] == f"{leaf['positions']}/{leaf['positions']}")


def main() -> None:
    """Measure and print every figure, the JSON object last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=["loa", "ultima", "whistling"], default="loa",
                        help="a game with a compiled kernel and search")
    parser.add_argument("--perft-depth", type=int, default=None,
                        help="perft from the start (Whistling 2, the others 3)")
    parser.add_argument("--ab-depths", default=None,
                        help="alpha-beta depths from the start, comma-separated (LOA 3,4; "
                             "Ultima 2,3)")
    parser.add_argument("--positions", type=int, default=10,
                        help="positions of random games on which both searches must agree")
    parser.add_argument("--leaf-positions", type=int, default=50,
                        help="Ultima: midgame positions valued by the leaf search")
    parser.add_argument("--before", default=None,
                        help="an older checkout with its own .venv: its search from the start "
                             "at the deepest --ab-depths, timed once beside the others")
    args = parser.parse_args()
    ab_depths = args.ab_depths or ("3,4" if args.game == "loa" else "2,3")
    depths = [int(d) for d in ab_depths.split(",")]
    perft_depth = args.perft_depth or (2 if args.game == "whistling" else 3)
    game = load_game(args.game)
    compile_s, load_s = jit_seconds(game)
    print(f"JIT: {compile_s:.1f} s to compile once (empty cache), {load_s:.2f} s to load "
          "from the cache in a later process")
    figures: dict = {"game": args.game, "python": platform.python_version(),
                     "machine": platform.machine(), "cpus": os.cpu_count(),
                     "load_average": [round(x, 2) for x in os.getloadavg()],
                     "jit_compile_s": round(compile_s, 2), "jit_cached_load_s": round(load_s, 2)}
    figures["perft"] = perft_rates(game, perft_depth)
    p = figures["perft"]
    print(f"perft {p['depth']} from the start ({p['leaves']:,} leaves): old "
          f"{p['old_leaves_per_s']:,} leaves/s, new {p['new_leaves_per_s']:,} ({p['speedup']}x)")
    figures["alphabeta"] = []
    for depth in depths:
        a = alphabeta_rates(game, depth)
        figures["alphabeta"].append(a)
        report_alphabeta(a, "from the start")
    if args.before:
        b = before_rate(args.before, args.game, depths[-1])
        a = figures["alphabeta"][-1]
        b["agree"] = [b["best_move"], b["score"], b["nodes"]] == [
            a["best_move"], a["score"], a["nodes"]]
        b["new_speedup"] = round(a["new_nodes_per_s"] / b["nodes_per_s"], 1)
        figures["before"] = b
        print(f"alphabeta:{b['depth']} from the start in {args.before} ({b['nodes']:,} nodes, "
              f"agree {b['agree']}): {b['nodes_per_s']:,} nodes/s; new {b['new_speedup']}x")
    # Ultima's reference takes seconds a position at depth 3: depth 2 on random positions
    agree_depth = 3 if args.game == "loa" else 2
    key = f"positions_agree_depth{agree_depth}"
    figures[key] = position_set_agreement(
        game, random_states(game, args.positions, seed=0), agree_depth)
    print(f"best move, score and nodes agree at depth {agree_depth} on {figures[key]} "
          "positions of random games")
    agree = (all(a["agree"] for a in figures["alphabeta"])
             and figures[key] == f"{args.positions}/{args.positions}")
    if args.game == "ultima":
        agree = ultima_figures(game, figures, args.leaf_positions) and agree
    if args.game == "whistling":
        states = random_states(game, 4, seed=1)
        figures["positions"] = [midgame_rates(game, states, depth) for depth in depths]
        for m in figures["positions"]:
            print(f"alphabeta:{m['depth']} on {m['positions']} positions of random games "
                  f"({m['nodes']:,} nodes, agree {m['agree']}): old {m['old_nodes_per_s']:,} "
                  f"nodes/s, new {m['new_nodes_per_s']:,} ({m['speedup']}x)")
            agree = agree and m["agree"] == f"{m['positions']}/{m['positions']}"
    print(json.dumps(figures))
    if not agree:
        sys.exit("the compiled search disagrees with the Python search")


if __name__ == "__main__":
    main()
