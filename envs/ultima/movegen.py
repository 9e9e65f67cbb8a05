"""Ultima move generation and legality (spec sections 4-7) on a 64-byte board.

The board encoding and tables are in :mod:`.board`, check detection in :mod:`.check`.
A move is the int ``64 * origin + destination``; captures are automatic, so origin and
destination determine the move and everything it captures (spec 4).
:func:`legal_moves` returns ``{move: captured squares}``.
"""

from __future__ import annotations

from ..core.board8 import NEIGHBOURS, ORTHOGONAL, RAYS
from .board import (
    ADJ,
    BEHIND,
    BIT,
    BLACK,
    CHAMELEON,
    CODE_OF,
    COORDINATOR,
    FLANKS,
    IMMOBILIZER,
    KING,
    LEAPER,
    LETTER_OF,
    LETTERS,
    ORTH_DIRS,
    OWNED,
    PAWN,
    WHITE,
    WITHDRAWER,
    frozen_mask,
    frozen_pieces,
)
from .check import attacked, relevant, threat_pieces, vacate_mask

# The board encoding is re-exported: callers (agents, the env) import it from here.
__all__ = [
    "BLACK", "CODE_OF", "KING", "LETTER_OF", "LETTERS", "WHITE", "attacked", "frozen_pieces",
    "legal_moves", "make_move", "pseudo_moves", "pseudo_moves_by_piece",
]
Moves = list[tuple[int, tuple[int, ...]]]


