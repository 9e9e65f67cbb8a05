"""The game protocol every boardzoo game implements.

A game is a module (``boardzoo.envs.<game>.rules``) whose state class derives
from :class:`GameState`. A state is an immutable position plus whatever history
its draw rules need; :meth:`GameState.apply` returns a new state and never
mutates its parent, so search agents can keep many states alive at once.

Three consumers rely on this protocol:

* the action level (``boardzoo.envs.<game>.actions``) and the PettingZoo env over it
  (``boardzoo.envs.aec``), which add an action encoding and observations on top;
* search agents (MCTS, alpha-beta, AlphaZero), which need ``legal_moves``,
  ``apply``, ``is_terminal``, ``returns`` and a hashable ``key``;
* the CLI (``legal``, ``perft``, ``play``), which needs position text and move
  notation in and out.

Moves are whole turns (a chained Whistling capture is one move here); their
Python type is the game's own (an ``int`` or a tuple), always hashable. Use
``move_to_str``/``parse_move`` to convert to and from canonical notation.
Players are numbered 0 (the side that moves first) and 1.
"""

from __future__ import annotations

import math
import re
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import ClassVar, TypeVar

Move = Hashable
S = TypeVar("S", bound="GameState")

#: Characters of a user's input that an error message repeats; the rest is cut (why: a
#: message that repeats a 10 MB position or move is itself a hazard for logs and terminals).
ECHO_LIMIT = 200
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 8, 8, 8
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = ECHO_LIMIT


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """Return ``repr(value)`` for an error message, cut to about ``limit`` characters."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        return f"an integer of about {int(value.bit_length() * math.log10(2)):,} digits"
    try:  # reprlib looks at a few items per level only: bounded even for shared sublists
        text = _REPR.repr(value)
    except Exception:  # a value whose repr fails: name its type instead
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit + 20 else text[:limit] + "..."


#: What a terminal would obey rather than show: control characters other than tab and
#: newline (ESC starts colour and cursor sequences), lone surrogates (the bytes of a file
#: name that is not UTF-8) and the bidirectional overrides that reorder a line.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """Return ``text`` for a terminal or a UTF-8 file: each character of :data:`_UNPRINTABLE`
    written as its escape (``\\x1b``), so recorded names from elsewhere are shown, not
    obeyed."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class BoardzooError(ValueError):
    """Base class of the errors a user's input can cause."""


class PositionError(BoardzooError):
    """Position text that is malformed or describes an invalid position."""


#: Digits a counter of a position text may have: 10^18 plies is more than any game lasts and
#: still fits the compiled kernels' 64-bit counters (and Python's int() refuses over 4300).
COUNT_DIGITS = 18


def parse_count(text: str, name: str) -> int:
    """Return the non-negative integer of a position text's counter field ``name``;
    PositionError if ``text`` is not one of at most :data:`COUNT_DIGITS` ASCII digits."""
    if not (text.isascii() and text.isdigit()):
        raise PositionError(f"{name} must be a non-negative integer, got {echo(text)}")
    if len(text) > COUNT_DIGITS:
        raise PositionError(f"{name} has {len(text):,} digits; at most {COUNT_DIGITS} are "
                            f"allowed")
    return int(text)


class UnknownGameError(BoardzooError):
    """A game name that boardzoo does not know."""


class MoveError(BoardzooError):
    """Move text that is malformed, or a move that is not legal in the position."""


