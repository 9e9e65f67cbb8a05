"""Hypothesis properties of the Ultima engine over positions from random play and random
sparse placements."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardzoo.envs.core.game import PositionError
from boardzoo.envs.ultima import State
from boardzoo.envs.ultima.actions import UltimaActions
from boardzoo.envs.ultima.rules import REPETITIONS

ACTIONS = UltimaActions()
PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def sparse_position(rng: random.Random) -> State:
    """A random valid placement of 4 to 16 pieces, either side to move."""
    while True:
        cells = [None] * 64
        squares = rng.sample(range(64), rng.randint(4, 16))
        cells[squares[0]], cells[squares[1]] = "K", "k"
        for s in squares[2:]:
            cells[s] = rng.choice("PLCWIOplcwioPp")
        ranks = ["".join(cells[8 * r + f] or "1" for f in range(8)) for r in range(7, -1, -1)]
        try:
            return State.from_text("/".join(ranks) + " " + rng.choice("wb"))
        except PositionError:
            continue


@st.composite
def states(draw) -> State:
    """A position reached by random play from the start or from a sparse placement."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    state = sparse_position(rng) if draw(st.booleans()) else State.start()
    if draw(st.booleans()):  # near the draw rules: no-capture clock and ply cap
        state = State.from_text(" ".join(state.to_text().split()[:2]) + " 90 195")
    for _ in range(draw(st.integers(0, 120))):
        if state.is_terminal():
            break
        state = state.apply(rng.choice(state.legal_moves()))
    return state


def colour_count(cells: list[str | None], white: bool) -> int:
    return sum(1 for c in cells if c is not None and c.isupper() == white)


@PROPERTY
@given(states())
def test_captures_take_only_enemy_pieces_and_never_leave_the_king_capturable(state):
    cells = state.cells()
    white = state.to_move == 0
    mine, theirs = colour_count(cells, white), colour_count(cells, not white)
    for move in state.legal_moves():
        caps = state.captures(move)
        assert all(cells[c] is not None and cells[c].isupper() != white for c in caps)
        child = state.apply(move)
        after = child.cells()
        assert colour_count(after, white) == mine
        assert colour_count(after, not white) == theirs - len(caps)
        assert after[move & 63] == cells[move >> 6] and after[move >> 6] is None
        # the mover's king is not capturable: not in check were the mover to move again
        assert not State(child.board, state.to_move).in_check()


@PROPERTY
@given(states())
def test_position_text_round_trips(state):
    text = state.to_text()
    again = State.from_text(text)
    assert again.to_text() == text
    # position text holds no repetition history (spec): a position drawn by threefold
    # repetition has no legal move, the same position read from text has them
    if state.history.count(state.history[-1]) < REPETITIONS:
        assert again.legal_move_strs() == state.legal_move_strs()
    assert State.from_text(" ".join(text.split()[:2])).board == state.board


@PROPERTY
@given(states())
def test_mask_equals_legal_move_set_and_notation_round_trips(state):
    mask = ACTIONS.action_mask(state)
    if state.is_terminal():
        assert mask.sum() == 0
    else:
        assert list(np.flatnonzero(mask)) == sorted(state.legal_moves())
    for move in state.legal_moves():
        text = state.move_to_str(move)
        assert state.parse_move(text) == move
        assert state.parse_move(text[:4]) == move
        assert state.parse_move(text.upper()) == move


@PROPERTY
@given(states())
def test_apply_never_mutates_the_parent(state):
    before = (state.board, state.side, state.halfmove, state.fullmove, state.history,
              state.to_text(), state.legal_move_strs(), state.is_terminal())
    for move in state.legal_moves():
        state.apply(move)
    after = (state.board, state.side, state.halfmove, state.fullmove, state.history,
             state.to_text(), state.legal_move_strs(), state.is_terminal())
    assert after == before


@PROPERTY
@given(states())
def test_outcome_is_consistent(state):
    over, winner = state.is_terminal(), state.winner()
    assert (state.legal_moves() == []) == over  # the protocol: empty exactly when over
    assert state.legal_move_strs() == sorted(map(state.move_to_str, state.legal_moves()))
    assert state.perft(1) == len(state.legal_moves())
    # spec 9: a side whose pieces have no move loses, checked before every draw rule, and
    # there is no other way to win
    pieces_stuck = all(state.captures(m) is None for m in range(64 * 64))
    assert (winner is not None) == pieces_stuck
    if pieces_stuck:
        assert over and winner == 1 - state.to_move
    if winner is not None:
        assert over and state.returns()[winner] == 1.0
    assert state.result_code() == ("*" if not over else {None: "1/2-1/2", 0: "1-0",
                                                         1: "0-1"}[winner])
