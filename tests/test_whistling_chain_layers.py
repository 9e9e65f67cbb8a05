"""The layered maximum-capture search (issue 23: every valid position answered): the issue's
position, an independent brute force of the spec, agreement with the per-node memo search,
the CLI, and the refusal kept as a last resort."""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from test_whistling_chains import HUGE, HUGE_TURNS, A, sparse_positions

from boardzoo.cli import main
from boardzoo.envs.core import registry
from boardzoo.envs.whistling import chain_layers, chains
from boardzoo.envs.whistling.batched_search import per_game_actions
from boardzoo.envs.whistling.hexgrid import CELL_NAMES, CELLS, COORD_INDEX, DIRECTIONS
from boardzoo.envs.whistling.rules import State

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from whistling_chains import ISSUE, scattered  # noqa: E402

#: Maximal turns of the issue's position (an outside number: the issue's own search).
ISSUE_TURNS, ISSUE_N = 146_404, 16


@pytest.fixture
def layered(monkeypatch):
    """Send every chain position to the layered search (the memo may hold no node)."""
    monkeypatch.setattr(chains, "SWITCH_NODES", 0)


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

    def hops(s, last, foes, mine):
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

    def walk(path, last, foes, mine, taken):
        for d, f, caps in hops(path[-1], last, foes, mine):
            found.append(("-".join(CELL_NAMES[COORD_INDEX[c]] for c in path + [f]),
                          taken + len(caps)))
            walk(path + [f], d, foes - caps, mine, taken + len(caps))

    for s in own:
        walk([s], None, enemy, own - {s}, 0)
    best = max(n for _, n in found)
    return {p for p, n in found if n == best}


def path_of(move: str) -> str:
    """Return a whistling capture's notation without its capture lists."""
    return "-".join(part.split(":")[0] for part in move.split("-"))


def test_the_issues_position_is_answered_with_its_count():
    state = State.from_text(ISSUE)
    assert state.perft(1) == ISSUE_TURNS
    assert state.max_capture() == ISSUE_N


def test_the_issues_position_plays_through_the_env():
    s, text = A.initial_state(ISSUE), None
    while text is None:
        s, text = A.apply_action(s, A.legal_actions(s)[0])
    turn = State.from_text(ISSUE).parse_move(text)
    assert turn.count == ISSUE_N and State.from_text(ISSUE).is_legal(turn)


def test_layered_search_matches_a_brute_force_of_the_spec(layered):
    texts = [t for t in map(scattered, range(12), [7] * 12) if State.from_text(t).chains()]
    assert len(texts) >= 5
    for text in texts[:5]:
        state = State.from_text(text)
        assert state.chains().layered  # the layered search ran
        moves = list(state.iter_legal_move_strs())
        assert {path_of(m) for m in moves} == brute_turns(text)
        assert state.legal_count() == len(moves)


def test_layered_search_matches_the_memo_search(layered):
    for state in sparse_positions(3, 40):
        fresh = State(*state.stones, state.side)
        chains.SWITCH_NODES = 10**9  # the memo, as in ordinary play
        memo = State(*state.stones, state.side)
        assert not memo.chains().layered
        chains.SWITCH_NODES = 0
        assert fresh.chains().layered
        assert fresh.max_capture() == memo.max_capture()
        assert fresh.legal_count() == memo.legal_count()
        assert list(fresh.iter_legal_moves()) == memo.legal_moves()  # same order
        assert list(fresh.iter_legal_move_strs()) == memo.legal_move_strs()
        assert all(fresh.is_legal(t) for t in memo.legal_moves())
        hop, mem = A.from_game_state(fresh), A.from_game_state(memo)
        assert A.legal_actions(hop) == A.legal_actions(mem)
        for a in A.legal_actions(hop):  # one hop in, the continuations agree too
            (h2, t1), (m2, t2) = A.apply_action(hop, a), A.apply_action(mem, a)
            assert t1 == t2 and (t1 is not None or A.legal_actions(h2) == A.legal_actions(m2))


