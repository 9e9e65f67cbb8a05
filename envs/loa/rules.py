"""Lines of Action rules engine (spec: shared/rules/loa.md), on 64-bit bitboards.

A move is an ``int``: ``8 * origin + direction`` (directions 0..7 = N, NE, E,
SE, S, SW, W, NW), or :data:`PASS` (512). That is also the env's action
number, so encoding a move for the env costs nothing. The distance of a move
is the number of pieces on its whole line, so the destination is a table
lookup once the line count is known (``popcount`` of a precomputed line mask).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.bits import mask_of
from ..core.board8 import RAYS, diagram, parse_placement, placement_text
from ..core.game import GameState, PositionError, echo
from .notation import move_to_str, parse_move

BLACK, WHITE = 0, 1
PASS = 512
MOVE_CAP = 400  # plies; spec 6.2
START_TEXT = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0"
FULL = (1 << 64) - 1


# LINE[sq][d % 4]: every square of the whole line through sq in direction d, sq included.
LINE: tuple[tuple[int, ...], ...] = tuple(
    tuple(mask_of(RAYS[s][d]) | mask_of(RAYS[s][d + 4]) | (1 << s) for d in range(4))
    for s in range(64)
)
# TARGET[sq][d][n]: square n steps from sq in direction d, or -1 off the board.
TARGET: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(RAYS[s][d][n - 1] if 0 < n <= len(RAYS[s][d]) else -1 for n in range(9))
          for d in range(8))
    for s in range(64)
)
# BETWEEN[sq][d][n]: the n-1 squares strictly between sq and its target n steps away.
BETWEEN: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(mask_of(RAYS[s][d][: max(n - 1, 0)]) for n in range(9)) for d in range(8))
    for s in range(64)
)

# CANDIDATES[sq][line][n]: (destination bit, squares-between mask, move) for the one or two
# directions along ``line`` whose n-step destination is on the board. Move generation is
# then one popcount per line plus one mask test per candidate.
CANDIDATES: tuple[tuple[tuple[tuple[tuple[int, int, int], ...], ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple((1 << TARGET[s][d][n], BETWEEN[s][d][n], 8 * s + d)
                  for d in (o, o + 4) if TARGET[s][d][n] >= 0)
            for n in range(9)
        )
        for o in range(4)
    )
    for s in range(64)
)

# PIECE_LINES[sq]: (line mask, CANDIDATES by line count) for the 4 lines through sq.
PIECE_LINES = tuple(tuple((LINE[s][o], CANDIDATES[s][o]) for o in range(4)) for s in range(64))

_NOT_A = FULL & ~mask_of(range(0, 64, 8))
_NOT_H = FULL & ~mask_of(range(7, 64, 8))


def _grow(x: int) -> int:
    """Return x plus its 8-neighbourhood, as a bitboard."""
    xa, xh = x & _NOT_H, x & _NOT_A  # pieces that may step east / west
    row = x | (xa << 1) | (xh >> 1)
    return (row | (row << 8) | (row >> 8)) & FULL


def is_connected(pieces: int) -> bool:
    """Return True when all pieces of a bitboard form one 8-connected group."""
    if pieces == 0:
        return False
    group = pieces & -pieces
    while True:
        grown = _grow(group) & pieces
        if grown == group:
            return group == pieces
        group = grown


class State(GameState):
    """An immutable LOA position: two bitboards, side to move, ply and repetition history."""

    name = "loa"
    player_names = ("black", "white")
    __slots__ = ("bb", "side", "_ply", "history", "_moves", "_over")

    def __init__(self, black: int, white: int, side: int = BLACK, ply: int = 0,
                 history: tuple[Hashable, ...] = ()) -> None:
        """Build a position; ``history`` holds the keys of earlier positions (for repetition)."""
        self.bb = (black, white)
        self.side = side
        self._ply = ply
        self.history = history
        self._moves: list[int] | None = None
        self._over = self._judge()

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
            if not fields[2].isdigit() or not fields[2].isascii():
                raise PositionError(f"ply must be a non-negative integer, got {echo(fields[2])}")
            ply = int(fields[2])
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
        origin, d = move >> 3, move & 7
        black, white = self.bb
        n = (LINE[origin][d & 3] & (black | white)).bit_count()
        return TARGET[origin][d][n]

    def legal_moves(self) -> list[int]:
        if self._moves is None:
            self._moves = [] if self._over[0] else (self._generate() or [PASS])
        return self._moves

    def _generate(self) -> list[int]:
        own, enemy = self.bb[self.side], self.bb[1 - self.side]
        occ = own | enemy
        moves: list[int] = []
        append = moves.append
        pieces = own
        while pieces:
            low = pieces & -pieces
            pieces ^= low
            for line, candidates in PIECE_LINES[low.bit_length() - 1]:
                for target_bit, between, move in candidates[(line & occ).bit_count()]:
                    # legal: no own piece on the destination, no enemy piece jumped
                    if not (own & target_bit) | (enemy & between):
                        append(move)
        return moves

    def apply(self, move: int, track_history: bool = True) -> State:
        """Return the position after ``move``; ``track_history=False`` skips repetition data."""
        black, white = self.bb
        history = self.history
        if move != PASS:
            origin = move >> 3
            t = self.destination(move)
            step = (1 << origin) | (1 << t)
            if self.side == BLACK:
                captured = white >> t & 1
                black ^= step
                white &= ~(1 << t)
            else:
                captured = black >> t & 1
                white ^= step
                black &= ~(1 << t)
            if captured:  # a capture can never be undone: earlier positions cannot recur
                history = ()
        if track_history:
            history = (*history, self.key())
        return State(black, white, 1 - self.side, self._ply + 1, history if track_history else ())

    # -- outcome ----------------------------------------------------------------------
    def _judge(self) -> tuple[bool, int | None]:
        """Return (game over, winner) by spec 6.1-6.4, judging the side not to move as mover."""
        mover = 1 - self.side
        if is_connected(self.bb[mover]):
            return True, mover
        if is_connected(self.bb[self.side]):
            return True, self.side
        if self._ply >= MOVE_CAP:
            return True, None
        if self.history and self.history.count(self.key()) >= 2:  # this is the third time
            return True, None
        return False, None

    def winner(self) -> int | None:
        return self._over[1]

    def draw_reason(self) -> str | None:
        if not self._over[0] or self._over[1] is not None:
            return None
        return f"move cap ({MOVE_CAP} plies)" if self._ply >= MOVE_CAP else "threefold repetition"

    def is_terminal(self) -> bool:
        return self._over[0]

    # -- notation ---------------------------------------------------------------------
    def move_to_str(self, move: int) -> str:
        return move_to_str(self, move)

    def parse_move(self, text: str) -> int:
        return parse_move(self, text)

    def perft(self, depth: int) -> int:
        """Count leaf move sequences of ``depth`` plies; repetition is ignored (spec 9)."""
        moves = self.legal_moves()
        if depth <= 1:
            return len(moves) if depth == 1 else 1
        return sum(self.apply(m, track_history=False).perft(depth - 1) for m in moves)

    # -- evaluation helpers for agents ---------------------------------------------------
    def pieces(self, player: int) -> int:
        """Return the bitboard of ``player``'s pieces."""
        return self.bb[player]
