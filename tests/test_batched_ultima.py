"""The batched Ultima engine against the reference rules engine and the shared vectors."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.board8 import placement_text
from boardzoo.envs.core.game import BoardzooError, PositionError
from boardzoo.envs.core.registry import batched_game
from boardzoo.envs.ultima.actions import UltimaActions
from boardzoo.envs.ultima.batched import BatchedUltima, UltimaBatch
from boardzoo.envs.ultima.rules import State

from conftest import VECTORS, load_vector

ENGINE = BatchedUltima()
ACTIONS = UltimaActions()
VECTOR_NAMES = sorted(p.name for p in Path(VECTORS / "ultima").glob("*.json")
                      if p.name != "repetition_draw.json")
RESULT_RETURNS = {"*": (0, 0), "1/2-1/2": (0, 0), "1-0": (1, -1), "0-1": (-1, 1)}


def action_of(text: str) -> int:
    """Decode move text (``e2e5...``) into ``64 * origin + destination`` by the spec's squares."""
    sq = [8 * (int(text[i + 1]) - 1) + "abcdefgh".index(text[i]) for i in (0, 2)]
    return 64 * sq[0] + sq[1]


def pick(state: State, rng: random.Random, greed: float) -> int:
    """Return a random legal move, a capture with probability ``greed`` when there is one."""
    moves = state.legal_moves()
    takes = [m for m in moves if state.captures(m)]
    return rng.choice(takes if takes and rng.random() < greed else moves)


def random_positions(games: int, seed: int) -> list[State]:
    """Return every position of random reference games, final ones included; half of the
    games prefer captures, which brings more checks, mates and bare kings."""
    rng, out = random.Random(seed), []
    for game in range(games):
        state = State.start()
        out.append(state)
        while not state.is_terminal():
            state = state.apply(pick(state, rng, 0.7 * (game % 2)))
            out.append(state)
    return out


#: Hand-built edges: one move reaches 100 plies without capture, the ply cap, bare kings, or
#: (last of the four) 99 plies only; a chameleon's check; a checkmate; three White
#: coordinators, kings on rank 7: c2c6 would take d6 and open a3-f8 onto the king's file.
EDGES = [
    "k7/8/8/8/8/8/6P1/K7 w 99 30",
    "k7/8/8/8/8/8/6p1/K7 b 10 200",
    "7k/8/8/8/8/8/1p6/K7 w 0 1",
    "7k/8/8/8/8/8/1p6/K7 w 98 199",
    "4k3/pp1C4/8/8/8/8/8/7K b 0 1",
    "7k/8/8/8/8/7P/1i6/Kw6 w 0 1",
    "P2Cl3/KPi2k1O/3Occop/c2plL1P/3cCppp/OW1p3C/cWp1p2p/1p1LPw1P b 0 8",
]


def summary(state: State) -> tuple:
    """Return what must agree between the engines: position, history, outcome."""
    return state.to_text(), state.history, state.is_terminal(), state.winner(), state.returns()


def assert_matches(states: list[State], batch) -> None:
    """Assert the batch equals the reference states in masks, planes, positions, outcomes."""
    mask = ENGINE.legal_mask(batch).numpy()
    assert np.array_equal(mask, np.stack([ACTIONS.action_mask(s) for s in states]).astype(bool))
    obs = ENGINE.observation(batch).numpy()
    assert np.array_equal(obs, np.stack([ACTIONS.observation(s, s.to_move) for s in states]))
    assert [summary(s) for s in ENGINE.to_states(batch)] == [summary(s) for s in states]
    assert ENGINE.terminated(batch).tolist() == [s.is_terminal() for s in states]
    assert [tuple(r) for r in ENGINE.returns(batch).tolist()] == [s.returns() for s in states]
    assert ENGINE.to_move(batch).tolist() == [s.to_move for s in states]
    assert ENGINE.in_check(batch).tolist() == [s.in_check() for s in states]


def test_random_positions_and_one_step_match_the_reference():
    states = random_positions(4, seed=1) + [State.from_text(t) for t in EDGES]
    # the sample must hold the cases the engine is most likely to get wrong
    assert sum(s.in_check() for s in states) >= 20
    assert sum(s.winner() is not None for s in states) >= 2  # mates / stalemates
    assert sum(bool(s.frozen()) for s in states) >= 200
    assert sum(s.board.count(0) == 62 for s in states) >= 1
    batch = ENGINE.from_states(states)
    assert_matches(states, batch)
    rng = random.Random(2)
    moves = [pick(s, rng, 0.5) if not s.is_terminal() else 0 for s in states]
    after = [s.apply(m) if not s.is_terminal() else s for s, m in zip(states, moves, strict=True)]
    assert sum(1 for s, m in zip(states, moves, strict=True)  # chameleon captures
               if not s.is_terminal() and s.captures(m) and s.board[m >> 6] & 7 == 4) >= 10
    assert_matches(after, ENGINE.step(batch, torch.tensor(moves)))


