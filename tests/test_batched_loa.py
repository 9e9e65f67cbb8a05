"""The batched LOA engine against the reference rules engine and the shared vectors."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from boardzoo.envs.core.board8 import DIRECTIONS, parse_square
from boardzoo.envs.core.game import BoardzooError
from boardzoo.envs.loa import batched
from boardzoo.envs.loa.actions import LoaActions
from boardzoo.envs.loa.batched import BatchedLoa
from boardzoo.envs.loa.rules import PASS, State

from conftest import load_vector

ENGINE = BatchedLoa()
ACTIONS = LoaActions()
RULES = load_vector("loa", "rules.json")["cases"]
RESULT_RETURNS = {"ongoing": (0, 0), "draw": (0, 0), "black": (1, -1), "white": (-1, 1)}


def action_of(text: str) -> int:
    """Decode canonical move text into the action number straight from the spec's geometry."""
    if text == "pass":
        return PASS
    a, b = parse_square(text[:2]), parse_square(text[3:])
    df, dr = b % 8 - a % 8, b // 8 - a // 8
    step = (int(np.sign(df)), int(np.sign(dr)))
    return 8 * a + DIRECTIONS.index(step)


def random_positions(games: int, seed: int) -> list[State]:
    """Return every position (final ones included) of random reference games."""
    rng, out = random.Random(seed), []
    for _ in range(games):
        state = State.start()
        out.append(state)
        while not state.is_terminal():
            state = state.apply(rng.choice(state.legal_moves()))
            out.append(state)
    return out


def summary(state: State) -> tuple:
    """Return what must agree between two engines: position, history, outcome."""
    return state.to_text(), state.history, state.is_terminal(), state.winner(), state.returns()


def batch_summary(batch, i: int, state: State) -> tuple:
    """Return the batched engine's own outcome fields for game ``i`` next to ``state``'s text."""
    winner = int(batch.winner[i])
    returns = tuple(ENGINE.returns(batch)[i].tolist())
    return (state.to_text(), state.history, bool(batch.over[i]),
            None if winner < 0 else winner, returns)


def assert_matches(states: list[State], batch) -> None:
    """Assert the batch equals the reference states in masks, planes, positions and outcomes."""
    mask = ENGINE.legal_mask(batch).numpy()
    ref_mask = np.stack([ACTIONS.action_mask(s) for s in states]).astype(bool)
    assert np.array_equal(mask, ref_mask)
    obs = ENGINE.observation(batch).numpy()
    ref_obs = np.stack([ACTIONS.observation(s, s.to_move) for s in states])
    assert np.array_equal(obs, ref_obs)
    back = ENGINE.to_states(batch)
    for i, (ref, got) in enumerate(zip(states, back, strict=True)):
        assert summary(got) == summary(ref)
        assert batch_summary(batch, i, got) == summary(ref)
    assert ENGINE.to_move(batch).tolist() == [s.to_move for s in states]


def test_random_positions_and_one_step_match_the_reference():
    states = random_positions(6, seed=1)
    batch = ENGINE.from_states(states)
    assert_matches(states, batch)
    rng = random.Random(2)
    actions = [rng.choice(s.legal_moves()) if not s.is_terminal() else rng.randrange(513)
               for s in states]
    after = [s if s.is_terminal() else s.apply(a) for s, a in zip(states, actions, strict=True)]
    assert_matches(after, ENGINE.step(batch, torch.tensor(actions)))


def test_whole_games_in_lockstep_with_the_reference():
    rng, n = random.Random(5), 10
    batch, states = ENGINE.initial(n), [State.start()] * n
    while not all(s.is_terminal() for s in states):
        actions = [rng.choice(s.legal_moves()) if not s.is_terminal() else 0 for s in states]
        batch = ENGINE.step_inplace(batch, torch.tensor(actions))
        states = [s if s.is_terminal() else s.apply(a)
                  for s, a in zip(states, actions, strict=True)]
        assert [summary(s) for s in ENGINE.to_states(batch)] == [summary(s) for s in states]
        assert ENGINE.terminated(batch).tolist() == [s.is_terminal() for s in states]
    assert ENGINE.returns(batch).tolist() == [list(s.returns()) for s in states]


@pytest.mark.parametrize("case", RULES, ids=[c["id"] for c in RULES])
def test_rule_vectors_through_the_batched_mask(case):
    batch = ENGINE.from_states([State.from_text(case["position"])])
    expected = np.zeros(513, dtype=bool)
    expected[[action_of(m) for m in case["legal"]]] = True
    assert np.array_equal(ENGINE.legal_mask(batch)[0].numpy(), expected)
    assert bool(batch.over[0]) == (case["result"] != "ongoing")
    assert tuple(ENGINE.returns(batch)[0].tolist()) == RESULT_RETURNS[case["result"]]
    if "play" in case:
        for text in case["play"]:
            batch = ENGINE.step(batch, torch.tensor([action_of(text)]))
        assert ENGINE.to_states(batch)[0].to_text() == case["position_after"]
        assert bool(batch.over[0]) == (case["result_after"] != "ongoing")
        assert tuple(ENGINE.returns(batch)[0].tolist()) == RESULT_RETURNS[case["result_after"]]
        expected = np.zeros(513, dtype=bool)
        expected[[action_of(m) for m in case["legal_after"]]] = True
        assert np.array_equal(ENGINE.legal_mask(batch)[0].numpy(), expected)


def test_threefold_repetition_vector():
    vec = load_vector("loa", "repetition.json")
    batch = ENGINE.from_states([State.from_text(vec["start"])])
    for step in vec["steps"]:
        batch = ENGINE.step_inplace(batch, torch.tensor([action_of(step["move"])]))
        assert ENGINE.to_states(batch)[0].to_text() == step["position"]
        assert bool(batch.over[0]) == (step["result"] != "ongoing"), step
    assert ENGINE.returns(batch)[0].tolist() == [0.0, 0.0]
    assert not ENGINE.legal_mask(batch).any()  # spec 6.5: no action once over, not even pass


