"""A slow, literal second implementation of the Ultima rules, checked against the fast engine.

The reference reads the spec the plain way: a move is legal when no enemy move
(generated in full) would capture the king afterwards. It shares nothing with
the compiled kernel (envs/ultima/kernel.py, through ``State``) but the square numbering,
so agreement on thousands of positions from random play and random sparse placements is
strong evidence for the fast engine's shortcuts (the relevance masks that skip most check tests).
"""

from __future__ import annotations

import os
import random

import pytest

from boardzoo.envs.core.game import PositionError
from boardzoo.envs.ultima import State

LINES8 = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]
ORTHO = [(0, 1), (1, 0), (0, -1), (-1, 0)]


def on(f: int, r: int) -> bool:
    return 0 <= f < 8 and 0 <= r < 8


def colour_of(piece: str | None) -> str | None:
    return None if piece is None else ("w" if piece.isupper() else "b")


def is_frozen(board: dict, f: int, r: int) -> bool:
    """Spec 5: next to an enemy immobilizer, or an immobilizer next to an enemy chameleon."""
    me = board[(f, r)]
    for df, dr in LINES8:
        q = board.get((f + df, r + dr))
        if q is None or colour_of(q) == colour_of(me):
            continue
        if q.upper() == "I" or (me.upper() == "I" and q.upper() == "C"):
            return True
    return False


def captures_after(board: dict, origin, dest, direction, path, side: str) -> set | None:
    """Captured squares when the piece on ``origin`` moves to ``dest`` through ``path``
    (the squares strictly between); None when the move is impossible."""
    piece = board[origin].upper()
    enemy = "b" if side == "w" else "w"
    after = dict(board)
    after[origin] = None
    after[dest] = board[origin]
    caps: set = set()
    occupied = [s for s in path if board[s] is not None]
    # jumping: leaper over enemies, chameleon over enemy leapers only
    if occupied:
        if piece not in "LC":
            return None
        for s in occupied:
            q = board[s]
            if colour_of(q) != enemy or (piece == "C" and q.upper() != "L"):
                return None
        for i, s in enumerate(path):  # every jumped piece needs an empty square after it
            if board[s] is not None:
                nxt = path[i + 1] if i + 1 < len(path) else dest
                if board.get(nxt) is not None:
                    return None
        if board[path[-1]] is None:  # must land right after the last victim
            return None
        caps |= set(occupied)
    df, dr = direction
    king = next(s for s, q in board.items() if q == ("K" if side == "w" else "k"))
    if piece in "PC" and (piece == "P" or (df == 0 or dr == 0)):
        for ef, er in ORTHO:
            n = (dest[0] + ef, dest[1] + er)
            far = (dest[0] + 2 * ef, dest[1] + 2 * er)
            victim, partner = after.get(n), after.get(far)
            if colour_of(victim) == enemy and colour_of(partner) == side:
                if piece == "P" or victim.upper() == "P":
                    caps.add(n)
    if piece in "WC":
        behind = (origin[0] - df, origin[1] - dr)
        q = board.get(behind)
        if colour_of(q) == enemy and (piece == "W" or q.upper() == "W"):
            caps.add(behind)
    if piece in "OC":
        for corner in ((dest[0], king[1]), (king[0], dest[1])):
            q = after.get(corner)
            if corner not in (dest, king) and colour_of(q) == enemy:
                if piece == "O" or q.upper() == "O":
                    caps.add(corner)
    return caps


