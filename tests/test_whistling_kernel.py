"""The Whistling rules on the compiled kernel (envs/whistling/kernel.py, through rules.State
and the env's hop actions): every shared Whistling vector on the kernel's own API and via
State; sampled random and played positions (results, N, legal turns in order and the position
after each, notation order, the env's hop masks along chains, the evaluation and value prior
bit for bit) against what the Python rules engine gave before the kernel replaced it
(tests/data/whistling_facts.txt, written by tests/whistling_facts.py); an independent brute
force of the spec's chain rules; the worst chain positions of docs/whistling.md with their
outside counts; the layered count against the memo; the refusal past the kernel's bounds.
The torch batched engine is held to the same rules in tests/test_batched_whistling.py.

``BOARDZOO_KERNEL_POSITIONS=100000 pytest tests/test_whistling_kernel.py`` checks every
recorded position (the record's digest; about ten minutes); by default the first 5,000.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from whistling_facts import fact_hash, facts, recorded, sampled_positions, sparse_state

from boardzoo.cli import main
from boardzoo.envs.core.game import PositionError
from boardzoo.envs.whistling import kernel as K
from boardzoo.envs.whistling.actions import HopState, WhistlingActions
from boardzoo.envs.whistling.evaluation import whistling_eval
from boardzoo.envs.whistling.hexgrid import (
    BIT,
    CELL_INDEX,
    CELL_NAMES,
    CELLS,
    COORD_INDEX,
    DIRECTIONS,
    NUM_CELLS,
    ROW,
)
from boardzoo.envs.whistling.notation import turn_to_str
from boardzoo.envs.whistling.rules import HOP_ACTION, START_TEXT, ChainLimitError, State

from conftest import load_vector

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from whistling_chains import ISSUE, scattered  # noqa: E402

POSITIONS = int(os.environ.get("BOARDZOO_KERNEL_POSITIONS", "5000"))
A = WhistlingActions()
#: One X stone among 14 scattered O stones (found by random search): 23,628 maximal turns of
#: 13 captures; main's `boardzoo legal` printed that many lines before the search was kept.
HUGE = "j12/w3,q5,G5,t6,B6,y7,C7,F10,B12,L14,r18,x18,q21,E21 x 0"
#: Maximal turns and N of the issue's position (an outside number: the issue's own search).
ISSUE_TURNS, ISSUE_N = 146_404, 16


def words(state: State) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Return the numba API's (x, o, side, quiet) of a position."""
    return K.words(state.stones[0]), K.words(state.stones[1]), state.side, state.quiet


def kernel_turn_strs(state: State) -> list[str]:
    """Return the numba API's legal turns in notation, sorted (the vectors' form)."""
    kind, path, caps, lens, ecell, n, status = K.legal_turns(*words(state))
    assert status == K.OK
    out = []
    for i in range(n):
        cells = path[i, :lens[i]].tolist()
        if kind[i] == K.CRUSH:
            out.append(f"{CELL_NAMES[cells[0]]}:{CELL_NAMES[cells[1]]}")
            continue
        text = CELL_NAMES[cells[0]]
        for dest, c in zip(cells[1:], caps[i, :lens[i] - 1].tolist(), strict=True):
            taken = sorted(int(ecell[j]) for j in range(len(ecell)) if c >> j & 1)
            text += f"-{CELL_NAMES[dest]}" + (":" if kind[i] == K.WHISTLE else "") \
                + "".join(CELL_NAMES[t] for t in taken)
        out.append(text)
    return sorted(out)


def kernel_count(state: State) -> int:
    """Return the numba API's number of legal turns."""
    _, count, status = K.legal_count(*words(state), False, K.COUNT_MEMO_NODES)
    assert status == K.OK
    return int(count)


# -- the shared vectors, on the numba API and via State --------------------------------------


def test_start_vector_perft_and_moves():
    v = load_vector("whistling", "start.json")
    state = State.from_text(v["position"])
    assert kernel_count(state) == state.legal_count() == v["legal_count"]
    assert kernel_turn_strs(state) == list(state.iter_legal_move_strs()) \
        == sorted(v["legal_moves"])
    depths = (1, 2, 3) if os.environ.get("BOARDZOO_SLOW") else (1, 2)
    for depth in depths:
        total, status = K.perft_words(*words(state), depth)
        assert int(total) == state.perft(depth) == v["perft"][str(depth)] and status == K.OK
    assert state.perft(0) == 1


