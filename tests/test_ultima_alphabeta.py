"""The compiled Ultima alpha-beta (agents/alphabeta_ultima.py) against the reference search
(agents/alphabeta.py) on played positions: best move, score and node count at a fixed depth
and seed, ``search_value``, whole games with the table kept, and the draw rules inside the
tree (repetition, the no-capture rule, the ply cap). The reference searches a few thousand
nodes a second, so the positions are chosen to keep this file within seconds.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from alphabeta_helpers import game_log

from boardzoo.agents import alphabeta_compiled, alphabeta_ultima
from boardzoo.agents.alphabeta import WIN, AlphaBetaAgent
from boardzoo.agents.alphabeta_ultima import CompiledUltimaAlphaBeta, history_rows
from boardzoo.agents.base import make_agent
from boardzoo.envs.ultima import kernel
from boardzoo.envs.ultima.rules import State
from boardzoo.training.search.leaf import LeafSearch

# Black to move mates at once with the withdrawer (tests/test_leaf_search.py).
BEFORE_MATE = "7k/8/8/8/8/7P/1i6/K1w5 b 0 1"
# The repetition vector's kings: six plies of a1b1 h8g8 b1a1 g8h8 a1b1 h8g8 made, b1a1 and
# g8h8 would repeat the start a third time.
SHUFFLE = ["a1b1", "h8g8", "b1a1", "g8h8", "a1b1", "h8g8"]
REPETITION = "7k/7p/8/8/8/8/P7/K7 w 0 1"
UP_A_LEAPER = "7k/7p/8/8/3L4/8/P7/K7 w 0 1"
# White is a leaper up, but two plies on the no-capture rule or the ply cap draws.
CLOCKS = [UP_A_LEAPER.replace(" 0 1", " 98 1"), UP_A_LEAPER.replace(" 0 1", " 0 200")]


def reference(**kw: object) -> AlphaBetaAgent:
    """Return the reference search for Ultima."""
    return AlphaBetaAgent("ultima", **kw)  # type: ignore[arg-type]


def played_states(count: int, seed: int) -> list[State]:
    """Return ``count`` unfinished positions of seeded games that prefer captures (so the
    board thins out as in real play) and sometimes move a piece back (so positions repeat)."""
    rng = random.Random(seed)
    pool: list[State] = []
    while len(pool) < 10 * count:
        state, last = State.start(), -1
        for _ in range(rng.randint(10, 120)):
            moves = state.legal_moves()
            if not moves:
                break
            back = (last & 63) << 6 | last >> 6
            captures = [m for m in moves if state.captures(m)]
            if back in moves and rng.random() < 0.2:
                move = back
            elif captures and rng.random() < 0.6:
                move = rng.choice(captures)
            else:
                move = rng.choice(moves)
            state, last = state.apply(move), move
        if not state.is_terminal():
            pool.append(state)
    return rng.sample(pool, count)


def shuffled(text: str = REPETITION) -> State:
    """Return the position after the repetition vector's first six plies from ``text``."""
    state = State.from_text(text)
    for move in SHUFFLE:
        state = state.apply(state.parse_move(move))
    return state


def search_positions() -> list[State]:
    """Return 20 played positions, the start, and the draw rules' positions."""
    special = [State.from_text(BEFORE_MATE), shuffled()] + [State.from_text(t) for t in CLOCKS]
    return [State.start()] + played_states(20, seed=3) + special


POSITIONS = search_positions()


def same_search(state: State, depth: int, seed: int) -> None:
    """Assert that both searches find the same best move, score and node count."""
    ref, fast = reference(depth=depth, seed=seed), CompiledUltimaAlphaBeta(depth=depth, seed=seed)
    assert fast.select_move(state) == ref.select_move(state), state.to_text()
    assert fast.last_value == ref.last_value, state.to_text()
    assert fast.stats()["nodes"] == ref.stats()["nodes"], state.to_text()


@pytest.mark.parametrize("depth", [1, 2])
def test_compiled_alphabeta_equals_the_reference(depth: int) -> None:
    for i, state in enumerate(POSITIONS):
        same_search(state, depth, seed=i)


def test_compiled_alphabeta_equals_the_reference_at_depth_3() -> None:
    # the start and the sparser positions: the reference's depth-3 trees there take a
    # second or less
    small = sorted(POSITIONS[1:21], key=lambda s: s.board.count(0), reverse=True)[:3]
    for i, state in enumerate([State.start()] + small + POSITIONS[-4:]):
        same_search(state, 3, seed=i)


