"""Monochromatic Whistling rules (spec: shared/rules/whistling.md): the position, its
text, and the questions the compiled kernel answers (:mod:`.kernel`).

A move is a :class:`Turn`: the start cell and every hop destination, the
stones each hop captures (bitmasks) and the kind (plain move, whistling
capture, crush). ``legal_moves()`` returns whole turns: a chain of hops is one
move, and only turns that capture the maximum number of stones (spec section 8).

Move generation, the maximum-capture search, results and the evaluation run in the kernel
(numba); a State keeps the stone bitmasks and caches the kernel's answers. A chain position
can have hundreds of thousands of maximal turns (docs/whistling.md, "Worst cases"), so
``legal_count()``, ``max_capture()`` and ``is_terminal()`` never list them; past the
kernel's bounds a question raises :class:`.kernel.ChainLimitError`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import NamedTuple

from ..core.game import GameState, MoveError, PositionError, echo, parse_count
from . import kernel
from .hexgrid import (
    BIT,
    CELL_NAMES,
    CELLS,
    COLUMNS,
    HOPS,
    NUM_CELLS,
    NUM_COLUMNS,
    NUM_ROWS,
    OPPOSITE,
    RAYS,
    ZONES,
    cells_of,
    distance2,
    parse_cell,
)
from .kernel import DRAW_QUIET, ChainLimitError
from .notation import CRUSH, PLAIN, WHISTLE, parse_turn, turn_to_str

__all__ = ["CRUSH", "DRAW_QUIET", "PLAIN", "START_TEXT", "WHISTLE", "ChainLimitError", "State",
           "Turn", "diagram"]

X, O = 0, 1
SIDES = "xo"
START_TEXT = (
    "s1,u1,r2,t2,v2,s3,u3,H14,J14,g15,i15,G15,I15,K15,f16,h16,j16,H16,J16,g17,i17/"
    "G5,I5,f6,h6,F6,H6,J6,e7,g7,i7,G7,I7,f8,h8,u19,w19,t20,v20,x20,u21,w21 x 0"
)
#: Directions a chain hop may not take after a hop in direction d (straight on or back,
#: spec section 7); index 6 (= -1) is the first hop of a turn, which may go anywhere.
_BANNED = tuple((d, OPPOSITE[d]) for d in range(6)) + ((-1, -1),)
_RESULT_WINNER = {kernel.X_WINS: X, kernel.O_WINS: O}


class Turn(NamedTuple):
    """One whole turn: cells visited (start, then each hop's destination), captures, kind."""

    path: tuple[int, ...]
    #: Bitmask of the enemy stones each hop captures (``(0,)`` for a plain move).
    caps: tuple[int, ...]
    kind: int  # PLAIN, WHISTLE or CRUSH

    @property
    def captured(self) -> int:
        """Return the bitmask of every stone this turn captures."""
        out = 0
        for c in self.caps:
            out |= c
        return out

    @property
    def count(self) -> int:
        """Return the number of stones this turn captures."""
        return sum(c.bit_count() for c in self.caps)


_new = tuple.__new__  # builds a Turn without NamedTuple's Python-level __new__


class State(GameState):
    """An immutable Whistling position: both sides' stones, side to move, quiet counter."""

    name = "whistling"
    player_names = ("x", "o")
    __slots__ = ("stones", "side", "quiet", "_ply", "_turns", "_most", "_count", "_result")

    def __init__(self, x: int, o: int, side: int = X, quiet: int = 0, ply: int = 0) -> None:
        """Build a position from X's and O's stone bitmasks (bit i = cell i in board order)."""
        self.stones = (x, o)
        self.side = side
        self.quiet = quiet
        self._ply = ply
        self._turns: list[Turn] | None = None
        self._most = -1  # N of spec section 8; -1 until the kernel is asked
        self._count = -1  # the number of legal turns; -1 until the kernel is asked
        self._result = -1  # kernel.result's code; -1 until asked

    # -- construction and text ------------------------------------------------------
    @classmethod
    def start(cls) -> State:
        return cls.from_text(START_TEXT)

    @classmethod
    def from_text(cls, text: str) -> State:
        if not isinstance(text, str):
            raise PositionError(f"position text must be a string, got {type(text).__name__}")
        fields = text.split()
        if len(fields) != 3:
            raise PositionError("position text needs three fields '<X cells>/<O cells> <side> "
                                f"<quiet>', got {len(fields)}: {echo(text)}")
        board, side, quiet = fields
        if board.count("/") != 1:
            raise PositionError(f"stones must be written '<X cells>/<O cells>' with one '/', "
                                f"got {board!r}")
        x_text, o_text = board.split("/")
        x, o = _parse_side(x_text, "X"), _parse_side(o_text, "O")
        both = x & o
        if both:
            raise PositionError(f"cell {CELL_NAMES[cells_of(both)[0]]} is listed for both sides")
        if side not in ("x", "o"):
            raise PositionError(f"side to move must be 'x' or 'o', got {echo(side)}")
        quiet_count = parse_count(quiet, "quiet counter")
        mover = SIDES.index(side)
        if not (x, o)[1 - mover]:
            raise PositionError(f"{SIDES[1 - mover]} (not to move) has no stones: unreachable, "
                                "the game ended when its last stone was captured")
        return cls(x, o, mover, quiet_count)

    def to_text(self) -> str:
        x, o = (",".join(CELL_NAMES[i] for i in cells_of(m)) or "-" for m in self.stones)
        return f"{x}/{o} {SIDES[self.side]} {self.quiet}"

    def render_text(self) -> str:
        return diagram(self.stones[0], self.stones[1])

    # -- turn structure ---------------------------------------------------------------
    @property
    def to_move(self) -> int:
        return self.side

    @property
    def ply(self) -> int:
        return self._ply

    def key(self) -> Hashable:
        return (self.stones[0], self.stones[1], self.side, self.quiet)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def _position(self) -> tuple[int, int, int, int]:
        """Return the kernel's (x, o, side, quiet)."""
        return self.stones[0], self.stones[1], self.side, self.quiet

    def legal_moves(self) -> list[Turn]:
        """Return every legal turn; in chain positions the list can be huge (hundreds of
        thousands of turns, docs/whistling.md): prefer ``legal_count``/``max_capture``."""
        if self._turns is None:
            self._turns = [_new(Turn, row) for row in kernel.turn_rows(*self._position())]
        return self._turns

    def iter_legal_moves(self) -> Iterator[Turn]:
        """Yield the turns of ``legal_moves()`` in the same order."""
        return iter(self.legal_moves())

    def iter_legal_move_strs(self) -> Iterator[str]:
        """Yield ``legal_move_strs()`` (sorted notation) one by one."""
        return iter(sorted(map(turn_to_str, self.legal_moves())))

    def legal_count(self) -> int:
        """Return ``len(legal_moves())`` without building the turns."""
        if self._turns is not None:
            return len(self._turns)
        if self._count < 0:
            self._most, self._count = kernel.counts(*self._position())
        return self._count

    def max_capture(self) -> int:
        """Return N of spec section 8: the stones every legal turn captures (0: plain moves)."""
        if self._most < 0:
            self._most, _ = kernel.counts(*self._position(), best_only=True)
        return self._most

    def is_legal(self, move: object) -> bool:
        """Return True when ``move`` is one of this position's legal turns (followed hop by
        hop through the kernel's legal hops: no list of turns)."""
        if not (isinstance(move, tuple) and len(move) == 3):
            return False
        path, caps, kind = move
        if (type(path) is not tuple or type(caps) is not tuple or len(path) < 2
                or not all(type(c) is int and 0 <= c < NUM_CELLS for c in path)):
            return False
        board = (*self._position(), -1, -1)
        got: list[int] = []
        for i, (a, b) in enumerate(zip(path, path[1:], strict=False)):
            action = HOP_ACTION.get(a * NUM_CELLS + b)
            if board[4] < 0 < i or action is None or action not in kernel.hop_actions(*board):
                return False  # the turn ended before this hop, or no legal hop
            enemy = board[1 - self.side]
            board = kernel.play_hop(*board, action)
            got.append(enemy & ~board[1 - self.side])
        if board[4] >= 0:
            return False  # the turn goes on past the path's end
        if len(path) == 2 and not got[0]:
            return move == (path, (0,), PLAIN)
        one = len(path) == 2 and HOPS[path[0] * NUM_CELLS + path[1]][1] == 1
        return move == (path, tuple(got), CRUSH if one else WHISTLE)

    def apply(self, move: Turn) -> State:
        if not self.is_legal(move):
            raise MoveError(f"{echo(move)} is not a legal turn in {self.to_text()!r}")
        return self.play(move)

    def play(self, turn: Turn) -> State:
        """Return the position after a turn taken from ``legal_moves()`` (not re-checked)."""
        path = turn.path
        captured = 0
        for c in turn.caps:
            captured |= c
        own = self.stones[self.side] ^ BIT[path[0]] | BIT[path[-1]]
        enemy = self.stones[1 - self.side] & ~captured
        quiet = 0 if captured else self.quiet + 1
        x, o = (own, enemy) if self.side == X else (enemy, own)
        return State(x, o, 1 - self.side, quiet, self._ply + 1)

    def perft(self, depth: int) -> int:
        """Count the turn sequences of ``depth`` plies (terminal positions have none)."""
        return kernel.perft(*self._position(), depth)

    # -- outcome ----------------------------------------------------------------------
    def _outcome(self) -> int:
        """Return the kernel's result code (spec section 9), cached."""
        if self._result < 0:
            self._result = kernel.outcome(*self._position())
        return self._result

    def winner(self) -> int | None:
        return _RESULT_WINNER.get(self._outcome())

    def is_terminal(self) -> bool:
        return self._outcome() != kernel.ONGOING

    def draw_reason(self) -> str | None:
        if self._outcome() == kernel.DRAW:
            return f"{DRAW_QUIET} turns without capture"
        return None

    # -- notation ---------------------------------------------------------------------
    def move_to_str(self, move: Turn) -> str:
        return turn_to_str(move)

    def parse_move(self, text: str) -> Turn:
        return parse_turn(self, text)

    def trace(self, path: Sequence[int]) -> tuple[int, ...]:
        """Follow ``path`` hop by hop by the movement rules alone (not the maximum-capture
        rule); return each hop's captures, or raise MoveError saying which rule a hop breaks."""
        own, enemy = self.stones[self.side], self.stones[1 - self.side]
        start = path[0]
        if not own & BIT[start]:
            raise MoveError(f"{CELL_NAMES[start]} holds no stone of {SIDES[self.side]}, "
                            "the side to move")
        rest = own ^ BIT[start]
        chain = len(path) > 2
        cell, last, caps = start, -1, []
        for i, dest in enumerate(path[1:], 1):
            label = f"{CELL_NAMES[cell]}-{CELL_NAMES[dest]}"
            if chain:
                label = f"hop {i} ({label})"
            hop = HOPS.get(cell * NUM_CELLS + dest)
            if hop is None:
                raise MoveError(f"{label} is not a straight line in one of the six directions")
            d, k = hop
            if d in _BANNED[last]:
                way = "goes straight on" if d == last else "reverses"
                raise MoveError(f"{label} {way}: each further hop of a chain must turn")
            for p in RAYS[cell][d][:k]:
                if (rest | enemy) & BIT[p]:
                    raise MoveError(f"{label} is blocked by the stone on {CELL_NAMES[p]}")
            if not any(distance2(dest, e) < distance2(cell, e) for e in cells_of(enemy)):
                raise MoveError(f"{label} ends no closer to any enemy stone (closer rule)")
            c = ZONES[cell][d][k] & enemy
            if chain and not c:
                raise MoveError(f"{label} captures nothing, so it cannot be part of a chain")
            caps.append(c)
            enemy &= ~c
            cell, last = dest, d
        return tuple(caps)


#: HOP_ACTION[a * NUM_CELLS + b]: the action number of the hop from cell a to cell b
#: (actions.py's encoding: (6 * cell + direction) * 20 + distance - 1).
HOP_ACTION: dict[int, int] = {
    key: (6 * (key // NUM_CELLS) + d) * kernel.MAX_DISTANCE + k - 1 for key, (d, k) in HOPS.items()
}


def _parse_side(text: str, side: str) -> int:
    """Return the bitmask of one side's comma-separated cell list (``-`` for none)."""
    if text == "-":
        return 0
    if not text:
        raise PositionError(f"{side}'s stone list is empty: write '-' for a side with no stones")
    mask = 0
    for name in text.split(","):
        if not name:
            raise PositionError(f"{side}'s stone list {echo(text)} has an empty entry")
        cell = parse_cell(name, PositionError)
        if mask & BIT[cell]:
            raise PositionError(f"cell {name} is listed twice for {side}")
        mask |= BIT[cell]
    return mask


_ROW_CELLS = tuple(
    tuple(i for i, (_, r) in enumerate(CELLS) if r == row) for row in range(1, NUM_ROWS + 1)
)


def diagram(x: int, o: int, marks: dict[int, str] | None = None) -> str:
    """Return the seed-style text board: rows 1..21 on the 41-column grid, with coordinates.

    ``marks`` overrides the character of some cells (e.g. the stone in the middle of a chain).
    """
    header = "    " + COLUMNS
    lines = [header]
    for r, cells in enumerate(_ROW_CELLS, 1):
        row = [" "] * NUM_COLUMNS
        for i in cells:
            row[CELLS[i][0]] = "x" if x & BIT[i] else "o" if o & BIT[i] else "."
        for i, ch in (marks or {}).items():
            if CELLS[i][1] == r:
                row[CELLS[i][0]] = ch
        lines.append(f"{r:>2}  " + "".join(row).rstrip())
    lines.append(header)
    return "\n".join(lines)
