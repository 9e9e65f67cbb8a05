"""Ultima's rules (spec: shared/rules/ultima.md) compiled with numba: move generation and
captures (spec 4-6), immobilization (5), check and legality (7-8), the end of the game (9),
the evaluation and the action prior. :class:`.rules.State`, the env, the agents, the CLI and
CPU self-play all ask this module; the torch engine (:mod:`.batched`) is the other
implementation, for GPUs.

A board is 64 piece codes ``colour | kind`` (:mod:`.board`; a1 = 0, here a ``numpy.uint8``
array), a move ``64 * origin + destination``. A move's captures are a mask: an int64 with bit
``s`` for square ``s`` (h8 is the sign bit; only ``&``, ``|``, ``^`` and shifts touch masks, so
the sign never matters). Moves come out by origin square, then direction, then distance: the
order in which the agents' seeded choices and the searches read them.
tests/test_ultima_kernel.py holds this module to the shared vectors, to facts recorded from the
readable Python rules it replaced (commit 7c0f0b0; tests/data/ultima_facts.txt), and
tests/test_batched_ultima.py holds the torch engine to it. Every function is
``@njit(cache=True)``: the first call in a fresh environment compiles it once (docs/compiled.md
states how long), later processes load the machine code from numba's cache.

Repetition (spec 9.4) needs the earlier positions. ``State.history`` keeps them (board bytes
plus side, cleared by a capture, since a position before a capture can never recur); a search
keeps each as a 64-bit Zobrist key (:func:`position_key`) in an int64 array, and
:func:`repetitions` counts the current key among them. Two different positions share a key
with probability 2**-64 per pair, which is the whole price of not comparing boards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.bits import mask_of
from ..core.board8 import NEIGHBOURS, OPPOSITE, RAYS
from ..core.jit import njit
from ..core.jit_bits import lowest_square
from .board import (
    BLACK,
    CHAMELEON,
    COORDINATOR,
    IMMOBILIZER,
    KING,
    LEAPER,
    PAWN,
    WHITE,
    WITHDRAWER,
)

if TYPE_CHECKING:
    from .rules import State

COLOUR = np.array((WHITE, BLACK), dtype=np.int64)  # player index -> colour bit
NO_CAPTURE_LIMIT = 100  # plies without a capture that draw (spec 9.3)
PLY_CAP = 400  # plies played that draw (spec 9.5)
REPETITIONS = 3  # occurrences of a position that draw (spec 9.4)
#: :func:`_pincered`'s victim that stands for every kind (typed, so as not to be a literal).
ANY = np.int64(0)
#: Room for every move of one position: a move is an (origin, destination) pair.
MAX_MOVES = 64 * 64

#: Results of :func:`judge`, in the order spec 9 tests them: the game goes on, the side to
#: move has no legal move and loses (9.1), or a draw by bare kings (9.2), the no-capture
#: rule (9.3), threefold repetition (9.4) or the ply cap (9.5).
ONGOING, WHITE_WINS, BLACK_WINS = 0, 1, 2
DRAW_BARE_KINGS, DRAW_NO_CAPTURE, DRAW_REPETITION, DRAW_PLY_CAP = 3, 4, 5, 6

# Evaluation. Pawn = 1. The immobilizer paralyses whole regions; the queen-movers are worth a
# few pawns. Index = piece kind: -, K, P, L, C, W, I, O (the king is never captured:
# checkmate decides).
VALUES = np.array((0.0, 0.0, 1.0, 3.0, 3.0, 3.5, 5.0, 3.5), dtype=np.float64)
FROZEN_FACTOR = 0.6  # a frozen piece keeps some value: it may be freed later
W_MOBILITY = 0.03
W_THREAT = 0.5  # share of the best capture available to the side to move (it moves first)


def _signed(value: int) -> int:
    """Return the int64 with the same 64 low bits as the mask ``value``."""
    return value - (1 << 64) if value >> 63 else value


def _masks(values: list[int]) -> np.ndarray:
    """Return Python int masks as an int64 array."""
    return np.array([_signed(v) for v in values], dtype=np.int64)


# STEP[d]: the square offset of one step in direction d (board8's 0..7 = N, NE, E, SE, S, SW,
# W, NW); RAY_LEN[s, d]: how many squares the ray from s in direction d has, so its i-th
# square (i = 0 nearest) is ``s + (i + 1) * STEP[d]``. Arithmetic instead of a table of the
# rays' squares: numba copies every global array into each function that reads it, and a
# 64 x 8 x 7 table in fifty functions made the first compile seconds slower.
STEP = np.array((8, 9, 1, -7, -8, -9, -1, 7), dtype=np.int64)
RAY_LEN = np.array([[len(RAYS[s][d]) for d in range(8)] for s in range(64)], dtype=np.int64)
assert all(RAYS[s][d][i] == s + (i + 1) * STEP[d]
           for s in range(64) for d in range(8) for i in range(len(RAYS[s][d])))
BIT = _masks([1 << s for s in range(64)])
ADJ = _masks([mask_of(NEIGHBOURS[s]) for s in range(64)])
# Neighbours plus the squares two steps away in a line: a withdrawer next to a king needs
# the square behind itself empty to withdraw.
NEAR2 = _masks([mask_of(NEIGHBOURS[s]) | mask_of(r[1] for r in RAYS[s] if len(r) > 1)
                for s in range(64)])
FILE_MASK = _masks([mask_of(range(s & 7, 64, 8)) for s in range(64)])
RANK_MASK = _masks([mask_of(range(s & 56, (s & 56) + 8)) for s in range(64)])
# BEHIND[f, d]: the square next to f opposite to direction d (what a withdrawer leaves), or -1.
BEHIND = np.array([[RAYS[f][OPPOSITE[d]][0] if RAYS[f][OPPOSITE[d]] else -1 for d in range(8)]
                   for f in range(64)], dtype=np.int64)

# Zobrist keys of (square, piece code) and of Black to move; a fixed seed, so that keys made
# in one process can be compared with keys made in another.
_KEYS = np.random.default_rng(20240607).integers(
    np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=64 * 16 + 1, dtype=np.int64)
ZOBRIST = _KEYS[:-1].reshape(64, 16).copy()
ZOBRIST[:, 0] = 0  # an empty square adds nothing
BLACK_TO_MOVE = int(_KEYS[-1])


# -- the board and immobilization (spec 2, 5) ------------------------------------------


@njit(cache=True)
def copy_board(b: np.ndarray, out: np.ndarray) -> None:
    """Copy the 64 squares of ``b`` into ``out``.

    A loop, not ``out[:] = b`` or ``b.copy()``: numba's generic array assignment brings its
    broadcasting and error-message code along, seconds of the first compile for 64 bytes.
    """
    for s in range(64):
        out[s] = b[s]


@njit(cache=True)
def owned(q: int, colour: int) -> bool:
    """Return True when piece code ``q`` belongs to ``colour`` (an empty square to neither)."""
    return q != 0 and (q & 8) == colour


@njit(cache=True)
def find(b: np.ndarray, code: int) -> int:
    """Return the first square holding ``code``, or -1 (``bytes.find``)."""
    for s in range(64):
        if b[s] == code:
            return s
    return -1


@njit(cache=True)
def neighbourhood(b: np.ndarray, code: int) -> int:
    """Return the mask of the squares next to any piece ``code`` (colour | kind) on ``b``."""
    mask = 0
    for s in range(64):
        if b[s] == code:
            mask |= ADJ[s]
    return mask


@njit(cache=True)
def frozen_mask(b: np.ndarray, colour: int) -> int:
    """Return the mask of squares where a piece of ``colour`` would be frozen (spec 5)."""
    return neighbourhood(b, (colour ^ 8) | IMMOBILIZER)


@njit(cache=True)
def frozen_pieces(b: np.ndarray, colour: int) -> int:
    """Return the mask of the pieces of ``colour`` that are frozen now."""
    fz = frozen_mask(b, colour)
    # an immobilizer is also frozen by an adjacent enemy chameleon
    cham = neighbourhood(b, (colour ^ 8) | CHAMELEON)
    imm = colour | IMMOBILIZER
    out = 0
    for s in range(64):
        q = b[s]
        if owned(q, colour) and ((fz >> s) & 1 or (q == imm and (cham >> s) & 1)):
            out |= BIT[s]
    return out


# -- movement and captures (spec 4, 6) ---------------------------------------------------


@njit(cache=True)
def _pincered(b: np.ndarray, t: int, colour: int, victim: int) -> int:
    """Return the enemies a pincer landing on the empty square ``t`` captures: each orthogonal
    neighbour of ``colour``'s enemy with a ``colour`` piece right beyond it (spec 6.2); only
    pieces ``victim`` unless it is :data:`ANY` (the chameleon pincers pawns, spec 6.6).

    Asked per landing square, not collected per enemy piece before the moves: the same set
    without a table to fill. The partner is never the vacated origin: the mover would have
    had to pass through the victim's square.
    """
    out = 0
    for d in range(0, 8, 2):
        if RAY_LEN[t, d] < 2:
            continue
        n = t + STEP[d]
        q = b[n]
        if q == 0 or (q & 8) == colour or (victim != ANY and q != victim):
            continue
        if owned(b[t + 2 * STEP[d]], colour):
            out |= BIT[n]
    return out


@njit(cache=True)
def _slides(b: np.ndarray, f: int, moves: np.ndarray, caps: np.ndarray, n: int) -> int:
    """Append the capture-free queen moves from ``f`` over empty squares (the immobilizer's)."""
    base = f << 6
    for d in range(8):
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            if b[t]:
                break
            moves[n] = base | t
            caps[n] = 0
            n += 1
    return n


@njit(cache=True)
def _pawn_moves(b: np.ndarray, f: int, colour: int, moves: np.ndarray, caps: np.ndarray,
                n: int) -> int:
    """Append the pincer pawn's rook moves from ``f``, each with the enemies it pincers
    (spec 6.2)."""
    base = f << 6
    for d in range(0, 8, 2):
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            if b[t]:
                break
            moves[n] = base | t
            caps[n] = _pincered(b, t, colour, ANY)
            n += 1
    return n


@njit(cache=True)
def _coordinator_moves(b: np.ndarray, f: int, colour: int, k_rank: int, k_file: int,
                       moves: np.ndarray, caps: np.ndarray, n: int) -> int:
    """Append the coordinator's queen moves from ``f``, each capturing the enemies on the two
    corners it forms with its king on rank ``k_rank`` and file ``k_file`` (spec 6.5)."""
    base = f << 6
    en = colour ^ 8
    for d in range(8):
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            if b[t]:
                break
            c1, c2 = k_rank | (t & 7), (t & 56) | k_file
            m = 0
            if owned(b[c1], en):
                m |= BIT[c1]
            if owned(b[c2], en):
                m |= BIT[c2]
            moves[n] = base | t
            caps[n] = m
            n += 1
    return n


@njit(cache=True)
def _withdrawer_moves(b: np.ndarray, f: int, colour: int, moves: np.ndarray, caps: np.ndarray,
                      n: int) -> int:
    """Append the withdrawer's queen moves from ``f``, each capturing the enemy it moves
    directly away from (spec 6.4)."""
    base = f << 6
    for d in range(8):
        w = BEHIND[f, d]
        m = BIT[w] if w >= 0 and owned(b[w], colour ^ 8) else 0
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            if b[t]:
                break
            moves[n] = base | t
            caps[n] = m
            n += 1
    return n


@njit(cache=True)
def _leaper_moves(b: np.ndarray, f: int, colour: int, moves: np.ndarray, caps: np.ndarray,
                  n: int) -> int:
    """Append the long leaper's queen moves from ``f`` and its jumps over enemies, each
    landing right beyond the last one jumped (spec 6.3)."""
    base = f << 6
    en = colour ^ 8
    for d in range(8):
        jumped = 0
        pending = False  # just passed an enemy: the next square must be empty
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            q = b[t]
            if q == 0:
                if pending:
                    moves[n] = base | t
                    caps[n] = jumped
                    n += 1
                    pending = False
                elif jumped == 0:
                    moves[n] = base | t
                    caps[n] = 0
                    n += 1
            elif owned(q, en) and not pending:
                jumped |= BIT[t]
                pending = True
            else:
                break
    return n


@njit(cache=True)
def _king_moves(b: np.ndarray, f: int, colour: int, moves: np.ndarray, caps: np.ndarray,
                n: int) -> int:
    """Append the king's steps from ``f``, capturing an enemy on the destination by
    displacement; the enemy king is never taken (spec 6.1)."""
    base = f << 6
    en = colour ^ 8
    for d in range(8):
        if RAY_LEN[f, d] == 0:
            continue
        t = f + STEP[d]
        q = b[t]
        if q == 0:
            moves[n] = base | t
            caps[n] = 0
            n += 1
        elif owned(q, en) and q != (en | KING):
            moves[n] = base | t
            caps[n] = BIT[t]
            n += 1
    return n


@njit(cache=True)
def _chameleon_moves(b: np.ndarray, f: int, colour: int, k_rank: int, k_file: int,
                     moves: np.ndarray, caps: np.ndarray, n: int) -> int:
    """Append the chameleon's queen moves and leaper jumps from ``f``, each capturing every
    enemy kind only in that kind's own way (spec 6.6)."""
    en = colour ^ 8
    e_leaper, e_withdrawer, e_coord = en | LEAPER, en | WITHDRAWER, en | COORDINATOR
    base = f << 6
    for d in range(8):
        w = BEHIND[f, d]
        wcap = BIT[w] if w >= 0 and b[w] == e_withdrawer else 0
        orth = d % 2 == 0  # a pawn could not have made a diagonal move (spec 12.5)
        jumped = 0
        pending = False
        for i in range(RAY_LEN[f, d]):
            t = f + (i + 1) * STEP[d]
            q = b[t]
            if q == 0:
                if pending:
                    pending = False
                elif jumped:
                    continue  # only the square right after a jumped leaper is a landing
                m = jumped | wcap
                c1, c2 = k_rank | (t & 7), (t & 56) | k_file
                if b[c1] == e_coord:
                    m |= BIT[c1]
                if b[c2] == e_coord:
                    m |= BIT[c2]
                if orth:
                    m |= _pincered(b, t, colour, en | PAWN)
                moves[n] = base | t
                caps[n] = m
                n += 1
            elif q == e_leaper and not pending:
                jumped |= BIT[t]
                pending = True
            else:
                break
    return n


@njit(cache=True)
def pseudo_moves(b: np.ndarray, colour: int, moves: np.ndarray, caps: np.ndarray) -> int:
    """Write every move of ``colour`` that obeys movement, capture and immobilization rules,
    ignoring whether it leaves its king in check, into ``moves`` (``64 * origin +
    destination``) and ``caps`` (captured squares); return their count."""
    frozen = frozen_mask(b, colour)
    ks = find(b, colour | KING)
    k_rank, k_file = ks & 56, ks & 7
    cham_adj = neighbourhood(b, (colour ^ 8) | CHAMELEON)
    n = np.int64(0)  # typed: a literal 0 would compile every callee twice (literal and not)
    for f in range(64):
        if not owned(b[f], colour) or (frozen >> f) & 1:
            continue
        kind = b[f] & 7
        if kind == PAWN:
            n = _pawn_moves(b, f, colour, moves, caps, n)
        elif kind == COORDINATOR:
            n = _coordinator_moves(b, f, colour, k_rank, k_file, moves, caps, n)
        elif kind == WITHDRAWER:
            n = _withdrawer_moves(b, f, colour, moves, caps, n)
        elif kind == LEAPER:
            n = _leaper_moves(b, f, colour, moves, caps, n)
        elif kind == KING:
            n = _king_moves(b, f, colour, moves, caps, n)
        elif kind == IMMOBILIZER:  # frozen by an adjacent enemy chameleon: no moves
            if not (cham_adj >> f) & 1:
                n = _slides(b, f, moves, caps, n)
        else:
            n = _chameleon_moves(b, f, colour, k_rank, k_file, moves, caps, n)
    return n


# -- check (spec 8) ----------------------------------------------------------------------


@njit(cache=True)
def _survey(b: np.ndarray, att: int) -> tuple[int, int, int]:
    """Return (codes present as bits ``1 << code``, the first ``att`` king or -1, the squares
    where an ``att`` piece is frozen) in one pass over the board."""
    a_king, d_imm = att | KING, (att ^ 8) | IMMOBILIZER
    present = 0
    ek = -1
    fz = 0
    for s in range(64):
        q = b[s]
        if q == 0:
            continue
        present |= 1 << q
        if q == d_imm:
            fz |= ADJ[s]
        elif q == a_king and ek < 0:
            ek = s
    return present, ek, fz


@njit(cache=True)
def attacked(b: np.ndarray, k: int, att: int) -> bool:
    """Return True when colour ``att`` has a move that would capture the piece on ``k``
    (the defender's king) by any mechanism, ignoring its own king's safety (spec 8)."""
    present, ek, fz = _survey(b, att)
    if _adjacent_attack(b, k, att, fz):
        return True
    if (present >> (att | LEAPER)) & 1 and _leaper_attack(b, k, att, fz):
        return True
    if (present >> (att | PAWN)) & 1 and _pincer_attack(b, k, att, fz):
        return True
    return (present >> (att | COORDINATOR)) & 1 != 0 and _coordinator_attack(b, k, att, fz, ek)


@njit(cache=True)
def _adjacent_attack(b: np.ndarray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen king or chameleon of ``att`` stands next to ``k``, or a
    withdrawer with an empty square behind it to withdraw to."""
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    for d in range(8):
        if RAY_LEN[k, d] == 0:
            continue
        n = k + STEP[d]
        q = b[n]
        if q == a_king or q == a_cham:
            if not (fz >> n) & 1:
                return True
        elif q == a_with and RAY_LEN[k, d] > 1 and b[k + 2 * STEP[d]] == 0 \
                and not (fz >> n) & 1:
            return True
    return False


@njit(cache=True)
def _leaper_attack(b: np.ndarray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen leaper of ``att`` can jump ``k`` (and whatever enemies lie
    between, each followed by an empty square) and land on the empty square beyond it."""
    a_leap = att | LEAPER
    for d in range(8):
        # LEAP_LINES: a leaper coming along direction d lands on the square beyond k
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, (d + 4) & 7] == 0 or b[k + STEP[(d + 4) & 7]]:
            continue
        prev_empty = False  # a jumped piece needs an empty square after it (towards k)
        for i in range(RAY_LEN[k, d]):
            s = k + (i + 1) * STEP[d]
            q = b[s]
            if q == 0:
                prev_empty = True
            elif owned(q, att):
                if q == a_leap and not (fz >> s) & 1:
                    return True
                break
            elif prev_empty:
                prev_empty = False
            else:
                break
    return False


@njit(cache=True)
def _pincer_attack(b: np.ndarray, k: int, att: int, fz: int) -> bool:
    """Return True when an unfrozen pawn of ``att`` can slide onto an empty square next to
    ``k`` that has an ``att`` partner on the other side of ``k``."""
    a_pawn = att | PAWN
    for d in range(0, 8, 2):
        od = (d + 4) & 7
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, od] == 0:
            continue
        t, partner = k + STEP[d], k + STEP[od]
        if b[t] or not owned(b[partner], att):
            continue
        for d2 in range(0, 8, 2):  # PINCER_SQUARES' approaches: not back through k
            if d2 == od:
                continue
            for i in range(RAY_LEN[t, d2]):
                s = t + (i + 1) * STEP[d2]
                q = b[s]
                if q:
                    if q == a_pawn and not (fz >> s) & 1:
                        return True
                    break
    return False


