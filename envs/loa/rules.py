"""Lines of Action positions (spec: shared/rules/loa.md) over the compiled rules of :mod:`.kernel`.

:class:`State` is the :class:`~boardzoo.envs.core.game.GameState` that the env, the agents,
the CLI and self-play hold: two bitboards (Python ints), the side to move, the ply and the
repetition history, with position text and move notation. The rules themselves (which moves
are legal, where a move lands and what it captures, connection, the move cap, repetition,
perft) are the kernel's; this module asks it and keeps the answers.

A move is an ``int``: ``8 * origin + direction`` (directions 0..7 = N, NE, E, SE, S, SW, W,
NW), or :data:`PASS` (512). That is also the env's action number.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from ..core.bits import mask_of
from ..core.board8 import diagram, parse_placement, placement_text
from ..core.game import GameState, MoveError, PositionError, echo, parse_count
from . import kernel
from .kernel import (
    BLACK,
    DRAW_MOVE_CAP,
    DRAW_REPETITION,
    MAX_MOVES,
    MOVE_CAP,
    ONGOING,
    PASS,
    WHITE,
    is_connected,
)
from .notation import move_text, move_to_str, parse_move

__all__ = ["BLACK", "MOVE_CAP", "PASS", "START_TEXT", "WHITE", "State", "is_connected"]

START_TEXT = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0"
# result code -> winner (None: the game goes on, or a draw)
_WINNER = (None, BLACK, WHITE, None, None)
_judge, _legal_moves, _apply_move = kernel.judge, kernel.legal_moves, kernel.apply_move
_destination, _is_legal, _play = kernel.destination, kernel.is_legal, kernel.play
_empty, _int64 = np.empty, np.int64


class State(GameState):
    """An immutable LOA position: two bitboards, side to move, ply and repetition history."""

    name = "loa"
    player_names = ("black", "white")
    __slots__ = ("bb", "side", "_ply", "history", "_moves", "_result")

    def __init__(self, black: int, white: int, side: int = BLACK, ply: int = 0,
                 history: tuple[Hashable, ...] = ()) -> None:
        """Build a position; ``history`` holds the keys of earlier positions (for repetition)."""
        self.bb = (black, white)
        self.side = side
        self._ply = ply
        self.history = history
        self._moves: list[int] | None = None
        # this is the third time when the history holds the position twice (spec 6.3)
        repeated = bool(history) and history.count((black, white, side)) >= 2
        # the kernel reads the ply only against the move cap: a larger one is that cap
        self._result: int = _judge(black, white, side, ply if ply < MOVE_CAP else MOVE_CAP,
                                   repeated)

    # -- construction and text ------------------------------------------------------
    @classmethod
    def start(cls) -> State:
        return cls.from_text(START_TEXT)

    @classmethod
    def from_text(cls, text: str) -> State:
        fields = text.split()
        if len(fields) not in (2, 3):
            raise PositionError(
                f"position needs '<board> <side> [<ply>]', got {len(fields)} field(s): "
                f"{echo(text)}")
        cells = parse_placement(fields[0], "bw")
        if fields[1] not in ("b", "w"):
            raise PositionError(f"side to move must be 'b' or 'w', got {echo(fields[1])}")
        ply = 0
        if len(fields) == 3:
            ply = parse_count(fields[2], "ply")
        black = mask_of(i for i, c in enumerate(cells) if c == "b")
        white = mask_of(i for i, c in enumerate(cells) if c == "w")
        if not black or not white:
            raise PositionError("each colour needs at least one piece on the board")
        return cls(black, white, BLACK if fields[1] == "b" else WHITE, ply)

    def cells(self) -> list[str | None]:
        """Return the 64 squares as 'b', 'w' or None (index = 8*rank+file)."""
        black, white = self.bb
        return ["b" if black >> i & 1 else "w" if white >> i & 1 else None for i in range(64)]

    def to_text(self) -> str:
        return f"{placement_text(self.cells())} {'bw'[self.side]} {self._ply}"

    def render_text(self) -> str:
        return diagram(self.cells())

    # -- turn structure ---------------------------------------------------------------
    @property
    def to_move(self) -> int:
        return self.side

    @property
    def ply(self) -> int:
        return self._ply

    def key(self) -> Hashable:
        return (self.bb[0], self.bb[1], self.side)

    def destination(self, move: int) -> int:
        """Return the destination square of a (non-pass) move in this position."""
        if not 0 <= move < PASS:  # why: the kernel reads its tables unchecked
            raise MoveError(f"{echo(move)} is not a move with a destination")
        return _destination(self.bb[0], self.bb[1], move)

    def legal_moves(self) -> list[int]:
        if self._moves is None:
            if self._result != ONGOING:
                self._moves = []  # a finished game has no legal actions (spec 6.5)
            else:
                out = _empty(MAX_MOVES, _int64)
                n = _legal_moves(self.bb[0], self.bb[1], self.side, self._ply, False, out)
                self._moves = out[:n].tolist()
        return self._moves

    def is_legal(self, move: int) -> bool:
        """Return whether ``move`` (an int) is a legal move here."""
        if self._moves is not None:
            return move in self._moves
        if self._result != ONGOING or not 0 <= move <= PASS:
            return False
        return _is_legal(self.bb[0], self.bb[1], self.side, move)

    def apply(self, move: int, track_history: bool = True) -> State:
        """Return the position after ``move``; ``track_history=False`` skips repetition data."""
        if not 0 <= move <= PASS:  # why: the kernel reads its tables unchecked
            raise MoveError(f"{echo(move)} is not a move")
        black, white, captured = _apply_move(self.bb[0], self.bb[1], self.side, move)
        if not track_history:
            return State(black, white, 1 - self.side, self._ply + 1)
        return self._child(black, white, captured)

    def play(self, move: int) -> tuple[State, str] | None:
        """Return (the position after ``move``, its notation) when ``move`` is legal here,
        else None: :meth:`is_legal`, :meth:`apply` and :meth:`move_to_str` in one kernel call
        (the env's step)."""
        if self._result != ONGOING or not 0 <= move <= PASS:
            return None
        legal, black, white, captured, target = _play(self.bb[0], self.bb[1], self.side, move)
        if not legal:
            return None
        return self._child(black, white, captured), move_text(move, target, captured)

    def _child(self, black: int, white: int, captured: bool) -> State:
        """Return the position (black, white) that a move from here made."""
        # a capture can never be undone: earlier positions cannot recur
        history = (*(() if captured else self.history), (*self.bb, self.side))  # + key()
        return State(black, white, 1 - self.side, self._ply + 1, history)

    # -- outcome ----------------------------------------------------------------------
    def winner(self) -> int | None:
        return _WINNER[self._result]

    def draw_reason(self) -> str | None:
        if self._result == DRAW_MOVE_CAP:
            return f"move cap ({MOVE_CAP} plies)"
        return "threefold repetition" if self._result == DRAW_REPETITION else None

    def is_terminal(self) -> bool:
        return self._result != ONGOING

    # -- notation ---------------------------------------------------------------------
    def move_to_str(self, move: int) -> str:
        return move_to_str(self, move)

    def parse_move(self, text: str) -> int:
        return parse_move(self, text)

    def perft(self, depth: int) -> int:
        """Count leaf move sequences of ``depth`` plies; repetition is ignored (spec 9)."""
        if depth <= 0:
            return 1
        # a finished game has no moves; a sequence that would pass the move cap has no leaf
        if self._result != ONGOING or depth > MOVE_CAP - self._ply:
            return 0
        return kernel.perft(self.bb[0], self.bb[1], self.side, self._ply, depth)

    # -- evaluation helpers for agents ---------------------------------------------------
    def pieces(self, player: int) -> int:
        """Return the bitboard of ``player``'s pieces."""
        return self.bb[player]
