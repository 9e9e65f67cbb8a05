"""Ultima's board encoding (spec 2), shared by the compiled rules (:mod:`.kernel`), the
positions (:mod:`.rules`) and the env's planes.

A board is 64 piece codes indexed like :mod:`boardzoo.envs.core.board8` (a1 = 0, h8 = 63):
``bytes`` in a :class:`~.rules.State`, a ``numpy.uint8`` array in the kernel. A code is
``colour | kind``: colour 0 for White and 8 for Black, kind 1..7 as below, 0 for an empty
square.
"""

from __future__ import annotations

KING, PAWN, LEAPER, CHAMELEON, WITHDRAWER, IMMOBILIZER, COORDINATOR = range(1, 8)
WHITE, BLACK = 0, 8  # colour bits of a piece code
LETTERS = "KPLCWIO"
#: Piece letter (``K``..``O`` White, ``k``..``o`` Black) -> code, and back.
CODE_OF = {**{c: i + 1 for i, c in enumerate(LETTERS)},
           **{c.lower(): BLACK | (i + 1) for i, c in enumerate(LETTERS)}}
LETTER_OF = {v: k for k, v in CODE_OF.items()}
