"""Ultima's rules: the compiled kernel (envs/ultima/kernel.py), directly and through
rules.State, against numbers from outside the code.

Every shared vector (legal moves, piece moves, check, result, perft), the repetition
sequence, and sampled random and played positions (tests/ultima_sample.py): their facts (text,
outcome, check, frozen pieces, each legal move in order with its captures and the position
after it, the evaluation bit for bit, the action prior, the winning move, the observation)
against what the Python reference rules gave before the kernel replaced them
(tests/data/ultima_facts.txt); the kernel stepped on its own (board, counters, repetition
keys) beside ``State``; a search leaf's judged evaluation; the masked legality shortcut
against playing every move out. The torch engine is held to the kernel in
tests/test_batched_ultima.py. ``BOARDZOO_KERNEL_POSITIONS=100000`` checks the recorded digest
of 100,000 positions (86 s for the facts); the default 5,000 keeps CI fast.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from ultima_sample import fact_hash, facts, sample

from boardzoo.envs.core.game import GameState, divide
from boardzoo.envs.ultima import START_TEXT, State, kernel
from boardzoo.envs.ultima.evaluation import ultima_eval
from boardzoo.envs.ultima.notation import format_move

from conftest import VECTORS, assert_recorded_facts, load_vector

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "5000"))
DATA = Path(__file__).parent / "data"
VECTOR_NAMES = sorted(
    p.name for p in Path(VECTORS / "ultima").glob("*.json") if p.name != "repetition_draw.json"
)
#: kernel result code -> (winner, draw reason) of State
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
    """A position on the kernel alone, as a search keeps it, stepped beside a State: board,
    side, counters and the repetition keys since the last capture."""

    def __init__(self, state: State) -> None:
        self.board = kernel.board_of(state)
        self.side, self.halfmove, self.ply = state.side, state.halfmove, state.ply
        self.keys = list(kernel.history_of(state))

    def occurrences(self) -> int:
        return self.keys.count(self.keys[-1])

    def legal(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Return (moves, capture masks, result code): none once the game is over."""
        moves = np.empty(kernel.MAX_MOVES, dtype=np.int64)
        caps = np.empty(kernel.MAX_MOVES, dtype=np.int64)
        n, code = kernel.game_moves(self.board, self.side, self.halfmove, self.ply,
                                    self.occurrences(), moves, caps)
        return moves[:n].copy(), caps[:n].copy(), int(code)

    def apply(self, move: int, captured: int) -> None:
        key = kernel.child_key(self.keys[-1], self.board, move, captured)
        after = np.empty(64, dtype=np.uint8)
        kernel.make_move(self.board, move, captured, after)
        self.board = after
        self.side, self.ply = 1 - self.side, self.ply + 1
        self.halfmove = 0 if captured else self.halfmove + 1
        self.keys = [key] if captured else [*self.keys, key]


def texts(moves: np.ndarray, caps: np.ndarray) -> list[str]:
    """Return the canonical notation of kernel moves, sorted as the vectors list them."""
    return sorted(format_move(m, c) for m, c in pairs(moves, caps))


