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
    neighbourhood,
)
from .check import attacked, relevant, threat_pieces, vacate_mask

# The board encoding is re-exported: callers (agents, the env) import it from here.
__all__ = [
    "BLACK", "CODE_OF", "KING", "LETTER_OF", "LETTERS", "WHITE", "attacked", "frozen_pieces",
    "legal_moves", "make_move", "pseudo_moves", "pseudo_moves_by_piece",
]
Moves = list[tuple[int, tuple[int, ...]]]

# Per origin square, the lines a piece can move along (empty lines left out, directions in
# order): the pawn's orthogonal ones; for the withdrawer each with the square it moves away
# from (-1 at the edge); for the chameleon also whether the line is orthogonal.
_ORTH_RAYS = tuple(tuple(RAYS[f][d] for d in ORTHOGONAL if RAYS[f][d]) for f in range(64))
_WITHDRAWALS = tuple(tuple((RAYS[f][d], BEHIND[f][d]) for d in range(8) if RAYS[f][d])
                     for f in range(64))
_CHAMELEON_LINES = tuple(tuple((RAYS[f][d], BEHIND[f][d], d in ORTH_DIRS) for d in range(8)
                               if RAYS[f][d]) for f in range(64))


def pseudo_moves(b: bytes | bytearray, colour: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """Return (origin, destination, captures) of every move of ``colour`` that obeys
    movement, capture and immobilization rules, ignoring whether it leaves its king in check."""
    return [(f, t, caps) for f, moves in pseudo_moves_by_piece(b, colour) for t, caps in moves]


def pseudo_moves_by_piece(b: bytes | bytearray, colour: int) -> list[tuple[int, Moves]]:
    """Return :func:`pseudo_moves` grouped by piece: ``(origin, [(destination, captures)])``."""
    en = colour ^ 8
    enemy = OWNED[en]
    mine, pincers, pawn_pincers = _movers_and_pincers(b, colour)
    ks = b.find(colour | KING)
    k_rank, k_file = ks & 56, ks & 7
    cham_adj = _chameleon_neighbourhood(b, en)
    out: list[tuple[int, Moves]] = []
    for f in mine:
        kind = b[f] & 7
        if kind == PAWN:
            moves = _pawn_moves(b, f, pincers)
        elif kind == COORDINATOR:
            moves = _coordinator_moves(b, f, enemy, k_rank, k_file)
        elif kind == WITHDRAWER:
            moves = _withdrawer_moves(b, f, enemy)
        elif kind == LEAPER:
            moves = _leaper_moves(b, f, enemy)
        elif kind == KING:
            moves = _king_moves(b, f, enemy, en | KING)
        elif kind == IMMOBILIZER:  # frozen by an adjacent enemy chameleon: listed, no moves
            moves = [] if cham_adj >> f & 1 else _slides(b, f)
        else:
            moves = _chameleon_moves(b, f, en, k_rank, k_file, pawn_pincers)
        out.append((f, moves))
    return out


def _movers_and_pincers(
    b: bytes | bytearray, colour: int
) -> tuple[list[int], dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    """Return the unfrozen pieces of ``colour`` and, per landing square, the enemies a pincer
    there would capture: all of them (for pawns), and the enemy pawns alone (for chameleons)."""
    own = OWNED[colour]
    e_pawn = (colour ^ 8) | PAWN
    frozen = frozen_mask(b, colour)
    mine = []
    pincers: dict[int, tuple[int, ...]] = {}
    pawn_pincers: dict[int, tuple[int, ...]] = {}
    for sq, p in enumerate(b):
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
    return mine, pincers, pawn_pincers


def _chameleon_neighbourhood(b: bytes | bytearray, en: int) -> int:
    """Return the squares next to an enemy (colour ``en``) chameleon, where an immobilizer is
    frozen (spec 5)."""
    return neighbourhood(b, en | CHAMELEON)


def _slides(b: bytes | bytearray, f: int) -> Moves:
    """Return the capture-free queen moves from ``f`` over empty squares (the immobilizer's)."""
    moves: Moves = []
    add = moves.append
    for ray in RAYS[f]:
        for t in ray:
            if b[t]:
                break
            add((t, ()))
    return moves


def _pawn_moves(b: bytes | bytearray, f: int, pincers: dict[int, tuple[int, ...]]) -> Moves:
    """Return the pincer pawn's rook moves from ``f``, each with the enemies it pincers
    (spec 6.2)."""
    moves: Moves = []
    add = moves.append
    for ray in _ORTH_RAYS[f]:
        for t in ray:
            if b[t]:
                break
            add((t, pincers.get(t, ())))
    return moves


def _coordinator_moves(
    b: bytes | bytearray, f: int, enemy: tuple[bool, ...], k_rank: int, k_file: int
) -> Moves:
    """Return the coordinator's queen moves from ``f``, each capturing the enemies on the two
    corners it forms with its king on rank ``k_rank`` and file ``k_file`` (spec 6.5)."""
    moves: Moves = []
    add = moves.append
    for ray in RAYS[f]:
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
    return moves


def _withdrawer_moves(b: bytes | bytearray, f: int, enemy: tuple[bool, ...]) -> Moves:
    """Return the withdrawer's queen moves from ``f``, each capturing the enemy it moves
    directly away from (spec 6.4)."""
    moves: Moves = []
    add = moves.append
    for ray, w in _WITHDRAWALS[f]:
        caps = (w,) if w >= 0 and enemy[b[w]] else ()
        for t in ray:
            if b[t]:
                break
            add((t, caps))
    return moves


def _leaper_moves(b: bytes | bytearray, f: int, enemy: tuple[bool, ...]) -> Moves:
    """Return the long leaper's queen moves from ``f`` and its jumps over enemies, each
    landing right beyond the last one jumped (spec 6.3)."""
    moves: Moves = []
    add = moves.append
    for ray in RAYS[f]:
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
    return moves


def _king_moves(b: bytes | bytearray, f: int, enemy: tuple[bool, ...], e_king: int) -> Moves:
    """Return the king's steps from ``f``, capturing an enemy on the destination by
    displacement; the enemy king is never taken (spec 6.1)."""
    moves: Moves = []
    for t in NEIGHBOURS[f]:
        q = b[t]
        if q == 0:
            moves.append((t, ()))
        elif enemy[q] and q != e_king:
            moves.append((t, (t,)))
    return moves


def _chameleon_moves(
    b: bytes | bytearray, f: int, en: int, k_rank: int, k_file: int,
    pawn_pincers: dict[int, tuple[int, ...]],
) -> Moves:
    """Return the chameleon's queen moves and leaper jumps from ``f``, each capturing every
    enemy kind only in that kind's own way (spec 6.6)."""
    e_leaper, e_withdrawer, e_coord = en | LEAPER, en | WITHDRAWER, en | COORDINATOR
    moves: Moves = []
    add = moves.append
    for ray, w, orth in _CHAMELEON_LINES[f]:
        wcap = (w,) if w >= 0 and b[w] == e_withdrawer else ()
        jumped: tuple[int, ...] = ()
        pending = False
        for t in ray:
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
    return moves


def legal_moves(b: bytes, colour: int) -> dict[int, tuple[int, ...]]:
    """Return ``{64 * origin + destination: captured squares}`` for every legal move of
    ``colour`` (spec 7): pseudo-legal moves that do not leave its king capturable.

    Most moves cannot change whether the king is capturable; the masks of
    :func:`relevant` (in check) and :func:`vacate_mask` (not in check) find the few
    that can, and only those are played out on a scratch board and tested in full.
    """
    att = colour ^ 8
    ks = b.find(colour | KING)
    by_piece = pseudo_moves_by_piece(b, colour)
    if attacked(b, ks, att):
        return _legal_in_check(b, by_piece, ks, att)
    return _legal_out_of_check(b, by_piece, ks, att)


def _legal_out_of_check(
    b: bytes, by_piece: list[tuple[int, Moves]], ks: int, att: int
) -> dict[int, tuple[int, ...]]:
    """Return the legal moves among ``by_piece`` when the king on ``ks`` is not in check:
    only king moves, and moves that empty a square of :func:`vacate_mask` or release a
    frozen attacker, can expose it."""
    mask = vacate_mask(b, ks, att)
    work = bytearray(b)
    out: dict[int, tuple[int, ...]] = {}
    for f, moves in by_piece:
        kind = b[f] & 7
        base = f << 6
        if kind == KING:
            for t, caps in moves:
                if not _exposes(work, f, t, caps, t, att):
                    out[base | t] = caps
            continue
        full = bool(BIT[f] & mask)  # leaving f may expose the king: test every move
        if kind == IMMOBILIZER and moves and not full:
            # leaving f unfreezes the attackers next to it (arriving only freezes)
            full = bool(ADJ[f] & threat_pieces(b, ks, att))
        for t, caps in moves:
            if (full or caps and _squares(caps) & mask) and _exposes(work, f, t, caps, ks, att):
                continue
            out[base | t] = caps
    return out


def _legal_in_check(
    b: bytes, by_piece: list[tuple[int, Moves]], ks: int, att: int
) -> dict[int, tuple[int, ...]]:
    """Return the legal moves among ``by_piece`` when the king on ``ks`` is in check: only
    king moves, and moves that touch a square of :func:`relevant` (an immobilizer also by
    freezing or releasing a piece there), can end the check."""
    mask = relevant(b, ks, att)
    work = bytearray(b)
    out: dict[int, tuple[int, ...]] = {}
    for f, moves in by_piece:
        kind = b[f] & 7
        base = f << 6
        for t, caps in moves:
            if kind == KING:
                if _exposes(work, f, t, caps, t, att):
                    continue
            else:
                touched = BIT[f] | BIT[t] | _squares(caps)
                if kind == IMMOBILIZER:
                    touched |= ADJ[f] | ADJ[t]
                if not touched & mask:
                    continue  # nothing that matters changed: still in check
                if _exposes(work, f, t, caps, ks, att):
                    continue
            out[base | t] = caps
    return out


def _squares(caps: tuple[int, ...]) -> int:
    """Return the mask of the squares in ``caps``."""
    out = 0
    for c in caps:
        out |= BIT[c]
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