class GameState(ABC):
    """An immutable game position with the side to move and draw-rule history."""

    #: Short game name as used by the CLI (``loa``).
    name: ClassVar[str]
    #: Display names of player 0 and player 1 (``("black", "white")``).
    player_names: ClassVar[tuple[str, str]]

    # -- construction and position text -------------------------------------------
    @classmethod
    @abstractmethod
    def start(cls: type[S]) -> S:
        """Return the start position of the game."""

    @classmethod
    @abstractmethod
    def from_text(cls: type[S], text: str) -> S:
        """Parse position text; raise :class:`PositionError` if it is invalid."""

    @abstractmethod
    def to_text(self) -> str:
        """Return the canonical position text of this state."""

    # -- turn structure -----------------------------------------------------------
    @property
    @abstractmethod
    def to_move(self) -> int:
        """Index (0 or 1) of the player whose turn it is."""

    @property
    @abstractmethod
    def ply(self) -> int:
        """Number of plies (whole turns) played since the game's start."""

    @abstractmethod
    def legal_moves(self) -> Sequence[Move]:
        """Return every legal whole-turn move; empty exactly when the game is over."""

    @abstractmethod
    def apply(self: S, move: Move) -> S:
        """Return the state after ``move``, which must be legal; ``self`` is unchanged."""

    # -- outcome ------------------------------------------------------------------
    @abstractmethod
    def winner(self) -> int | None:
        """Return 0 or 1 for a decided game, ``None`` for a draw or an unfinished game."""

    @abstractmethod
    def is_terminal(self) -> bool:
        """Return True when the game is over (won, lost or drawn)."""

    def returns(self) -> tuple[float, float]:
        """Return the outcome per player: +1 win, -1 loss, 0 draw or unfinished."""
        w = self.winner()
        if w is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if w == 0 else (-1.0, 1.0)

    def result(self) -> str:
        """Return ``"ongoing"``, ``"draw"`` or the winner's player name."""
        if not self.is_terminal():
            return "ongoing"
        w = self.winner()
        return "draw" if w is None else self.player_names[w]

    def draw_reason(self) -> str | None:
        """Return the rule that drew a finished game (``"threefold repetition"``), or None."""
        return None  # games that know their draw rules say which one ended the game

    def outcome(self) -> str:
        """Return a finished game's result in words: ``"black wins"``, ``"draw: threefold
        repetition"`` (``"draw"`` where the game names no rule); ``"ongoing"`` before."""
        if not self.is_terminal():
            return "ongoing"
        w = self.winner()
        if w is not None:
            return f"{self.player_names[w]} wins"
        reason = self.draw_reason()
        return f"draw: {reason}" if reason else "draw"

    # -- notation -----------------------------------------------------------------
    @abstractmethod
    def move_to_str(self, move: Move) -> str:
        """Return the canonical notation of a legal ``move`` in this position."""

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """Parse move text; raise :class:`MoveError` if malformed or not legal here."""

    def legal_move_strs(self) -> list[str]:
        """Return the canonical notation of every legal move, sorted (ASCII order)."""
        return sorted(self.move_to_str(m) for m in self.legal_moves())

    def iter_legal_move_strs(self) -> Iterator[str]:
        """Yield ``legal_move_strs()`` one by one (games with huge move lists stream them)."""
        return iter(self.legal_move_strs())

    # -- search support -----------------------------------------------------------
    @abstractmethod
    def key(self) -> Hashable:
        """Return a hashable key that identifies the position for transposition tables."""

    def clone(self: S) -> S:
        """Return this state; states are immutable, so sharing is a clone."""
        return self

    def perft(self, depth: int) -> int:
        """Count the leaf move sequences of exactly ``depth`` plies (games may go faster)."""
        if depth == 0:
            return 1
        moves = self.legal_moves()
        if depth == 1:
            return len(moves)
        return sum(self.apply(m).perft(depth - 1) for m in moves)

    def render_text(self) -> str:
        """Return a human-readable board diagram (default: the position text)."""
        return self.to_text()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.from_text({self.to_text()!r})"


def perft(state: GameState, depth: int) -> int:
    """Count the leaf move sequences of exactly ``depth`` plies from ``state``."""
    return state.perft(depth)


def divide(state: GameState, depth: int,
           count: Callable[[GameState, int], int] | None = None) -> dict[str, int]:
    """Return perft(child, depth-1) per legal move, keyed by canonical notation; ``count``
    counts a child's perft (default: its own ``perft``)."""
    if count is None:
        return {state.move_to_str(m): state.apply(m).perft(depth - 1)
                for m in state.legal_moves()}
    return {state.move_to_str(m): count(state.apply(m), depth - 1) for m in state.legal_moves()}