def test_taylor_vector_turn_and_position_after():
    v = load_vector("whistling", "taylor_example.json")
    state = State.from_text(v["position"])
    assert kernel_turn_strs(state) == sorted(v["legal_moves"])
    assert [turn_to_str(t) for t in state.legal_moves()] == v["legal_moves"]
    assert state.legal_count() == v["legal_count"] == kernel_count(state)
    assert state.apply(state.legal_moves()[0]).to_text() == v["position_after"]
    # hop by hop on the numba API: two hops, the turn ends after the second
    out = np.empty(K.NUM_ACTIONS, np.int64)
    n, _ = K.legal_actions(*words(state), -1, -1, out)
    mid = K.apply_hop(*words(state), -1, -1, out[0])
    assert mid[2] == state.side and mid[4] == CELL_INDEX["G19"]
    n, _ = K.legal_actions(*mid, out)
    assert n == 1
    done = K.apply_hop(*mid, out[0])
    after = State(K.mask_of(done[0]), K.mask_of(done[1]), done[2], done[3])
    assert after.to_text() == v["position_after"] and done[4:] == (-1, -1)
    # and through the env
    s, text = A.initial_state(v["position"]), None
    while text is None:
        s, text = A.apply_action(s, A.legal_actions(s)[0])
    assert text == v["legal_moves"][0] and s.game.to_text() == v["position_after"]


def test_sample_game_vector_ply_by_ply():
    for ply in load_vector("whistling", "sample_game.json")["plies"]:
        state = State.from_text(ply["position_before"])
        assert kernel_count(state) == state.legal_count() == ply["legal_count"]
        assert kernel_turn_strs(state) == list(state.iter_legal_move_strs()) \
            == sorted(ply["legal_moves"])
        if ply["played_is_legal"]:
            turn = state.parse_move(ply["played_canonical"])
            assert state.apply(turn).to_text() == ply["position_after"]
        else:  # plies 9 and 16: non-maximal captures, which are not legal
            assert ply["played_canonical"] not in kernel_turn_strs(state)


# -- the recorded facts of the Python rules engine --------------------------------------------


@pytest.fixture(scope="module")
def sample() -> list[State]:
    """Return the sampled positions (tests/whistling_facts.py)."""
    return sampled_positions(POSITIONS)


def test_sample_covers_every_rule(sample: list[State]) -> None:
    assert {s.result() for s in sample} == {"ongoing", "x", "o", "draw"}
    assert any(not s.stones[s.side] for s in sample)  # elimination
    assert any(s.draw_reason() for s in sample)  # the quiet counter
    kinds = {t.kind for s in sample[:400] if s.legal_count() < 400 for t in s.legal_moves()}
    assert kinds == {0, 1, 2}  # plain moves, whistling captures, crushes
    assert max(s.max_capture() for s in sample) == 20  # the worst positions' chains


def test_rules_env_and_evaluation_equal_the_recorded_python_engine(sample: list[State]) -> None:
    # every position's facts, as the Python rules engine gave them before the kernel replaced
    # it (the digest covers the record's full sample)
    n, digest, listed = recorded()
    hashes = [fact_hash(s) for s in sample]
    k = min(len(hashes), len(listed))
    bad = [i for i in range(k) if hashes[i] != listed[i]]
    assert not bad, f"{len(bad)} of {k} positions differ, first {sample[bad[0]].to_text()!r}"
    if len(hashes) == n:
        assert hashlib.sha256("\n".join(hashes).encode()).hexdigest() == digest


def test_the_search_leaf_equals_the_result_and_the_evaluation(sample: list[State]) -> None:
    # judge, the compiled search's question at every node (its workspace kept from position to
    # position), answers the result and the evaluation that the recorded facts hold
    lw = K.leaf_workspace()
    codes = {"ongoing": K.ONGOING, "x": K.X_WINS, "o": K.O_WINS, "draw": K.DRAW}
    seen = set()
    for state in sample[4:3000]:  # the worst twenty-stone positions take seconds each
        x, o, side, quiet = words(state)
        r, value, status = K.judge(x, o, side, quiet, True, lw)
        assert (r, status) == (codes[state.result()], K.OK), state.to_text()
        if r == K.ONGOING:
            assert float.hex(value) == float.hex(whistling_eval(state)), state.to_text()
            seen.add(state.max_capture() > 0)
        assert K.judge(x, o, side, quiet, False, lw)[:1] == (r,)
    assert seen == {False, True}