def test_batched_engines_per_game_search_continues_the_issues_chains():
    s = A.initial_state(ISSUE)
    for a in A.legal_actions(s)[:2]:
        after, text = A.apply_action(s, a)
        assert text is None  # mid-chain: the per-game search continues from the node
        x, o, cell, last = A.board(after)
        assert per_game_actions(x, o, cell, last) == A.legal_actions(after)


def test_layered_search_counts_the_huge_position(layered):
    state = State.from_text(HUGE)
    assert state.legal_count() == HUGE_TURNS
    assert state.chains().layered


def test_cli_streams_and_counts_the_issues_position(capsys):
    assert main(["perft", "whistling", "1", "--position", ISSUE]) == 0
    assert str(ISSUE_TURNS) in capsys.readouterr().out
    assert main(["legal", "whistling", "--position", ISSUE]) == 0
    lines = capsys.readouterr().out.split()
    assert len(lines) == ISSUE_TURNS and lines == sorted(lines)


def test_refusal_beyond_the_bound_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(chains, "MAX_BYTES", 500_000)  # the issue's position keeps ~1 MB
    with pytest.raises(chains.ChainLimitError, match="more than 500,000 bytes"):
        State.from_text(ISSUE).legal_count()
    # `boardzoo perft whistling` counts on the compiled kernel, whose bound is its own
    assert main(["perft", "whistling", "1", "--position", ISSUE]) == 0
    assert capsys.readouterr().out.split()[-1] == str(ISSUE_TURNS)
    # on the reference rules alone the refusal is one line
    spec = registry.get_spec("whistling")
    monkeypatch.setitem(registry._SPECS, "whistling", dataclasses.replace(spec, perft=None))
    assert main(["perft", "whistling", "1", "--position", ISSUE]) == 2
    err = capsys.readouterr().err.strip()
    assert "500,000 bytes" in err and len(err.splitlines()) == 1


@pytest.mark.skipif(not os.environ.get("BOARDZOO_SLOW"), reason="~10-90 s; set BOARDZOO_SLOW=1")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_twenty_scattered_stones_are_answered(seed):
    state = State.from_text(scattered(seed, 20))
    count = state.legal_count()  # no ChainLimitError
    assert count > 0 and state.max_capture() >= 1
    moves = state.iter_legal_moves()
    if seed == 0:  # its hops of maximal chains would need more than the memory bound
        with pytest.raises(chains.ChainLimitError, match=f"{count:,} turns"):
            next(moves)
        return
    first = [next(moves) for _ in range(min(count, 100))]
    assert all(t.count == state.max_capture() for t in first)
    assert all(state.is_legal(t) for t in first)


def test_generator_is_seeded_and_scattered():
    assert scattered(5, 20) == scattered(5, 20) != scattered(6, 20)
    x, o = State.from_text(scattered(5, 20)).stones
    assert (x.bit_count(), o.bit_count()) == (1, 20)
    stones = [CELLS[i] for i in range(len(CELLS)) if (x | o) >> i & 1]
    assert all((a[0] - b[0], a[1] - b[1]) not in DIRECTIONS for a in stones for b in stones)


