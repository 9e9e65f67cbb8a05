"""LOA rules against the shared vectors (numbers from outside the code) and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardzoo.envs.core.game import MoveError, PositionError
from boardzoo.envs.loa import State, is_connected

from conftest import load_vector

START = load_vector("loa", "start.json")
RULES = load_vector("loa", "rules.json")["cases"]
NOTATION = load_vector("loa", "notation.json")


def test_start_position_text_and_moves():
    state = State.start()
    assert state.to_text() == START["position"]
    assert state.legal_move_strs() == START["legal"]
    assert len(state.legal_moves()) == START["legal_count"]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_start_perft(depth):
    assert State.start().perft(depth) == START["perft"][str(depth)]


def test_start_divide_2():
    state = State.start()
    divide = {state.move_to_str(m): state.apply(m).perft(1) for m in state.legal_moves()}
    assert divide == START["divide_2"]


@pytest.mark.parametrize("case", RULES, ids=[c["id"] for c in RULES])
def test_rule_vector(case):
    state = State.from_text(case["position"])
    assert state.legal_move_strs() == case["legal"]
    assert len(state.legal_moves()) == case["legal_count"]
    assert state.result() == case["result"]
    legal = set(state.legal_move_strs())
    assert set(case.get("must_include", [])) <= legal
    assert not set(case.get("must_exclude", [])) & legal
    if "play" in case:
        for text in case["play"]:
            state = state.apply(state.parse_move(text))
        assert state.to_text() == case["position_after"]
        assert state.result() == case["result_after"]
        assert state.legal_move_strs() == case["legal_after"]


def test_repetition_draw():
    vec = load_vector("loa", "repetition.json")
    state = State.from_text(vec["start"])
    for step in vec["steps"]:
        state = state.apply(state.parse_move(step["move"]))
        assert state.to_text() == step["position"]
        assert state.result() == step["result"], step
    assert state.result() == vec["final_result"]
    assert state.legal_moves() == []


def test_published_game_prefix():
    vec = load_vector("loa", "game_1996_ddyer_charly_prefix.json")
    state = State.from_text(vec["start"])
    for step in vec["steps"]:
        move = state.parse_move(step["move_as_published"])
        assert state.move_to_str(move) == step["canonical"]
        state = state.apply(move)
        assert state.to_text() == step["position"]
    assert state.to_text() == vec["final_position"]
    assert state.result() == vec["result_after_prefix"]


@pytest.mark.parametrize("text,canonical", sorted(NOTATION["accepted"].items()))
def test_accepted_notation(text, canonical):
    state = State.from_text(NOTATION["position"])
    assert state.move_to_str(state.parse_move(text)) == canonical


@pytest.mark.parametrize("text", NOTATION["rejected"])
def test_rejected_notation(text):
    with pytest.raises(MoveError):
        State.from_text(NOTATION["position"]).parse_move(text)


@pytest.mark.parametrize("text", NOTATION["pass_accepted"])
def test_pass_spellings(text):
    state = State.from_text(NOTATION["pass_position"])
    assert state.move_to_str(state.parse_move(text)) == "pass"


def test_no_move_once_game_is_over():
    state = State.from_text("8/8/8/3bb3/3bb3/8/8/6ww w 30")
    with pytest.raises(MoveError, match="over"):
        state.parse_move("g1-g2")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w b 0",  # 7 ranks
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1",  # no side
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0 extra",
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb b 0",  # rank of 7
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb11 b 0",  # rank of 9
        "1BBBBBB1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0",  # uppercase
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 x 0",
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b -1",
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 1.5",
        "8/8/8/8/8/8/8/1bbbbbb1 w 0",  # White has no piece
        "1bbbbbb1/w6w/w6w/w9/w6w/w6w/w6w/1bbbbbb1 b 0",
    ],
)
def test_invalid_position_text(text):
    with pytest.raises(PositionError):
        State.from_text(text)


def test_position_text_accepts_adjacent_digits_and_default_ply():
    state = State.from_text("  1bbbbbb1/w33w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b  ")
    assert state.to_text() == START["position"]


def test_connectivity_helper_hand_checked():
    assert is_connected(1 << 0)  # a lone piece
    assert is_connected((1 << 0) | (1 << 9))  # a1-b2 diagonal neighbours
    assert not is_connected((1 << 7) | (1 << 8))  # h1 and a2 are not neighbours (no wrap)
    assert not is_connected((1 << 0) | (1 << 2))


# -- properties over random play ------------------------------------------------------

@st.composite
def random_games(draw):
    """A position reached by a random sequence of legal moves from the start."""
    state = State.start()
    for _ in range(draw(st.integers(0, 80))):
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply(moves[draw(st.integers(0, len(moves) - 1))])
    return state


@settings(max_examples=60, deadline=None)
@given(random_games())
def test_properties_of_reachable_positions(state):
    black, white = state.bb
    assert black & white == 0
    assert 1 <= black.bit_count() <= 12 and 1 <= white.bit_count() <= 12
    reparsed = State.from_text(state.to_text())
    assert reparsed.to_text() == state.to_text()
    if state.history.count(state.key()) < 2:  # text carries no history (spec 7)
        assert reparsed.legal_move_strs() == state.legal_move_strs()
    before = (state.to_text(), state.history)
    for move in state.legal_moves():
        child = state.apply(move)
        assert (state.to_text(), state.history) == before  # apply never mutates the parent
        assert child.bb[0].bit_count() <= black.bit_count()  # pieces never grow
        assert child.bb[1].bit_count() <= white.bit_count()
        text = state.move_to_str(move)
        assert state.parse_move(text) == move  # notation round-trips
    assert (state.legal_moves() == []) == state.is_terminal()
