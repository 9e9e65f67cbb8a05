"""The compiled LOA kernel (envs/loa/kernel.py) and search (agents/alphabeta_loa.py) against
the reference rules and search: every shared LOA vector, random and played positions (legal
moves in order, each move's result, game results, evaluation bit for bit), and alpha-beta's
best move, score and node count.

``BOARDZOO_KERNEL_POSITIONS=100000 pytest tests/test_loa_kernel.py`` runs the full 100,000
random and played positions (about a minute); by default a 5,000-position sample keeps the file
within CI's time.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from boardzoo.agents.alphabeta import AlphaBetaAgent, from_spec
from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta
from boardzoo.envs.core.board8 import parse_square
from boardzoo.envs.loa import kernel as K
from boardzoo.envs.loa.evaluation import loa_eval
from boardzoo.envs.loa.rules import PASS, START_TEXT, State

from conftest import load_vector

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "5000"))
RESULT_NAMES = {K.ONGOING: "ongoing", K.BLACK_WINS: "black", K.WHITE_WINS: "white",
                K.DRAW_MOVE_CAP: "draw", K.DRAW_REPETITION: "draw"}


class KernelGame:
    """A game on the kernel alone: bitboards, side, ply and the repetition history (the
    reference's ``State.history`` rules: every position appended, a capture clears it)."""

    def __init__(self, text: str) -> None:
        self.black, self.white, self.side, self.ply = K.position_of(State.from_text(text))
        self.history: list[tuple[int, int, int]] = []

    def rows(self) -> np.ndarray:
        """Return the history as the kernel's (n, 3) uint64 rows."""
        return np.array(self.history, dtype=np.uint64).reshape(len(self.history), 3)

    def result(self) -> int:
        """Return the kernel's result code, repetition included."""
        rows = self.rows()
        repeated = K.repetitions(rows, 0, len(rows), self.black, self.white, self.side) >= 2
        return K.judge(self.black, self.white, self.side, self.ply, repeated)

    def legal(self) -> list[int]:
        """Return the kernel's legal actions."""
        rows = self.rows()
        repeated = K.repetitions(rows, 0, len(rows), self.black, self.white, self.side) >= 2
        out = np.empty(K.MAX_MOVES, dtype=np.int64)
        n = K.legal_moves(self.black, self.white, self.side, self.ply, repeated, out)
        return [int(m) for m in out[:n]]

    def move_named(self, text: str) -> int:
        """Return the legal kernel move written ``text`` (``b1-b3``, ``c1xa3``, ``pass``)."""
        for move in self.legal():
            if move == PASS:
                if text == "pass":
                    return move
                continue
            dest = K.destination(self.black, self.white, move)
            if (move >> 3, dest) == (parse_square(text[:2]), parse_square(text[3:5])):
                return move
        raise AssertionError(f"{text} is not legal in the kernel")

    def play(self, move: int) -> None:
        """Apply ``move`` and keep the history as the reference does."""
        key = (int(self.black), int(self.white), self.side)
        self.black, self.white, captured = K.apply_move(self.black, self.white, self.side, move)
        self.history = [key] if captured else [*self.history, key]
        self.side, self.ply = 1 - self.side, self.ply + 1

    def text(self) -> str:
        """Return the position text, written by the reference from the kernel's bitboards."""
        return State(int(self.black), int(self.white), self.side, self.ply).to_text()


def kernel_strs(state: State, moves: list[int]) -> list[str]:
    """Return kernel moves in canonical notation, sorted (the vectors' form)."""
    return sorted(state.move_to_str(m) for m in moves)


# -- shared vectors -----------------------------------------------------------------------


def test_start_vector_moves_perft_and_divide() -> None:
    vec = load_vector("loa", "start.json")
    game = KernelGame(vec["position"])
    state = State.from_text(vec["position"])
    assert kernel_strs(state, game.legal()) == vec["legal"]
    assert len(game.legal()) == vec["legal_count"]
    for depth, count in vec["perft"].items():
        assert K.perft(game.black, game.white, game.side, game.ply, int(depth)) == count
    for move in game.legal():
        b, w, _ = K.apply_move(game.black, game.white, game.side, move)
        assert K.perft(b, w, 1 - game.side, 1, 1) == vec["divide_2"][state.move_to_str(move)]


@pytest.mark.parametrize("case", load_vector("loa", "rules.json")["cases"], ids=lambda c: c["id"])
def test_rules_vector(case: dict) -> None:
    game = KernelGame(case["position"])
    state = State.from_text(case["position"])
    legal = kernel_strs(state, game.legal())
    assert legal == case["legal"] and len(legal) == case["legal_count"]
    assert RESULT_NAMES[game.result()] == case["result"]
    assert set(case.get("must_include", ())) <= set(legal)
    assert not set(case.get("must_exclude", ())) & set(legal)
    if "play" in case:
        for text in case["play"]:
            game.play(game.move_named(text))
        assert game.text() == case["position_after"]
        assert RESULT_NAMES[game.result()] == case["result_after"]
        after = State.from_text(case["position_after"])
        assert kernel_strs(after, game.legal()) == case["legal_after"]


def test_repetition_vector_draws_on_the_third_occurrence() -> None:
    vec = load_vector("loa", "repetition.json")
    game = KernelGame(vec["start"])
    for step in vec["steps"]:
        game.play(game.move_named(step["move"]))
        assert game.text() == step["position"]
        rows = game.rows()
        seen = K.repetitions(rows, 0, len(rows), game.black, game.white, game.side)
        assert seen + 1 == step["occurrence"]
        assert RESULT_NAMES[game.result()] == step["result"]
    assert game.result() == K.DRAW_REPETITION and game.legal() == []


def test_published_game_prefix_replays() -> None:
    vec = load_vector("loa", "game_1996_ddyer_charly_prefix.json")
    game = KernelGame(vec["start"])
    for step in vec["steps"]:
        game.play(game.move_named(step["canonical"]))
        assert game.text() == step["position"]
    assert game.text() == vec["final_position"]
    assert RESULT_NAMES[game.result()] == vec["result_after_prefix"]


def test_notation_vector_pass_position_has_only_the_pass() -> None:
    vec = load_vector("loa", "notation.json")
    assert KernelGame(vec["pass_position"]).legal() == [PASS]


# -- random and played positions ----------------------------------------------------------


def reference_facts(state: State) -> dict:
    """Return what the reference says of a position: legal moves in order, each move's
    position after and whether it captured, the result and the evaluation's bits."""
    code = (K.ONGOING if not state.is_terminal()
            else K.BLACK_WINS if state.winner() == 0 else K.WHITE_WINS if state.winner() == 1
            else K.DRAW_MOVE_CAP if state.draw_reason().startswith("move cap")
            else K.DRAW_REPETITION)
    moves = list(state.legal_moves())
    enemy = state.bb[1 - state.side].bit_count()
    children = []
    for m in moves:
        child = state.apply(m)
        children.append((*child.bb, child.bb[1 - state.side].bit_count() < enemy))
    return {"moves": moves, "children": children, "result": code,
            "eval": float.hex(loa_eval(state))}


def kernel_facts(state: State) -> dict:
    """Return the same facts as :func:`reference_facts`, computed by the kernel."""
    black, white, side, ply = K.position_of(state)
    rows = K.history_of(state)
    repeated = K.repetitions(rows, 0, len(rows), black, white, side) >= 2
    out = np.empty(K.MAX_MOVES, dtype=np.int64)
    moves = [int(m) for m in out[: K.legal_moves(black, white, side, ply, repeated, out)]]
    children = []
    for m in moves:
        b, w, captured = K.apply_move(black, white, side, m)
        children.append((int(b), int(w), bool(captured)))
    return {"moves": moves, "children": children,
            "result": K.judge(black, white, side, ply, repeated),
            "eval": float.hex(float(K.evaluate(black, white, side)))}


def played_positions(n: int, seed: int) -> list[State]:
    """Return ``n`` positions of seeded random games, with their repetition history; a third
    of the moves undo the mover's last move when they can, so positions do repeat."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < n:
        state, last = State.start(), {}
        while not state.is_terminal() and len(out) < n:
            out.append(state)
            moves = state.legal_moves()
            move = rng.choice(moves)
            back = last.get(state.side)
            if back is not None and back in moves and rng.random() < 0.33:
                move = back
            if move != PASS:  # the move that would take the piece back: from dest, reversed
                last[state.side] = 8 * state.destination(move) + ((move & 7) + 4) % 8
            state = state.apply(move)
        out.append(state)  # the finished game's last position too
    return out[:n]


def random_positions(n: int, seed: int) -> list[State]:
    """Return ``n`` random placements: any piece counts (a quarter of them crowded, where
    passes happen), either side to move, plies around the move cap."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        crowded = rng.random() < 0.25
        total = rng.randint(40, 64) if crowded else rng.randint(2, 24)
        squares = rng.sample(range(64), total)
        n_black = rng.randint(1, total - 1)
        black = sum(1 << s for s in squares[:n_black])
        white = sum(1 << s for s in squares[n_black:])
        ply = rng.choice((0, rng.randint(0, 420), 399, 400, 401))
        out.append(State(black, white, rng.randint(0, 1), ply))
    return out


@pytest.fixture(scope="module")
def positions() -> list[State]:
    """Return the sampled positions: half played, half random."""
    return played_positions(POSITIONS // 2, seed=1) + random_positions(POSITIONS // 2, seed=2)


@pytest.fixture(scope="module")
def expected(positions: list[State]) -> list[dict]:
    """Return the reference's facts of every sampled position."""
    return [reference_facts(s) for s in positions]


def test_sample_covers_every_rule(positions: list[State], expected: list[dict]) -> None:
    codes = {facts["result"] for facts in expected}
    assert codes == {K.ONGOING, K.BLACK_WINS, K.WHITE_WINS, K.DRAW_MOVE_CAP, K.DRAW_REPETITION}
    assert any(s.legal_moves() == [PASS] for s in positions)
    assert any(any(s.move_to_str(m)[2] == "x" for m in s.legal_moves() if m != PASS)
               for s in positions)


def test_kernel_equals_the_reference_on_random_and_played_positions(
        positions: list[State], expected: list[dict]) -> None:
    bad = [s.to_text() for s, facts in zip(positions, expected, strict=True)
           if kernel_facts(s) != facts]
    assert not bad, f"{len(bad)} of {len(positions)} positions differ, first: {bad[:3]}"


def test_the_comparison_sees_a_one_bit_evaluation_error() -> None:
    # why: the evaluation is compared bit for bit, so a kernel one ulp off must fail
    state = played_positions(30, seed=3)[-1]
    facts = kernel_facts(state)
    assert facts == reference_facts(state)
    value = float.fromhex(facts["eval"])
    assert {**facts, "eval": float.hex(np.nextafter(value, 1.0))} != reference_facts(state)
    assert {**facts, "moves": facts["moves"][::-1]} != reference_facts(state)


# -- alpha-beta -----------------------------------------------------------------------------


def search_positions() -> list[State]:
    """Return 20 unfinished positions of played games (some with repetitions behind them)."""
    rng = random.Random(4)
    pool = [s for s in played_positions(1500, seed=5) if not s.is_terminal()]
    return [State.start()] + rng.sample(pool, 19)


@pytest.mark.parametrize("depth", [2, 3])
def test_compiled_alphabeta_equals_the_reference(depth: int) -> None:
    for i, state in enumerate(search_positions()):
        ref, fast = (cls(depth=depth, seed=i) for cls in (
            lambda **kw: AlphaBetaAgent("loa", **kw), CompiledLoaAlphaBeta))
        assert fast.select_move(state) == ref.select_move(state), state.to_text()
        assert fast.last_value == ref.last_value
        assert fast.stats()["nodes"] == ref.stats()["nodes"]


def test_compiled_alphabeta_plays_the_same_game() -> None:
    # A whole game keeps the table, the history scores and the repetition history between
    # moves; a small table_size clears the table on the way, a tiny table makes it grow.
    logs = []
    for make in (lambda s: AlphaBetaAgent("loa", depth=2, seed=s, tt_size=300),
                 lambda s: CompiledLoaAlphaBeta(depth=2, seed=s, tt_size=300)):
        agents = [make(10), make(11)]
        if isinstance(agents[0], CompiledLoaAlphaBeta):
            for agent in agents:
                agent._tt = np.zeros((4, agent._tt.shape[1]), dtype=np.uint64)
        state, log = State.start(), []
        while not state.is_terminal() and state.ply < 80:
            agent = agents[state.to_move]
            move = agent.select_move(state)
            log.append((move, agent.last_value, agent.stats()["nodes"]))
            state = state.apply(move)
        logs.append(log)
    assert logs[0] == logs[1]


def test_compiled_search_value_equals_the_reference() -> None:
    for state in search_positions()[:8]:
        ref = AlphaBetaAgent("loa", depth=3, seed=0).search_value(state)
        assert CompiledLoaAlphaBeta(depth=3, seed=0).search_value(state) == ref


def test_a_won_position_scores_a_win() -> None:
    # Black to move connects with c5-c3 (rules vector win_by_connection).
    state = State.from_text("8/8/8/2b1w2w/2b5/4w2w/1b6/b7 b 20")
    agent = CompiledLoaAlphaBeta(depth=2, seed=0)
    assert state.move_to_str(agent.select_move(state)) == "c5-c3"
    assert agent.last_value == 1_000_000.0 - 1


def test_spec_builds_the_compiled_search_for_loa() -> None:
    assert isinstance(from_spec("3", "loa", 0), CompiledLoaAlphaBeta)
    # Ultima has its own (tests/test_ultima_alphabeta.py); Whistling keeps the reference
    assert type(from_spec("3", "whistling", 0)) is AlphaBetaAgent


def test_time_limit_stops_the_compiled_search() -> None:
    agent = from_spec("t=0.05s", "loa", 0)
    state = State.from_text(START_TEXT)
    move = agent.select_move(state)
    assert move in state.legal_moves()
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] >= 2
    agent = from_spec("9", "loa", 0)
    agent.set_move_time(0.05)
    agent.select_move(state)
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] < 9
