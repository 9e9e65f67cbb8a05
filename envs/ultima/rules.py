"""Ultima (Baroque chess) rules engine (spec: shared/rules/ultima.md); no PettingZoo here.

Player 0 is White (moves first), player 1 Black. A move is the int
``64 * origin + destination`` (origin and destination determine a move and
all its captures, spec 4), which is also the env's action number. The board
is 64 bytes of piece codes (see :mod:`.board`); a state is immutable and
computes its legal moves (with their captures) once, on first use.

A finished game, won or ended by a draw rule of spec 9 (bare kings, 100 plies
without capture, threefold repetition, ply cap), has no legal move: ``legal_moves()``,
``legal_move_strs()`` and ``perft`` (and so ``boardzoo legal``/``perft``) are empty
or 0 exactly when the game is over, as in the shared test vectors and every game here.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.board8 import diagram, parse_placement, placement_text
from ..core.game import GameState, MoveError, PositionError, echo, parse_count
from . import movegen
from .movegen import BLACK, CODE_OF, KING, LETTER_OF, WHITE, attacked
from .notation import move_to_str, parse_move

START_TEXT = "olcwkcli/pppppppp/8/8/8/8/PPPPPPPP/ILCKWCLO w 0 1"
NO_CAPTURE_LIMIT = 100  # plies without a capture that draw (spec 9.3)
PLY_CAP = 400  # plies played that draw (spec 9.5)
REPETITIONS = 3  # occurrences of a position that draw (spec 9.4)
_COLOUR = (WHITE, BLACK)  # player index -> colour bit of its piece codes


class State(GameState):
    """An immutable Ultima position: board, side to move, counters and repetition history."""

    name = "ultima"
    player_names = ("white", "black")
    __slots__ = ("board", "side", "halfmove", "fullmove", "history", "_moves", "_move_list",
                 "_over")

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
        self._moves: dict[int, tuple[int, ...]] | None = None
        self._move_list: list[int] | None = None
        self._over: tuple[bool, int | None] | None = None

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
        waiting = _COLOUR[1 - side]
        if attacked(board, board.find(waiting | KING), waiting ^ 8):
            raise PositionError(
                f"the side not to move ({cls.player_names[1 - side]}) is in check")
        return cls(board, side, halfmove, fullmove)

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

    def _legal(self) -> dict[int, tuple[int, ...]]:
        if self._moves is None:
            self._moves = movegen.legal_moves(self.board, _COLOUR[self.side])
        return self._moves

    def legal_moves(self) -> list[int]:
        """Return the legal moves (``64 * origin + destination``); empty once the game is
        over (won, lost or drawn)."""
        if self._move_list is None:
            self._move_list = [] if self._judge()[0] else list(self._legal())
        return self._move_list

    def captures(self, move: int) -> tuple[int, ...] | None:
        """Return the squares ``move`` captures, or None when no piece can make it.

        This knows the pieces' moves even where a draw rule has ended the game (none of
        them is legal there); ``parse_move`` and ``apply`` accept them too, while the
        action level and the env refuse every action once the game is over."""
        return self._legal().get(move)

    def apply(self, move: int) -> State:
        caps = self._legal().get(move)
        if caps is None:
            raise MoveError(f"move {echo(move)} is not legal in {self.to_text()!r}")
        board = movegen.make_move(self.board, move, caps)
        fullmove = self.fullmove + self.side  # +1 after Black's move
        if caps:  # a capture can never be undone, so no earlier position can recur
            return State(board, 1 - self.side, 0, fullmove)
        return State(board, 1 - self.side, self.halfmove + 1, fullmove, self.history)

    # -- outcome ----------------------------------------------------------------------
    def _judge(self) -> tuple[bool, int | None]:
        """Return (game over, winner) by spec 9, in the spec's order."""
        if self._over is None:
            if not self._legal():
                self._over = (True, 1 - self.side)  # checkmate or stalemate: mover loses
            elif (
                self.board.count(0) == 62  # bare kings
                or self.halfmove >= NO_CAPTURE_LIMIT
                or self.history.count(self.history[-1]) >= REPETITIONS
                or self.ply >= PLY_CAP
            ):
                self._over = (True, None)
            else:
                self._over = (False, None)
        return self._over

    def winner(self) -> int | None:
        return self._judge()[1]

    def draw_reason(self) -> str | None:
        over, winner = self._judge()
        if not over or winner is not None:
            return None
        if self.board.count(0) == 62:  # the order of _judge (spec 9)
            return "bare kings"
        if self.halfmove >= NO_CAPTURE_LIMIT:
            return f"{NO_CAPTURE_LIMIT} plies without capture"
        if self.history.count(self.history[-1]) >= REPETITIONS:
            return "threefold repetition"
        return f"ply cap ({PLY_CAP} plies)"

    def is_terminal(self) -> bool:
        return self._judge()[0]

    def in_check(self) -> bool:
        """Return True when the side to move's king is capturable (spec 8)."""
        colour = _COLOUR[self.side]
        return attacked(self.board, self.board.find(colour | KING), colour ^ 8)

    def result_code(self) -> str:
        """Return the result as ``1-0``, ``0-1``, ``1/2-1/2`` or ``*`` (unfinished)."""
        over, winner = self._judge()
        if not over:
            return "*"
        return "1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1")

    def frozen(self) -> int:
        """Return the bitmask (bit = square) of every frozen piece, both colours (spec 5)."""
        return movegen.frozen_pieces(self.board, WHITE) | movegen.frozen_pieces(self.board, BLACK)

    # -- notation ---------------------------------------------------------------------
    def move_to_str(self, move: int) -> str:
        return move_to_str(self, move)

    def parse_move(self, text: str) -> int:
        return parse_move(self, text)
