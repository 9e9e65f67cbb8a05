"""The compiled Ultima kernel (envs/ultima/kernel.py) against the reference rules.

Every shared vector (legal moves, piece moves, check, result, perft), the repetition
sequence, and a few thousand random and played positions: the move list with its captures
(same order), the moves once the game is judged, the result, check, frozen pieces, the
evaluation (bit for bit), the action prior and a search leaf's judged evaluation, and the
board, counters and repetition keys after each move, with the two engines stepped side by
side. ``BOARDZOO_KERNEL_POSITIONS`` sets how many positions (100000 for the full check; the
default keeps CI fast).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from boardzoo.envs.core.board8 import placement_text
from boardzoo.envs.core.game import PositionError, divide
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.ultima import START_TEXT, State, kernel, movegen
from boardzoo.envs.ultima.evaluation import capture_values, ultima_eval
from boardzoo.envs.ultima.notation import format_move

from conftest import VECTORS, load_vector

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "3000"))
VECTOR_NAMES = sorted(
    p.name for p in Path(VECTORS / "ultima").glob("*.json") if p.name != "repetition_draw.json"
)
#: kernel result code -> (winner, draw reason) of the reference State
RESULTS = {
    kernel.ONGOING: (None, None),
    kernel.WHITE_WINS: (0, None),
    kernel.BLACK_WINS: (1, None),
    kernel.DRAW_BARE_KINGS: (None, "bare kings"),
    kernel.DRAW_NO_CAPTURE: (None, "100 plies without capture"),
    kernel.DRAW_REPETITION: (None, "threefold repetition"),
    kernel.DRAW_PLY_CAP: (None, "ply cap (400 plies)"),
}
RESULT_TEXT = {kernel.ONGOING: "*", kernel.WHITE_WINS: "1-0", kernel.BLACK_WINS: "0-1"}


class Mirror:
    """A position on the kernel, stepped beside a reference State: board, side, counters and
    the repetition keys since the last capture."""

    def __init__(self, state: State) -> None:
        self.board = kernel.board_of(state)
        self.side, self.halfmove, self.ply = state.side, state.halfmove, state.ply
        self.keys = list(kernel.history_of(state))

    def occurrences(self) -> int:
        return self.keys.count(self.keys[-1])

    def legal(self) -> tuple[np.ndarray, np.ndarray, int]:
        return kernel.legal(self.board, self.side, self.halfmove, self.ply, self.occurrences())

    def apply(self, move: int, captured: int) -> None:
        key = kernel.child_key(self.keys[-1], self.board, move, captured)
        self.board = kernel.apply(self.board, move, captured)
        self.side, self.ply = 1 - self.side, self.ply + 1
        self.halfmove = 0 if captured else self.halfmove + 1
        self.keys = [key] if captured else [*self.keys, key]


def texts(moves: np.ndarray, caps: np.ndarray) -> list[str]:
    """Return the canonical notation of kernel moves, sorted as the vectors list them."""
    return sorted(format_move(m, c) for m, c in pairs(moves, caps))


def pairs(moves: np.ndarray, caps: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """Return kernel moves as (move, sorted captured squares), in the kernel's order."""
    return [(int(m), kernel.squares_of(int(c))) for m, c in zip(moves, caps, strict=True)]


def reference_pairs(moves: dict[int, tuple[int, ...]]) -> list[tuple[int, tuple[int, ...]]]:
    """Return reference moves as (move, sorted captured squares), in the reference's order."""
    return [(m, tuple(sorted(c))) for m, c in moves.items()]


