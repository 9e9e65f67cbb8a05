"""The compiled Whistling alpha-beta (agents/alphabeta_whistling.py) against the reference
search (agents/alphabeta.py over rules.State): best move, score and node count at depths 1-3
and a fixed seed on the start, played positions and chain positions (compulsory maximum
captures), ``search_value``, a whole game with small tables, and a position the kernel
refuses inside the tree.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from alphabeta_helpers import assert_same_search, game_log
from whistling_facts import played_positions, sparse_state

from boardzoo.agents import alphabeta_compiled, alphabeta_whistling
from boardzoo.agents.alphabeta import WIN, AlphaBetaAgent
from boardzoo.agents.alphabeta_whistling import PAIRS, CompiledWhistlingAlphaBeta
from boardzoo.agents.base import make_agent
from boardzoo.cli import main
from boardzoo.envs.whistling.hexgrid import BIT, CELL_INDEX, NUM_CELLS, RAYS, ROW
from boardzoo.envs.whistling.rules import ChainLimitError, State


def reference(**kw: object) -> AlphaBetaAgent:
    """Return the reference search for Whistling."""
    return AlphaBetaAgent("whistling", **kw)  # type: ignore[arg-type]


def search_positions() -> list[State]:
    """Return the start, 10 unfinished positions of seeded games and 8 chain positions (a
    whistling capture of two or more stones is compulsory)."""
    rng = random.Random(7)
    games = played_positions(seed=5)
    pool = [s for s in (next(games) for _ in range(600)) if not s.is_terminal() and s.ply]
    chains = [s for s in (sparse_state(rng) for _ in range(400))
              if not s.is_terminal() and s.max_capture() >= 2]
    return [State.start()] + rng.sample(pool, 10) + chains[:8]


POSITIONS = search_positions()


@pytest.mark.parametrize("depth", [1, 2])
def test_compiled_alphabeta_equals_the_reference(depth: int) -> None:
    assert sum(s.max_capture() >= 2 for s in POSITIONS) >= 8
    for i, state in enumerate(POSITIONS):
        assert_same_search(reference(depth=depth, seed=i),
                           CompiledWhistlingAlphaBeta(depth=depth, seed=i), state)


def test_compiled_alphabeta_equals_the_reference_at_depth_3() -> None:
    # the start, two played positions and the chain positions: the reference's depth-3
    # trees there take a few seconds at most
    for i, state in enumerate(POSITIONS[:3] + POSITIONS[-8:]):
        assert_same_search(reference(depth=3, seed=i),
                           CompiledWhistlingAlphaBeta(depth=3, seed=i), state)


def test_compiled_alphabeta_plays_the_same_game() -> None:
    # A game keeps the table and the history between moves; a small tt_size clears the
    # table on the way, tiny tables make the table, the turn table and the history grow.
    logs = []
    for make in (lambda s: reference(depth=2, seed=s, tt_size=300),
                 lambda s: CompiledWhistlingAlphaBeta(depth=2, seed=s, tt_size=300)):
        agents = [make(10), make(11)]
        for agent in agents:
            if isinstance(agent, CompiledWhistlingAlphaBeta):
                agent._tt = np.zeros((4, agent._tt.shape[1]), dtype=np.uint64)
                agent._turns = np.zeros((4, agent._turns.shape[1]), dtype=np.uint64)
                # plain moves and crushes have fixed numbers below 2 * PAIRS
                agent._scores = np.zeros(2 * PAIRS + 1, dtype=np.int64)
        logs.append(game_log(agents, State.start(), 30))
    assert logs[0] == logs[1]


def test_compiled_search_value_equals_the_reference() -> None:
    for state in POSITIONS[:4] + POSITIONS[-4:]:
        want = reference(depth=2, seed=0).search_value(state)
        assert CompiledWhistlingAlphaBeta(depth=2, seed=0).search_value(state) == want


def test_capturing_the_last_stone_scores_a_win() -> None:
    # x's stones either side of o's only stone: each capture of it wins (spec 9: a side
    # without stones has lost), and two turns make the root search them
    f16 = CELL_INDEX["f16"]
    o = RAYS[f16][0][0]
    state = State(BIT[f16] | BIT[RAYS[o][0][0]], BIT[o], 0, 0)
    assert state.legal_count() >= 2
    agent = CompiledWhistlingAlphaBeta(depth=2, seed=0)
    move = agent.select_move(state)
    assert state.play(move).winner() == 0
    assert agent.last_value == WIN - 1


def test_spec_builds_the_compiled_search() -> None:
    assert isinstance(make_agent("alphabeta:3", "whistling", 0), CompiledWhistlingAlphaBeta)
    assert isinstance(make_agent("alphabeta:t=0.3s", "whistling", 0), CompiledWhistlingAlphaBeta)


def test_time_limit_stops_the_compiled_search() -> None:
    state = State.start()
    # load the compiled search and its clock first (the first clock read costs ~0.1 s)
    make_agent("alphabeta:1,t=5s", "whistling", 0).select_move(state)
    agent = make_agent("alphabeta:t=0.05s", "whistling", 0)
    assert agent.select_move(state) in state.legal_moves()
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] >= 1
    agent = make_agent("alphabeta:9", "whistling", 0)
    agent.set_move_time(0.05)
    agent.select_move(state)
    assert agent.stats()["seconds"] < 1.0 and agent.stats()["depth_sum"] < 9


def test_a_position_the_kernel_refuses_in_the_tree_raises_its_error(capsys) -> None:
    # x has 65 stones (rows 17-21), o three: x's turns are listed, but after most of them
    # o can capture among more than MAX_STONES enemy stones, which the kernel refuses
    rows = sum(BIT[c] for c in range(NUM_CELLS) if ROW[c] >= 17)
    state = State(rows, sum(BIT[CELL_INDEX[c]] for c in ("s15", "E15", "J16")), 0, 0)
    assert state.legal_count() == 16
    with pytest.raises(ChainLimitError) as want:
        reference(depth=1, seed=0).select_move(state)
    agent = CompiledWhistlingAlphaBeta(depth=1, seed=0)
    with pytest.raises(ChainLimitError) as got:
        agent.select_move(state)
    assert str(got.value) == str(want.value)
    # the agent searches on afterwards as if nothing had happened
    assert_same_search(reference(depth=2, seed=1), CompiledWhistlingAlphaBeta(depth=2, seed=1),
                       State.start())
    assert agent.select_move(State.start()) in State.start().legal_moves()
    # the CLI says so in one line
    argv = ["play", "whistling", "--agents", "alphabeta:1", "random", "--position",
            state.to_text()]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"boardzoo: error: {want.value}"


def test_one_compiled_version_per_function() -> None:
    """Every compiled function of the search has one signature (a literal argument would
    compile it, and all it calls, a second time)."""
    CompiledWhistlingAlphaBeta(depth=2, seed=0).select_move(POSITIONS[-1])
    CompiledWhistlingAlphaBeta(depth=2, seed=0).search_value(POSITIONS[-1])
    # (the search's own modules: the kernel, compiled cold, also specialises some of its
    # helpers on literal arguments, which costs compile time only; a follow-up)
    for module in (alphabeta_compiled, alphabeta_whistling):
        compiled = {name: f.signatures for name, f in vars(module).items()
                    if hasattr(f, "signatures") and f.signatures}
        assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
