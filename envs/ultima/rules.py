"""Ultima (Baroque chess) positions (spec: shared/rules/ultima.md) over the compiled rules of
:mod:`.kernel`; no PettingZoo here.

Player 0 is White (moves first), player 1 Black. A move is the int
``64 * origin + destination`` (origin and destination determine a move and
all its captures, spec 4), which is also the env's action number. The board
is 64 bytes of piece codes (see :mod:`.board`). :class:`State` is what the env, the agents,
the CLI and self-play hold: the board, the side to move, the counters and the repetition
history, with position text and move notation. The rules themselves (which moves are legal
and what they capture, check, immobilization, the end of the game, perft) are the kernel's;
a state asks it once, on first use, and keeps the answers.

A finished game, won or ended by a draw rule of spec 9 (bare kings, 100 plies
without capture, threefold repetition, ply cap), has no legal move: ``legal_moves()``,
``legal_move_strs()`` and ``perft`` (and so ``boardzoo legal``/``perft``) are empty
or 0 exactly when the game is over, as in the shared test vectors and every game here.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from ..core.board8 import diagram, parse_placement, placement_text
from ..core.game import GameState, MoveError, PositionError, echo, parse_count
from . import kernel
from .board import BLACK, CODE_OF, LETTER_OF, WHITE
from .kernel import (
    DRAW_BARE_KINGS,
    DRAW_NO_CAPTURE,
    DRAW_REPETITION,
    MAX_MOVES,
    NO_CAPTURE_LIMIT,
    ONGOING,
    PLY_CAP,
    REPETITIONS,
    WHITE_WINS,
)
from .notation import move_to_str, parse_move

__all__ = ["NO_CAPTURE_LIMIT", "PLY_CAP", "REPETITIONS", "START_TEXT", "State"]

START_TEXT = "olcwkcli/pppppppp/8/8/8/8/PPPPPPPP/ILCKWCLO w 0 1"
_MASK64 = (1 << 64) - 1
# result code -> winner (None: the game goes on, or a draw)
_WINNER = (None, 0, 1, None, None, None, None)
# scratch buffers of the kernel's move lists (a state copies out what it keeps)
_MOVES, _CAPS = np.empty(MAX_MOVES, np.int64), np.empty(MAX_MOVES, np.int64)
_judged_moves, _in_check, _frozen_pieces = kernel.judged_moves, kernel.in_check, \
    kernel.frozen_pieces
_make_move, _empty, _uint8 = kernel.make_move, np.empty, np.uint8


class State(GameState):
    """An immutable Ultima position: board, side to move, counters and repetition history."""

    name = "ultima"
    player_names = ("white", "black")
    __slots__ = ("board", "side", "halfmove", "fullmove", "history", "_array", "_moves",
                 "_move_array", "_cap_array", "_result")

    def __init__(self, board: bytes, side: int = 0, halfmove: int = 0, fullmove: int = 1,
                 history: tuple[bytes, ...] | None = None) -> None:
        """Build a position from 64 piece codes (not validated: use :meth:`from_text`).

        ``history`` holds the repetition keys of the earlier positions since the last
        capture (positions before a capture can never recur); the current one is added.
        """
        self.board = bytes(board)
        self.side = side
        self.halfmove = halfmove
        self.fullmove = fullmove
        self.history = (history or ()) + (self.board + b"wb"[side : side + 1],)
        self._array: np.ndarray | None = None
        self._moves: list[int] | None = None  # the pieces' moves, also once the game is over
        self._move_array: np.ndarray | None = None  # the same, as the kernel's int64 array
        self._cap_array: np.ndarray | None = None  # their capture masks (int64)
        self._result = ONGOING

    # -- construction and text ------------------------------------------------------
    @classmethod
    def start(cls) -> State:
        return cls.from_text(START_TEXT)

    @classmethod
    def from_text(cls, text: str) -> State:
        fields = text.split()
        if len(fields) not in (2, 4):
            raise PositionError(
                "position needs '<placement> <side> <halfmove> <fullmove>' or "
                f"'<placement> <side>', got {len(fields)} field(s): {echo(text)}")
        cells = parse_placement(fields[0], "KPLCWIOkplcwio")
        if fields[1] not in ("w", "b"):
            raise PositionError(f"side to move must be 'w' or 'b', got {echo(fields[1])}")
        halfmove, fullmove = 0, 1
        if len(fields) == 4:
            halfmove = parse_count(fields[2], "halfmove clock")
            fullmove = parse_count(fields[3], "fullmove number")
            if fullmove < 1:
                raise PositionError(f"fullmove number starts at 1, got {fullmove}")
        for letter, colour in (("K", "white"), ("k", "black")):
            if cells.count(letter) != 1:
                raise PositionError(
                    f"{colour} must have exactly one king, found {cells.count(letter)}")
        board = bytes(CODE_OF[c] if c else 0 for c in cells)
        side = 0 if fields[1] == "w" else 1
        state = cls(board, side, halfmove, fullmove)
        if _in_check(state.array(), 1 - side):
            raise PositionError(
                f"the side not to move ({cls.player_names[1 - side]}) is in check")
        return state

    def array(self) -> np.ndarray:
        """Return the board as the kernel's uint8 array (made once; do not write to it)."""
        if self._array is None:
            self._array = np.frombuffer(bytearray(self.board), dtype=_uint8)
        return self._array

    def cells(self) -> list[str | None]:
        """Return the 64 squares as piece letters or None (index = 8*rank+file)."""
        return [LETTER_OF[c] if c else None for c in self.board]

    def to_text(self) -> str:
        return f"{placement_text(self.cells())} {'wb'[self.side]} {self.halfmove} {self.fullmove}"

    def render_text(self) -> str:
        return diagram(self.cells())

    # -- turn structure ---------------------------------------------------------------
    @property
    def to_move(self) -> int:
        return self.side

    @property
    def ply(self) -> int:
        return 2 * (self.fullmove - 1) + self.side

    def key(self) -> Hashable:
        """Return (board bytes, side to move); counters and history are not included."""
        return (self.board, self.side)

    def occurrences(self) -> int:
        """Return how often this position occurs in its history (itself included)."""
        return self.history.count(self.history[-1])

    def _ask(self) -> None:
        """Ask the kernel for the pieces' moves, their captures and the result (spec 7, 9)."""
        n, self._result = _judged_moves(self.array(), self.side, self.halfmove, self.ply,
                                        self.occurrences(), _MOVES, _CAPS)
        self._move_array, self._cap_array = _MOVES[:n].copy(), _CAPS[:n].copy()
        self._moves = self._move_array.tolist()

    def legal_moves(self) -> list[int]:
        """Return the legal moves (``64 * origin + destination``); empty once the game is
        over (won, lost or drawn)."""
        if self._moves is None:
            self._ask()
        return self._moves if self._result == ONGOING else []  # type: ignore[return-value]

    def legal_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the legal moves and their capture masks as the kernel's int64 arrays (empty
        once the game is over); do not write to them."""
        if self._moves is None:
            self._ask()
        if self._result != ONGOING:
            return _MOVES[:0], _CAPS[:0]
        return self._move_array, self._cap_array  # type: ignore[return-value]

    def capture_mask(self, move: int) -> int | None:
        """Return the kernel's capture mask of ``move`` (int64), or None when no piece can
        make it (see :meth:`captures`)."""
        if self._moves is None:
            self._ask()
        try:  # why not a dict: building it cost a quarter of an env step, for one look-up
            i = self._moves.index(move)  # type: ignore[union-attr]
        except ValueError:
            return None
        return int(self._cap_array[i])  # type: ignore[index]

    def captures(self, move: int) -> tuple[int, ...] | None:
        """Return the squares ``move`` captures (ascending), or None when no piece can make it.

        This knows the pieces' moves even where a draw rule has ended the game (none of
        them is legal there); ``parse_move`` and ``apply`` accept them too, while the
        action level and the env refuse every action once the game is over."""
        mask = self.capture_mask(move)
        return None if mask is None else kernel.squares_of(mask)

    def apply(self, move: int) -> State:
        mask = self.capture_mask(move)
        if mask is None:
            raise MoveError(f"move {echo(move)} is not legal in {self.to_text()!r}")
        out = _empty(64, _uint8)
        _make_move(self.array(), move, mask, out)
        fullmove = self.fullmove + self.side  # +1 after Black's move
        if mask:  # a capture can never be undone, so no earlier position can recur
            child = State(out.tobytes(), 1 - self.side, 0, fullmove)
        else:
            child = State(out.tobytes(), 1 - self.side, self.halfmove + 1, fullmove,
                          self.history)
        child._array = out
        return child

    # -- outcome ----------------------------------------------------------------------
    def kernel_result(self) -> int:
        """Return the kernel's result code (:data:`.kernel.ONGOING`, ``WHITE_WINS``, ...)."""
        if self._moves is None:
            self._ask()
        return self._result

    def winner(self) -> int | None:
        return _WINNER[self.kernel_result()]

    def draw_reason(self) -> str | None:
        code = self.kernel_result()
        if code == DRAW_BARE_KINGS:
            return "bare kings"
        if code == DRAW_NO_CAPTURE:
            return f"{NO_CAPTURE_LIMIT} plies without capture"
        if code == DRAW_REPETITION:
            return "threefold repetition"
        return f"ply cap ({PLY_CAP} plies)" if code > DRAW_REPETITION else None

    def is_terminal(self) -> bool:
        return self.kernel_result() != ONGOING

    def in_check(self) -> bool:
        """Return True when the side to move's king is capturable (spec 8)."""
        return bool(_in_check(self.array(), self.side))

    def result_code(self) -> str:
        """Return the result as ``1-0``, ``0-1``, ``1/2-1/2`` or ``*`` (unfinished)."""
        code = self.kernel_result()
        if code == ONGOING:
            return "*"
        return "1-0" if code == WHITE_WINS else ("0-1" if _WINNER[code] == 1 else "1/2-1/2")

    def frozen(self) -> int:
        """Return the bitmask (bit = square) of every frozen piece, both colours (spec 5)."""
        b = self.array()
        return (_frozen_pieces(b, WHITE) | _frozen_pieces(b, BLACK)) & _MASK64

    # -- notation ---------------------------------------------------------------------
    def move_to_str(self, move: int) -> str:
        return move_to_str(self, move)

    def parse_move(self, text: str) -> int:
        return parse_move(self, text)

    def perft(self, depth: int) -> int:
        """Count leaf move sequences of ``depth`` plies, on the kernel (repetition included:
        a finished position has no moves)."""
        if depth == 0:
            return 1
        if depth > PLY_CAP - self.ply:  # a sequence past the ply cap has no leaf (spec 9.5)
            return 0
        return kernel.perft_state(self, depth)