def test_the_comparison_sees_a_one_bit_evaluation_error() -> None:
    # why: the evaluation is compared bit for bit, so a kernel one ulp off must fail
    state = sampled_positions(40)[-1]
    got = facts(state)
    nudged = float.hex(np.nextafter(float.fromhex(got[5]), 1.0))
    same = hashlib.sha256(repr(got).encode()).hexdigest()[:8]
    assert same == fact_hash(state)
    for wrong in ((*got[:5], nudged, *got[6:]), (*got[:7], got[7][::-1], *got[8:])):
        assert hashlib.sha256(repr(wrong).encode()).hexdigest()[:8] != same


def test_env_hops_match_the_turn_list_at_every_step():
    rng = random.Random(2)
    states = [s for s in (sparse_state(rng) for _ in range(400))
              if s.max_capture() >= 2 and s.legal_count() <= 300][:40]
    assert len(states) >= 20
    for state in states:
        turns = state.legal_moves()
        assert all(state.is_legal(t) for t in turns)
        todo = [A.from_game_state(State(*state.stones, state.side, state.quiet))]
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


def test_a_non_maximal_or_malformed_turn_is_not_legal():
    state = State.from_text(load_vector("whistling", "taylor_example.json")["position"])
    turn = state.legal_moves()[0]
    assert state.is_legal(turn)
    assert not state.is_legal(turn._replace(path=turn.path[:-1], caps=turn.caps[:-1]))
    assert not state.is_legal(turn._replace(kind=2))
    assert not state.is_legal(turn._replace(caps=(turn.caps[0], 0)))
    for junk in (None, "w19-G19", (1, 2), ([1, 2], (0,), 0), ((1, 999), (0,), 0), ((1,), (), 1)):
        assert not state.is_legal(junk)


# -- an independent brute force of the spec's chains ------------------------------------------


def brute_turns(text: str) -> set[str]:
    """Return the paths (``S-D1-D2...``) of the legal whistling captures of a position where
    no crush exists, straight from the spec's sections 4-8 on (column, row) coordinates."""
    state = State.from_text(text)
    cells = [set(CELLS[i] for i in range(len(CELLS)) if m >> i & 1) for m in state.stones]
    own, enemy = cells[state.side], cells[1 - state.side]

    def dist(a: tuple[int, int], b: tuple[int, int]) -> int:
        return (a[0] - b[0]) ** 2 + 3 * (a[1] - b[1]) ** 2

    def near(a: tuple[int, int]) -> set[tuple[int, int]]:
        return {(a[0] + dc, a[1] + dr) for dc, dr in DIRECTIONS}

    def hops(s, last, foes, mine):  # noqa: ANN001, ANN202
        for d, (dc, dr) in enumerate(DIRECTIONS):
            if last is not None and d in (last, (last + 3) % 6):
                continue
            line = [s]
            while True:
                f = (line[-1][0] + dc, line[-1][1] + dr)
                if f not in COORD_INDEX or f in foes or f in mine:
                    break
                line.append(f)
                if not any(dist(f, e) < dist(s, e) for e in foes):
                    continue  # the closer rule (section 4)
                zone = set().union(*map(near, line[1:-1])) - near(s) - near(f) - set(line)
                if zone & foes:
                    yield d, f, zone & foes

    found: list[tuple[str, int]] = []

    def walk(path, last, foes, mine, taken):  # noqa: ANN001, ANN202
        for d, f, caps in hops(path[-1], last, foes, mine):
            found.append(("-".join(CELL_NAMES[COORD_INDEX[c]] for c in path + [f]),
                          taken + len(caps)))
            walk(path + [f], d, foes - caps, mine, taken + len(caps))

    for s in own:
        walk([s], None, enemy, own - {s}, 0)
    best = max(n for _, n in found)
    return {p for p, n in found if n == best}


def test_chains_equal_a_brute_force_of_the_spec():
    texts = [t for t in map(scattered, range(12), [7] * 12)
             if State.from_text(t).max_capture() >= 2]
    assert len(texts) >= 5
    for text in texts[:5]:
        state = State.from_text(text)
        moves = list(state.iter_legal_move_strs())
        assert {"-".join(p.split(":")[0] for p in m.split("-")) for m in moves} \
            == brute_turns(text)
        x, o, side, quiet = words(state)  # the layered count (no memo) counts them too
        n, count, status = K.legal_count(x, o, side, quiet, False, 0)
        assert (n, int(count), status) == (state.max_capture(), len(moves), K.OK)


