"""The compiled Whistling kernel (envs/whistling/kernel.py) against the reference rules
(rules.py, chains.py, actions.py, evaluation.py): every shared Whistling vector (perft, legal
counts and move lists, positions after each turn), random and played positions (legal turn
counts, N, the hops legal at a turn's start and mid-chain, hops and whole turns applied,
results, the evaluation bit for bit), the worst chain positions of docs/whistling.md (memo
search and layered count), and the fallbacks to the reference.

``BOARDZOO_KERNEL_POSITIONS=100000 pytest tests/test_whistling_kernel.py`` runs the full
100,000 random and played positions; by default 2,000 keep the file within CI's time (most of
its time is the kernel's one-time compile in a fresh environment).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from boardzoo.cli import main
from boardzoo.envs.core.game import PositionError, divide
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.whistling import kernel as K
from boardzoo.envs.whistling.actions import HopState, WhistlingActions
from boardzoo.envs.whistling.evaluation import whistling_eval
from boardzoo.envs.whistling.hexgrid import BIT, CELL_INDEX, NUM_CELLS, ROW
from boardzoo.envs.whistling.notation import turn_to_str
from boardzoo.envs.whistling.rules import START_TEXT, State

from conftest import load_vector

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from whistling_chains import ISSUE, scattered  # noqa: E402

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "2000"))
A = WhistlingActions()
#: One X stone among 14 O stones: 23,628 maximal turns of 13 captures (test_whistling_chains).
HUGE = "j12/w3,q5,G5,t6,B6,y7,C7,F10,B12,L14,r18,x18,q21,E21 x 0"


def position(state: State) -> tuple[int, int, int, int]:
    """Return the kernel API's (x, o, side, quiet) of a reference position."""
    return state.stones[0], state.stones[1], state.side, state.quiet


def check_position(state: State, kernel: object = K) -> None:
    """Assert that the kernel answers a position as the reference does: legal turn count, N,
    result, evaluation (bit for bit), the first hops and, for a few hundred turns or fewer,
    the whole turn list in order and each listed turn applied."""
    p = position(state)
    assert kernel.count_turns(*p) == state.legal_count(), state.to_text()
    assert kernel.most_captured(*p) == state.max_capture(), state.to_text()
    assert kernel.outcome(*p) == state.result(), state.to_text()
    assert kernel.evaluation(*p).hex() == whistling_eval(state).hex(), state.to_text()
    assert kernel.hop_actions(*p) == A.legal_actions(HopState(state)), state.to_text()
    if state.legal_count() <= 400:
        turns = state.legal_moves()
        assert kernel.turns(*p) == turns, state.to_text()
        for turn in turns[:8]:
            after = state.play(turn)
            assert kernel.play_turn(*p, turn.path) == position(after), (state.to_text(), turn)


def check_hop_state(hs: HopState, kernel: object = K) -> None:
    """Assert that the kernel's hops of an action state (a turn's start or mid-chain) are the
    reference's mask, and that every hop leaves the board the reference leaves."""
    x, o, mover, last = A.board(hs)
    game = hs.game
    legal = A.legal_actions(hs)
    assert kernel.hop_actions(x, o, game.side, game.quiet, mover, last) == legal, repr(hs)
    for action in legal[:6]:
        after, _ = A.apply_action(hs, action)
        ax, ao, amover, alast = A.board(after)
        want = (ax, ao, after.game.side, after.game.quiet, amover, alast)
        assert kernel.play_hop(x, o, game.side, game.quiet, mover, last, action) == want


def sparse_state(rng: random.Random) -> State:
    """Return a random position of a few stones per side (chain-capture rich, often
    mid-search sizes), quiet counters around the draw rule included."""
    cells = rng.sample(range(NUM_CELLS), rng.randint(2, 13))
    cut = rng.randint(1, len(cells) - 1)
    return State(sum(BIT[c] for c in cells[:cut]), sum(BIT[c] for c in cells[cut:]),
                 rng.randint(0, 1), rng.choice([0, 0, 0, 5, 38, 39, 40, 41]))


def played_hop_states(rng: random.Random, games: int) -> list[HopState]:
    """Return every action state (turn starts and mid-chain) of seeded random games."""
    out = []
    for _ in range(games):
        hs = HopState(State.start())
        while not A.is_terminal(hs):
            out.append(hs)
            hs, _ = A.apply_action(hs, rng.choice(A.legal_actions(hs)))
        out.append(hs)  # the finished game too
    return out


# -- the shared vectors --------------------------------------------------------------------