def check_position(state: State, mirror: Mirror) -> None:
    """Assert that the kernel agrees with the reference on everything about one position."""
    where = state.to_text()
    board, side = mirror.board, mirror.side
    assert bytes(board) == state.board and side == state.side, where
    assert mirror.occurrences() == state.history.count(state.history[-1]), where
    colour = movegen.WHITE if side == 0 else movegen.BLACK
    found = movegen.legal_moves(state.board, colour)
    moves, caps = kernel.piece_moves(board, side)
    assert pairs(moves, caps) == reference_pairs(found), where
    # the masked shortcut equals the plain test of every move (spec 7)
    full_moves = np.empty(kernel.MAX_MOVES, np.int64)
    full_caps = np.empty(kernel.MAX_MOVES, np.int64)
    n = kernel.legal_moves_full(board, colour, full_moves, full_caps)
    assert pairs(full_moves[:n], full_caps[:n]) == pairs(moves, caps), where
    pseudo_moves = np.empty(kernel.MAX_MOVES, np.int64)
    pseudo_caps = np.empty(kernel.MAX_MOVES, np.int64)
    n = kernel.pseudo_moves(board, colour, pseudo_moves, pseudo_caps)
    assert pairs(pseudo_moves[:n], pseudo_caps[:n]) == [
        (t + 64 * f, tuple(sorted(c))) for f, t, c in movegen.pseudo_moves(state.board, colour)
    ], where
    game, game_caps, code = mirror.legal()
    assert [int(m) for m in game] == state.legal_moves(), where
    assert RESULTS[code] == (state.winner(), state.draw_reason()), where
    assert RESULT_TEXT.get(code, "1/2-1/2") == state.result_code(), where
    assert kernel.in_check(board, side) == state.in_check(), where
    frozen = kernel.frozen_pieces(board, movegen.WHITE) | kernel.frozen_pieces(board, movegen.BLACK)
    assert frozen & ((1 << 64) - 1) == state.frozen(), where
    value = kernel.evaluate(board, side)
    expected = ultima_eval(state)
    assert value == expected and np.float64(value).tobytes() == np.float64(expected).tobytes(), \
        (where, value, expected)
    # a search's leaf: the same result, and the evaluation while the game goes on
    leaf_code, leaf_value = kernel.judged_evaluation(board, side, mirror.halfmove, mirror.ply,
                                                     mirror.occurrences(), pseudo_moves,
                                                     pseudo_caps)
    assert leaf_code == code, where
    leaf_expected = expected if code == kernel.ONGOING else 0.0
    assert np.float64(leaf_value).tobytes() == np.float64(leaf_expected).tobytes(), where
    prior_moves, prior_values = kernel.action_prior(board, side, mirror.halfmove, mirror.ply,
                                                    mirror.occurrences())
    ref_moves, ref_values = capture_values(state)
    assert prior_moves.tolist() == ref_moves.tolist(), where
    assert prior_values.dtype == ref_values.dtype and prior_values.tobytes() == ref_values.tobytes()


def play_and_check(seed: int, count: int, max_plies: int, capture_bias: float,
                   back_bias: float) -> Counter:
    """Play seeded games from the start on both engines side by side, checking every position;
    ``capture_bias``: the chance to pick among the capturing moves when there are some;
    ``back_bias``: the chance to take the piece the opponent moved last but one back, so
    that positions repeat. Return how often each result code came up."""
    rng = random.Random(seed)
    results: Counter = Counter()
    while sum(results.values()) < count:
        state, mirror = State.start(), Mirror(State.start())
        played: list[int] = []
        for _ in range(max_plies):
            check_position(state, mirror)
            moves, caps, code = mirror.legal()
            results[code] += 1
            if len(moves) == 0 or sum(results.values()) >= count:
                break
            back = (played[-2] & 63) << 6 | played[-2] >> 6 if len(played) >= 2 else -1
            pick = [i for i in range(len(moves)) if caps[i]]
            if back in moves and rng.random() < back_bias:
                pick = [list(moves).index(back)]
            elif not pick or rng.random() >= capture_bias:
                pick = list(range(len(moves)))
            i = rng.choice(pick)
            played.append(int(moves[i]))
            state = state.apply(int(moves[i]))
            mirror.apply(int(moves[i]), int(caps[i]))
            assert bytes(mirror.board) == state.board
            assert (mirror.side, mirror.halfmove, mirror.ply) == (
                state.side, state.halfmove, state.ply)
            assert mirror.keys == list(kernel.history_of(state))
    return results