@njit(cache=True)
def _coordinator_line(e: int, k: int) -> int:
    """Return the squares where a coordinator with its king on ``e`` would capture ``k``."""
    if e < 0 or e == k:
        return 0
    if (e ^ k) & 56 == 0:  # same rank: the corner (file of T, rank of e) is k for T on k's file
        return FILE_MASK[k]
    if (e ^ k) & 7 == 0:
        return RANK_MASK[k]
    return 0


@njit(cache=True)
def _reaches(b: np.ndarray, c: int, line: int) -> bool:
    """Return True when a queen move from ``c`` over empty squares can stop on ``line``."""
    for d in range(8):
        for i in range(RAY_LEN[c, d]):
            s = c + (i + 1) * STEP[d]
            if b[s]:
                break
            if (line >> s) & 1:
                return True
    return False


@njit(cache=True)
def _coordinator_attack(b: np.ndarray, k: int, att: int, fz: int, ek: int) -> bool:
    """Return True when an unfrozen coordinator of ``att`` (its king on ``ek``) can stop on
    a square where the corner it forms with its king is ``k``."""
    line = _coordinator_line(ek, k)
    if line:
        code = att | COORDINATOR
        for c in range(64):
            if b[c] == code and not (fz >> c) & 1 and _reaches(b, c, line):
                return True
    return False


