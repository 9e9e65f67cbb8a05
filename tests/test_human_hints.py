"""Terminal play: hints use the whole cell typed, and a cell alone lists its moves."""

from __future__ import annotations

import io

from boardzoo.agents.human import HumanAgent, first_cell
from boardzoo.envs.core.registry import load_state

# o to move in Whistling; its only legal turn is the capture chain from w19 (spec: capturing
# is compulsory), which begins with the hop w19-G19
CHAIN = ("s1,u1,r2,t2,v2,s3,u3,H14,J14,g15,i15,I15,K15,f16,h16,j16,H16,J16,g17,i17,D18/"
         "G5,I5,f6,h6,F6,H6,J6,e7,g7,i7,G7,I7,f8,h8,u19,w19,t20,v20,x20,u21,w21 o 1")


def session(game: str, position: str | None, typed: str) -> tuple[str, str]:
    """Return (the move chosen, everything the agent wrote) for the lines ``typed``."""
    out = io.StringIO()
    state = load_state(game, position)
    move = HumanAgent(io.StringIO(typed), out).select_move(state)
    return state.move_to_str(move), out.getvalue()


def test_first_cell_is_the_whole_cell() -> None:
    assert [first_cell(t) for t in ("w19-G19", "G19:D18", "b1", "b2b5", " h16", "?", "19")] == \
        ["w19", "G19", "b1", "b2", "h16", "", ""]


def test_whistling_hint_names_the_whole_cell_typed() -> None:
    move, text = session("whistling", CHAIN, "w19-G19\nw19-G19:D18-o1:r2s3\n")
    assert "rejected 'w19-G19'" in text
    assert "Legal moves starting 'w19': w19-G19:D18-o1:r2s3." in text
    assert move == "w19-G19:D18-o1:r2s3"


def test_loa_cell_alone_lists_its_moves() -> None:
    # start position, b1: six black pieces on rank 1 (b1-h1), two on file b (b1-b3), two on
    # the diagonal b1-h7 (b1-d3); the other diagonal leaves the board at a2 (spec 3)
    move, text = session("loa", None, "b1\nb1-b3\n")
    assert "moves from b1: b1-b3, b1-d3, b1-h1" in text
    assert "malformed" not in text and move == "b1-b3"


def test_a_cell_with_no_moves_is_still_rejected() -> None:
    _, text = session("loa", None, "a1\nb1-b3\n")  # a1 is empty at the start
    assert "rejected 'a1'" in text