def test_start_vector_perft_and_moves():
    v = load_vector("whistling", "start.json")
    state = State.from_text(v["position"])
    assert K.count_turns(*position(state)) == v["legal_count"]
    assert sorted(map(turn_to_str, K.turns(*position(state)))) == sorted(v["legal_moves"])
    depths = (1, 2, 3) if os.environ.get("BOARDZOO_SLOW") else (1, 2)
    for depth in depths:
        assert K.perft(v["position"], depth) == v["perft"][str(depth)]
    check_position(state)


def test_taylor_vector_turn_and_position_after():
    v = load_vector("whistling", "taylor_example.json")
    state = State.from_text(v["position"])
    p = position(state)
    turns = K.turns(*p)
    assert [turn_to_str(t) for t in turns] == v["legal_moves"]
    assert K.count_turns(*p) == v["legal_count"]
    after = K.play_turn(*p, turns[0].path)
    assert State(*after).to_text() == v["position_after"]
    # hop by hop: two hops, the turn ends after the second
    mid = K.play_hop(*p, -1, -1, K.hop_actions(*p)[0])
    assert mid[2] == state.side and mid[4] == CELL_INDEX["G19"]
    (second,) = K.hop_actions(*mid)
    done = K.play_hop(*mid, second)
    assert State(*done[:4]).to_text() == v["position_after"] and done[4:] == (-1, -1)
    check_position(state)


def test_sample_game_vector_ply_by_ply():
    plies = load_vector("whistling", "sample_game.json")["plies"]
    for ply in plies:
        state = State.from_text(ply["position_before"])
        p = position(state)
        strs = sorted(map(turn_to_str, K.turns(*p)))
        assert K.count_turns(*p) == ply["legal_count"]
        assert strs == sorted(ply["legal_moves"])
        if ply["played_is_legal"]:
            turn = state.parse_move(ply["played_canonical"])
            assert State(*K.play_turn(*p, turn.path)).to_text() == ply["position_after"]
        else:  # plies 9 and 16: non-maximal captures, which the kernel does not list either
            assert ply["played_canonical"] not in strs
        check_position(state)


# -- random and played positions --------------------------------------------------------------


def test_random_and_played_positions():
    rng = random.Random(20261206)
    states, hops = [], []
    while len(states) + len(hops) < POSITIONS:
        for hs in played_hop_states(rng, 1):
            hops.append(hs)
            if not hs.done:
                states.append(hs.game)
        states.extend(sparse_state(rng) for _ in range(20))
    for state in states:
        check_position(state)
    for hs in hops:
        check_hop_state(hs)
    assert sum(bool(hs.done) for hs in hops) > len(hops) // 10  # mid-chain states were met
    assert sum(s.max_capture() > 1 for s in states) > len(states) // 20


def test_games_driven_by_the_kernel_alone_end_as_the_reference_ends():
    rng = random.Random(7)
    for _ in range(20):
        hs = HopState(State.start())
        k = (*position(hs.game), -1, -1)
        while True:
            legal = K.hop_actions(*k)
            assert legal == A.legal_actions(hs)
            if not legal:
                break
            action = rng.choice(legal)
            k = K.play_hop(*k, action)
            hs, _ = A.apply_action(hs, action)
            x, o, mover, last = A.board(hs)
            assert k == (x, o, hs.game.side, hs.game.quiet, mover, last)
        assert K.outcome(*k[:4]) == hs.game.result() != "ongoing"


# -- the worst chain positions (docs/whistling.md, "Worst cases") ------------------------------


def test_huge_position_turns_hops_and_chain_steps():
    state = State.from_text(HUGE)
    p = position(state)
    assert K.count_turns(*p) == 23628 == state.legal_count()
    assert K.turns(*p) == state.legal_moves()
    rng = random.Random(3)
    for _ in range(5):  # random walks through the chains, hop by hop
        hs = HopState(State.from_text(HUGE))
        while True:
            check_hop_state(hs)
            legal = A.legal_actions(hs)
            hs, turn = A.apply_action(hs, rng.choice(legal))
            if turn is not None:
                break


def test_issue_position_is_counted_and_stepped():
    state = State.from_text(ISSUE)
    p = position(state)
    assert K.count_turns(*p) == 146_404 == state.legal_count()
    assert K.most_captured(*p) == 16
    hs = HopState(state)
    rng = random.Random(5)
    for _ in range(6):  # the first six hops of one maximal chain, mask against mask
        check_hop_state(hs)
        hs, _ = A.apply_action(hs, rng.choice(A.legal_actions(hs)))