@njit(cache=True)
def relevant(b: np.ndarray, k: int, att: int) -> int:
    """Return a mask of squares outside of which no change (other than a move of the
    defender's king or immobilizer) can alter ``attacked(b, k, att)``.

    It mirrors :func:`attacked`: the king's neighbourhood, each leaper line up to the
    first attacking piece, the paths a pawn could take to a pincer square, and the
    coordinator's lines when its king is aligned with ``k``. Frozen status is left out
    on purpose: only the defender's immobilizer can change it, and its moves are
    tested in full.
    """
    present, ek, _ = _survey(b, att)
    mask = NEAR2[k]
    if (present >> (att | LEAPER)) & 1:
        mask |= _leaper_lines(b, k, att)
    if (present >> (att | PAWN)) & 1:
        mask |= _pincer_paths(b, k, att)
    if (present >> (att | COORDINATOR)) & 1:
        mask |= _coordinator_paths(b, k, att, ek)
    return mask


@njit(cache=True)
def _leaper_lines(b: np.ndarray, k: int, att: int) -> int:
    """Return the leaper lines towards ``k`` whose landing square is empty, each up to and
    including its first ``att`` piece."""
    mask = 0
    for d in range(8):
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, (d + 4) & 7] == 0 or b[k + STEP[(d + 4) & 7]]:
            continue
        for i in range(RAY_LEN[k, d]):
            s = k + (i + 1) * STEP[d]
            mask |= BIT[s]
            if owned(b[s], att):
                break
    return mask


