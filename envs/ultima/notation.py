"""Ultima move notation (spec section 10): ``e2e5xd5xe6xf5``, ``d4-a1``, ``D4A1XE5``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core.board8 import SQUARE_NAMES, parse_square
from ..core.game import MoveError, echo

if TYPE_CHECKING:
    from .rules import State

# origin, optional '-', destination, then any number of 'x<square>' (input is lowercased)
_MOVE_RE = re.compile(r"([a-h][1-8])-?([a-h][1-8])((?:x[a-h][1-8])*)")
_CAPTURE_RE = re.compile(r"x([a-h][1-8])")


def _name_order(square: int) -> tuple[int, int]:
    """Sort key that puts square names in ASCII order (file letter first, then rank)."""
    return (square & 7, square >> 3)


def format_move(move: int, captures: tuple[int, ...]) -> str:
    """Return the canonical text of a move: origin, destination, ``x<square>`` per capture."""
    text = SQUARE_NAMES[move >> 6] + SQUARE_NAMES[move & 63]
    if captures:
        text += "".join("x" + SQUARE_NAMES[c] for c in sorted(captures, key=_name_order))
    return text


def move_to_str(state: State, move: int) -> str:
    """Return the canonical text of a legal ``move`` in ``state``."""
    captures = state.captures(move)
    if captures is None:
        raise MoveError(f"move {echo(move)} is not legal in {state.to_text()!r}")
    return format_move(move, captures)


def parse_move(state: State, text: str) -> int:
    """Return the legal move written as ``text`` in any accepted spelling; MoveError otherwise.

    Accepted: the canonical form, the bare ``origin destination`` pair, a ``-`` between
    the squares, the capture list in any order, any letter case. A capture list, when
    given, must name exactly the squares the move captures.
    """
    spelled = text.strip().lower()
    m = _MOVE_RE.fullmatch(spelled)
    if m is None:
        raise MoveError(
            f"malformed move {echo(text)}: expected origin and destination squares such as "
            "'e2e5', optionally '-' between them and 'x<square>' per capture ('e2e5xd5')"
        )
    origin, target = parse_square(m.group(1)), parse_square(m.group(2))
    move = (origin << 6) | target
    captures = state.captures(move)
    if captures is None:
        raise MoveError(f"illegal move {echo(text)} in position {state.to_text()!r}")
    if m.group(3):
        named = [parse_square(s) for s in _CAPTURE_RE.findall(m.group(3))]
        if len(set(named)) != len(named):
            raise MoveError(f"move {echo(text)} names a captured square twice")
        if set(named) != set(captures):
            actual = format_move(move, captures)
            what = "captures nothing" if not captures else f"is {actual}"
            raise MoveError(f"wrong capture list in {echo(text)}: the move {what}")
    return move