def scattered_positions(count: int, seed: int) -> list[State]:
    """Return valid positions of up to 40 random pieces each, piece counts free (several
    coordinators or immobilizers, ...), as position text allows; many are in check."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        squares = rng.sample(range(64), rng.randint(2, 40) + 2)
        cells: list[str | None] = [None] * 64
        cells[squares[0]], cells[squares[1]] = "K", "k"
        for sq in squares[2:]:
            cells[sq] = rng.choice("PPPPLLCCWIOplccwiopppp")
        text = f"{placement_text(cells)} {rng.choice('wb')} {rng.randint(0, 99)} 9"
        try:
            out.append(State.from_text(text))
        except PositionError:  # the side not to move is in check
            pass
    return out


def test_scattered_positions_and_one_step_match_the_reference():
    states = scattered_positions(300, seed=3)
    assert sum(s.in_check() for s in states) >= 60
    batch = ENGINE.from_states(states)
    assert_matches(states, batch)
    rng = random.Random(4)
    moves = [pick(s, rng, 0.5) if not s.is_terminal() else 0 for s in states]
    after = [s.apply(m) if not s.is_terminal() else s for s, m in zip(states, moves, strict=True)]
    assert_matches(after, ENGINE.step(batch, torch.tensor(moves)))


def test_edge_steps_reach_each_draw_rule():
    states = [State.from_text(t) for t in EDGES[:4]]
    batch = ENGINE.step(ENGINE.from_states(states), torch.tensor(
        [action_of(m) for m in ("g2g3", "g2g1", "a1b2", "a1a2")]))
    after = ENGINE.to_states(batch)
    assert [s.result_code() for s in after] == ["1/2-1/2"] * 3 + ["*"]
    assert [s.halfmove for s in after] == [100, 11, 0, 99]
    assert ENGINE.terminated(batch).tolist() == [True] * 3 + [False]
    assert not ENGINE.legal_mask(batch)[:3].any() and ENGINE.legal_mask(batch)[3].any()


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_vector_moves_check_and_result(name):
    v = load_vector("ultima", name)
    batch = ENGINE.from_states([State.from_text(v["position"])])
    legal = {action_of(m) for m in v["legal"]}  # none in a finished position
    # the pieces' moves: a drawn vector's piece_moves, else exactly the legal moves
    pieces = {action_of(m) for m in v.get("piece_moves", v["legal"])}
    assert set(ENGINE.rule_mask(batch)[0].nonzero().flatten().tolist()) == pieces
    assert set(ENGINE.legal_mask(batch)[0].nonzero().flatten().tolist()) == legal
    assert not legal or v["result"] == "*"
    assert ENGINE.to_states(batch)[0].to_text() == v["position"]
    assert bool(ENGINE.in_check(batch)[0]) == v["side_to_move_in_check"]
    assert bool(ENGINE.terminated(batch)[0]) == (v["result"] != "*")
    assert tuple(ENGINE.returns(batch)[0].tolist()) == RESULT_RETURNS[v["result"]]


def test_repetition_vector_step_by_step():
    v = load_vector("ultima", "repetition_draw.json")
    batch = ENGINE.from_states([State.from_text(v["position"])])
    for entry in v["sequence"]:
        batch = ENGINE.step(batch, torch.tensor([action_of(entry["move"])]))
        assert ENGINE.to_states(batch)[0].to_text() == entry["position"]
        assert bool(ENGINE.terminated(batch)[0]) == (entry["result"] != "*")
        assert tuple(ENGINE.returns(batch)[0].tolist()) == RESULT_RETURNS[entry["result"]]
    assert int(batch.seen[0]) == 3


def test_whole_random_games_in_lockstep():
    n = 8
    batch, states = ENGINE.initial(n), [State.start()] * n
    rng = random.Random(5)  # capture-happy games: shorter, and they end every way
    while not all(s.is_terminal() for s in states):
        actions = [pick(s, rng, 0.6) if not s.is_terminal() else 0 for s in states]
        states = [s.apply(a) if not s.is_terminal() else s
                  for s, a in zip(states, actions, strict=True)]
        batch = ENGINE.step_inplace(batch, torch.tensor(actions))
        assert [summary(s) for s in ENGINE.to_states(batch)] == [summary(s) for s in states]
        mask = ENGINE.legal_mask(batch).numpy()
        assert np.array_equal(mask, np.stack([ACTIONS.action_mask(s) for s in states]) == 1)
    assert len({s.result_code() for s in states}) >= 2


def test_random_actions_are_uniform_over_the_legal_moves():
    start = State.start()
    batch = UltimaBatch.cat([ENGINE.initial(6400), ENGINE.from_states([State.from_text(EDGES[5])])])
    actions = ENGINE.random_actions(batch, torch.Generator().manual_seed(0)).tolist()
    counts = np.bincount(actions[:-1], minlength=4096)
    assert set(np.flatnonzero(counts)) == set(start.legal_moves())
    assert counts.max() < 2 * 6400 / 32  # 32 moves: 200 each on average
    assert actions[-1] == 0  # checkmate: no legal move


def test_finished_games_stay_put_and_reset_where_restarts_them():
    states = [State.from_text(EDGES[5]), State.start()]  # a checkmate and a live game
    batch = ENGINE.from_states(states)
    after = ENGINE.step(batch, torch.tensor([0, action_of("a2a4")]))
    back = ENGINE.to_states(after)
    assert summary(back[0]) == summary(states[0])
    assert back[1].to_text() == "olcwkcli/pppppppp/8/8/P7/8/1PPPPPPP/ILCKWCLO b 1 1"
    fresh = ENGINE.reset_where(after, torch.tensor([False, True]))
    assert [summary(s) for s in ENGINE.to_states(fresh)] == [summary(states[0]),
                                                               summary(State.start())]
    assert back[1].to_text() == ENGINE.to_states(after)[1].to_text()  # input untouched


def test_registry_and_bad_input():
    assert isinstance(batched_game("ultima"), BatchedUltima)
    with pytest.raises(BoardzooError):
        ENGINE.from_states([])
    with pytest.raises(BoardzooError):
        ENGINE.from_states(["olcwkcli/pppppppp/8/8/8/8/PPPPPPPP/ILCKWCLO w 0 1"])
    start = State.start()
    jumbled = State(start.board, 0, 2, 2, (State.from_text(EDGES[0]).history[0],))
    with pytest.raises(BoardzooError, match="quiet move"):
        ENGINE.from_states([jumbled])