def test_the_draw_rules_decide_inside_the_tree() -> None:
    # White is a leaper up; after b1a1 Black draws by g8h8 (the third occurrence), which only
    # a search that counts the game's history sees
    state = shuffled(UP_A_LEAPER)
    state = state.apply(state.parse_move("b1a1"))
    fast = CompiledUltimaAlphaBeta(depth=1)
    assert fast.search_value(state) == reference(depth=1).search_value(state) == 0.0
    assert CompiledUltimaAlphaBeta(depth=1).search_value(State.from_text(state.to_text())) < 0
    # two plies from the no-capture rule or the ply cap the leaper is worth nothing
    assert CompiledUltimaAlphaBeta(depth=2).search_value(State.from_text(UP_A_LEAPER)) > 3
    for text in CLOCKS:
        state = State.from_text(text)
        assert CompiledUltimaAlphaBeta(depth=2).search_value(state) == 0.0
        assert reference(depth=2).search_value(state) == 0.0


def test_a_mate_in_one_scores_a_win() -> None:
    state = State.from_text(BEFORE_MATE)
    agent = CompiledUltimaAlphaBeta(depth=2, seed=0)
    move = agent.select_move(state)
    assert state.apply(move).winner() == 1
    assert agent.last_value == WIN - 1
    assert CompiledUltimaAlphaBeta(depth=1).search_value(state.apply(move)) == -WIN


def test_compiled_alphabeta_plays_the_same_game() -> None:
    # A whole game keeps the table, the history scores and the repetition history between
    # moves; a small tt_size clears the table on the way, a tiny table makes it grow.
    logs = []
    for make in (lambda s: reference(depth=2, seed=s, tt_size=300),
                 lambda s: CompiledUltimaAlphaBeta(depth=2, seed=s, tt_size=300)):
        agents = [make(10), make(11)]
        for agent in agents:
            if isinstance(agent, CompiledUltimaAlphaBeta):
                agent._tt = np.zeros((4, agent._tt.shape[1]), dtype=np.uint64)
        logs.append(game_log(agents, State.start(), 40))
    assert logs[0] == logs[1]


def test_compiled_search_value_equals_the_reference() -> None:
    # One searcher for every position, as the leaf search keeps it: the table carries over.
    ref, fast = reference(depth=2), CompiledUltimaAlphaBeta(depth=2)
    for state in POSITIONS[:12] + POSITIONS[-4:]:
        assert fast.search_value(state) == ref.search_value(state), state.to_text()
    assert fast.stats()["nodes"] == ref.stats()["nodes"]


def test_the_leaf_search_uses_the_compiled_search() -> None:
    leaf = LeafSearch("ultima", 2)
    assert isinstance(leaf.searcher, CompiledUltimaAlphaBeta)
    state = POSITIONS[5]
    expected = LeafSearch("ultima", 2)
    expected.searcher = reference(depth=2)
    assert leaf(state) == expected(state)


def test_spec_builds_the_compiled_search() -> None:
    agent = make_agent("alphabeta:3", "ultima", 0)
    assert isinstance(agent, CompiledUltimaAlphaBeta) and agent.depth == 3
    assert isinstance(make_agent("alphabeta:t=0.5s", "ultima", 0), CompiledUltimaAlphaBeta)


def test_time_limit_stops_the_compiled_search() -> None:
    state = POSITIONS[7]
    agent = make_agent("alphabeta:t=0.2s", "ultima", 0)
    move = agent.select_move(state)
    assert move in state.legal_moves()
    # depth 2 takes milliseconds, even on a loaded machine
    assert agent.stats()["seconds"] < 2.0 and agent.stats()["depth_sum"] >= 2
    agent = make_agent("alphabeta:9", "ultima", 0)
    agent.set_move_time(0.05)
    assert agent.select_move(state) in state.legal_moves()
    assert agent.stats()["seconds"] < 2.0 and agent.stats()["depth_sum"] < 9


def test_keys_are_the_reference_keys() -> None:
    # the path's rows are State.history exactly: equal rows for equal (board, side) only
    state = shuffled()
    rows = history_rows(state, 0)
    assert len(rows) == len(state.history) == 7
    same = [[bool((rows[i] == rows[j]).all()) for j in range(7)] for i in range(7)]
    assert same == [[state.history[i] == state.history[j] for j in range(7)] for i in range(7)]
    for i, h in enumerate(state.history):
        row = np.zeros(5, dtype=np.uint64)
        alphabeta_ultima._pack(np.frombuffer(h[:64], dtype=np.uint8).copy(), int(h[64:] == b"b"),
                               row)
        assert (row == rows[i]).all()
        codes = [int(row[s // 16]) >> (4 * (s % 16)) & 15 for s in range(64)]
        assert bytes(codes) == h[:64]


def test_one_compiled_version_per_function() -> None:
    """Every compiled function the search calls has one signature (a literal argument would
    compile it, and all it calls, a second time)."""
    CompiledUltimaAlphaBeta(depth=2, seed=0).select_move(POSITIONS[3])
    CompiledUltimaAlphaBeta(depth=2, seed=0).search_value(POSITIONS[3])
    for module in (alphabeta_compiled, alphabeta_ultima, kernel):
        compiled = {name: f.signatures for name, f in vars(module).items()
                    if hasattr(f, "signatures") and f.signatures}
        assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