@njit(cache=True)
def _pincer_paths(b: np.ndarray, k: int, att: int) -> int:
    """Return the pawn approaches to each empty pincer square next to ``k`` that has an
    ``att`` partner, each up to and including its first piece."""
    mask = 0
    for d in range(0, 8, 2):
        od = (d + 4) & 7
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, od] == 0:
            continue
        t, partner = k + STEP[d], k + STEP[od]
        if b[t] or not owned(b[partner], att):
            continue
        for d2 in range(0, 8, 2):
            if d2 == od:
                continue
            for i in range(RAY_LEN[t, d2]):
                s = t + (i + 1) * STEP[d2]
                mask |= BIT[s]
                if b[s]:
                    break
    return mask


@njit(cache=True)
def _coordinator_paths(b: np.ndarray, k: int, att: int, ek: int) -> int:
    """Return, when the ``att`` king (on ``ek``) is aligned with ``k``, the squares that
    capture ``k`` from a coordinator's corner, the coordinators and their moves (up to the
    first piece)."""
    line = _coordinator_line(ek, k)
    if not line:
        return 0
    mask = line
    code = att | COORDINATOR
    for c in range(64):
        if b[c] != code:
            continue
        mask |= BIT[c]
        for d in range(8):
            for i in range(RAY_LEN[c, d]):
                s = c + (i + 1) * STEP[d]
                mask |= BIT[s]
                if b[s]:
                    break
    return mask


@njit(cache=True)
def vacate_mask(b: np.ndarray, k: int, att: int) -> int:
    """Return the squares whose emptying (the mover leaving it, or a capture) could let
    colour ``att`` capture the piece on ``k``, freezing ignored.

    Filling a square never creates such a capture (it can only block a line, a landing
    or a withdrawal), so when the king is not in check a move other than a king or
    immobilizer move needs a full test only if it empties one of these squares.
    """
    present, ek, _ = _survey(b, att)
    mask = _withdrawal_squares(b, k, att)
    if (present >> (att | LEAPER)) & 1:
        mask |= _leaper_vacate(b, k, att)
    if (present >> (att | PAWN)) & 1:
        mask |= _pincer_vacate(b, k, att)
    if (present >> (att | COORDINATOR)) & 1:
        mask |= _coordinator_vacate(b, k, att, ek)
    return mask