def sparse_states(seed: int, count: int) -> list[State]:
    """Return random placements of 4 to 24 pieces (two kings among them): checks, freezes,
    pincers, leaps and coordinator corners come up far more often than in play."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        cells: list[str | None] = [None] * 64
        squares = rng.sample(range(64), rng.randint(4, 24))
        cells[squares[0]], cells[squares[1]] = "K", "k"
        for s in squares[2:]:
            cells[s] = rng.choice("PPPPLLCCWIOpppplLccwio")
        text = f"{placement_text(cells)} {rng.choice('wb')} {rng.choice((0, 0, 98, 99, 100))} " \
               f"{rng.choice((1, 1, 150, 200, 201))}"
        try:
            out.append(State.from_text(text))
        except PositionError:  # the side not to move is in check
            continue
    return out


# -- shared vectors ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_vector(name):
    v = load_vector("ultima", name)
    state = State.from_text(v["position"])
    mirror = Mirror(state)
    moves, caps, code = mirror.legal()
    assert texts(moves, caps) == v["legal"]
    assert texts(*kernel.piece_moves(mirror.board, mirror.side)) == v.get("piece_moves",
                                                                          v["legal"])
    assert kernel.in_check(mirror.board, mirror.side) == v["side_to_move_in_check"]
    assert RESULT_TEXT.get(code, "1/2-1/2") == v["result"]
    for depth, count in v.get("perft", {}).items():
        assert kernel.perft(v["position"], int(depth)) == count, f"perft {depth}"
    if v["result"] != "*":
        assert kernel.perft(v["position"], 1) == kernel.perft(v["position"], 2) == 0
    check_position(state, mirror)


def test_start_divide_depth3():
    v = load_vector("ultima", "start.json")
    state = State.start()
    assert state.to_text() == START_TEXT
    divide = {state.move_to_str(m): kernel.perft_state(state.apply(m), 2)
              for m in state.legal_moves()}
    assert divide == v["divide_depth3"]


def test_repetition_vector():
    v = load_vector("ultima", "repetition_draw.json")
    state = State.from_text(v["position"])
    mirror = Mirror(state)
    for step in v["sequence"]:
        moves, caps, _ = mirror.legal()
        move = state.parse_move(step["move"])
        mirror.apply(move, int(caps[list(moves).index(move)]))
        state = state.apply(move)
        check_position(state, mirror)
        assert RESULT_TEXT.get(mirror.legal()[2], "1/2-1/2") == step["result"]
    assert mirror.legal()[2] == kernel.DRAW_REPETITION
    # perft sees the history too: nothing to count below the third occurrence
    assert kernel.perft_state(state, 1) == state.perft(1) == 0
    assert kernel.perft(state.to_text(), 1) > 0  # read from text: no history, no draw


# -- random and played positions --------------------------------------------------------------
def test_played_positions():
    n = POSITIONS // 3
    # long random games reach the no-capture rule and the ply cap; capture-happy ones thin
    # the board to the endgames where freezes and king hunts decide; moving back repeats
    results = play_and_check(seed=1, count=n // 3, max_plies=400, capture_bias=0.0,
                             back_bias=0.0)
    results += play_and_check(seed=2, count=n // 3, max_plies=400, capture_bias=0.7,
                              back_bias=0.0)
    results += play_and_check(seed=3, count=n - 2 * (n // 3), max_plies=400, capture_bias=0.5,
                              back_bias=0.4)
    assert sum(results.values()) == n and results[kernel.DRAW_REPETITION] > 0


def test_sparse_positions():
    states = sparse_states(seed=4, count=POSITIONS - POSITIONS // 3)
    codes = set()
    for state in states:
        mirror = Mirror(state)
        check_position(state, mirror)
        codes.add(mirror.legal()[2])
    # bare kings: the vector draw_bare_kings.json; repetition: the played positions
    assert codes >= {kernel.ONGOING, kernel.WHITE_WINS, kernel.BLACK_WINS,
                     kernel.DRAW_NO_CAPTURE, kernel.DRAW_PLY_CAP}
    assert any(s.in_check() for s in states) and any(s.frozen() for s in states)


def test_perft_random_positions():
    for state in sparse_states(seed=5, count=12) + [State.start().apply(m)
                                                    for m in State.start().legal_moves()[::8]]:
        assert kernel.perft_state(state, 2) == state.perft(2), state.to_text()
    deep = State.from_text("7k/7p/8/8/8/8/P7/K7 w 0 1")
    assert kernel.perft_state(deep, 4) == deep.perft(4)


def test_cli_perft_counts_on_the_kernel():
    """``boardzoo perft ultima`` counts through the descriptor's ``perft``: the kernel's."""
    spec = get_spec("ultima")
    assert spec.perft is not None
    state = State.from_text("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1")
    assert spec.perft(state, 3) == state.perft(3)
    assert divide(state, 2, spec.perft) == divide(state, 2)


def test_the_checks_can_fail():
    """A wrong capture, a wrong move order and a wrong evaluation are each caught."""
    state = State.from_text("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1")  # a2d2xd3 captures d3
    mirror = Mirror(state)
    moves, caps = kernel.piece_moves(mirror.board, mirror.side)
    found = reference_pairs(movegen.legal_moves(state.board, movegen.WHITE))
    assert pairs(moves, caps) == found
    wrong = caps.copy()
    wrong[np.flatnonzero(caps)[0]] = 0
    assert pairs(moves, wrong) != found
    assert pairs(moves[::-1], caps[::-1]) != found
    assert kernel.evaluate(mirror.board, 1) != ultima_eval(state)


def test_one_compiled_version_per_function():
    """Every compiled function has one signature: a literal argument (``f(b, 0)``) makes numba
    compile a function and all it calls a second time, which the first compile pays for."""
    state = State.start()
    mirror = Mirror(state)
    mirror.legal()
    kernel.evaluate(mirror.board, 0)
    kernel.perft_state(state, 2)
    kernel.action_prior(mirror.board, 0)
    scratch = np.empty(kernel.MAX_MOVES, np.int64)
    kernel.judged_evaluation(mirror.board, 0, 0, 0, 1, scratch, scratch.copy())
    compiled = {name: f.signatures for name, f in vars(kernel).items()
                if hasattr(f, "signatures") and f.signatures}
    assert "legal_moves" in compiled and "pseudo_moves" in compiled
    assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
