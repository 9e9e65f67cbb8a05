"""The batched Whistling engine against the reference (rules.State + WhistlingActions):
masks, observations, steps, results and conversions on positions from seeded random play,
random sparse boards (long maximum-capture chains), the spec's vectors, near-draw quiet
counters, mid-chain and finished games, and whole batched random games step by step."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from boardzoo.envs.core.game import BoardzooError, PositionError
from boardzoo.envs.whistling import State
from boardzoo.envs.whistling.actions import HopState, WhistlingActions
from boardzoo.envs.whistling.batched import MAX_STONES, BatchedWhistling, Engine
from boardzoo.envs.whistling.batched_tables import SENT, tables
from boardzoo.envs.whistling.hexgrid import BIT, NUM_CELLS, ZONES

from conftest import load_vector

A = WhistlingActions()
ENGINE = BatchedWhistling()


def key(s: HopState) -> tuple:
    """Return everything the reference action state holds (the turn so far included)."""
    return s.game.to_text(), s.game.ply, s.done, s.path, s.caps, s.board


def random_play(seed: int, games: int) -> list[HopState]:
    """Return every action state of ``games`` seeded random games, the finished ones too."""
    rng, out = random.Random(seed), []
    for _ in range(games):
        s = A.initial_state()
        while not A.is_terminal(s):
            out.append(s)
            s, _ = A.apply_action(s, rng.choice(A.legal_actions(s)))
        out.append(s)
    return out


def sparse_boards(seed: int, count: int, least: int = 2) -> list[HopState]:
    """Return positions of random sparse boards whose maximum capture is at least ``least``,
    with every state along their legal turns (the mid-chain ones). Few stones a side: with
    ten enemies a chain often takes them all, in tens of thousands of ways."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        mine, theirs = rng.randint(1, 5), rng.randint(2, 7)
        cells = rng.sample(range(NUM_CELLS), mine + theirs)
        own, opp = sum(BIT[c] for c in cells[:mine]), sum(BIT[c] for c in cells[mine:])
        side = rng.randint(0, 1)
        x, o = (own, opp) if side == 0 else (opp, own)
        game = State(x, o, side, rng.randint(0, 39))
        if game.max_capture() >= least and len(game.legal_moves()) <= 40:
            out.extend(turn_states(HopState(game)))
    return out


def turn_states(s: HopState) -> list[HopState]:
    """Return ``s`` and every state reached in the middle of one of its legal turns."""
    out, todo = [], [s]
    while todo:
        s = todo.pop()
        out.append(s)
        for a in A.legal_actions(s):
            nxt, done = A.apply_action(s, a)
            if done is None:
                todo.append(nxt)
    return out


def check(states: list[HopState], engine: BatchedWhistling = ENGINE, seed: int = 0) -> None:
    """Assert the engine equals the reference on ``states``: conversions, masks,
    observations, results, and one step with a random legal action per game."""
    batch = engine.from_states(states)
    assert [key(s) for s in engine.to_states(batch)] == [key(s) for s in states]
    mask = engine.legal_mask(batch).cpu().numpy()
    for i, s in enumerate(states):
        ref = A.action_mask(s).astype(bool)
        assert np.array_equal(mask[i], ref), f"mask of {s!r}: {np.flatnonzero(mask[i] != ref)}"
    obs = engine.observation(batch).cpu().numpy()
    for i, s in enumerate(states):
        assert np.array_equal(obs[i], A.observation(s, A.to_move(s))), f"observation of {s!r}"
    results(engine, batch, states)
    rng = random.Random(seed)
    actions = [rng.choice(A.legal_actions(s)) if not A.is_terminal(s) else rng.randrange(39720)
               for s in states]
    after = engine.to_states(engine.step(batch, torch.tensor(actions)))
    want = [s if A.is_terminal(s) else A.apply_action(s, a)[0]
            for s, a in zip(states, actions, strict=True)]
    for s, a, got, ref in zip(states, actions, after, want, strict=True):
        assert key(got) == key(ref), f"step {a} from {s!r}"
    results(engine, engine.from_states(after), want)


