"""Ultima board encoding and precomputed square tables (shared by move generation and
check detection).

A board is a ``bytes`` (or, while a move is being tested, a ``bytearray``) of 64 piece
codes indexed like :mod:`boardzoo.envs.core.board8` (a1 = 0, h8 = 63). A code is
``colour | kind``: colour 0 for White and 8 for Black, kind 1..7 as below, 0 for an
empty square, so ``bytes.find`` locates a piece kind at C speed. Masks are ints with
bit ``s`` for square ``s``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.board8 import NEIGHBOURS, OPPOSITE, ORTHOGONAL, RAYS

KING, PAWN, LEAPER, CHAMELEON, WITHDRAWER, IMMOBILIZER, COORDINATOR = range(1, 8)
WHITE, BLACK = 0, 8  # colour bits of a piece code
LETTERS = "KPLCWIO"
#: Piece letter (``K``..``O`` White, ``k``..``o`` Black) -> code, and back.
CODE_OF = {**{c: i + 1 for i, c in enumerate(LETTERS)},
           **{c.lower(): BLACK | (i + 1) for i, c in enumerate(LETTERS)}}
LETTER_OF = {v: k for k, v in CODE_OF.items()}

BIT = tuple(1 << s for s in range(64))


def _mask(squares: Iterable[int]) -> int:
    out = 0
    for s in squares:
        out |= 1 << s
    return out


ADJ = tuple(_mask(NEIGHBOURS[s]) for s in range(64))
# Neighbours plus the squares two steps away in a line: a withdrawer next to a king needs
# the square behind itself empty to withdraw.
NEAR2 = tuple(ADJ[s] | _mask(r[1] for r in RAYS[s] if len(r) > 1) for s in range(64))
FILE_MASK = tuple(_mask(range(s & 7, 64, 8)) for s in range(64))
RANK_MASK = tuple(_mask(range(s & 56, (s & 56) + 8)) for s in range(64))
# BEHIND[f][d]: the square next to f opposite to direction d (what a withdrawer leaves), or -1.
BEHIND = tuple(tuple(RAYS[f][OPPOSITE[d]][0] if RAYS[f][OPPOSITE[d]] else -1 for d in range(8))
               for f in range(64))
# FLANKS[n]: (t, far) per orthogonal line through n: a pawn landing on t takes n by pincer
# when ``far`` holds one of its own pieces.
FLANKS = tuple(tuple((RAYS[n][d][0], RAYS[n][OPPOSITE[d]][0]) for d in ORTHOGONAL
                     if RAYS[n][d] and RAYS[n][OPPOSITE[d]]) for n in range(64))
# OWNED[colour][code]: does the piece code belong to that colour (empty belongs to neither)?
OWNED = {WHITE: tuple(0 < c < 8 for c in range(16)), BLACK: tuple(c > 8 for c in range(16))}
ORTH_DIRS = frozenset(ORTHOGONAL)


def neighbourhood(b: bytes | bytearray, code: int) -> int:
    """Return the bitmask of the squares next to any piece ``code`` (colour | kind) on ``b``."""
    mask = 0
    i = b.find(code)
    while i >= 0:
        mask |= ADJ[i]
        i = b.find(code, i + 1)
    return mask


def frozen_mask(b: bytes | bytearray, colour: int) -> int:
    """Return the bitmask of squares where a piece of ``colour`` would be frozen (spec 5)."""
    return neighbourhood(b, (colour ^ 8) | IMMOBILIZER)


def frozen_pieces(b: bytes | bytearray, colour: int) -> int:
    """Return the bitmask of the pieces of ``colour`` that are frozen now."""
    own = OWNED[colour]
    out = 0
    code = (colour ^ 8) | IMMOBILIZER
    i = b.find(code)
    while i >= 0:
        for n in NEIGHBOURS[i]:
            if own[b[n]]:
                out |= BIT[n]
        i = b.find(code, i + 1)
    # an immobilizer is also frozen by an adjacent enemy chameleon
    code, cham = colour | IMMOBILIZER, (colour ^ 8) | CHAMELEON
    i = b.find(code)
    while i >= 0:
        if any(b[n] == cham for n in NEIGHBOURS[i]):
            out |= BIT[i]
        i = b.find(code, i + 1)
    return out
