"""Sampled Ultima positions and what the rules say of each (tests/test_ultima_kernel.py).

The facts of the first 2,500 played positions and the first 2,500 placements, and a digest
of 50,000 of each, were recorded from the Python reference rules before the compiled kernel
replaced them (tests/data/ultima_facts.txt); the test asks the rules of today the same.
"""

from __future__ import annotations

import hashlib
import random

from boardzoo.envs.core.board8 import placement_text
from boardzoo.envs.core.game import PositionError
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.ultima import State


def facts(state: State) -> tuple:
    """Return what the rules say of a position: its text, outcome, check and frozen pieces,
    each legal move in order with its captures and the position after it, the evaluation's
    bits, the action prior (capturing moves and their values' bits), the winning move and the
    side to move's observation planes (a hash)."""
    spec = get_spec("ultima")
    children = tuple((m, tuple(sorted(state.captures(m))), state.apply(m).to_text())
                     for m in state.legal_moves())
    prior_moves, prior_values = spec.action_prior(state)
    obs = spec.actions.observation(state, state.to_move)
    return (state.to_text(), state.outcome(), state.result_code(), state.in_check(),
            state.frozen(), children, float.hex(spec.evaluate(state)),
            tuple(prior_moves.tolist()), prior_values.tobytes().hex(),
            spec.winning_move(state), hashlib.sha256(obs.tobytes()).hexdigest()[:16])


def fact_hash(state: State) -> str:
    """Return the first 8 hex digits of the sha256 of :func:`facts` (the recorded form)."""
    return hashlib.sha256(repr(facts(state)).encode()).hexdigest()[:8]


def played_positions(n: int, seed: int) -> list[State]:
    """Return ``n`` positions of seeded random games, each game with its own habits: a
    capture bias (capture-happy games thin the board to endgames of freezes and king hunts,
    capture-free ones reach the no-capture rule and the ply cap) and a back bias (taking the
    piece moved last but one back, so positions repeat). About a third of each game's
    positions are kept, and its last one always, so the sample spans many games."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < n:
        capture_bias = rng.choice((0.0, 0.0, 0.5, 0.9))
        back_bias = rng.choice((0.0, 0.3, 0.6))
        state, played = State.start(), []
        while len(out) < n:
            moves = state.legal_moves()
            if not moves:
                out.append(state)  # the finished game's last position
                break
            if rng.random() < 0.35:
                out.append(state)
            back = (played[-2] & 63) << 6 | played[-2] >> 6 if len(played) >= 2 else -1
            captures = [m for m in moves if state.captures(m)]
            if back in moves and rng.random() < back_bias:
                move = back
            elif captures and rng.random() < capture_bias:
                move = rng.choice(captures)
            else:
                move = rng.choice(moves)
            played.append(move)
            state = state.apply(move)
    return out[:n]


def placed_positions(n: int, seed: int) -> list[State]:
    """Return ``n`` random placements (from text, so valid: the side not to move is never in
    check): sparse ones of 2 to 24 pieces (checks, freezes, pincers, leaps, coordinator
    corners, bare kings) and crowded ones of up to 40, with counters at and around the
    no-capture limit and the ply cap."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < n:
        cells: list[str | None] = [None] * 64
        total = 2 if rng.random() < 0.05 else rng.choice(
            (rng.randint(3, 12), rng.randint(4, 24), rng.randint(20, 40)))
        squares = rng.sample(range(64), total)
        cells[squares[0]], cells[squares[1]] = "K", "k"
        for s in squares[2:]:
            cells[s] = rng.choice("PPPPLLCCWIOpppplLccwio")
        halfmove = rng.choice((0, 0, rng.randint(0, 99), 99, 100, 101))
        fullmove = rng.choice((1, 1, rng.randint(1, 210), 200, 201))
        text = f"{placement_text(cells)} {rng.choice('wb')} {halfmove} {fullmove}"
        try:
            out.append(State.from_text(text))
        except PositionError:  # the side not to move is in check
            continue
    return out


def sample(n: int) -> tuple[list[State], list[State]]:
    """Return the test's sample: ``n // 2`` played positions and ``n // 2`` placements."""
    return played_positions(n // 2, seed=1), placed_positions(n // 2, seed=2)
