"""Whistling properties (hypothesis): the engine against a slow, literal reading of the spec,
immutability, position text round trips and the env's hop masks against whole turns."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardzoo.envs.whistling import State
from boardzoo.envs.whistling.actions import WhistlingActions, decode
from boardzoo.envs.whistling.hexgrid import CELL_NAMES, CELLS, COORD_INDEX, NUM_CELLS

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
ACTIONS = WhistlingActions()
# the six offsets of spec section 1, in no particular order (the reference's own table)
OFFSETS = ((2, 0), (-2, 0), (1, 1), (-1, -1), (1, -1), (-1, 1))


# -- a literal, slow reference implementation of spec sections 3-8 --------------------------
def _d2(a: tuple[int, int], b: tuple[int, int]) -> int:
    return (a[0] - b[0]) ** 2 + 3 * (a[1] - b[1]) ** 2


def _neighbours(p: tuple[int, int]) -> set[tuple[int, int]]:
    return {(p[0] + dc, p[1] + dr) for dc, dr in OFFSETS if (p[0] + dc, p[1] + dr) in COORD_INDEX}


def _slides(start, blocked, enemies):
    """Yield (offset, cells S..F) of every slide obeying emptiness and the closer rule."""
    for off in OFFSETS:
        path, p = [start], start
        while True:
            p = (p[0] + off[0], p[1] + off[1])
            if p not in COORD_INDEX or p in blocked:
                break
            path.append(p)
            if any(_d2(p, e) < _d2(start, e) for e in enemies):
                yield off, list(path)


def _zone(path) -> set[tuple[int, int]]:
    near = set().union(*(_neighbours(p) for p in path[1:-1])) if len(path) > 2 else set()
    return near - _neighbours(path[0]) - _neighbours(path[-1]) - set(path)


def _name(p: tuple[int, int]) -> str:
    return CELL_NAMES[COORD_INDEX[p]]


def _caps(cells) -> str:
    return "".join(_name(p) for p in sorted(cells, key=lambda p: (p[1], p[0])))


def reference_legal(state: State) -> list[str]:
    """Return the legal turns' canonical strings straight from the spec's wording."""
    side = state.to_move
    own = {CELLS[i] for i in range(NUM_CELLS) if state.stones[side] >> i & 1}
    enemy = {CELLS[i] for i in range(NUM_CELLS) if state.stones[1 - side] >> i & 1}
    if not own or state.quiet >= 40:
        return []
    chains: list[tuple[str, int]] = []
    for s in own:
        others = own - {s}

        def grow(p, last, enemies, text, count, others=others):
            for off, path in _slides(p, others | enemies, enemies):
                if last is not None and off in (last, (-last[0], -last[1])):
                    continue
                taken = _zone(path) & enemies
                if taken:
                    step = f"{text}-{_name(path[-1])}:{_caps(taken)}"
                    chains.append((step, count + len(taken)))
                    grow(path[-1], off, enemies - taken, step, count + len(taken))

        grow(s, None, enemy, _name(s), 0)
    crushes = [f"{_name(s)}:{_name(n)}" for s in own for n in _neighbours(s) if n in enemy]
    best = max([c for _, c in chains] + [1 if crushes else 0])
    if best == 0:
        return sorted(f"{_name(s)}-{_name(path[-1])}" for s in own
                      for _, path in _slides(s, (own | enemy) - {s}, enemy))
    legal = [t for t, c in chains if c == best] + (crushes if best == 1 else [])
    return sorted(legal)


# -- strategies ------------------------------------------------------------------------------
@st.composite
def sparse_states(draw) -> State:
    """A position with a few stones per side scattered over the board.

    At most 9 stones: a lone stone among a dozen enemies can have tens of thousands of
    maximum chains, too many for the reference's and the mask walk's exhaustive search.
    """
    cells = draw(st.lists(st.integers(0, NUM_CELLS - 1), min_size=2, max_size=9, unique=True))
    cut = draw(st.integers(1, len(cells) - 1))
    side = draw(st.integers(0, 1))
    quiet = draw(st.sampled_from([0, 5, 38, 39, 40]))
    x = sum(1 << c for c in cells[:cut])
    o = sum(1 << c for c in cells[cut:])
    return State(x, o, side, quiet)


@st.composite
def played_states(draw) -> State:
    """A position reached by random legal turns from the start (capture-rich)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    state = State.start()
    for _ in range(draw(st.integers(0, 30))):
        if state.is_terminal():
            break
        state = state.apply(rng.choice(state.legal_moves()))
    return state