@njit(cache=True)
def _withdrawal_squares(b: np.ndarray, k: int, att: int) -> int:
    """Return the square each ``att`` withdrawer next to ``k`` would withdraw to."""
    a_with = att | WITHDRAWER
    mask = 0
    for d in range(8):
        if RAY_LEN[k, d] > 1 and b[k + STEP[d]] == a_with:
            mask |= BIT[k + 2 * STEP[d]]
    return mask


@njit(cache=True)
def _leaper_vacate(b: np.ndarray, k: int, att: int) -> int:
    """Return each leaper line towards ``k`` up to its farthest ``att`` leaper (a nearer
    one may be captured), with the landing square beyond ``k``."""
    a_leap = att | LEAPER
    mask = 0
    for d in range(8):
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, (d + 4) & 7] == 0:
            continue
        landing = k + STEP[(d + 4) & 7]
        seg = 0
        reach = 0
        for i in range(RAY_LEN[k, d]):
            s = k + (i + 1) * STEP[d]
            if b[s] == a_leap:
                reach = seg | BIT[landing]
            seg |= BIT[s]
        mask |= reach
    return mask


@njit(cache=True)
def _pincer_vacate(b: np.ndarray, k: int, att: int) -> int:
    """Return, for each pincer square next to ``k`` with an ``att`` partner, the square and
    each approach to it up to its farthest ``att`` pawn."""
    a_pawn = att | PAWN
    mask = 0
    for d in range(0, 8, 2):
        od = (d + 4) & 7
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, od] == 0:
            continue
        t, partner = k + STEP[d], k + STEP[od]
        if not owned(b[partner], att):
            continue  # no partner beyond the king: no pincer on this line
        for d2 in range(0, 8, 2):
            if d2 == od:
                continue
            seg = 0
            for i in range(RAY_LEN[t, d2]):
                s = t + (i + 1) * STEP[d2]
                if b[s] == a_pawn:
                    mask |= seg | BIT[t]
                seg |= BIT[s]
    return mask


@njit(cache=True)
def _coordinator_vacate(b: np.ndarray, k: int, att: int, ek: int) -> int:
    """Return, when the ``att`` king (on ``ek``) is aligned with ``k``, each coordinator line
    up to the first square that captures ``k``, whatever stands in between."""
    line = _coordinator_line(ek, k)
    if not line:
        return 0
    mask = 0
    code = att | COORDINATOR
    for c in range(64):
        if b[c] != code:
            continue
        for d in range(8):
            seg = 0
            for i in range(RAY_LEN[c, d]):
                s = c + (i + 1) * STEP[d]
                seg |= BIT[s]
                if (line >> s) & 1:
                    mask |= seg
                    break
    return mask


@njit(cache=True)
def threat_pieces(b: np.ndarray, k: int, att: int) -> int:
    """Return the pieces of ``att`` that could capture the piece on ``k`` now if they were
    not frozen (what a move of the defender's immobilizer may unleash)."""
    _, ek, _ = _survey(b, att)
    return (_adjacent_threats(b, k, att) | _leaper_threats(b, k, att)
            | _pawn_threats(b, k, att) | _coordinator_threats(b, k, att, ek))


@njit(cache=True)
def _adjacent_threats(b: np.ndarray, k: int, att: int) -> int:
    """Return the ``att`` king and chameleons next to ``k``, and the withdrawers there with an
    empty square behind them."""
    a_king, a_cham, a_with = att | KING, att | CHAMELEON, att | WITHDRAWER
    out = 0
    for d in range(8):
        if RAY_LEN[k, d] == 0:
            continue
        q = b[k + STEP[d]]
        if q == a_king or q == a_cham or (q == a_with and RAY_LEN[k, d] > 1
                                          and b[k + 2 * STEP[d]] == 0):
            out |= BIT[k + STEP[d]]
    return out


@njit(cache=True)
def _leaper_threats(b: np.ndarray, k: int, att: int) -> int:
    """Return the ``att`` leapers that can jump ``k`` onto an empty landing square."""
    a_leap = att | LEAPER
    out = 0
    for d in range(8):
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, (d + 4) & 7] == 0 or b[k + STEP[(d + 4) & 7]]:
            continue
        prev_empty = False
        for i in range(RAY_LEN[k, d]):
            s = k + (i + 1) * STEP[d]
            q = b[s]
            if q == 0:
                prev_empty = True
            elif owned(q, att):
                if q == a_leap:
                    out |= BIT[s]
                break
            elif prev_empty:
                prev_empty = False
            else:
                break
    return out


@njit(cache=True)
def _pawn_threats(b: np.ndarray, k: int, att: int) -> int:
    """Return the ``att`` pawns that can slide onto an empty pincer square next to ``k``
    with a partner beyond it."""
    a_pawn = att | PAWN
    out = 0
    for d in range(0, 8, 2):
        od = (d + 4) & 7
        if RAY_LEN[k, d] == 0 or RAY_LEN[k, od] == 0:
            continue
        t, partner = k + STEP[d], k + STEP[od]
        if b[t] or not owned(b[partner], att):
            continue
        for d2 in range(0, 8, 2):
            if d2 == od:
                continue
            for i in range(RAY_LEN[t, d2]):
                s = t + (i + 1) * STEP[d2]
                if b[s]:
                    if b[s] == a_pawn:
                        out |= BIT[s]
                    break
    return out


@njit(cache=True)
def _coordinator_threats(b: np.ndarray, k: int, att: int, ek: int) -> int:
    """Return the ``att`` coordinators that can stop where their corner with the king (on
    ``ek``) is ``k``."""
    line = _coordinator_line(ek, k)
    out = 0
    if line:
        code = att | COORDINATOR
        for c in range(64):
            if b[c] == code and _reaches(b, c, line):
                out |= BIT[c]
    return out


# -- legality (spec 7) -------------------------------------------------------------------


@njit(cache=True)
def _exposes(work: np.ndarray, b: np.ndarray, f: int, t: int, m: int, k: int,
             att: int) -> bool:
    """Play the move on the scratch board ``work`` (a copy of ``b``), test whether the king
    on ``k`` is then capturable, and restore ``work`` from ``b``."""
    rest = m
    while rest:
        work[lowest_square(rest)] = 0
        rest &= rest - 1
    work[t] = b[f]
    work[f] = 0
    bad = attacked(work, k, att)
    rest = m
    while rest:
        c = lowest_square(rest)
        work[c] = b[c]
        rest &= rest - 1
    work[t] = b[t]
    work[f] = b[f]
    return bad