def pseudo(board: dict, side: str) -> list[tuple]:
    """Every (origin, dest, captures) for ``side``, ignoring its own king's safety."""
    out = []
    enemy = "b" if side == "w" else "w"
    for (f, r), q in board.items():
        if colour_of(q) != side or is_frozen(board, f, r):
            continue
        kind = q.upper()
        if kind == "K" or kind == "C":  # king steps; a chameleon may step onto a king
            for df, dr in LINES8:
                t = (f + df, r + dr)
                if not on(*t):
                    continue
                v = board[t]
                if kind == "K" and colour_of(v) == enemy:
                    out.append(((f, r), t, {t}))
                elif kind == "K" and v is None:
                    out.append(((f, r), t, set()))
                elif kind == "C" and colour_of(v) == enemy and v.upper() == "K":
                    out.append(((f, r), t, {t}))
            if kind == "K":
                continue
        for df, dr in (ORTHO if kind == "P" else LINES8):
            for n in range(1, 8):
                t = (f + n * df, r + n * dr)
                if not on(*t):
                    break
                if board[t] is not None:
                    continue
                path = [(f + i * df, r + i * dr) for i in range(1, n)]
                caps = captures_after(board, (f, r), t, (df, dr), path, side)
                if caps is not None:
                    out.append(((f, r), t, caps if kind != "I" else set()))
    return out


def in_check(board: dict, side: str) -> bool:
    king = next(s for s, q in board.items() if q == ("K" if side == "w" else "k"))
    enemy = "b" if side == "w" else "w"
    return any(king in caps for _o, _t, caps in pseudo(board, enemy))


def reference_legal(state: State) -> list[str]:
    board = {(i % 8, i // 8): c for i, c in enumerate(state.cells())}
    side = "wb"[state.to_move]
    names = []
    for o, t, caps in pseudo(board, side):
        after = dict(board)
        for c in caps:
            after[c] = None
        after[t], after[o] = board[o], None
        if in_check(after, side):
            continue
        sq = "abcdefgh"
        text = f"{sq[o[0]]}{o[1] + 1}{sq[t[0]]}{t[1] + 1}"
        names.append(text + "".join(f"x{sq[c[0]]}{c[1] + 1}" for c in sorted(caps)))
    return sorted(names)


def random_play_positions(seed: int, games: int, max_plies: int = 200) -> list[State]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        s = State.start()
        for _ply in range(max_plies):
            if s.is_terminal():
                break
            out.append(s)
            s = s.apply(rng.choice(s.legal_moves()))
        out.append(s)
    return out


def random_sparse_positions(seed: int, count: int) -> list[State]:
    """Random placements of a few pieces each: checks, freezes and captures are common."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cells = [None] * 64
        squares = rng.sample(range(64), rng.randint(4, 14))
        cells[squares[0]], cells[squares[1]] = "K", "k"
        for s in squares[2:]:
            cells[s] = rng.choice("PPPLCWIOplcwiopp")
        ranks = []
        for rank in range(7, -1, -1):
            row = "".join(cells[8 * rank + f] or "1" for f in range(8))
            ranks.append(row)
        try:
            out.append(State.from_text("/".join(ranks) + " " + rng.choice("wb")))
        except PositionError:  # the side not to move is in check
            continue
    return out


def check_against_reference(states: list[State]) -> None:
    for s in states:
        # a finished position (a draw rule, or no move) has no legal move at all
        expected = [] if s.is_terminal() else reference_legal(s)
        assert s.legal_move_strs() == expected, s.to_text()
        board = {(i % 8, i // 8): c for i, c in enumerate(s.cells())}
        assert s.in_check() == in_check(board, "wb"[s.to_move]), s.to_text()


def test_reference_agrees_on_the_shared_vectors_start():
    check_against_reference([State.start()])


def test_reference_agrees_on_random_play():
    check_against_reference(random_play_positions(seed=11, games=2, max_plies=60)[::3])


def test_reference_agrees_on_sparse_positions():
    check_against_reference(random_sparse_positions(seed=5, count=120))


@pytest.mark.skipif(not os.environ.get("BOARDZOO_SLOW"), reason="slow: set BOARDZOO_SLOW=1")
def test_reference_agrees_many_positions():
    check_against_reference(random_play_positions(seed=2, games=4, max_plies=400))
    check_against_reference(random_sparse_positions(seed=9, count=1500))