def test_twenty_scattered_stones_counted_layer_by_layer():
    text = scattered(3, 20)  # 335,061 chain nodes, 6,990 maximal turns of 20 captures
    state = State.from_text(text)
    x, o = K.words(state.stones[0]), K.words(state.stones[1])
    n, count, status = K.legal_count(x, o, 0, 0, False, K.COUNT_MEMO_NODES)
    assert (n, int(count), status) == (20, 6990, K.OK)
    assert int(count) == state.legal_count()


def chain_positions(seed: int, count: int) -> list[State]:
    """Return positions where a stone can whistle-capture: sparse boards and played ones
    (early games keep 21 enemy stones: the layered pass's unpacked tables)."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        state = sparse_state(rng) if len(out) % 2 else None
        if state is None:
            state = State.start()
            for _ in range(rng.randint(1, 12)):
                if state.is_terminal():
                    break
                state = state.play(rng.choice(state.legal_moves()))
        if state.chains() is not None:
            out.append(State(*state.stones, state.side, state.quiet))
    return out


def test_layered_count_equals_the_memo_and_the_reference():
    for state in chain_positions(11, 120):
        x, o = K.words(state.stones[0]), K.words(state.stones[1])
        memo = K.legal_count(x, o, state.side, state.quiet, False, 1 << 30)
        layered = K.legal_count(x, o, state.side, state.quiet, False, 0)
        want = (state.max_capture(), state.legal_count(), K.OK)
        assert (memo[0], int(memo[1]), memo[2]) == want, state.to_text()
        assert (layered[0], int(layered[1]), layered[2]) == want, state.to_text()


# -- fallbacks, perft, and a check that can fail -------------------------------------------------


def test_more_enemy_stones_than_a_search_numbers_falls_back_to_the_reference():
    rows = [c for c in range(NUM_CELLS) if ROW[c] >= 17]  # rows 17-21: 65 stones
    state = State(BIT[CELL_INDEX["f16"]], sum(BIT[c] for c in rows), 0, 0)
    x, o = K.words(state.stones[0]), K.words(state.stones[1])
    assert state.chains() is not None and len(rows) > K.MAX_STONES
    assert K.legal_count(x, o, 0, 0, False, K.COUNT_MEMO_NODES)[2] == K.TOO_BIG
    check_position(state)
    hs = HopState(state)  # mid-chain the hops come from a reference search too
    while True:
        check_hop_state(hs)
        hs, turn = A.apply_action(hs, A.legal_actions(hs)[-1])
        if turn is not None:
            break


def test_perft_of_chain_positions():
    for ply in (3, 9, 16):
        text = load_vector("whistling", "sample_game.json")["plies"][ply - 1]["position_before"]
        for depth in (1, 2):
            assert K.perft(text, depth) == State.from_text(text).perft(depth), (ply, depth)
    assert K.perft(START_TEXT, 0) == 1


def test_cli_perft_counts_on_the_kernel_with_the_same_output(capsys):
    assert get_spec("whistling").perft is not None
    taylor = load_vector("whistling", "taylor_example.json")["position"]
    for argv, position in ((["perft", "whistling", "2"], START_TEXT),
                           (["perft", "whistling", "2", "--position", taylor], taylor)):
        assert main(argv) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        want = State.from_text(position).perft(2)
        assert lines[-1] == str(want)
        assert lines[0].startswith(f"perft(2) = {want} in ") and lines[0].endswith(" leaves/s)")
    assert main(["perft", "whistling", "2", "--divide", "--position", taylor]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    state = State.from_text(taylor)
    want = divide(state, 2)
    assert lines[:-2] == [f"{move}: {count}" for move, count in want.items()]
    assert lines[-1] == str(sum(want.values()))


def test_bad_position_text_is_the_references_error():
    with pytest.raises(PositionError):
        K.perft("s1/ x 0", 1)


class _Off:
    """The kernel API with one answer off by one (the differential check must notice)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str):  # noqa: ANN204 - a kernel function
        fn = getattr(K, attr)
        if attr != self.name:
            return fn
        if attr == "hop_actions":
            return lambda *a: fn(*a)[1:]
        return lambda *a: fn(*a) + 1


@pytest.mark.parametrize("name", ["count_turns", "most_captured", "evaluation", "hop_actions"])
def test_a_wrong_kernel_answer_fails_the_check(name):
    state = State.from_text(load_vector("whistling", "taylor_example.json")["position"])
    check_position(state)
    with pytest.raises(AssertionError):
        check_position(state, kernel=_Off(name))
