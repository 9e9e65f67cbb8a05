"""Differential test of a batched engine against the reference rules, at scale.

Usage: python bench/batched_diff.py --game loa [--positions 20000] [--games 64]
       [--device cpu] [--seed 0] [--chunk 4096]
Positions come from seeded random reference games plus every ``position`` found in the
shared test vectors (edge cases). For each, the batched ``legal_mask``, ``observation``
and ``step`` with a random legal action must equal the reference ActionGame's mask,
observation and next state (position text, side to move, outcome, legal actions and any
``history``). Then ``--games`` whole games run in lockstep, batched ``step`` against
reference, compared after every step. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardzoo.envs.core.registry import action_game, batched_game, state_class

SHARED = Path(os.environ.get("BOARDZOO_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def signature(actions: Any, state: Any) -> tuple:
    """Return what two engines must agree on for one action state."""
    game = actions.game_state(state)
    return (game.to_text(), actions.to_move(state), game.is_terminal(), game.winner(),
            tuple(actions.legal_actions(state)), getattr(game, "history", None))


def vector_positions(game: str, actions: Any) -> list[Any]:
    """Return the action states of every parsable ``position`` text in the game's vectors."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key.startswith("position") and isinstance(value, str):
                    found.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((SHARED / "vectors" / game).glob("*.json")):
        walk(json.loads(path.read_text()))
    cls, out = state_class(game), []
    for text in dict.fromkeys(found):
        try:
            out.append(actions.from_game_state(cls.from_text(text)))
        except ValueError:  # not a position of this game (e.g. a notation sample)
            pass
    return out


def random_positions(actions: Any, count: int, rng: random.Random) -> list[Any]:
    """Return ``count`` action states met in random reference games, final ones included."""
    out: list[Any] = []
    while len(out) < count:
        state = actions.initial_state()
        out.append(state)
        while not actions.is_terminal(state) and len(out) < count:
            state, _ = actions.apply_action(state, rng.choice(actions.legal_actions(state)))
            out.append(state)
    return out


def check_positions(engine: Any, actions: Any, states: list[Any], rng: random.Random,
                    report: list[str]) -> int:
    """Compare masks, observations and one step for ``states``; return the mismatch count."""
    batch = engine.from_states(states)
    mask = engine.legal_mask(batch).cpu().numpy()
    obs = engine.observation(batch).cpu().numpy()
    moves = [rng.choice(actions.legal_actions(s)) if not actions.is_terminal(s) else 0
             for s in states]
    after = engine.step(batch, torch.tensor(moves, device=engine.device))
    got = engine.to_states(after)
    over = engine.terminated(after).cpu().tolist()
    returns = engine.returns(after).cpu().tolist()
    bad = 0
    for i, (state, move) in enumerate(zip(states, moves, strict=True)):
        nxt = state if actions.is_terminal(state) else actions.apply_action(state, move)[0]
        problems = []
        if not np.array_equal(mask[i], actions.action_mask(state).astype(bool)):
            problems.append("mask")
        if not np.array_equal(obs[i], actions.observation(state, actions.to_move(state))):
            problems.append("observation")
        if signature(actions, got[i]) != signature(actions, nxt):
            problems.append(f"step {move}")
        if over[i] != actions.is_terminal(nxt) or tuple(returns[i]) != actions.returns(nxt):
            problems.append(f"outcome after {move}")
        if problems:
            bad += 1
            if len(report) < 10:
                report.append(f"{actions.game_state(state).to_text()}: {', '.join(problems)}")
    return bad


def check_games(engine: Any, actions: Any, games: int, rng: random.Random,
                report: list[str]) -> tuple[int, int]:
    """Play ``games`` random games in lockstep; return (steps compared, mismatching steps)."""
    batch, states = engine.initial(games), [actions.initial_state()] * games
    steps = bad = 0
    while not all(actions.is_terminal(s) for s in states):
        moves = [rng.choice(actions.legal_actions(s)) if not actions.is_terminal(s) else 0
                 for s in states]
        batch = engine.step_inplace(batch, torch.tensor(moves, device=engine.device))
        states = [s if actions.is_terminal(s) else actions.apply_action(s, m)[0]
                  for s, m in zip(states, moves, strict=True)]
        got = [signature(actions, s) for s in engine.to_states(batch)]
        wrong = sum(g != signature(actions, s) for g, s in zip(got, states, strict=True))
        steps, bad = steps + 1, bad + (wrong > 0)
        if wrong and len(report) < 10:
            report.append(f"lockstep game step {steps}: {wrong} game(s) differ")
    return steps, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--positions", type=int, default=20000)
    parser.add_argument("--games", type=int, default=64, help="whole games in lockstep")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=4096, help="positions per batch")
    args = parser.parse_args()
    started = time.perf_counter()
    engine, actions = batched_game(args.game, args.device), action_game(args.game)
    rng = random.Random(args.seed)
    edge = vector_positions(args.game, actions)
    states = edge + random_positions(actions, args.positions, rng)
    report: list[str] = []
    mismatches = 0
    for lo in range(0, len(states), args.chunk):
        mismatches += check_positions(engine, actions, states[lo:lo + args.chunk], rng, report)
    steps, bad_steps = check_games(engine, actions, args.games, rng, report)
    for line in report:
        print(line, file=sys.stderr)
    print(json.dumps({
        "game": args.game, "positions": len(states), "vector_positions": len(edge),
        "mismatches": mismatches, "lockstep_games": args.games, "lockstep_steps": steps,
        "lockstep_mismatching_steps": bad_steps, "device": args.device,
        "seconds": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