# -- the worst chain positions (docs/whistling.md, "Worst cases") ------------------------------


def test_huge_position_turns_and_hops():
    state = State.from_text(HUGE)
    assert state.legal_count() == 23_628 == len(state.legal_moves())
    s, text = A.initial_state(HUGE), None
    assert len(A.legal_actions(s)) == 2
    while text is None:
        s, text = A.apply_action(s, A.legal_actions(s)[-1])
    assert text.count("-") == 13  # 13 hops of one capture each
    assert state.is_legal(state.parse_move(text))


def test_issue_position_counted_played_and_listed(capsys):
    state = State.from_text(ISSUE)
    assert (state.perft(1), state.max_capture()) == (ISSUE_TURNS, ISSUE_N)
    s, text = A.initial_state(ISSUE), None
    while text is None:
        s, text = A.apply_action(s, A.legal_actions(s)[0])
    turn = state.parse_move(text)
    assert turn.count == ISSUE_N and state.is_legal(turn)
    assert main(["legal", "whistling", "--position", ISSUE]) == 0
    lines = capsys.readouterr().out.split()
    assert len(lines) == ISSUE_TURNS and lines == sorted(lines)


def test_twenty_scattered_stones_counted_layer_by_layer():
    state = State.from_text(scattered(3, 20))  # 335,061 chain nodes
    assert (state.max_capture(), state.legal_count()) == (20, 6990)


#: Seed 2's twenty-stone position of bench/whistling_chains.py: the env's legal hops at the
#: turn's start as the Python rules engine before the kernel gave them (commit 7c0f0b0),
#: printed in that checkout (5.1 s) by
#:   python -c "import sys; sys.path.insert(0, 'bench'); from whistling_chains import scattered
#:   from boardzoo.envs.whistling.actions import HopState, WhistlingActions
#:   from boardzoo.envs.whistling.rules import State
#:   print(WhistlingActions().legal_actions(HopState(State.from_text(scattered(2, 20)))))"
SEED2_HOPS = [3362, 3363, 3365, 3382, 3383, 3422, 3423, 3424]


def test_hops_of_a_search_past_the_old_memo_bound_are_listed():
    # its chain search passes 4M nodes, where the kernel refused to list its hops before the
    # listing memo was packed (docs/whistling.md, "Worst cases")
    assert A.legal_actions(HopState(State.from_text(scattered(2, 20)))) == SEED2_HOPS


def test_layered_count_equals_the_memo():
    rng = random.Random(11)
    states = [s for s in (sparse_state(rng) for _ in range(600)) if s.max_capture() >= 2][:120]
    states.append(State.start().play(State.start().legal_moves()[40]))
    for state in states:
        x, o, side, quiet = words(state)
        memo = K.legal_count(x, o, side, quiet, False, 1 << 30)
        layered = K.legal_count(x, o, side, quiet, False, 0)
        want = (state.max_capture(), state.legal_count(), K.OK)
        assert (memo[0], int(memo[1]), memo[2]) == want, state.to_text()
        assert (layered[0], int(layered[1]), layered[2]) == want, state.to_text()


def test_past_the_kernels_bounds_a_position_is_refused_in_one_line(capsys):
    rows = [c for c in range(NUM_CELLS) if ROW[c] >= 17]  # rows 17-21: 65 enemy stones
    state = State(BIT[CELL_INDEX["f16"]], sum(BIT[c] for c in rows), 0, 0)
    assert len(rows) > K.MAX_STONES
    for ask in (state.legal_count, state.max_capture, state.legal_moves,
                lambda: A.legal_actions(HopState(state))):
        with pytest.raises(ChainLimitError, match="boardzoo refuses it to bound memory"):
            ask()
    assert isinstance(ChainLimitError("x"), PositionError)
    assert main(["perft", "whistling", "1", "--position", state.to_text()]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("boardzoo: error: ") and len(err.splitlines()) == 1


def test_cli_perft_divide_sums_to_perft(capsys):
    taylor = load_vector("whistling", "taylor_example.json")["position"]
    assert main(["perft", "whistling", "2", "--position", taylor]) == 0
    total = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["perft", "whistling", "2", "--divide", "--position", taylor]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == total
    assert sum(int(line.split(": ")[1]) for line in lines[:-2]) == int(total)
    assert START_TEXT == load_vector("whistling", "start.json")["position"]