@njit(cache=True)
def _legal_out_of_check(b: np.ndarray, ks: int, att: int, moves: np.ndarray,
                        caps: np.ndarray, n: int, stop: int) -> int:
    """Keep the legal moves among the first ``n`` when the king on ``ks`` is not in check:
    only king moves, and moves that empty a square of :func:`vacate_mask` or release a
    frozen attacker, can expose it; return how many are kept, stopping at ``stop``."""
    mask = vacate_mask(b, ks, att)
    work = np.empty(64, dtype=np.uint8)
    copy_board(b, work)
    threats = 0
    have_threats = False  # threat_pieces, computed on the first immobilizer move needing it
    kept = 0
    for i in range(n):
        move, m = moves[i], caps[i]
        f, t = move >> 6, move & 63
        kind = b[f] & 7
        if kind == KING:
            bad = _exposes(work, b, f, t, m, t, att)
        else:
            full = (mask >> f) & 1 != 0  # leaving f may expose the king: test every move
            if kind == IMMOBILIZER and not full:
                # leaving f unfreezes the attackers next to it (arriving only freezes)
                if not have_threats:
                    threats = threat_pieces(b, ks, att)
                    have_threats = True
                full = ADJ[f] & threats != 0
            bad = (full or m & mask != 0) and _exposes(work, b, f, t, m, ks, att)
        if not bad:
            moves[kept] = move
            caps[kept] = m
            kept += 1
            if kept == stop:
                break
    return kept


@njit(cache=True)
def _legal_in_check(b: np.ndarray, ks: int, att: int, moves: np.ndarray, caps: np.ndarray,
                    n: int, stop: int) -> int:
    """Keep the legal moves among the first ``n`` when the king on ``ks`` is in check: only
    king moves, and moves that touch a square of :func:`relevant` (an immobilizer also by
    freezing or releasing a piece there), can end the check; return how many are kept,
    stopping at ``stop``."""
    mask = relevant(b, ks, att)
    work = np.empty(64, dtype=np.uint8)
    copy_board(b, work)
    kept = 0
    for i in range(n):
        move, m = moves[i], caps[i]
        f, t = move >> 6, move & 63
        kind = b[f] & 7
        if kind == KING:
            bad = _exposes(work, b, f, t, m, t, att)
        else:
            touched = BIT[f] | BIT[t] | m
            if kind == IMMOBILIZER:
                touched |= ADJ[f] | ADJ[t]
            # nothing that matters changed: still in check
            bad = touched & mask == 0 or _exposes(work, b, f, t, m, ks, att)
        if not bad:
            moves[kept] = move
            caps[kept] = m
            kept += 1
            if kept == stop:
                break
    return kept


@njit(cache=True)
def legal_moves(b: np.ndarray, colour: int, moves: np.ndarray, caps: np.ndarray) -> int:
    """Write every legal move of ``colour`` (spec 7), pseudo-legal moves that do not leave its
    king capturable, into ``moves`` and ``caps``; return their count. This ignores the end
    of the game (see :func:`game_moves`)."""
    n = pseudo_moves(b, colour, moves, caps)
    att = colour ^ 8
    ks = find(b, colour | KING)
    if attacked(b, ks, att):
        return _legal_in_check(b, ks, att, moves, caps, n, n)
    return _legal_out_of_check(b, ks, att, moves, caps, n, n)


@njit(cache=True)
def _has_legal(b: np.ndarray, colour: int, moves: np.ndarray, caps: np.ndarray,
               n: int) -> bool:
    """Return whether any of the first ``n`` moves of :func:`pseudo_moves` for ``colour`` is
    legal (``legal_moves(...) > 0``), testing them only until one is; the moves are
    overwritten."""
    att = colour ^ 8
    ks = find(b, colour | KING)
    one = np.int64(1)  # typed: a literal would compile the filters a second time
    if attacked(b, ks, att):
        return _legal_in_check(b, ks, att, moves, caps, n, one) > 0
    return _legal_out_of_check(b, ks, att, moves, caps, n, one) > 0


@njit(cache=True)
def legal_moves_full(b: np.ndarray, colour: int, moves: np.ndarray, caps: np.ndarray) -> int:
    """Return :func:`legal_moves` with every move played out and tested, no masks: the plain
    reading of spec 7, which the tests hold the masked shortcut to."""
    n = pseudo_moves(b, colour, moves, caps)
    att = colour ^ 8
    ks = find(b, colour | KING)
    work = np.empty(64, dtype=np.uint8)
    copy_board(b, work)
    kept = 0
    for i in range(n):
        move, m = moves[i], caps[i]
        f, t = move >> 6, move & 63
        if not _exposes(work, b, f, t, m, t if b[f] & 7 == KING else ks, att):
            moves[kept] = move
            caps[kept] = m
            kept += 1
    return kept


@njit(cache=True)
def in_check(b: np.ndarray, side: int) -> bool:
    """Return True when player ``side``'s king is capturable (spec 8)."""
    colour = COLOUR[side]
    return attacked(b, find(b, colour | KING), colour ^ 8)


@njit(cache=True)
def make_move(b: np.ndarray, move: int, m: int, out: np.ndarray) -> None:
    """Write into ``out`` the board after ``move`` with its captured squares ``m`` emptied."""
    copy_board(b, out)
    rest = m
    while rest:
        out[lowest_square(rest)] = 0
        rest &= rest - 1
    f, t = move >> 6, move & 63
    out[t] = b[f]
    out[f] = 0


# -- the end of the game (spec 9) ---------------------------------------------------------


@njit(cache=True)
def position_key(b: np.ndarray, side: int) -> int:
    """Return the Zobrist key of (board, side to move): the repetition key of spec 9.4."""
    h = BLACK_TO_MOVE if side else 0
    for s in range(64):
        h ^= ZOBRIST[s, b[s]]
    return h


@njit(cache=True)
def child_key(key: int, b: np.ndarray, move: int, m: int) -> int:
    """Return the key after ``move`` (captures ``m``) from the position ``b`` with ``key``."""
    rest = m
    while rest:
        c = lowest_square(rest)
        key ^= ZOBRIST[c, b[c]]
        rest &= rest - 1
    f, t = move >> 6, move & 63
    return key ^ ZOBRIST[f, b[f]] ^ ZOBRIST[t, b[f]] ^ BLACK_TO_MOVE


