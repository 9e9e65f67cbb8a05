"""Pictures of Ultima positions (piece letters on an 8x8 board, frozen pieces ringed)."""

from __future__ import annotations

import numpy as np

from ..core.board8 import parse_square
from ..core.draw import Glyph, draw_board8
from .board import LETTERS
from .rules import State

NAMES = ("king", "pawn", "leaper", "chameleon", "withdrawer", "immobilizer", "coordinator")
_WHITE_FILL, _BLACK_FILL = (248, 248, 240), (28, 28, 34)
FROZEN_RING = (214, 40, 40)
FROZEN = "~"  # suffix of a cell key: the piece is frozen (drawn with a red ring)
#: One disc per piece: fill gives the colour, the letter the kind, a red ring a frozen piece.
GLYPHS = {
    **{c: Glyph(fill=_WHITE_FILL, outline=(40, 40, 40), label=c, label_color=(20, 20, 20))
       for c in LETTERS},
    **{c.lower(): Glyph(fill=_BLACK_FILL, outline=(215, 215, 215), label=c,
                        label_color=(245, 245, 245))
       for c in LETTERS},
}
GLYPHS.update({k + FROZEN: Glyph(fill=g.fill, outline=FROZEN_RING, label=g.label,
                                 label_color=g.label_color) for k, g in list(GLYPHS.items())})
LEGEND = {letter: name for letter_u, name in zip(LETTERS, NAMES, strict=True)
          for letter in (letter_u, letter_u.lower())}
LEGEND["P" + FROZEN] = "frozen"


def render_rgb(state: State, last_move: str | None, caption: str) -> np.ndarray:
    """Return a picture of ``state`` with ``last_move``'s squares lit and ``caption`` below."""
    marked: list[int] = []
    if last_move:
        marked = [parse_square(last_move[:2]), parse_square(last_move[2:4])]
        caption += f"   last move: {last_move}"
    frozen = state.frozen()
    cells = [c + FROZEN if c and frozen >> s & 1 else c for s, c in enumerate(state.cells())]
    return draw_board8(cells, GLYPHS, highlight=marked, legend=LEGEND, caption=caption)
