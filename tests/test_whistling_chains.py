"""The maximum-capture search without the turn list (issue 14): counts, streamed notation,
the env's first hops and continuations, and the node budget."""

from __future__ import annotations

import random

import pytest

from boardzoo.envs.whistling import chains
from boardzoo.envs.whistling.actions import HOP_ACTION, WhistlingActions
from boardzoo.envs.whistling.hexgrid import BIT, NUM_CELLS
from boardzoo.envs.whistling.rules import State

from conftest import load_vector

A = WhistlingActions()
#: One X stone among 14 scattered O stones (found by random search): 23,628 maximal turns of
#: 13 captures; main's `boardzoo legal` printed that many lines before the search was kept.
HUGE = "j12/w3,q5,G5,t6,B6,y7,C7,F10,B12,L14,r18,x18,q21,E21 x 0"
HUGE_TURNS = 23628


def vector_positions() -> list[tuple[str, int, list[str]]]:
    """Return (position, legal count, sorted legal moves) of every shared test vector."""
    out = []
    for name in ("start.json", "taylor_example.json"):
        v = load_vector("whistling", name)
        out.append((v["position"], v["legal_count"], sorted(v["legal_moves"])))
    for ply in load_vector("whistling", "sample_game.json")["plies"]:
        out.append((ply["position_before"], ply["legal_count"], sorted(ply["legal_moves"])))
    return out


def sparse_positions(seed: int, count: int) -> list[State]:
    """Return random sparse positions where some stone can chain-capture (few turns each)."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        mine, theirs = rng.randint(1, 4), rng.randint(2, 7)
        cells = rng.sample(range(NUM_CELLS), mine + theirs)
        own, opp = sum(BIT[c] for c in cells[:mine]), sum(BIT[c] for c in cells[mine:])
        side = rng.randint(0, 1)
        x, o = (own, opp) if side == 0 else (opp, own)
        game = State(x, o, side)
        if game.chains() is not None and len(game.legal_moves()) <= 300:
            out.append(State(x, o, side))  # a fresh state: nothing listed yet
    return out


def test_count_and_stream_match_the_vectors():
    for text, count, moves in vector_positions():
        state = State.from_text(text)
        assert state.legal_count() == count
        assert list(state.iter_legal_move_strs()) == moves
        assert len(list(State.from_text(text).iter_legal_moves())) == count


def test_count_stream_and_order_match_the_list_on_chain_positions():
    for state in sparse_positions(1, 60):
        fresh = State(*state.stones, state.side)
        assert fresh.legal_count() == len(state.legal_moves())
        assert list(fresh.iter_legal_moves()) == state.legal_moves()  # same order
        assert list(fresh.iter_legal_move_strs()) == state.legal_move_strs()
        assert all(fresh.is_legal(t) for t in state.legal_moves())
        assert fresh._turns is None  # none of that built the list


def test_env_hops_match_the_turn_list_at_every_step():
    for state in sparse_positions(2, 40):
        turns = state.legal_moves()
        todo = [A.from_game_state(State(*state.stones, state.side))]
        while todo:
            s = todo.pop()
            n = len(s.done)
            acts = [tuple(HOP_ACTION[a * NUM_CELLS + b] for a, b in zip(t.path, t.path[1:],
                                                                           strict=False))
                    for t in turns]
            expect = sorted({a[n] for a in acts if a[:n] == s.done})
            assert A.legal_actions(s) == expect
            assert A.action_mask(s).nonzero()[0].tolist() == expect
            for a in expect:
                child, text = A.apply_action(s, a)
                if text is None:
                    todo.append(child)
                else:
                    assert state.parse_move(text) in turns


def test_huge_position_counts_fast_and_plays_without_the_list():
    state = State.from_text(HUGE)
    assert state.perft(1) == HUGE_TURNS
    assert state._turns is None
    s, text = A.initial_state(HUGE), None
    assert len(A.legal_actions(s)) == 2
    while text is None:
        s, text = A.apply_action(s, A.legal_actions(s)[-1])
    assert text.count("-") == 13  # 13 hops of one capture each
    assert state.is_legal(state.parse_move(text))


def test_node_budget_refuses_a_position_it_cannot_search(monkeypatch):
    monkeypatch.setattr(chains, "MAX_BYTES", 1000)
    with pytest.raises(chains.ChainLimitError, match="1,000 bytes"):
        State.from_text(HUGE).legal_count()