@pytest.mark.parametrize("chunk", [None, 4])
@pytest.mark.parametrize("distinct", [50, 3])
def test_waiting_children_merge_to_distinct_keys_with_summed_counts(monkeypatch, chunk, distinct):
    monkeypatch.setattr(chain_layers, "_SLAB", 64)  # gather small parts into slabs often
    if chunk:  # more than 4 chunks: the two-thread merge (partition, halves, runs cut apart)
        monkeypatch.setattr(chain_layers, "_CHUNK", chunk)
    rng = np.random.default_rng(3)
    expected: dict[int, int] = {}
    bucket = chain_layers._Bucket()
    for _ in range(30):
        keys = rng.integers(0, distinct, rng.integers(1, 12))
        counts = rng.integers(1, 1000, len(keys))
        for k, c in zip(keys.tolist(), counts.tolist(), strict=True):
            expected[k] = expected.get(k, 0) + c
        bucket.add((keys << 32) | counts)
    assert bucket.nbytes == 8 * sum(len(p) for p in bucket.parts)
    assert len(bucket.parts) < 30  # slabs were gathered
    assert not bucket.compact(packed=True) and len(bucket.parts) == 1
    keys, counts = bucket.merge(packed=True)
    assert dict(zip(keys.tolist(), counts.tolist(), strict=True)) == expected
    assert bucket.nbytes == 0 and not bucket.parts
    # a count that reaches 2**32 when merged asks the caller to unpack
    half = np.array([(7 << 32) | (1 << 31)], np.int64)
    bucket.add(half.copy())
    bucket.add(half.copy())
    assert bucket.compact(packed=True)
    bucket.unpack()
    keys, counts = bucket.merge(packed=False)
    assert keys.tolist() == [7] and counts.tolist() == [1 << 32]


@pytest.mark.parametrize("chunk", [None, 3])
def test_a_chunks_children_are_summed_to_distinct_sorted_keys(monkeypatch, chunk):
    if chunk:  # several chunks of runs: the running totals are cut apart
        monkeypatch.setattr(chain_layers, "_CHUNK", chunk)
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 20, 200).astype(np.int32)
    counts = rng.integers(1, 1 << 31, 200)
    expected: dict[int, int] = {}
    for k, c in zip(keys.tolist(), counts.tolist(), strict=True):
        expected[k] = expected.get(k, 0) + c
    pairs = chain_layers._sum_duplicates(keys, counts)
    assert isinstance(pairs, tuple)  # a sum reached 2**32: (keys, counts), not packed
    assert dict(zip(*(a.tolist() for a in pairs), strict=True)) == expected
    small = counts % 1000
    packed = chain_layers._sum_duplicates(keys, small)
    got = dict(zip((packed >> 32).tolist(), (packed & 0xFFFFFFFF).tolist(), strict=True))
    assert list(got) == sorted(expected) and got == {
        k: sum(int(c) for kk, c in zip(keys, small, strict=True) if kk == k) for k in got}
    # a pair of large sums unpacks the waiting children, packed parts then arrive as pairs
    waiting = chain_layers._Waiting(packed=True)
    waiting.add(3, packed)
    waiting.add(3, chain_layers._sum_duplicates(keys, counts))
    assert not waiting.packed
    waiting.add(3, packed)
    merged_keys, merged_counts = waiting.pop(3)
    want = {k: expected[k] + 2 * got[k] for k in expected}
    assert dict(zip(merged_keys.tolist(), merged_counts.tolist(), strict=True)) == want


@pytest.mark.parametrize("patch", [("_PACKED_STONES", 0), ("_COUNT_LIMIT", 2)])
def test_packed_and_unpacked_searches_agree(layered, monkeypatch, patch):
    texts = [t for t in map(scattered, range(12), [7] * 12) if State.from_text(t).chains()][:3]
    want = [(s.max_capture(), s.legal_count(), list(s.iter_legal_move_strs()))
            for s in map(State.from_text, texts + [ISSUE])]
    monkeypatch.setattr(chain_layers, *patch)  # pairs from the start / from a count of 2 on
    got = [(s.max_capture(), s.legal_count(), list(s.iter_legal_move_strs()))
           for s in map(State.from_text, texts + [ISSUE])]
    assert got == want and want[-1][:2] == (ISSUE_N, ISSUE_TURNS)


