"""The LOA rules (envs/loa/kernel.py, through rules.State) and the compiled search
(agents/alphabeta_loa.py): every shared LOA vector; random and played positions (legal moves
in order, each move's result, game results, evaluation bit for bit) against what the Python
reference rules gave before the kernel replaced them (tests/data/loa_facts.txt) and against the
torch batched engine; and alpha-beta's best move, score and node count against the Python
search of agents/alphabeta.py.

``BOARDZOO_KERNEL_POSITIONS=100000 pytest tests/test_loa_kernel.py`` runs the full 100,000
random and played positions (about a minute); by default a 5,000-position sample keeps the file
within CI's time.
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import numpy as np
import pytest
from alphabeta_helpers import assert_same_search, game_log

from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta
from boardzoo.agents.base import make_agent
from boardzoo.envs.core.board8 import parse_square
from boardzoo.envs.loa import kernel as K
from boardzoo.envs.loa.evaluation import loa_eval
from boardzoo.envs.loa.rules import PASS, START_TEXT, State

from conftest import assert_recorded_facts, load_vector

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "5000"))
DATA = Path(__file__).parent / "data"
RESULT_NAMES = {K.ONGOING: "ongoing", K.BLACK_WINS: "black", K.WHITE_WINS: "white",
                K.DRAW_MOVE_CAP: "draw", K.DRAW_REPETITION: "draw"}


class KernelGame:
    """A game on the kernel alone: bitboards, side, ply and the repetition history (the
    ``State.history`` rules: every position appended, a capture clears it)."""

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
        """Apply ``move`` and keep the history as ``State.apply`` does."""
        key = (int(self.black), int(self.white), self.side)
        self.black, self.white, captured = K.apply_move(self.black, self.white, self.side, move)
        self.history = [key] if captured else [*self.history, key]
        self.side, self.ply = 1 - self.side, self.ply + 1

    def text(self) -> str:
        """Return the position text, written by ``State`` from these bitboards."""
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


def test_perft_stops_at_the_move_cap() -> None:
    # spec 9: the ply advances with each action, so no sequence runs past ply 400
    start = load_vector("loa", "start.json")
    board = start["position"].rsplit(" ", 1)[0]
    near = State.from_text(f"{board} 398")
    assert [near.perft(d) for d in (1, 2, 3)] == [start["perft"]["1"], start["perft"]["2"], 0]
    black, white, side, ply = K.position_of(near)
    assert [K.perft(black, white, side, ply, d) for d in (2, 3)] == [start["perft"]["2"], 0]
    assert State.from_text(f"{board} 10").perft(10**30) == 0  # no leaf, answered at once


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


def facts(state: State) -> tuple:
    """Return what the rules say of a position: its text, its outcome, each legal move in
    order with the position after it and whether it captured, and the evaluation's bits."""
    enemy = state.bb[1 - state.side].bit_count()
    children = []
    for m in state.legal_moves():
        child = state.apply(m)
        children.append((m, *child.bb, child.bb[1 - state.side].bit_count() < enemy))
    return state.to_text(), state.outcome(), tuple(children), float.hex(loa_eval(state))


def fact_hash(state: State) -> str:
    """Return the first 8 hex digits of the sha256 of :func:`facts` (the recorded form)."""
    return hashlib.sha256(repr(facts(state)).encode()).hexdigest()[:8]