def pseudo_moves(b: bytes | bytearray, colour: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """Return (origin, destination, captures) of every move of ``colour`` that obeys
    movement, capture and immobilization rules, ignoring whether it leaves its king in check."""
    return [(f, t, caps) for f, moves in pseudo_moves_by_piece(b, colour) for t, caps in moves]


def pseudo_moves_by_piece(b: bytes | bytearray, colour: int) -> list[tuple[int, Moves]]:
    """Return :func:`pseudo_moves` grouped by piece: ``(origin, [(destination, captures)])``."""
    en = colour ^ 8
    own, enemy = OWNED[colour], OWNED[en]
    frozen = frozen_mask(b, colour)
    cham_adj = 0  # squares next to an enemy chameleon: an immobilizer there is frozen
    code = en | CHAMELEON
    i = b.find(code)
    while i >= 0:
        cham_adj |= ADJ[i]
        i = b.find(code, i + 1)
    ks = b.find(colour | KING)
    k_rank, k_file = ks & 56, ks & 7
    e_pawn, e_leaper, e_withdrawer = en | PAWN, en | LEAPER, en | WITHDRAWER
    e_coord, e_king = en | COORDINATOR, en | KING
    mine = []
    pincers: dict[int, tuple[int, ...]] = {}  # landing square -> enemies a pawn pincers there
    pawn_pincers: dict[int, tuple[int, ...]] = {}  # the same for enemy pawns (chameleons)
    for sq in range(64):
        p = b[sq]
        if own[p]:
            if not frozen >> sq & 1:
                mine.append(sq)
        elif p:
            for t, far in FLANKS[sq]:
                # the partner is never the vacated origin: the mover would have had to
                # pass through the victim's square
                if not b[t] and own[b[far]]:
                    pincers[t] = pincers.get(t, ()) + (sq,)
                    if p == e_pawn:
                        pawn_pincers[t] = pawn_pincers.get(t, ()) + (sq,)
    out: list[tuple[int, Moves]] = []
    for f in mine:
        p = b[f]
        kind = p & 7
        rays = RAYS[f]
        moves: Moves = []
        out.append((f, moves))
        add = moves.append
        if kind == PAWN:
            for d in ORTHOGONAL:
                for t in rays[d]:
                    if b[t]:
                        break
                    add((t, pincers.get(t, ())))
        elif kind == COORDINATOR:
            for ray in rays:
                for t in ray:
                    if b[t]:
                        break
                    c1, c2 = k_rank | (t & 7), (t & 56) | k_file
                    if enemy[b[c1]]:
                        add((t, (c1, c2) if enemy[b[c2]] else (c1,)))
                    elif enemy[b[c2]]:
                        add((t, (c2,)))
                    else:
                        add((t, ()))
        elif kind == WITHDRAWER:
            for d in range(8):
                w = BEHIND[f][d]
                caps = (w,) if w >= 0 and enemy[b[w]] else ()
                for t in rays[d]:
                    if b[t]:
                        break
                    add((t, caps))
        elif kind == LEAPER:
            for ray in rays:
                jumped: tuple[int, ...] = ()
                pending = False  # just passed an enemy: the next square must be empty
                for t in ray:
                    q = b[t]
                    if q == 0:
                        if pending:
                            add((t, jumped))
                            pending = False
                        elif not jumped:
                            add((t, ()))
                    elif enemy[q] and not pending:
                        jumped += (t,)
                        pending = True
                    else:
                        break
        elif kind == KING:
            for t in NEIGHBOURS[f]:
                q = b[t]
                if q == 0:
                    add((t, ()))
                elif enemy[q] and q != e_king:
                    add((t, (t,)))
        elif kind == IMMOBILIZER:
            if cham_adj >> f & 1:
                continue
            for ray in rays:
                for t in ray:
                    if b[t]:
                        break
                    add((t, ()))
        else:  # chameleon: captures each kind only in that kind's own way (spec 6.6)
            for d in range(8):
                w = BEHIND[f][d]
                wcap = (w,) if w >= 0 and b[w] == e_withdrawer else ()
                orth = d in ORTH_DIRS
                jumped = ()
                pending = False
                for t in rays[d]:
                    q = b[t]
                    if q == 0:
                        if pending:
                            pending = False
                        elif jumped:
                            continue  # only the square right after a jumped leaper is a landing
                        caps = jumped + wcap
                        c1, c2 = k_rank | (t & 7), (t & 56) | k_file
                        if b[c1] == e_coord:
                            caps += (c1,)
                        if b[c2] == e_coord:
                            caps += (c2,)
                        if orth and t in pawn_pincers:
                            caps += pawn_pincers[t]
                        add((t, caps))
                    elif q == e_leaper and not pending:
                        jumped += (t,)
                        pending = True
                    else:
                        break
    return out


def legal_moves(b: bytes, colour: int) -> dict[int, tuple[int, ...]]:
    """Return ``{64 * origin + destination: captured squares}`` for every legal move of
    ``colour`` (spec 7): pseudo-legal moves that do not leave its king capturable.

    Most moves cannot change whether the king is capturable; the masks of
    :func:`relevant` (in check) and :func:`vacate_mask` (not in check) find the few
    that can, and only those are played out on a scratch board and tested in full.
    """
    att = colour ^ 8
    ks = b.find(colour | KING)
    in_check = attacked(b, ks, att)
    mask = relevant(b, ks, att) if in_check else vacate_mask(b, ks, att)
    threats = -1  # computed on the first immobilizer move that needs it
    work: bytearray | None = None
    out: dict[int, tuple[int, ...]] = {}
    for f, moves in pseudo_moves_by_piece(b, colour):
        p = b[f]
        kind = p & 7
        base = f << 6
        if not in_check and kind != KING and kind != IMMOBILIZER and not BIT[f] & mask:
            # the common case: leaving f cannot expose the king; only captures might
            for t, caps in moves:
                if caps:
                    touched = 0
                    for c in caps:
                        touched |= BIT[c]
                    if touched & mask:
                        if work is None:
                            work = bytearray(b)
                        if _exposes(work, f, t, caps, ks, att):
                            continue
                out[base | t] = caps
            continue
        for t, caps in moves:
            if kind == KING:
                full = True
            else:
                touched = BIT[f]  # not in check, only emptied squares matter
                if in_check:
                    touched |= BIT[t]
                for c in caps:
                    touched |= BIT[c]
                full = bool(touched & mask)
                if kind == IMMOBILIZER and not full:
                    # leaving f unfreezes the attackers next to it (arriving only freezes)
                    if in_check:
                        full = bool((ADJ[f] | ADJ[t]) & mask)
                    else:
                        if threats < 0:
                            threats = threat_pieces(b, ks, att)
                        full = bool(ADJ[f] & threats)
            if full:
                if work is None:
                    work = bytearray(b)
                if _exposes(work, f, t, caps, t if kind == KING else ks, att):
                    continue
            elif in_check:  # nothing that matters changed: still in check
                continue
            out[base | t] = caps
    return out


def _exposes(work: bytearray, f: int, t: int, caps: tuple[int, ...], k: int, att: int) -> bool:
    """Play the move on the scratch board, test whether the king on ``k`` is then
    capturable, and restore the board."""
    p = work[f]
    saved = [(c, work[c]) for c in caps]
    for c in caps:
        work[c] = 0
    work[f] = 0
    old = work[t]
    work[t] = p
    bad = attacked(work, k, att)
    work[t] = old
    work[f] = p
    for c, v in saved:
        work[c] = v
    return bad


def make_move(b: bytes, move: int, caps: tuple[int, ...]) -> bytes:
    """Return the board after ``move`` with its captured squares emptied."""
    f, t = move >> 6, move & 63
    nb = bytearray(b)
    for c in caps:
        nb[c] = 0
    nb[t] = nb[f]
    nb[f] = 0
    return bytes(nb)