def test_a_tight_memory_bound_merges_waiting_children_and_still_answers(monkeypatch):
    merged = []
    compact = chain_layers._Bucket.compact
    monkeypatch.setattr(chain_layers._Bucket, "compact",
                        lambda self, packed: merged.append(1) or compact(self, packed))
    monkeypatch.setattr(chains, "MAX_BYTES", 1_100_000)  # the search alone needs more
    state = State.from_text(ISSUE)
    assert (state.max_capture(), state.legal_count()) == (ISSUE_N, ISSUE_TURNS)
    assert merged


def test_past_the_bound_the_turns_are_counted_but_not_listed(monkeypatch, capsys):
    monkeypatch.setattr(chains, "MAX_BYTES", 1_050_000)  # room to count, not to keep layers
    state = State.from_text(ISSUE)
    assert (state.max_capture(), state.legal_count()) == (ISSUE_N, ISSUE_TURNS)
    assert not any(search.listable for search in state.chains().layered.values())
    with pytest.raises(chains.ChainLimitError, match="146,404 turns of 16 captures"):
        next(state.iter_legal_moves())
    assert main(["perft", "whistling", "1", "--position", ISSUE]) == 0
    assert capsys.readouterr().out.split()[-1] == str(ISSUE_TURNS)
    assert main(["legal", "whistling", "--position", ISSUE]) == 2
    out, err = capsys.readouterr()
    assert not out and len(err.strip().splitlines()) == 1 and "listing the turns" in err


def test_the_hops_of_maximal_chains_are_bounded_too(monkeypatch):
    monkeypatch.setattr(chains, "MAX_BYTES", 2_500_000)  # the layers fit, their hops do not
    state = State.from_text(ISSUE)
    assert state.legal_count() == ISSUE_TURNS
    assert all(search.listable for search in state.chains().layered.values())
    with pytest.raises(chains.ChainLimitError, match="146,404 turns of 16 captures"):
        next(state.iter_legal_moves())


def test_dead_ends_are_known_without_a_search_and_left_out(layered, monkeypatch):
    # the reach table is sound: every expanded node that has a capturing hop has a stone
    # left in its reach (positions with several own stones too: they block hops)
    for state in [*sparse_positions(3, 40), State.from_text(ISSUE)]:
        for search in state.chains().layered.values():
            for keys in search.layers.values():
                keys = keys.astype(np.int64)
                par, *_ = search._expand(keys)
                parents = keys[par]
                assert (search.reach[parents & 2047] & (parents >> 11) != 0).all()
    # ... and dead ends are left out: without the table (every stone in reach) the search
    # keeps more nodes and answers the same
    pruned = State.from_text(ISSUE).chains().layered
    children = chain_layers.LayeredSearch._children

    def everything_in_reach(self, *args):
        self.reach[:] = -1
        return children(self, *args)

    monkeypatch.setattr(chain_layers.LayeredSearch, "_children", everything_in_reach)
    state = State.from_text(ISSUE)
    assert (state.max_capture(), state.legal_count()) == (ISSUE_N, ISSUE_TURNS)
    full = state.chains().layered
    assert sum(s.nodes for s in full.values()) > 1.2 * sum(s.nodes for s in pruned.values())


def _issue_answer() -> tuple[int, int]:
    state = State.from_text(ISSUE)
    return state.max_capture(), state.legal_count()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_chunks_expanded_by_threads_answer_alike_in_a_forked_process(layered, monkeypatch):
    import multiprocessing

    whole = list(itertools.islice(State.from_text(ISSUE).iter_legal_move_strs(), 3000))
    monkeypatch.setattr(chain_layers, "_CHUNK", 512)  # many chunks a layer: threads expand
    assert _issue_answer() == (ISSUE_N, ISSUE_TURNS)
    assert os.getpid() in chain_layers._POOL
    # the listing pass too: the same turns in the same order
    assert list(itertools.islice(State.from_text(ISSUE).iter_legal_move_strs(), 3000)) == whole
    # a worker forked after the threads started has none of them: it starts its own
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_issue_answer).get(timeout=120) == (ISSUE_N, ISSUE_TURNS)
