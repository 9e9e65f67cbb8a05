"""Ultima check detection (spec 8): can a colour capture the king on a square?

:func:`attacked` answers it; :func:`relevant`, :func:`vacate_mask` and
:func:`threat_pieces` bound which squares a move must touch to change the answer,
so that :func:`boardzoo.envs.ultima.movegen.legal_moves` plays out only those moves.
Each of the four goes through the capture mechanisms in the same order: pieces next to
the king (king, chameleon, withdrawer), long leaper, pincer pawn, coordinator.
"""

from __future__ import annotations

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

# LEAP_LINES[k]: (line, landing) per direction from k: a leaper coming along ``line``
# (nearest square first) captures k by landing on ``landing``, the square beyond k.
LEAP_LINES = tuple(tuple((RAYS[k][d], RAYS[k][OPPOSITE[d]][0]) for d in range(8)
                         if RAYS[k][d] and RAYS[k][OPPOSITE[d]]) for k in range(64))
# PINCER_SQUARES[k]: (t, partner, approaches) per orthogonal line through k: a pawn landing
# on t (next to k) captures k when ``partner`` (beyond k) holds one of its pieces; it
# reaches t along one of the ``approaches`` (lines from t, nearest square first).
PINCER_SQUARES = tuple(
    tuple((RAYS[k][d][0], RAYS[k][OPPOSITE[d]][0],
           tuple(RAYS[RAYS[k][d][0]][d2] for d2 in ORTHOGONAL
                 if d2 != OPPOSITE[d] and RAYS[RAYS[k][d][0]][d2]))
          for d in ORTHOGONAL if RAYS[k][d] and RAYS[k][OPPOSITE[d]])
    for k in range(64))


def attacked(b: bytes | bytearray, k: int, att: int) -> bool:
    """Return True when colour ``att`` has a move that would capture the piece on ``k``
    (the defender's king) by any mechanism, ignoring its own king's safety (spec 8)."""
    fz = frozen_mask(b, att)
    return (
        _adjacent_attack(b, k, att, fz)
        or (att | LEAPER in b and _leaper_attack(b, k, att, fz))
        or (att | PAWN in b and _pincer_attack(b, k, att, fz))
        or (att | COORDINATOR in b and _coordinator_attack(b, k, att, fz))
    )


