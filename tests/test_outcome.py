"""Finished games say who won or which rule drew them ("black wins", "draw: threefold
repetition") in the env's status line, replays, GIF frames and the GUI window."""

from __future__ import annotations

import pytest

from boardzoo.agents.arena.replay import replay
from boardzoo.envs import loa_v0
from boardzoo.envs.core.registry import load_state

from conftest import load_vector


def play(game: str, position: str, *moves: str):
    """Return the state after ``moves`` from ``position``."""
    state = load_state(game, position)
    for text in moves:
        state = state.apply(state.parse_move(text))
    return state


def test_loa_threefold_repetition_is_named() -> None:
    vec = load_vector("loa", "repetition.json")  # drawn by repetition after ply 8
    state = play("loa", vec["start"], *vec["moves"])
    assert state.outcome() == "draw: threefold repetition"
    assert play("loa", vec["start"], *vec["moves"][:7]).outcome() == "ongoing"


def test_loa_move_cap_and_win() -> None:
    # spec 6.2: 400 plies draw; the ply counter is the last field of the position text
    state = play("loa", "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 399", "b1-b3")
    assert state.outcome() == "draw: move cap (400 plies)"
    # black b3 steps next to a1: all black pieces connected, black wins (spec 6.1)
    assert play("loa", "8/8/8/8/8/1b6/w6w/b7 b 0", "b3-b2").outcome() == "black wins"


@pytest.mark.parametrize(("vector", "outcome"), [
    ("draw_bare_kings.json", "draw: bare kings"),
    ("draw_no_capture_clock.json", "draw: 100 plies without capture"),
    ("checkmate.json", "black wins"),
])
def test_ultima_vectors_say_how_they_ended(vector: str, outcome: str) -> None:
    assert load_state("ultima", load_vector("ultima", vector)["position"]).outcome() == outcome


def test_ultima_repetition_and_ply_cap() -> None:
    vec = load_vector("ultima", "repetition_draw.json")  # threefold on the 8th ply
    assert play("ultima", vec["position"], *vec["moves"]).outcome() == \
        "draw: threefold repetition"
    # ply 399 -> 400: the ply cap (spec 9.5), with a pawn move that resets nothing else
    assert play("ultima", "7k/7p/8/8/8/8/P7/K7 b 0 200", "h7h6").outcome() == \
        "draw: ply cap (400 plies)"


def test_whistling_quiet_draw_and_elimination() -> None:
    assert play("whistling", "u11/E21 x 39", "u11-w11").outcome() == \
        "draw: 40 turns without capture"
    assert play("whistling", "u11/w11 x 30", "u11:w11").outcome() == "x wins"


def test_replay_status_and_env_status_line() -> None:
    vec = load_vector("loa", "repetition.json")
    game = replay({"id": "r", "game": "loa", "start": vec["start"], "moves": vec["moves"],
                   "players": ["a", "b"], "scores": [0.5, 0.5], "plies": 8})
    assert game.status(8) == "draw: threefold repetition"
    assert game.status(0) == "to move: black"
    env = loa_v0.raw_env()
    env.reset(options={"position": vec["start"]})
    for text in vec["moves"]:
        env.step(env.move_str_to_action(text))
    assert env.game.is_terminal() and env._status_line() == "draw: threefold repetition"
