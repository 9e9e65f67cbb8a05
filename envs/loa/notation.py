"""LOA move notation (spec section 8): ``b1-b3``, ``c1xa3``, ``pass``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core.board8 import parse_square, square_name
from ..core.game import MoveError, echo

if TYPE_CHECKING:
    from .rules import State

PASS = 512
# from-square, optional separator, to-square; squares are checked against the board below
_MOVE_RE = re.compile(r"([a-z]\d+)([-x]?)([a-z]\d+)")


def move_to_str(state: State, move: int) -> str:
    """Return the canonical text of a legal move: ``from-to``, ``fromxto`` or ``pass``."""
    if move == PASS:
        return "pass"
    target = state.destination(move)
    return move_text(move, target, bool(state.bb[1 - state.side] >> target & 1))


def move_text(move: int, target: int, capture: bool) -> str:
    """Return the canonical text of a legal move that lands on ``target`` (any for the pass)
    and captures there or not."""
    if move == PASS:
        return "pass"
    return f"{square_name(move >> 3)}{'x' if capture else '-'}{square_name(target)}"


def parse_move(state: State, text: str) -> int:
    """Return the legal move written as ``text`` (any accepted spelling); MoveError otherwise."""
    spelled = text.strip().lower()
    if state.is_terminal():
        raise MoveError(f"the game is over ({state.result()}): no move is legal")
    if spelled == "pass":
        if state.legal_moves() != [PASS]:
            raise MoveError("pass is only legal when no move exists")
        return PASS
    m = _MOVE_RE.fullmatch(spelled)
    if m is None:
        raise MoveError(f"malformed move {echo(text)}: expected e.g. 'b1-b3', 'c1xa3' or 'pass'")
    origin, target = parse_square(m.group(1)), parse_square(m.group(3))
    for name, sq in ((m.group(1), origin), (m.group(3), target)):
        if sq is None:
            raise MoveError(f"malformed move {echo(text)}: {echo(name)} is not a square a1..h8")
    for move in state.legal_moves():
        if move != PASS and move >> 3 == origin and state.destination(move) == target:
            return move
    raise MoveError(f"illegal move {echo(text)} in position {state.to_text()!r}")