@njit(cache=True)
def repetitions(history: np.ndarray, start: int, stop: int, key: int) -> int:
    """Return how often ``key`` occurs in ``history[start:stop]``."""
    count = 0
    for i in range(start, stop):
        if history[i] == key:
            count += 1
    return count


@njit(cache=True)
def judge(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
          n_moves: int) -> int:
    """Return the result code by spec 9, in the spec's order, for ``side`` to move with
    ``n_moves`` moves of its pieces (:func:`legal_moves`) and the position seen
    ``occurrences`` times (this one included)."""
    if n_moves == 0:  # checkmate or stalemate: the mover loses
        return BLACK_WINS if side == 0 else WHITE_WINS
    pieces = 0
    for s in range(64):
        if b[s]:
            pieces += 1
    if pieces == 2:
        return DRAW_BARE_KINGS
    if halfmove >= NO_CAPTURE_LIMIT:
        return DRAW_NO_CAPTURE
    if occurrences >= REPETITIONS:
        return DRAW_REPETITION
    if ply >= PLY_CAP:
        return DRAW_PLY_CAP
    return ONGOING


@njit(cache=True)
def judged_moves(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
                 moves: np.ndarray, caps: np.ndarray) -> tuple[int, int]:
    """Write the moves of ``side``'s pieces into ``moves`` and ``caps`` (:func:`legal_moves`,
    kept where a draw rule has ended the game: ``State.captures`` knows them) and return
    (their count, the :func:`judge` result)."""
    n = legal_moves(b, COLOUR[side], moves, caps)
    return n, judge(b, side, halfmove, ply, occurrences, n)


@njit(cache=True)
def game_moves(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
               moves: np.ndarray, caps: np.ndarray) -> tuple[int, int]:
    """Write the legal moves of ``side`` into ``moves`` and ``caps``, none once the game is
    over (``State.legal_moves``); return (their count, the :func:`judge` result)."""
    n = legal_moves(b, COLOUR[side], moves, caps)
    result = judge(b, side, halfmove, ply, occurrences, n)
    return (n if result == ONGOING else 0), result


@njit(cache=True)
def perft_kernel(b: np.ndarray, side: int, halfmove: int, ply: int, history: np.ndarray,
                 depth: int) -> int:
    """Count leaf move sequences of ``depth`` plies (``State.perft``: a finished position,
    repetition included, has no moves); ``history``: the keys since the last capture, the
    current position's last.

    Row ``level`` of every stack belongs to the node ``level`` plies above the leaves. The
    walk is a loop, not a recursion: numba's cache cannot load recursive functions.
    """
    if depth == 0:
        return 1
    boards = np.empty((depth + 1, 64), dtype=np.uint8)
    copy_board(b, boards[depth])
    keys = np.empty(len(history) + depth + 1, dtype=np.int64)
    for i in range(len(history)):
        keys[i] = history[i]
    moves = np.empty((depth + 1, MAX_MOVES), dtype=np.int64)
    caps = np.empty((depth + 1, MAX_MOVES), dtype=np.int64)
    count = np.zeros(depth + 1, dtype=np.int64)
    index = np.zeros(depth + 1, dtype=np.int64)
    halfmoves = np.zeros(depth + 1, dtype=np.int64)
    starts = np.zeros(depth + 1, dtype=np.int64)
    base = len(history) - 1  # keys[base + depth - level]: the key of the node at level
    halfmoves[depth] = halfmove
    occurrences = repetitions(keys, np.int64(0), base + 1, keys[base])
    n, _ = game_moves(boards[depth], side, halfmove, ply, occurrences, moves[depth],
                      caps[depth])
    count[depth] = n
    if depth == 1:
        return count[1]
    total = 0
    level = depth
    while level <= depth:
        if index[level] == count[level]:
            level += 1
            continue
        i = index[level]
        index[level] += 1
        move, m = moves[level, i], caps[level, i]
        top = base + depth - level
        child = level - 1
        make_move(boards[level], move, m, boards[child])
        keys[top + 1] = child_key(keys[top], boards[level], move, m)
        # a capture can never be undone, so no earlier position can recur
        halfmoves[child] = 0 if m else halfmoves[level] + 1
        starts[child] = top + 1 if m else starts[level]
        played = depth - child
        occurrences = repetitions(keys, starts[child], top + 2, keys[top + 1])
        n, _ = game_moves(boards[child], side ^ (played & 1), halfmoves[child], ply + played,
                          occurrences, moves[child], caps[child])
        if child == 1:
            total += n
        else:
            count[child] = n
            index[child] = 0
            level = child
    return total


# -- evaluation and the action prior (agents, search leaves, the networks' prior) ----------


@njit(cache=True)
def _side(b: np.ndarray, colour: int, frozen: int, moves: np.ndarray,
          caps: np.ndarray) -> tuple[float, int, float]:
    """Return (material, pseudo-legal move count, best capture value) of one colour."""
    material = 0.0
    for s in range(64):  # square order: floats are summed in a fixed order
        q = b[s]
        if owned(q, colour):
            v = VALUES[q & 7]
            material += v * FROZEN_FACTOR if (frozen >> s) & 1 else v
    n = pseudo_moves(b, colour, moves, caps)
    best = 0.0
    for i in range(n):
        rest = caps[i]
        if rest:
            total = 0.0
            while rest:
                total += VALUES[b[lowest_square(rest)] & 7]
                rest &= rest - 1
            best = max(best, total)
    return material, n, best


@njit(cache=True)
def evaluate_into(b: np.ndarray, side: int, moves: np.ndarray, caps: np.ndarray) -> float:
    """Return the Ultima evaluation for ``side`` to move (``ultima_eval``): material with
    frozen pieces discounted, mobility, and the best capture the mover has; ``moves`` and
    ``caps`` are scratch buffers of :data:`MAX_MOVES`."""
    me = COLOUR[side]
    frozen = frozen_pieces(b, me) | frozen_pieces(b, me ^ 8)
    m1, n1, threat = _side(b, me, frozen, moves, caps)
    return _against(b, me, frozen, m1, n1, threat, moves, caps)