def pairs(moves: np.ndarray, caps: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """Return kernel moves as (move, sorted captured squares), in the kernel's order."""
    return [(int(m), kernel.squares_of(int(c))) for m, c in zip(moves, caps, strict=True)]


def piece_moves(board: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (moves, capture masks) of ``side``'s pieces, the end of the game ignored."""
    moves = np.empty(kernel.MAX_MOVES, dtype=np.int64)
    caps = np.empty(kernel.MAX_MOVES, dtype=np.int64)
    n = kernel.legal_moves(board, int(kernel.COLOUR[side]), moves, caps)
    return moves[:n].copy(), caps[:n].copy()


def check_position(state: State, mirror: Mirror) -> None:
    """Assert that the kernel stepped on its own agrees with ``State`` on one position, that
    the masked legality test equals playing every move out (spec 7), and that a search leaf's
    judged evaluation equals the result and the evaluation."""
    where = state.to_text()
    board, side = mirror.board, mirror.side
    assert bytes(board) == state.board and side == state.side, where
    assert mirror.occurrences() == state.occurrences(), where
    moves, caps, code = mirror.legal()
    assert [int(m) for m in moves] == state.legal_moves(), where
    assert [state.capture_mask(int(m)) for m in moves] == caps.tolist(), where
    assert RESULTS[code] == (state.winner(), state.draw_reason()), where
    assert RESULT_TEXT.get(code, "1/2-1/2") == state.result_code(), where
    colour = int(kernel.COLOUR[side])
    piece, piece_caps = piece_moves(board, side)
    full_moves = np.empty(kernel.MAX_MOVES, np.int64)
    full_caps = np.empty(kernel.MAX_MOVES, np.int64)
    n = kernel.legal_moves_full(board, colour, full_moves, full_caps)
    assert pairs(full_moves[:n], full_caps[:n]) == pairs(piece, piece_caps), where
    scratch_moves = np.empty(kernel.MAX_MOVES, np.int64)
    scratch_caps = np.empty(kernel.MAX_MOVES, np.int64)
    leaf_code, leaf_value = kernel.judged_evaluation(board, side, mirror.halfmove, mirror.ply,
                                                     mirror.occurrences(), scratch_moves,
                                                     scratch_caps)
    assert leaf_code == code, where
    expected = ultima_eval(state) if code == kernel.ONGOING else 0.0
    assert np.float64(leaf_value).tobytes() == np.float64(expected).tobytes(), where


def play_and_check(seed: int, count: int) -> set[int]:
    """Step the kernel alone beside ``State`` through the sample's played positions' games
    (tests/ultima_sample.py), checking every position; return the result codes seen."""
    import random

    rng = random.Random(seed)
    codes: set[int] = set()
    seen = 0
    while seen < count:
        state, mirror = State.start(), Mirror(State.start())
        for _ in range(400):
            check_position(state, mirror)
            moves, caps, code = mirror.legal()
            codes.add(code)
            seen += 1
            if len(moves) == 0 or seen >= count:
                break
            capturing = [i for i in range(len(moves)) if caps[i]]
            i = rng.choice(capturing if capturing and rng.random() < 0.5 else range(len(moves)))
            state = state.apply(int(moves[i]))
            mirror.apply(int(moves[i]), int(caps[i]))
            assert (mirror.side, mirror.halfmove, mirror.ply) == (
                state.side, state.halfmove, state.ply)
            assert mirror.keys == list(kernel.history_of(state))
    return codes


# -- shared vectors ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_vector(name):
    v = load_vector("ultima", name)
    state = State.from_text(v["position"])
    mirror = Mirror(state)
    moves, caps, code = mirror.legal()
    # the kernel directly, then through State
    assert texts(moves, caps) == v["legal"]
    assert texts(*piece_moves(mirror.board, mirror.side)) == v.get("piece_moves", v["legal"])
    assert kernel.in_check(mirror.board, mirror.side) == v["side_to_move_in_check"]
    assert RESULT_TEXT.get(code, "1/2-1/2") == v["result"]
    assert sorted(state.legal_move_strs()) == v["legal"]
    assert state.in_check() == v["side_to_move_in_check"]
    assert state.result_code() == v["result"]
    for depth, count in v.get("perft", {}).items():
        assert state.perft(int(depth)) == count, f"perft {depth}"
    if v["result"] != "*":
        assert state.perft(1) == state.perft(2) == 0
    check_position(state, mirror)


def test_start_divide_depth3():
    v = load_vector("ultima", "start.json")
    state = State.start()
    assert state.to_text() == START_TEXT
    assert divide(state, 3) == v["divide_depth3"]


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
        assert state.result_code() == step["result"]
    assert mirror.legal()[2] == kernel.DRAW_REPETITION
    # perft sees the history too: nothing to count below the third occurrence
    assert state.perft(1) == 0
    assert State.from_text(state.to_text()).perft(1) > 0  # read from text: no history


# -- sampled positions: the recorded facts ------------------------------------------------------
@pytest.fixture(scope="module")
def halves() -> tuple[list[State], list[State]]:
    """Return the sampled positions: the played ones and the random placements."""
    return sample(POSITIONS)


def recorded_facts() -> tuple[str, list[str]]:
    """Return the digest of 100,000 positions' fact hashes and the first 5,000 hashes that
    the Python reference rules gave (tests/data/ultima_facts.txt)."""
    lines = [line for line in (DATA / "ultima_facts.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    return lines[0].split()[1], lines[1:]


def test_sample_covers_every_rule(halves):
    positions = [*halves[0], *halves[1]]
    outcomes = {s.outcome().split(":")[0] for s in positions}
    assert outcomes == {"ongoing", "white wins", "black wins", "draw"}
    reasons = {s.draw_reason() for s in positions} - {None}
    assert reasons == {"bare kings", "100 plies without capture", "threefold repetition",
                       "ply cap (400 plies)"}
    assert any(s.in_check() for s in positions) and any(s.frozen() for s in positions)
    # a capture by every kind that captures (the immobilizer never does), and multiple ones
    capturers = {s.board[m >> 6] & 7 for s in positions for m in s.legal_moves()
                 if s.captures(m)}
    assert capturers == {kernel.KING, kernel.PAWN, kernel.LEAPER, kernel.CHAMELEON,
                         kernel.WITHDRAWER, kernel.COORDINATOR}
    assert any(len(s.captures(m)) >= 3 for s in positions for m in s.legal_moves())


def test_rules_equal_the_recorded_reference(halves):
    # the facts of every position, as the Python reference gave them before the kernel
    # replaced it (the digest covers the full 100,000 positions)
    digest, recorded = recorded_facts()
    assert_recorded_facts(*halves, fact_hash, recorded, digest)


def test_the_comparison_sees_one_wrong_fact():
    # why: a capture list one square short, moves out of order and an evaluation one ulp off
    # must each change the recorded hash
    state = State.from_text("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1")  # a2d2xd3 captures d3
    right = facts(state)
    children, value = right[5], right[6]
    assert hashlib.sha256(repr(right).encode()).hexdigest()[:8] == fact_hash(state)
    short = tuple((m, c[1:], t) for m, c, t in children)
    nudged = float.hex(float(np.nextafter(float.fromhex(value), 1.0)))
    assert short != children
    for wrong in (right[:5] + (short,) + right[6:], right[:5] + (children[::-1],) + right[6:],
                  right[:6] + (nudged,) + right[7:]):
        assert hashlib.sha256(repr(wrong).encode()).hexdigest()[:8] != fact_hash(state)


def test_the_kernel_stepped_alone_agrees_with_state():
    codes = play_and_check(seed=3, count=max(POSITIONS // 10, 300))
    assert kernel.ONGOING in codes


def test_sampled_positions_kernel_internals(halves):
    # the masked legality shortcut and the search leaf, on a slice of the sample
    for state in [*halves[0][::10], *halves[1][::10]]:
        check_position(state, Mirror(state))


def test_perft_equals_the_recursion_over_state(halves):
    # the kernel's perft loop (its own move making and repetition keys) against State's moves
    placed = [s for s in halves[1] if not s.is_terminal()][:12]
    for state in placed + [State.start().apply(m) for m in State.start().legal_moves()[::8]]:
        assert state.perft(2) == GameState.perft(state, 2), state.to_text()
    deep = State.from_text("7k/7p/8/8/8/8/P7/K7 w 0 1")
    assert deep.perft(4) == GameState.perft(deep, 4)
    # spec 9.5: ply 399 has moves, no sequence reaches past ply 400; a huge depth answers at once
    near_cap = State.from_text("7k/7p/8/8/8/8/P7/K7 b 0 200")
    assert near_cap.ply == 399 and near_cap.perft(1) == 15 and near_cap.perft(2) == 0
    assert State.from_text("7k/7p/8/8/8/8/P7/K7 w 0 1").perft(10**9) == 0


def test_one_compiled_version_per_function():
    """Every compiled function has one signature: a literal argument (``f(b, 0)``) makes numba
    compile a function and all it calls a second time, which the first compile pays for."""
    from boardzoo.envs.core.registry import get_spec

    spec = get_spec("ultima")
    state = State.start()
    mirror = Mirror(state)
    mirror.legal()
    for s in (state, state.apply(state.legal_moves()[0])):
        s.legal_moves(), s.frozen(), s.in_check(), s.perft(2)
        spec.evaluate(s), spec.action_prior(s), spec.winning_move(s)
        spec.actions.observation(s, 0), spec.actions.action_mask(s)
    scratch = np.empty(kernel.MAX_MOVES, np.int64)
    kernel.judged_evaluation(mirror.board, 0, 0, 0, 1, scratch, scratch.copy())
    compiled = {name: f.signatures for name, f in vars(kernel).items()
                if hasattr(f, "signatures") and f.signatures}
    entries = {"judged_moves", "game_moves", "evaluate_into", "planes", "winning_move"}
    assert entries <= set(compiled)
    assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