def _adjacent_attack(b: bytes | bytearray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen king or chameleon of ``att`` stands next to ``k``, or a
    withdrawer with an empty square behind it to withdraw to."""
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    for ray in RAYS[k]:
        if not ray:
            continue
        n = ray[0]
        q = b[n]
        if q == a_king or q == a_cham:
            if not fz >> n & 1:
                return True
        elif q == a_with and len(ray) > 1 and b[ray[1]] == 0 and not fz >> n & 1:
            return True
    return False


def _leaper_attack(b: bytes | bytearray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen leaper of ``att`` can jump ``k`` (and whatever enemies lie
    between, each followed by an empty square) and land on the empty square beyond it."""
    attacker = OWNED[att]
    a_leap = att | LEAPER
    for line, landing in LEAP_LINES[k]:
        if b[landing]:
            continue
        prev_empty = False  # a jumped piece needs an empty square after it (towards k)
        for s in line:
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
    return False


def _pincer_attack(b: bytes | bytearray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen pawn of ``att`` can slide onto an empty square next to
    ``k`` that has an ``att`` partner on the other side of ``k``."""
    attacker = OWNED[att]
    a_pawn = att | PAWN
    for t, partner, approaches in PINCER_SQUARES[k]:
        if b[t] or not attacker[b[partner]]:
            continue
        for line in approaches:
            for s in line:
                q = b[s]
                if q:
                    if q == a_pawn and not fz >> s & 1:
                        return True
                    break
    return False


def _coordinator_attack(b: bytes | bytearray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen coordinator of ``att`` can stop on a square where the
    corner it forms with its king is ``k``."""
    line = _coordinator_line(b.find(att | KING), k)
    if line:
        code = att | COORDINATOR
        c = b.find(code)
        while c >= 0:
            if not fz >> c & 1 and _reaches(b, c, line):
                return True
            c = b.find(code, c + 1)
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


def _reaches(b: bytes | bytearray, c: int, line: int) -> bool:
    """Return True when a queen move from ``c`` over empty squares can stop on ``line``."""
    for ray in RAYS[c]:
        for s in ray:
            if b[s]:
                break
            if line >> s & 1:
                return True
    return False


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
    if att | LEAPER in b:
        mask |= _leaper_lines(b, k, att)
    if att | PAWN in b:
        mask |= _pincer_paths(b, k, att)
    if att | COORDINATOR in b:
        mask |= _coordinator_paths(b, k, att)
    return mask


def _leaper_lines(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the leaper lines towards ``k`` whose landing square is empty, each up to and
    including its first ``att`` piece."""
    attacker = OWNED[att]
    mask = 0
    for line, landing in LEAP_LINES[k]:
        if b[landing]:
            continue
        for s in line:
            mask |= BIT[s]
            if attacker[b[s]]:
                break
    return mask


def _pincer_paths(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the pawn approaches to each empty pincer square next to ``k`` that has an
    ``att`` partner, each up to and including its first piece."""
    attacker = OWNED[att]
    mask = 0
    for t, partner, approaches in PINCER_SQUARES[k]:
        if b[t] or not attacker[b[partner]]:
            continue
        for line in approaches:
            for s in line:
                mask |= BIT[s]
                if b[s]:
                    break
    return mask


def _coordinator_paths(b: bytes | bytearray, k: int, att: int) -> int:
    """Return, when the ``att`` king is aligned with ``k``, the squares that capture ``k``
    from a coordinator's corner, the coordinators and their moves (up to the first piece)."""
    line = _coordinator_line(b.find(att | KING), k)
    if not line:
        return 0
    mask = line
    code = att | COORDINATOR
    c = b.find(code)
    while c >= 0:
        mask |= BIT[c]
        for ray in RAYS[c]:
            for s in ray:
                mask |= BIT[s]
                if b[s]:
                    break
        c = b.find(code, c + 1)
    return mask


def vacate_mask(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the squares whose emptying (the mover leaving it, or a capture) could let
    colour ``att`` capture the piece on ``k``, freezing ignored.

    Filling a square never creates such a capture (it can only block a line, a landing
    or a withdrawal), so when the king is not in check a move other than a king or
    immobilizer move needs a full test only if it empties one of these squares.
    """
    mask = _withdrawal_squares(b, k, att)
    if att | LEAPER in b:
        mask |= _leaper_vacate(b, k, att)
    if att | PAWN in b:
        mask |= _pincer_vacate(b, k, att)
    if att | COORDINATOR in b:
        mask |= _coordinator_vacate(b, k, att)
    return mask


def _withdrawal_squares(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the square each ``att`` withdrawer next to ``k`` would withdraw to."""
    a_with = att | WITHDRAWER
    mask = 0
    for ray in RAYS[k]:
        if len(ray) > 1 and b[ray[0]] == a_with:
            mask |= BIT[ray[1]]
    return mask


def _leaper_vacate(b: bytes | bytearray, k: int, att: int) -> int:
    """Return each leaper line towards ``k`` up to its farthest ``att`` leaper (a nearer
    one may be captured), with the landing square beyond ``k``."""
    a_leap = att | LEAPER
    mask = 0
    for line, landing in LEAP_LINES[k]:
        seg = reach = 0
        for s in line:
            if b[s] == a_leap:
                reach = seg | BIT[landing]
            seg |= BIT[s]
        mask |= reach
    return mask


def _pincer_vacate(b: bytes | bytearray, k: int, att: int) -> int:
    """Return, for each pincer square next to ``k`` with an ``att`` partner, the square and
    each approach to it up to its farthest ``att`` pawn."""
    attacker = OWNED[att]
    a_pawn = att | PAWN
    mask = 0
    for t, partner, approaches in PINCER_SQUARES[k]:
        if not attacker[b[partner]]:
            continue  # no partner beyond the king: no pincer on this line
        for line in approaches:
            seg = 0
            for s in line:
                if b[s] == a_pawn:
                    mask |= seg | BIT[t]
                seg |= BIT[s]
    return mask


def _coordinator_vacate(b: bytes | bytearray, k: int, att: int) -> int:
    """Return, when the ``att`` king is aligned with ``k``, each coordinator line up to the
    first square that captures ``k``, whatever stands in between."""
    line = _coordinator_line(b.find(att | KING), k)
    if not line:
        return 0
    mask = 0
    code = att | COORDINATOR
    c = b.find(code)
    while c >= 0:
        for ray in RAYS[c]:
            seg = 0
            for s in ray:
                seg |= BIT[s]
                if line >> s & 1:
                    mask |= seg
                    break
        c = b.find(code, c + 1)
    return mask


def threat_pieces(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the pieces of ``att`` that could capture the piece on ``k`` now if they were
    not frozen (what a move of the defender's immobilizer may unleash)."""
    return (_adjacent_threats(b, k, att) | _leaper_threats(b, k, att)
            | _pawn_threats(b, k, att) | _coordinator_threats(b, k, att))


def _adjacent_threats(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the ``att`` king and chameleons next to ``k``, and the withdrawers there with an
    empty square behind them."""
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    out = 0
    for ray in RAYS[k]:
        if not ray:
            continue
        q = b[ray[0]]
        if q == a_king or q == a_cham or (q == a_with and len(ray) > 1 and b[ray[1]] == 0):
            out |= BIT[ray[0]]
    return out


def _leaper_threats(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the ``att`` leapers that can jump ``k`` onto an empty landing square."""
    attacker = OWNED[att]
    a_leap = att | LEAPER
    out = 0
    for line, landing in LEAP_LINES[k]:
        if b[landing]:
            continue
        prev_empty = False
        for s in line:
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
    return out


def _pawn_threats(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the ``att`` pawns that can slide onto an empty pincer square next to ``k``
    with a partner beyond it."""
    attacker = OWNED[att]
    a_pawn = att | PAWN
    out = 0
    for t, partner, approaches in PINCER_SQUARES[k]:
        if b[t] or not attacker[b[partner]]:
            continue
        for line in approaches:
            for s in line:
                if b[s]:
                    if b[s] == a_pawn:
                        out |= BIT[s]
                    break
    return out


def _coordinator_threats(b: bytes | bytearray, k: int, att: int) -> int:
    """Return the ``att`` coordinators that can stop where their corner with the king is
    ``k``."""
    line = _coordinator_line(b.find(att | KING), k)
    out = 0
    if line:
        code = att | COORDINATOR
        c = b.find(code)
        while c >= 0:
            if _reaches(b, c, line):
                out |= BIT[c]
            c = b.find(code, c + 1)
    return out
