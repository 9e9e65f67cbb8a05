"""Ultima rules: shared vectors, hand-checked positions per spec decision, text, notation."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from boardzoo.envs.core.game import MoveError, PositionError, divide, perft
from boardzoo.envs.ultima import START_TEXT, State
from boardzoo.envs.ultima.notation import format_move

from conftest import VECTORS, load_vector

VECTOR_NAMES = sorted(
    p.name for p in Path(VECTORS / "ultima").glob("*.json") if p.name != "repetition_draw.json"
)


def legal(text: str) -> list[str]:
    return State.from_text(text).legal_move_strs()


def play(text: str, *moves: str) -> State:
    state = State.from_text(text)
    for m in moves:
        state = state.apply(state.parse_move(m))
    return state


def piece_moves(state: State) -> list[str]:
    """Return the sorted text of the moves the pieces have, even in a finished position."""
    found = [m for m in range(64 * 64) if state.captures(m) is not None]
    return sorted(format_move(m, state.captures(m)) for m in found)


# -- shared vectors ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_vector(name):
    v = load_vector("ultima", name)
    assert v["name"] == name.removesuffix(".json") and v["explanation"]
    state = State.from_text(v["position"])
    assert state.to_text() == v["position"]
    assert [" ".join(line.split()) for line in state.render_text().splitlines()] == [
        " ".join(line.split()) for line in v["diagram"]]
    moves = state.legal_move_strs()
    assert moves == v["legal"] == sorted(v["legal"])
    assert len(moves) == v["legal_count"]
    assert sorted(state.move_to_str(m) for m in state.legal_moves()) == v["legal"]
    assert set(v.get("must_include", [])) <= set(moves)
    assert state.in_check() == v["side_to_move_in_check"]
    assert state.result_code() == v["result"]
    # the pieces' moves: the vector's piece_moves where a draw rule ended the game, else
    # exactly the legal moves (none after a checkmate or stalemate)
    assert piece_moves(state) == v.get("piece_moves", v["legal"])
    assert ("piece_moves" in v) == (v["result"] == "1/2-1/2")
    # a finished position has no legal move: no perft in the vector, 0 here at every depth
    assert ("perft" in v) == (v["result"] == "*") == (state.legal_moves() != [])
    if v["result"] != "*":
        assert state.is_terminal() and state.legal_moves() == []
        assert state.perft(1) == state.perft(2) == perft(state, 3) == 0
        assert divide(state, 2) == {}
    for depth, count in v.get("perft", {}).items():
        if int(depth) <= 3:
            assert state.perft(int(depth)) == count, f"perft {depth}"


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_vector_forbidden_moves_rejected_in_any_spelling(name):
    v = load_vector("ultima", name)
    state = State.from_text(v["position"])
    for pair in v.get("must_not_include_from_to", []):
        assert not any(m.startswith(pair) for m in state.legal_move_strs())
        for spelling in (pair, f"{pair[:2]}-{pair[2:]}", pair.upper(), pair + "x" + pair[2:]):
            with pytest.raises(MoveError):
                state.parse_move(spelling)


def test_start_perft_and_divide():
    v = load_vector("ultima", "start.json")
    state = State.start()
    assert state.to_text() == v["position"] == START_TEXT
    for depth in (1, 2, 3):
        assert state.perft(depth) == v["perft"][str(depth)]
    assert perft(state, 2) == v["perft"]["2"]  # the protocol's generic perft agrees
    assert divide(state, 3) == v["divide_depth3"]


@pytest.mark.skipif(not os.environ.get("BOARDZOO_SLOW"), reason="slow: set BOARDZOO_SLOW=1")
def test_start_perft_4():
    started = time.perf_counter()
    assert State.start().perft(4) == load_vector("ultima", "start.json")["perft"]["4"]
    print(f"perft 4: {time.perf_counter() - started:.1f} s")


def test_repetition_vector():
    v = load_vector("ultima", "repetition_draw.json")
    assert v["name"] == "repetition_draw" and v["explanation"]
    assert v["moves"] == [step["move"] for step in v["sequence"]]
    state = State.from_text(v["position"])
    for step in v["sequence"]:
        assert state.result_code() == "*"
        state = state.apply(state.parse_move(step["move"]))
        assert state.to_text() == step["position"]
        assert state.result_code() == step["result"]
        assert state.is_terminal() == (step["result"] != "*")
    assert state.result_code() == "1/2-1/2"  # threefold on the 8th ply
    assert state.legal_moves() == state.legal_move_strs() == [] and state.perft(1) == 0
    assert state.is_terminal() and state.winner() is None and state.returns() == (0.0, 0.0)
    # the same position read from text carries no history: not a draw
    assert not State.from_text(state.to_text()).is_terminal()


# -- spec 12, decision by decision -------------------------------------------------------------
def test_d1_abbott_array_is_point_symmetric():
    cells = State.start().cells()
    assert [cells[i] for i in range(8)] == list("ILCKWCLO")
    assert [cells[56 + i] for i in range(8)] == list("olcwkcli")
    assert all((cells[s] or ".").swapcase() == (cells[63 - s] or ".") for s in range(64))
    assert State.start().to_move == 0 and State.start().player_names[0] == "white"


def test_d2_all_captures_of_a_move_are_one_action():
    state = State.from_text("7k/2C1O3/3lc3/2Pw1oL1/8/8/4P3/K7 w 0 1")
    move = state.parse_move("e2e5")  # origin + destination identify the move
    assert state.move_to_str(move) == "e2e5xd5xe6xf5"
    after = state.apply(move)
    cells = after.cells()
    assert cells[35] is None and cells[44] is None and cells[37] is None  # d5, e6, f5 gone
    assert cells[43] == "l"  # d6 only diagonal: safe
    assert after.halfmove == 0
    # every legal move of every kind: from+to is unique
    assert len({m for m in state.legal_moves()}) == len(state.legal_move_strs())


def test_d3_leaper_lands_right_after_its_last_victim():
    moves = legal("7k/8/p7/8/8/p1P5/1p6/L2pp2K w 0 1")
    assert {"a1a2", "a1a4xa3", "a1a7xa3xa6", "a1b1", "a1c1"} <= set(moves)
    # a5, a8: not right after a victim; b2 is followed by a white piece; d1e1 two in a row
    for bad in ("a1a5", "a1a8", "a1c3", "a1d4", "a1f1", "a1g1"):
        assert not any(m.startswith(bad) for m in moves), bad


def test_d3_leaper_never_jumps_a_friendly_piece():
    moves = legal("7k/8/8/8/p7/P7/8/L6K w 0 1")
    assert not any(m.startswith("a1a5") for m in moves)
    assert "a1a2" in moves


def test_d4_chameleon_combines_withdrawal_and_pincer():
    moves = legal("7k/8/3pP3/8/C1C5/2w5/8/K7 w 0 1")
    assert "c4c6xc3xd6" in moves  # withdraws from c3 and pincers d6 against e6
    assert "c4c5xc3" in moves and "c4c7xc3" in moves
    assert "a4c6" in moves  # d5: the chameleon reached c6 diagonally, pawn d6 safe


def test_d5_chameleon_pincers_pawns_only_after_an_orthogonal_move():
    # c5-c3 (orthogonal) pincers d3 against the white king e3: any friendly partner serves;
    # a5-c3 reaches the same square diagonally and captures nothing
    moves = legal("7k/8/8/C1C5/8/3pK3/8/8 w 0 1")
    assert "c5c3xd3" in moves and "a5c3" in moves


def test_d6_chameleon_vs_immobilizer_and_chameleon():
    moves = legal("7k/8/8/P3iP2/8/2W5/2c5/3C3K w 0 1")
    assert "d1d5" in moves  # e5 sits between d5 and the white f5, but is an immobilizer
    assert "a5d5xe5" in moves  # a pawn pincers the immobilizer against the frozen f5
    assert "d1c1" in moves  # lands next to the black chameleon c2 (partner c3): no capture
    assert "c3c4xc2" in moves  # a withdrawer captures a chameleon; chameleons freeze nothing
    state = State.from_text("7k/8/8/P3iP2/8/2W5/2c5/3C3K w 0 1")
    assert state.frozen() == (1 << 37)  # only f5 (next to the immobilizer) is frozen


def test_d6_chameleon_adjacent_to_king_gives_check():
    state = State.from_text("4k3/pp1C4/8/8/8/8/8/7K b 0 1")
    assert state.in_check()
    assert state.legal_move_strs() == ["e8d7xd7", "e8f7", "e8f8"]


def test_d7_friendly_immobilizer_does_not_cancel_freezing():
    state = State.from_text("7k/8/8/8/3Ii3/4W3/8/7K w 0 1")
    assert state.legal_move_strs() == ["h1g1", "h1g2", "h1h2"]  # d4 and e3 frozen
    black = State.from_text("7k/8/8/8/3Ii3/4W3/8/7K b 0 1")
    assert not any(m.startswith("e4") for m in black.legal_move_strs())


def test_d8_no_pass_no_null_move_no_suicide():
    state = State.from_text("7k/8/8/8/8/8/1i6/KP6 w 0 1")  # everything frozen
    assert state.legal_moves() == [] and state.result_code() == "0-1"
    for text in ("pass", "a1a1", "b1b1", ""):
        with pytest.raises(MoveError):
            State.start().parse_move(text)


def test_d9_coordinator_captures_only_on_its_own_move():
    text = "7k/8/8/1p3O2/8/8/8/1K3p2 w 0 1"
    moves = legal(text)
    assert "b1b2" in moves  # a king move never triggers the rectangle
    assert "f5f4xf1" in moves and "f5e5xb5" in moves
    after = play(text, "b1b2")
    assert after.cells()[33] == "p" and after.cells()[5] == "p"  # b5, f1 still there


def test_d9_coordinator_aligned_with_king_captures_nothing():
    moves = legal("7k/8/1p6/8/8/7O/1K2p3/8 w 0 1")
    assert "h3h2" in moves and "h3e6xb6xe2" in moves


def test_d10_check_by_coordinator():
    state = State.from_text("8/8/8/7o/8/8/8/k3K3 w 0 1")
    assert state.in_check()
    assert state.legal_move_strs() == ["e1d2", "e1e2", "e1f2"]


def test_d10_check_by_withdrawer():
    state = State.from_text("4k3/8/8/8/8/8/3w4/4K3 w 0 1")
    assert state.in_check()
    assert state.legal_move_strs() == ["e1d2xd2", "e1f1", "e1f2"]


def test_d10_check_by_leaper_needs_a_landing_square():
    assert State.from_text("4k3/8/8/4l3/8/8/4K3/8 w 0 1").in_check()
    assert not State.from_text("4k3/8/8/4l3/8/8/8/4K3 w 0 1").in_check()  # no square beyond
    assert not State.from_text("4k3/8/8/4l3/8/4P3/4K3/8 w 0 1").in_check()  # two in a row
    assert not State.from_text("4k3/8/3I4/4l3/8/8/4K3/8 w 0 1").in_check()  # leaper frozen


def test_d10_check_by_pincer_and_frozen_pawn_gives_none():
    assert State.from_text("7k/8/8/p3Ko2/8/8/8/8 w 0 1").in_check()
    assert not State.from_text("7k/8/1I6/p3Ko2/8/8/8/8 w 0 1").in_check()


def test_d10_king_may_not_step_into_capture():
    state = State.from_text("7k/8/8/p4o2/4K3/8/8/8 w 0 1")
    assert not any(m.startswith("e4e5") for m in state.legal_move_strs())


def test_d11_checkmate_and_stalemate_win():
    mate = State.from_text("7k/8/8/8/8/7P/1i6/Kw6 w 0 1")
    assert mate.in_check() and mate.is_terminal() and mate.winner() == 1
    assert mate.returns() == (-1.0, 1.0) and mate.result() == "black"
    stale = State.from_text("7k/8/8/8/8/8/1i6/KP6 w 0 1")
    assert not stale.in_check() and stale.winner() == 1 and stale.result_code() == "0-1"
    # no legal move outranks the draw rules (spec 9, order)
    assert State.from_text("7k/8/8/8/8/8/1i6/KP6 w 150 300").result_code() == "0-1"


def test_d12_no_capture_clock():
    text = "7k/8/5p2/8/8/2P5/8/K7 w 99 60"
    assert not State.from_text(text).is_terminal()
    after = play(text, "c3c4")
    assert after.halfmove == 100 and after.result_code() == "1/2-1/2"
    # over: no legal move (as in the shared vector draw_no_capture_clock), although the
    # pieces still have their 17 moves (black king 3, pawn f6 14)
    assert after.is_terminal() and after.legal_moves() == after.legal_move_strs() == []
    assert after.perft(1) == after.perft(2) == perft(after, 2) == 0 and divide(after, 1) == {}
    assert len(piece_moves(after)) == 17


def test_d12_capture_resets_clock_and_bare_kings_draw():
    after = play("7k/8/8/8/8/8/1p6/K7 w 57 30", "a1b2")
    assert after.to_text() == "7k/8/8/8/8/8/1K6/8 b 0 30"
    assert after.result_code() == "1/2-1/2"


def test_perft_counts_nothing_below_a_finished_position():
    # White Ka1 has a1a2, a1b1 and a1b2xb2; after either king step Black has 16 moves (king
    # 3, pawn b2 13), after the capture bare kings end the game: no moves, not 3
    state = State.from_text("7k/8/8/8/8/8/1p6/K7 w 57 30")
    assert divide(state, 2) == {"a1a2": 16, "a1b1": 16, "a1b2xb2": 0}
    assert state.perft(2) == perft(state, 2) == 32
    # one ply from the 100-ply draw: every quiet child is finished (the capture too: bare kings)
    state = State.from_text("7k/8/8/8/8/8/1p6/K7 w 99 30")
    assert state.perft(1) == 3 and state.perft(2) == state.perft(3) == 0


def test_d12_ply_cap():
    state = State.from_text("7k/7p/8/8/8/8/P7/K7 b 0 200")
    assert state.ply == 399 and not state.is_terminal()
    after = state.apply(state.parse_move("h7h6"))
    assert after.ply == 400 and after.to_text().endswith("w 1 201")
    assert after.result_code() == "1/2-1/2"


def test_d12_repetition_history_restarts_after_a_capture():
    state = play("7k/7p/8/8/8/8/P7/K1p5 w 0 1", "a1b1", "h8g8", "b1a1", "g8h8")
    assert len(state.history) == 5 and state.history.count(state.history[-1]) == 2
    state = play(state.to_text(), "a1b1", "h8g8", "b1c1")  # from text: history restarts too
    assert state.halfmove == 0 and len(state.history) == 1
    state = play("7k/7p/8/8/8/8/P7/K1p5 w 0 1", "a1b1", "h8g8", "b1a1", "g8h8", "a1b1",
                 "h8g8", "b1c1")
    assert state.to_text() == "6k1/7p/8/8/8/8/P7/2K5 b 0 4" and len(state.history) == 1


def test_d13_no_promotion_and_unlimited_distance():
    after = play("7k/8/8/8/8/8/P7/7K w 0 1", "a2a8")
    assert after.cells()[56] == "P"
    assert "a8a1" in after.apply(after.parse_move("h8g8")).legal_move_strs()


def test_d14_moving_between_enemies_is_safe():
    # d1-d4 lands between c4 and e4, next to the immobilizer: legal, captures c4 only
    state = play("k6O/8/8/2p5/1Ki1p3/8/8/3P4 w 0 1", "d1d4")
    cells = state.cells()
    assert cells[27] == "P" and cells[28] == "p" and cells[26] is None


def test_frozen_king_defines_the_rectangle_and_cannot_take_the_immobilizer():
    moves = legal("7k/8/8/p7/8/8/1i6/K5O1 w 0 1")  # king a1 frozen by b2
    assert not any(m.startswith("a1") for m in moves)
    assert "g1g5xa5" in moves  # corner (a, 5) of the rectangle with the frozen king


# -- position text ----------------------------------------------------------------------------
def test_text_round_trip_and_two_field_form():
    text = "7k/2C1O3/3lc3/2Pw1oL1/8/8/4P3/K7 b 12 34"
    assert State.from_text(text).to_text() == text
    assert State.from_text("7k/8/8/8/8/8/8/K7 w").to_text() == "7k/8/8/8/8/8/8/K7 w 0 1"
    assert State.from_text("  7k/8/8/8/8/8/8/K7   b  3  9 ").to_text() == "7k/8/8/8/8/8/8/K7 b 3 9"
    assert State.from_text("7k/8/8/8/8/8/8/K7 b 3 9").ply == 17


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "field"),
        ("7k/8/8/8/8/8/8/K7", "field"),
        ("7k/8/8/8/8/8/8/K7 w 0", "field"),
        ("7k/8/8/8/8/8/8/K7 w 0 1 9", "field"),
        ("7k/8/8/8/8/8/K7 w 0 1", "8 ranks"),
        ("7k/8/8/8/8/8/8/K8 w 0 1", "8 squares"),
        ("7k/8/8/8/8/8/8/K6 w 0 1", "8 squares"),
        ("7k/8/8/8/8/8/8/Kx6 w 0 1", "unexpected character"),
        ("7k/8/8/8/8/8/8/K7 x 0 1", "side"),
        ("7k/8/8/8/8/8/8/K7 w -1 1", "halfmove"),
        ("7k/8/8/8/8/8/8/K7 w 0 zero", "fullmove"),
        ("7k/8/8/8/8/8/8/K7 w 0 0", "fullmove"),
        ("7k/8/8/8/8/8/8/8 w 0 1", "white must have exactly one king"),
        ("7k/8/8/8/8/8/8/KK6 w 0 1", "white must have exactly one king"),
        ("8/8/8/8/8/8/8/K7 w 0 1", "black must have exactly one king"),
        ("7k/8/8/8/8/8/8/K6k w 0 1", "black must have exactly one king"),
        ("4k3/3C4/8/8/8/8/8/7K w 0 1", r"not to move \(black\) is in check"),
        ("8/8/8/8/8/8/8/3Kk3 b 0 1", "in check"),
    ],
)
def test_bad_position_text(text, needle):
    with pytest.raises(PositionError, match=needle):
        State.from_text(text)


# -- notation ----------------------------------------------------------------------------------
PINCER = "7k/2C1O3/3lc3/2Pw1oL1/8/8/4P3/K7 w 0 1"


@pytest.mark.parametrize(
    "spelling",
    ["e2e5xd5xe6xf5", "e2e5", "e2-e5", "e2-e5xd5xe6xf5", "e2e5xf5xd5xe6", "E2E5XE6XD5XF5",
     "E2-e5", "  e2e5xd5xe6xf5\n"],
)
def test_accepted_spellings(spelling):
    state = State.from_text(PINCER)
    move = state.parse_move(spelling)
    assert state.move_to_str(move) == "e2e5xd5xe6xf5"


@pytest.mark.parametrize(
    "spelling,needle",
    [
        ("e2e5xd5", "wrong capture list"),
        ("e2e5xd5xe6xf5xg5", "wrong capture list"),
        ("e2e5xd5xe6xe6xf5", "twice"),
        ("e2e4xd5", "captures nothing"),
        ("e2e8", "illegal"),
        ("a1a3", "illegal"),
        ("e2e9", "malformed"),
        ("e2", "malformed"),
        ("e2e5x", "malformed"),
        ("e2xe5", "malformed"),
        ("e2 e5", "malformed"),
        ("e2--e5", "malformed"),
        ("pass", "malformed"),
    ],
)
def test_rejected_spellings(spelling, needle):
    with pytest.raises(MoveError, match=needle):
        State.from_text(PINCER).parse_move(spelling)


def test_canonical_capture_order_is_ascii():
    state = State.from_text("7k/8/1p6/8/8/7O/1K2p3/8 w 0 1")
    assert state.move_to_str(state.parse_move("h3e6")) == "h3e6xb6xe2"
    state = State.from_text("7k/8/8/o3pP2/2l5/8/C7/K7 w 0 1")
    assert state.move_to_str(state.parse_move("a2d5")) == "a2d5xa5xc4"


def test_apply_rejects_illegal_move_and_does_not_mutate():
    state = State.start()
    before = (state.board, state.to_text(), state.history)
    with pytest.raises(MoveError):
        state.apply(0)
    child = state.apply(state.parse_move("e2e4"))
    assert (state.board, state.to_text(), state.history) == before
    assert child.to_text() == "olcwkcli/pppppppp/8/8/4P3/8/PPPP1PPP/ILCKWCLO b 1 1"