def recorded_facts() -> tuple[str, list[str]]:
    """Return the digest of 100,000 positions' fact hashes and the first 5,000 hashes that
    the Python reference rules gave (tests/data/loa_facts.txt)."""
    lines = [line for line in (DATA / "loa_facts.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    digest = lines[0].split()[1]
    return digest, lines[1:]


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
def halves() -> tuple[list[State], list[State]]:
    """Return the sampled positions: the played ones and the random placements."""
    return played_positions(POSITIONS // 2, seed=1), random_positions(POSITIONS // 2, seed=2)


def test_sample_covers_every_rule(halves: tuple[list[State], list[State]]) -> None:
    positions = [*halves[0], *halves[1]]
    outcomes = {s.outcome().split(":")[0] for s in positions}
    assert outcomes == {"ongoing", "black wins", "white wins", "draw"}
    reasons = {s.draw_reason() for s in positions} - {None}
    assert reasons == {"move cap (400 plies)", "threefold repetition"}
    assert any(s.legal_moves() == [PASS] for s in positions)
    assert any(any(s.move_to_str(m)[2] == "x" for m in s.legal_moves() if m != PASS)
               for s in positions)


def test_rules_and_evaluation_equal_the_recorded_reference(
        halves: tuple[list[State], list[State]]) -> None:
    # the facts of every position, as the Python reference gave them before the kernel
    # replaced it (the digest covers the full 100,000 positions)
    digest, recorded = recorded_facts()
    assert_recorded_facts(*halves, fact_hash, recorded, digest)


def test_the_comparison_sees_a_one_bit_evaluation_error() -> None:
    # why: the evaluation is compared bit for bit, so a kernel one ulp off must fail
    state = played_positions(30, seed=3)[-1]
    text, outcome, children, value = facts(state)
    nudged = float.hex(np.nextafter(float.fromhex(value), 1.0))
    same = hashlib.sha256(repr((text, outcome, children, value)).encode()).hexdigest()[:8]
    assert same == fact_hash(state)
    for wrong in ((text, outcome, children, nudged), (text, outcome, children[::-1], value)):
        assert hashlib.sha256(repr(wrong).encode()).hexdigest()[:8] != same


def test_play_is_is_legal_apply_and_notation_in_one(
        halves: tuple[list[State], list[State]]) -> None:
    # State.play (the env's step) against the three calls it replaces, every action of a
    # sample of the positions, finished games (no legal action) included
    played = checked = 0
    for state in [*halves[0][:300], *halves[1][:300]]:
        for move in range(PASS + 1):
            got = state.play(move)
            if not state.is_legal(move):
                assert got is None
                continue
            child, text = got
            want = state.apply(move)
            assert (child.to_text(), child.history, child.outcome()) == (
                want.to_text(), want.history, want.outcome())
            assert text == state.move_to_str(move)
            played += 1
        checked += state.is_terminal()
    assert played > 1000 and checked > 10
    assert all(State.start().play(m) is None for m in (-1, PASS + 1, 10**30))


def test_moves_come_in_generation_order(halves: tuple[list[State], list[State]]) -> None:
    # the order the agents' random choices depend on: by origin, then line, then direction
    for state in [*halves[0], *halves[1]]:
        moves = state.legal_moves()
        assert moves == sorted(moves, key=lambda m: (m >> 3, m & 3, m >> 2 & 1))


def test_the_kernel_equals_the_batched_engine(halves: tuple[list[State], list[State]]) -> None:
    # The torch engine, the other implementation of the rules, on every sampled position:
    # the legal moves, the outcome, the observation, then every legal move's position after.
    from boardzoo.envs.loa.actions import LoaActions
    from boardzoo.envs.loa.batched import BatchedLoa

    torch = pytest.importorskip("torch")
    engine, actions = BatchedLoa(), LoaActions()
    # the batched engine's domain: at most 12 pieces a colour, as in a game (its connection
    # test stops after the 11 king steps that cross a group of 12)
    states = [s for s in [*halves[0], *halves[1]] if max(bb.bit_count() for bb in s.bb) <= 12]
    assert len(states) > len(halves[0])
    for lo in range(0, len(states), 2048):
        chunk = states[lo:lo + 2048]
        batch = engine.from_states(chunk)
        mask = engine.legal_mask(batch).numpy()
        assert np.array_equal(mask, np.stack([actions.action_mask(s) for s in chunk]) == 1)
        assert engine.returns(batch).tolist() == [list(s.returns()) for s in chunk]
        assert batch.over.tolist() == [s.is_terminal() for s in chunk]
        obs = np.stack([actions.observation(s, s.to_move) for s in chunk])
        assert np.array_equal(engine.observation(batch).numpy(), obs)
        game, action = np.nonzero(mask)
        after = engine.step(batch.index(torch.as_tensor(game)), torch.as_tensor(action))
        kids = [chunk[g].apply(int(a)) for g, a in zip(game, action, strict=True)]
        signed = [[bb - (1 << 64) if bb >> 63 else bb for bb in s.bb] for s in kids]
        assert torch.stack([after.black, after.white], 1).tolist() == signed
        assert after.over.tolist() == [s.is_terminal() for s in kids]
        assert engine.returns(after).tolist() == [list(s.returns()) for s in kids]


# -- alpha-beta -----------------------------------------------------------------------------


def search_positions() -> list[State]:
    """Return 20 unfinished positions of played games (some with repetitions behind them)."""
    rng = random.Random(4)
    pool = [s for s in played_positions(1500, seed=5) if not s.is_terminal()]
    return [State.start()] + rng.sample(pool, 19)


@pytest.mark.parametrize("depth", [2, 3])
def test_compiled_alphabeta_equals_the_reference(depth: int) -> None:
    for i, state in enumerate(search_positions()):
        assert_same_search(AlphaBetaAgent("loa", depth=depth, seed=i),
                           CompiledLoaAlphaBeta(depth=depth, seed=i), state)


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
        logs.append(game_log(agents, State.start(), 80))
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
    assert isinstance(make_agent("alphabeta:3", "loa", 0), CompiledLoaAlphaBeta)
    # Ultima and Whistling have theirs (tests/test_ultima_alphabeta.py,
    # tests/test_whistling_alphabeta.py)


def test_time_limit_stops_the_compiled_search() -> None:
    state = State.from_text(START_TEXT)
    # the first search of a process may still load machine code (or compile it, on a cold
    # cache, seconds on a loaded machine); the limit is on searching, so warm up first
    make_agent("alphabeta:1", "loa", 0).select_move(state)
    agent = make_agent("alphabeta:t=0.05s", "loa", 0)
    move = agent.select_move(state)
    assert move in state.legal_moves()
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] >= 2
    agent = make_agent("alphabeta:9", "loa", 0)
    agent.set_move_time(0.05)
    agent.select_move(state)
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] < 9
