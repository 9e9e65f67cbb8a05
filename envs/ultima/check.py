"""Ultima check detection (spec 8): can a colour capture the king on a square?

:func:`attacked` answers it; :func:`relevant`, :func:`vacate_mask` and
:func:`threat_pieces` bound which squares a move must touch to change the answer,
so that :func:`boardzoo.envs.ultima.movegen.legal_moves` plays out only those moves.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..core.board8 import OPPOSITE, ORTHOGONAL, RAYS
from .board import (
    BIT,
    CHAMELEON,
    COORDINATOR,
    FILE_MASK,
    KING,
    LEAPER,
    NEAR2,
    OWNED,
    PAWN,
    RANK_MASK,
    WITHDRAWER,
    frozen_mask,
)


def attacked(b: bytes | bytearray, k: int, att: int) -> bool:
    """Return True when colour ``att`` has a move that would capture the piece on ``k``
    (the defender's king) by any mechanism, ignoring its own king's safety (spec 8)."""
    fz = frozen_mask(b, att)
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    a_leap, a_pawn, a_coord = att | LEAPER, att | PAWN, att | COORDINATOR
    attacker = OWNED[att]
    rays = RAYS[k]
    for ray in rays:
        if not ray:
            continue
        n = ray[0]
        q = b[n]
        if q == a_king or q == a_cham:
            if not fz >> n & 1:
                return True
        elif q == a_with and len(ray) > 1 and b[ray[1]] == 0 and not fz >> n & 1:
            return True
    if a_leap in b:
        for d in range(8):
            back = rays[OPPOSITE[d]]
            if not back or b[back[0]]:
                continue  # the leaper must land right beyond the king
            prev_empty = False  # a jumped piece needs an empty square after it (towards k)
            for s in rays[d]:
                q = b[s]
                if q == 0:
                    prev_empty = True
                elif attacker[q]:
                    if q == a_leap and not fz >> s & 1:
                        return True
                    break
                elif prev_empty:
                    prev_empty = False
                else:
                    break
    if a_pawn in b:
        for d in ORTHOGONAL:
            ray, back = rays[d], rays[OPPOSITE[d]]
            if not ray or not back or b[ray[0]] or not attacker[b[back[0]]]:
                continue
            t, toward_k = ray[0], OPPOSITE[d]
            for d2 in ORTHOGONAL:
                if d2 == toward_k:
                    continue
                for s in RAYS[t][d2]:
                    q = b[s]
                    if q:
                        if q == a_pawn and not fz >> s & 1:
                            return True
                        break
    if a_coord in b:
        e = b.find(a_king)
        line = _coordinator_line(e, k)
        if line:
            c = b.find(a_coord)
            while c >= 0:
                if not fz >> c & 1:
                    for ray in RAYS[c]:
                        for s in ray:
                            if b[s]:
                                break
                            if line >> s & 1:
                                return True
                c = b.find(a_coord, c + 1)
    return False


def _coordinator_line(e: int, k: int) -> int:
    """Return the squares where a coordinator with its king on ``e`` would capture ``k``."""
    if e < 0 or e == k:
        return 0
    if (e ^ k) & 56 == 0:  # same rank: the corner (file of T, rank of e) is k for T on k's file
        return FILE_MASK[k]
    if (e ^ k) & 7 == 0:
        return RANK_MASK[k]
    return 0


def relevant(b: bytes | bytearray, k: int, att: int) -> int:
    """Return a mask of squares outside of which no change (other than a move of the
    defender's king or immobilizer) can alter ``attacked(b, k, att)``.

    It mirrors :func:`attacked`: the king's neighbourhood, each leaper line up to the
    first attacking piece, the paths a pawn could take to a pincer square, and the
    coordinator's lines when its king is aligned with ``k``. Frozen status is left out
    on purpose: only the defender's immobilizer can change it, and its moves are
    tested in full.
    """
    mask = NEAR2[k]
    attacker = OWNED[att]
    rays = RAYS[k]
    if att | LEAPER in b:
        for d in range(8):
            back = rays[OPPOSITE[d]]
            if not back or b[back[0]]:
                continue
            for s in rays[d]:
                mask |= BIT[s]
                if attacker[b[s]]:
                    break
    if att | PAWN in b:
        for d in ORTHOGONAL:
            ray, back = rays[d], rays[OPPOSITE[d]]
            if not ray or not back or b[ray[0]] or not attacker[b[back[0]]]:
                continue
            t, toward_k = ray[0], OPPOSITE[d]
            for d2 in ORTHOGONAL:
                if d2 == toward_k:
                    continue
                for s in RAYS[t][d2]:
                    mask |= BIT[s]
                    if b[s]:
                        break
    a_coord = att | COORDINATOR
    if a_coord in b:
        line = _coordinator_line(b.find(att | KING), k)
        if line:
            mask |= line
            c = b.find(a_coord)
            while c >= 0:
                mask |= BIT[c]
                for ray in RAYS[c]:
                    for s in ray:
                        mask |= BIT[s]
                        if b[s]:
                            break
                c = b.find(a_coord, c + 1)
    return mask


def vacate_mask(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the squares whose emptying (the mover leaving it, or a capture) could let
    colour ``att`` capture the piece on ``k``, freezing ignored.

    Filling a square never creates such a capture (it can only block a line, a landing
    or a withdrawal), so when the king is not in check a move other than a king or
    immobilizer move needs a full test only if it empties one of these squares.
    """
    attacker = OWNED[att]
    a_with, a_leap, a_pawn, a_coord = att | WITHDRAWER, att | LEAPER, att | PAWN, att | COORDINATOR
    rays = RAYS[k]
    mask = 0
    for ray in rays:
        if len(ray) > 1 and b[ray[0]] == a_with:
            mask |= BIT[ray[1]]  # its retreat square
    if a_leap in b:
        for d in range(8):
            back = rays[OPPOSITE[d]]
            if not back:
                continue
            seg = line = 0  # squares up to the farthest leaper (a nearer one may be captured)
            for s in rays[d]:
                if b[s] == a_leap:
                    line = seg | BIT[back[0]]
                seg |= BIT[s]
            mask |= line
    if a_pawn in b:
        for d in ORTHOGONAL:
            ray, back = rays[d], rays[OPPOSITE[d]]
            if not ray or not back or not attacker[b[back[0]]]:
                continue  # no partner beyond the king: no pincer on this line
            t, toward_k = ray[0], OPPOSITE[d]
            for d2 in ORTHOGONAL:
                if d2 == toward_k:
                    continue
                seg = 0
                for s in RAYS[t][d2]:
                    if b[s] == a_pawn:
                        mask |= seg | BIT[t]
                    seg |= BIT[s]
    if a_coord in b:
        line = _coordinator_line(b.find(att | KING), k)
        if line:
            c = b.find(a_coord)
            while c >= 0:
                for ray in RAYS[c]:
                    seg = 0
                    for s in ray:
                        seg |= BIT[s]
                        if line >> s & 1:
                            mask |= seg
                            break
                c = b.find(a_coord, c + 1)
    return mask


def threat_pieces(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the pieces of ``att`` that could capture the piece on ``k`` now if they were
    not frozen (what a move of the defender's immobilizer may unleash)."""
    attacker = OWNED[att]
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    a_leap, a_pawn, a_coord = att | LEAPER, att | PAWN, att | COORDINATOR
    rays = RAYS[k]
    out = 0
    for ray in rays:
        if not ray:
            continue
        q = b[ray[0]]
        if q == a_king or q == a_cham or (q == a_with and len(ray) > 1 and b[ray[1]] == 0):
            out |= BIT[ray[0]]
    for d in range(8):
        back = rays[OPPOSITE[d]]
        if not back or b[back[0]]:
            continue
        prev_empty = False
        for s in rays[d]:
            q = b[s]
            if q == 0:
                prev_empty = True
            elif attacker[q]:
                if q == a_leap:
                    out |= BIT[s]
                break
            elif prev_empty:
                prev_empty = False
            else:
                break
    for d in ORTHOGONAL:
        ray, back = rays[d], rays[OPPOSITE[d]]
        if not ray or not back or b[ray[0]] or not attacker[b[back[0]]]:
            continue
        t, toward_k = ray[0], OPPOSITE[d]
        for d2 in ORTHOGONAL:
            if d2 != toward_k:
                for s in RAYS[t][d2]:
                    if b[s]:
                        if b[s] == a_pawn:
                            out |= BIT[s]
                        break
    line = _coordinator_line(b.find(a_king), k)
    if line:
        c = b.find(a_coord)
        while c >= 0:
            if any(line >> s & 1 for ray in RAYS[c] for s in _open(b, ray)):
                out |= BIT[c]
            c = b.find(a_coord, c + 1)
    return out


def _open(b: bytes | bytearray, ray: tuple[int, ...]) -> Iterator[int]:
    """Yield the empty squares of ``ray`` up to the first piece."""
    for s in ray:
        if b[s]:
            return
        yield s