def results(engine: BatchedWhistling, batch, states: list[HopState]) -> None:
    """Assert to_move, terminated and returns equal the reference's."""
    assert engine.to_move(batch).tolist() == [A.to_move(s) for s in states]
    assert engine.terminated(batch).tolist() == [A.is_terminal(s) for s in states]
    assert [tuple(r) for r in engine.returns(batch).tolist()] == [A.returns(s) for s in states]


def test_engine_alias_and_spaces():
    assert Engine is BatchedWhistling
    assert ENGINE.num_actions == 39720 and ENGINE.observation_shape == (21, 41, 11)


def test_zone_tables_rebuild_the_reference_zones():
    znew = tables(torch.device("cpu"))["znew"]
    for cell in range(0, NUM_CELLS, 7):
        for d in range(6):
            zone = 0
            for k in range(1, len(ZONES[cell][d])):  # every hop the ray allows
                zone |= sum(BIT[c] for c in znew[cell, d, k - 1].tolist() if c != SENT)
                assert zone == ZONES[cell][d][k], (cell, d, k)


def test_random_play_positions():
    states = random_play(seed=1, games=10)
    assert sum(bool(s.done) for s in states) > 60  # mid-chain states
    assert sum(A.is_terminal(s) for s in states) == 10
    check(states, seed=2)


def test_long_maximum_capture_chains():
    states = sparse_boards(seed=3, count=100, least=3)
    assert max(s.game.max_capture() for s in states) >= 4
    check(states, seed=4)


def test_chains_that_cross_their_start_cell():
    """Positions where the best first hop is only best because a later hop slides over or
    onto the cell the stone started from (spec 4: empty for the whole turn); found by
    searching random sparse boards for an engine that forgot it."""
    texts = ["p2,o17/H8,i9,b12,v14,l16,l18 x 0", "p12/B2,y5,e7,C9,k11,d12,f14 x 0",
             "p2/s1,s7,c9,y15,s17,r18 x 0", "E3,v12,f14,j14/s3,m5,L8,w11,b12,c13 x 0"]
    check([s for t in texts for s in turn_states(A.initial_state(t))], seed=14)


def test_per_game_chain_search_and_the_node_limit_fallback():
    states = random_play(seed=5, games=2) + sparse_boards(seed=6, count=40, least=2)
    check(states, BatchedWhistling(chain="per_game"), seed=7)
    small = BatchedWhistling(node_limit=1)  # every capture search spills to the per-game path
    check(states, small, seed=8)
    assert small.last_per_game > 0


def test_vectors_every_legal_hop():
    """Every hop of every legal turn in the Taylor example and the sample game's positions."""
    vec = load_vector("whistling", "sample_game.json")
    texts = [p["position_before"] for p in vec["plies"]] + [vec["final_position"]]
    starts = [A.initial_state(t) for t in texts]
    starts.append(A.initial_state(load_vector("whistling", "taylor_example.json")["position"]))
    states = [s for start in starts for s in turn_states(start)]
    batch = ENGINE.from_states(states)
    mask = ENGINE.legal_mask(batch).numpy()
    rows = [(i, a) for i in range(len(states)) for a in np.flatnonzero(mask[i])]
    assert len(rows) == sum(len(A.legal_actions(s)) for s in states)
    idx = torch.tensor([i for i, _ in rows])
    after = ENGINE.to_states(ENGINE.step(batch.index(idx), torch.tensor([a for _, a in rows])))
    for (i, a), got in zip(rows, after, strict=True):
        assert key(got) == key(A.apply_action(states[i], int(a))[0]), (states[i], a)