@njit(cache=True)
def _against(b: np.ndarray, me: int, frozen: int, m1: float, n1: int, threat: float,
             moves: np.ndarray, caps: np.ndarray) -> float:
    """Return the evaluation from the mover's (material, move count, best capture): the
    opponent's side scored and subtracted, the threat added."""
    m2, n2, _ = _side(b, me ^ 8, frozen, moves, caps)
    return m1 - m2 + W_MOBILITY * (n1 - n2) + W_THREAT * threat


@njit(cache=True)
def judged_evaluation(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
                      moves: np.ndarray, caps: np.ndarray) -> tuple[int, float]:
    """Return (:func:`judge`'s result, :func:`evaluate_into`'s value, or 0.0 once the game is
    over): a search's leaf in one pass.

    The mover's pseudo-legal moves are generated once, for its side of the evaluation and
    for the judge, which needs only whether one of them is legal (:func:`_has_legal` stops
    at the first), not all of them (:func:`legal_moves` tests every one)."""
    result, frozen, m1, n1, threat = judged_side(b, side, halfmove, ply, occurrences, moves,
                                                 caps)
    if result != ONGOING:
        return result, 0.0
    return result, _against(b, COLOUR[side], frozen, m1, n1, threat, moves, caps)


@njit(cache=True)
def judged_side(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
                moves: np.ndarray, caps: np.ndarray) -> tuple[int, int, float, int, float]:
    """Return (:func:`judge`'s result, the frozen pieces' mask, and the mover's material,
    pseudo-legal move count and best capture): the first half of a leaf's evaluation, with
    its judgement (:func:`judged_evaluation`)."""
    me = COLOUR[side]
    frozen = frozen_pieces(b, me) | frozen_pieces(b, me ^ 8)
    m1, n1, threat = _side(b, me, frozen, moves, caps)
    n_legal = np.int64(1) if _has_legal(b, me, moves, caps, n1) else np.int64(0)
    return judge(b, side, halfmove, ply, occurrences, n_legal), frozen, m1, n1, threat


@njit(cache=True)
def capture_values(b: np.ndarray, moves: np.ndarray, caps: np.ndarray, n: int,
                   out_moves: np.ndarray, out_values: np.ndarray) -> int:
    """Write the capturing moves among the first ``n`` and the material each takes (pawn =
    1) into ``out_moves`` and ``out_values`` (the action prior); return their count."""
    k = 0
    for i in range(n):
        rest = caps[i]
        if rest:
            total = 0.0
            while rest:
                total += VALUES[b[lowest_square(rest)] & 7]
                rest &= rest - 1
            out_moves[k] = moves[i]
            out_values[k] = total
            k += 1
    return k


@njit(cache=True)
def winning_move(b: np.ndarray, side: int, moves: np.ndarray, caps: np.ndarray, n: int,
                 work: np.ndarray, scratch_moves: np.ndarray, scratch_caps: np.ndarray) -> int:
    """Return the first of the ``n`` legal moves that wins at once (the opponent is left
    without a legal move, spec 9.1), or -1.

    Only checking moves are tried: a move that does not attack the enemy king could win only
    by stalemate (every enemy piece frozen or blocked), which this does not look for. The
    enemy king stays where it is: a legal position never has a king that can be taken."""
    me = COLOUR[side]
    king = find(b, (me ^ 8) | KING)
    for i in range(n):
        make_move(b, moves[i], caps[i], work)
        if not attacked(work, king, me):
            continue
        k = pseudo_moves(work, me ^ 8, scratch_moves, scratch_caps)
        if not _has_legal(work, me ^ 8, scratch_moves, scratch_caps, k):
            return moves[i]
    return -1


# -- the env's observation (envs/ultima/actions.py describes the planes) ---------------------


@njit(cache=True)
def planes(b: np.ndarray, player: int, to_move: int, halfmove: int, ply: int, seen: int,
           obs: np.ndarray) -> None:
    """Write ``player``'s observation planes of the position into ``obs`` (8, 8, 22): the
    pieces by owner and kind, each colour's frozen pieces, then the constant planes (the side
    to move, the colour, the three draw counters), and the board marker."""
    mine = COLOUR[player]
    own_frozen = frozen_pieces(b, mine)
    their_frozen = frozen_pieces(b, mine ^ 8)
    to_move_plane = 1.0 if to_move == player else 0.0
    white_plane = 1.0 if player == 0 else 0.0
    clock = min(halfmove, NO_CAPTURE_LIMIT) / NO_CAPTURE_LIMIT
    played = min(ply, PLY_CAP) / PLY_CAP
    repeated = min(seen - 1, REPETITIONS - 1) / (REPETITIONS - 1)
    for s in range(64):
        r, f = s >> 3, s & 7
        for p in range(16):
            obs[r, f, p] = 0.0
        q = b[s]
        if q:
            obs[r, f, (q & 7) - 1 + (0 if (q & 8) == mine else 7)] = 1.0
        if (own_frozen >> s) & 1:
            obs[r, f, 14] = 1.0
        if (their_frozen >> s) & 1:
            obs[r, f, 15] = 1.0
        obs[r, f, 16] = to_move_plane
        obs[r, f, 17] = white_plane
        obs[r, f, 18] = clock
        obs[r, f, 19] = played
        obs[r, f, 20] = repeated
        obs[r, f, 21] = 1.0


# -- glue for Python callers ---------------------------------------------------------------


def board_of(state: State) -> np.ndarray:
    """Return the board of a state as the kernel's (writable) uint8 array."""
    return np.frombuffer(bytearray(state.board), dtype=np.uint8)


def history_of(state: State) -> np.ndarray:
    """Return the state's repetition history (``State.history``) as Zobrist keys, the
    current position's last."""
    return np.array([position_key(np.frombuffer(bytearray(h[:64]), dtype=np.uint8),
                                  int(h[64:] == b"b"))
                     for h in state.history], dtype=np.int64)


def squares_of(mask: int) -> tuple[int, ...]:
    """Return the squares of a capture mask in ascending order."""
    mask &= (1 << 64) - 1
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)


def perft_state(state: State, depth: int) -> int:
    """Count leaf move sequences of ``depth`` plies from a state (its repetition history
    included; ``State.perft``)."""
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    return int(perft_kernel(board_of(state), state.side, state.halfmove, state.ply,
                            history_of(state), depth))