states = st.one_of(sparse_states(), played_states())


# -- properties -------------------------------------------------------------------------------
@SETTINGS
@given(states)
def test_engine_agrees_with_the_literal_reference(state):
    assert state.legal_move_strs() == reference_legal(state)
    assert state.legal_count() == len(state.legal_moves())


@SETTINGS
@given(states)
def test_text_round_trip_and_apply_never_mutates(state):
    text, key = state.to_text(), state.key()
    assert State.from_text(text).to_text() == text
    legal = state.legal_move_strs()
    total = sum(bin(s).count("1") for s in state.stones)
    moves = state.legal_moves()
    for move in moves[:: max(1, len(moves) // 12)]:  # a spread of ~12 turns keeps it quick
        child = state.apply(move)
        assert sum(bin(s).count("1") for s in child.stones) == total - move.count <= total
        assert child.to_move == 1 - state.to_move
        assert child.quiet == (0 if move.count else state.quiet + 1)
        assert State.from_text(child.to_text()).key() == child.key()
    assert state.to_text() == text and state.key() == key and state.legal_move_strs() == legal


def _all_turns_through_masks(hs) -> list[str]:
    """Follow every masked hop from a turn start; return the turns completed (DFS)."""
    out: list[str] = []
    mask = ACTIONS.action_mask(hs)
    legal = ACTIONS.legal_actions(hs)
    assert sorted(int(a) for a in mask.nonzero()[0]) == legal
    for a in legal:
        nxt, turn = ACTIONS.apply_action(hs, a)
        if turn is None:
            assert ACTIONS.to_move(nxt) == ACTIONS.to_move(hs)  # same agent continues
            assert decode(nxt.done[-1]) == decode(a)
            out.extend(_all_turns_through_masks(nxt))
        else:
            out.append(turn)
    return out


DOC_DIRECTIONS = ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1))  # E SE SW W NW NE


def documented_action(a: int, b: int) -> int:
    """Return the action of the hop a -> b by the encoding documented in docs/whistling.md."""
    (c0, r0), (c1, r1) = CELLS[a], CELLS[b]
    k = max(abs(r1 - r0), abs(c1 - c0) // 2)
    d = DOC_DIRECTIONS.index(((c1 - c0) // k, (r1 - r0) // k))
    return (6 * a + d) * 20 + (k - 1)


@SETTINGS
@given(states)
def test_masks_at_turn_start_and_every_turn_reachable(state):
    hs = ACTIONS.from_game_state(state)
    firsts = {documented_action(t.path[0], t.path[1]) for t in state.legal_moves()}
    assert set(ACTIONS.legal_actions(hs)) == firsts
    assert set(ACTIONS.action_mask(hs).nonzero()[0].tolist()) == firsts
    reached = _all_turns_through_masks(hs)
    assert sorted(reached) == state.legal_move_strs()  # each legal turn exactly once


@SETTINGS
@given(states, st.integers(0, 2**32))
def test_random_masked_hops_complete_exactly_one_legal_turn(state, seed):
    rng = random.Random(seed)
    hs = ACTIONS.from_game_state(state)
    legal = set(state.legal_move_strs())
    if not legal:
        assert ACTIONS.legal_actions(hs) == [] and ACTIONS.action_mask(hs).sum() == 0
        return
    hops = 0
    while True:
        action = rng.choice(ACTIONS.legal_actions(hs))
        hs, turn = ACTIONS.apply_action(hs, action)
        hops += 1
        if turn is not None:
            break
        assert hops <= 21  # each hop of a chain captures, so a chain is short
    assert turn in legal
    assert ACTIONS.game_state(hs).to_text() == state.apply(state.parse_move(turn)).to_text()