def test_taylor_example_turn_against_the_vector():
    vec = load_vector("whistling", "taylor_example.json")
    batch = ENGINE.from_states([A.initial_state(vec["position"])])
    for hop in range(2):  # w19-G19:D20, then G19-o1:r2s3 by the same player
        mask = ENGINE.legal_mask(batch)
        assert mask.sum() == 1 and ENGINE.to_move(batch).item() == 1
        batch = ENGINE.step(batch, mask.int().argmax(1))
        assert (batch.mover >= 0).item() == (hop == 0)
    (state,) = ENGINE.to_states(batch)
    assert state.game.to_text() == vec["position_after"]


def test_quiet_counter_and_draw():
    plain = [s for s in random_play(seed=9, games=2)
             if not s.done and not A.is_terminal(s) and not s.game.max_capture()][:20]
    states = []
    for s in plain:
        x, o = s.game.stones
        for quiet in (37, 38, 39, 40, 41):
            states.append(HopState(State(x, o, s.game.side, quiet, s.game.ply)))
    check(states, seed=10)
    batch = ENGINE.from_states([s for s in states if s.game.quiet == 39])
    after = ENGINE.step(batch, ENGINE.legal_mask(batch).int().argmax(1))  # a plain move
    assert ENGINE.terminated(after).all() and (ENGINE.returns(after) == 0).all()
    assert (after.quiet == 40).all()


def test_elimination_and_no_enemy_positions():
    one = State(BIT[165] | BIT[166], BIT[167], 0, 5)  # u11, w11 against y11: crush the last
    gone = State(BIT[165], 0, 1, 0)  # O to move has no stones: X has won
    lone = State(BIT[165], 0, 0, 3)  # X to move, no enemy: no legal turn (the reference)
    check([HopState(one), HopState(gone), HopState(lone)], seed=11)
    batch = ENGINE.from_states([HopState(one)])
    after = ENGINE.step(batch, ENGINE.legal_mask(batch).int().argmax(1))
    assert ENGINE.returns(after).tolist() == [[1.0, -1.0]]


def test_finished_games_do_not_change():
    states = [s for s in random_play(seed=12, games=5) if A.is_terminal(s)]
    batch = ENGINE.from_states(states)
    for actions in (torch.zeros(len(states)), torch.full((len(states),), 39719)):
        after = ENGINE.step(batch, actions.long())
        assert all(torch.equal(a, b) for a, b in zip(after.tensors().values(),
                                                     batch.tensors().values(), strict=True))


def test_whole_batched_random_games_step_by_step():
    n, gen = 6, torch.Generator().manual_seed(13)
    batch = ENGINE.initial(n)
    refs = [A.initial_state() for _ in range(n)]
    for _ in range(400):
        live = ~ENGINE.terminated(batch)
        if not live.any():
            break
        mask = ENGINE.legal_mask(batch)
        for i, s in enumerate(refs):
            assert np.array_equal(mask[i].numpy(), A.action_mask(s).astype(bool))
        pick = torch.where(mask, torch.rand(mask.shape, generator=gen), -1.0).argmax(1)
        batch = ENGINE.step(batch, pick)
        refs = [A.apply_action(s, int(a))[0] if not A.is_terminal(s) else s
                for s, a in zip(refs, pick, strict=True)]
        assert [key(s) for s in ENGINE.to_states(batch)] == [key(s) for s in refs]
        results(ENGINE, batch, refs)
    assert ENGINE.terminated(batch).all()


def test_empty_batch():
    batch = ENGINE.from_states([])
    assert batch.size == 0 and ENGINE.legal_mask(batch).shape == (0, 39720)
    assert ENGINE.observation(ENGINE.step(batch, torch.zeros(0, dtype=torch.long))).shape[0] == 0


def test_bad_input_is_refused():
    with pytest.raises(BoardzooError, match="chain"):
        BatchedWhistling(chain="fast")
    with pytest.raises(BoardzooError, match="HopState"):
        ENGINE.from_states([State.start()])
    crowd = sum(BIT[c] for c in range(MAX_STONES + 1))
    with pytest.raises(PositionError, match="at most"):
        ENGINE.from_states([HopState(State(crowd, BIT[300], 0, 0))])