def test_connection_on_the_400th_ply_stands_and_a_capture_clears_the_history():
    # win_by_connection's position moved to ply 399: the connecting move wins (spec 6.2)
    won = State.from_text("8/8/8/2b1w2w/2b5/4w2w/1b6/b7 b 399")
    # a capture on ply 1 (d2xd6) leaves the pre-capture position as the only history entry
    capture = State.from_text("3w3b/8/b2w4/8/8/3b3w/3b4/1w6 b 0")
    batch = ENGINE.step(ENGINE.from_states([won, capture]),
                        torch.tensor([action_of("c5-c3"), action_of("d2-d6")]))
    assert ENGINE.returns(batch)[0].tolist() == [1.0, -1.0]
    assert not bool(batch.over[1]) and int(batch.hist_len[1]) == 1
    assert ENGINE.to_states(batch)[1].history == (capture.key(),)


def test_a_long_snake_connects():
    # after h1-h5 Black's 12 pieces run a1..g1, h2..h5, g6: 11 king steps end to end
    batch = ENGINE.from_states([State.from_text("w1w5/8/6b1/8/7b/7b/7b/bbbbbbbb b 20")])
    batch = ENGINE.step(batch, torch.tensor([action_of("h1-h5")]))
    assert bool(batch.over[0]) and ENGINE.returns(batch)[0].tolist() == [1.0, -1.0]


@pytest.fixture(params=[False, True], ids=["keys", "colliding-keys"])
def collide(request, monkeypatch) -> bool:
    """Run a test as is, then with every repetition key equal (the exact check decides)."""
    if request.param:
        monkeypatch.setattr(batched, "_key32", lambda b, w, s: torch.zeros_like(b).int())
    return request.param


def test_repetition_with_passes_counts_the_side_to_move(collide):
    # Black (a1, h8) is walled in and must pass; White shuffles d4-e4-d4. The board recurs
    # every 2 plies but with the same side to move only every 4: the draw comes on ply 8.
    state = State.from_text("6wb/6ww/8/8/3w4/8/ww6/bw6 b 10")
    batch = ENGINE.from_states([state])
    for ply, text in enumerate(["pass", "d4-e4", "pass", "e4-d4"] * 2, start=1):
        assert ENGINE.legal_mask(batch)[0, action_of(text)]
        batch = ENGINE.step_inplace(batch, torch.tensor([action_of(text)]))
        state = state.apply(state.parse_move(text))
        assert summary(ENGINE.to_states(batch)[0]) == summary(state)
        assert bool(batch.over[0]) == (ply == 8)
    assert ENGINE.returns(batch)[0].tolist() == [0.0, 0.0]


def test_finished_games_stay_unchanged_and_step_is_pure():
    states = [s for s in random_positions(3, seed=9)]
    batch = ENGINE.from_states(states)
    copy = {k: v.clone() for k, v in batch.tensors().items()}
    actions = ENGINE.legal_mask(batch).float().argmax(1)
    stepped = ENGINE.step(batch, actions)
    assert all(torch.equal(v, copy[k]) for k, v in batch.tensors().items())  # input untouched
    inplace = ENGINE.step_inplace(batch, actions)
    assert [summary(s) for s in ENGINE.to_states(inplace)] == \
        [summary(s) for s in ENGINE.to_states(stepped)]
    over = copy["over"]
    assert over.any()
    for name, value in stepped.tensors().items():
        if value.dim() == 1:
            assert torch.equal(value[over], copy[name][over]), name


def test_perft_from_the_start_vector():
    perft = load_vector("loa", "start.json")["perft"]
    batch = ENGINE.initial(1)
    for depth in (1, 2, 3):
        mask = ENGINE.legal_mask(batch)
        assert int(mask.sum()) == perft[str(depth)]
        if depth < 3:
            game, action = mask.nonzero().T
            batch = ENGINE.step_inplace(batch.index(game), action)


def test_reset_where_restarts_only_the_marked_games():
    batch = ENGINE.from_states(random_positions(1, seed=3)[-6:])
    done = torch.tensor([True, False, True, False, False, True])
    fresh = ENGINE.to_states(ENGINE.reset_where(batch, done))
    old = ENGINE.to_states(batch)
    for i, flag in enumerate(done.tolist()):
        assert summary(fresh[i]) == summary(State.start() if flag else old[i])


def test_a_restarted_game_ignores_the_old_games_history(collide):
    # two games play the repetition vector's shuffle for 7 plies; game 0 restarts on the
    # shared history storage while game 1 draws on ply 8 and keeps its 8 entries in use
    shuffle = [action_of(m) for m in load_vector("loa", "repetition.json")["moves"]]
    batch = ENGINE.initial(2)
    for action in shuffle[:7]:
        batch = ENGINE.step_inplace(batch, torch.tensor([action, action]))
    batch = ENGINE.reset_where(batch, torch.tensor([True, False]))
    for ply, action in enumerate(shuffle, start=1):  # start recurs on plies 4 and 8 only
        batch = ENGINE.step_inplace(batch, torch.tensor([action, shuffle[7]]))
        assert batch.over.tolist() == [ply == 8, True]


def test_bad_input_is_rejected():
    with pytest.raises(BoardzooError):
        ENGINE.from_states(["not a state"])
    start = State.start()
    with pytest.raises(BoardzooError):  # history claims the same side to move as now
        ENGINE.from_states([State(*start.bb, 0, 3, (start.key(),))])
