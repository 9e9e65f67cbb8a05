"""Monochromatic Whistling rules engine (spec: shared/rules/whistling.md), on cell bitmasks.

A move is a :class:`Turn`: the start cell and every hop destination, the
stones each hop captures (bitmasks) and the kind (plain move, whistling
capture, crush). ``legal_moves()`` returns whole turns: a chain of hops is one
move, and only turns that capture the maximum number of stones (spec section 8).

Move generation lives in :mod:`.movegen`, the maximum-capture search in
:mod:`.chains`. A chain position can have hundreds of thousands of maximal turns
(docs/whistling.md, "Worst cases"), so a State keeps the search rather than the
list: ``legal_count()``, ``is_terminal()``, ``is_legal()``, ``iter_legal_moves()``
and the env's hop actions work from it, and only ``legal_moves()`` builds the list.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

from ..core.game import GameState, MoveError, PositionError, echo, parse_count
from .chains import Chains
from .hexgrid import (
    BIT,
    CELL_NAMES,
    CELLS,
    COLUMNS,
    HOPS,
    NUM_CELLS,
    NUM_COLUMNS,
    NUM_ROWS,
    RAYS,
    ZONES,
    cells_of,
    distance2,
    parse_cell,
)
from .movegen import _BANNED, _NO_CAPTURE, Turn, _new, _scan, capture_hops
from .notation import CRUSH, PLAIN, WHISTLE, parse_turn, turn_to_str

__all__ = ["CRUSH", "DRAW_QUIET", "PLAIN", "START_TEXT", "WHISTLE", "State", "Turn",
           "capture_hops", "count_turns", "diagram", "generate"]

X, O = 0, 1
SIDES = "xo"
DRAW_QUIET = 40  # spec section 9: 20 non-capturing turns by each player
START_TEXT = (
    "s1,u1,r2,t2,v2,s3,u3,H14,J14,g15,i15,G15,I15,K15,f16,h16,j16,H16,J16,g17,i17/"
    "G5,I5,f6,h6,F6,H6,J6,e7,g7,i7,G7,I7,f8,h8,u19,w19,t20,v20,x20,u21,w21 x 0"
)


def generate(own: int, enemy: int) -> tuple[list[Turn], int]:
    """Return (legal turns, stones each captures) for the mover's ``own`` and ``enemy`` masks.

    The list can be huge in chain positions (see :class:`.chains.Chains`); the State's
    ``iter_legal_moves`` and ``legal_count`` avoid building it.
    """
    if not own or not enemy:
        return [], 0
    plain, capturers, crushes, mx = _scan(own, enemy)
    if capturers:
        chains = Chains(own, enemy, capturers, crushes, mx)
        return list(chains.turns()), chains.n
    if crushes:
        return crushes, 1
    return _plain_turns(plain), 0


def count_turns(own: int, enemy: int) -> int:
    """Return the number of legal turns without building them."""
    if not own or not enemy:
        return 0
    plain, capturers, crushes, mx = _scan(own, enemy)
    if capturers:
        return Chains(own, enemy, capturers, crushes, mx).count()
    return len(crushes) if crushes else sum(k for _, _, k in plain)


def _plain_turns(plain: list[tuple[int, tuple[int, ...], int]]) -> list[Turn]:
    """Return the plain moves of ``_scan``'s slides (cell, ray, longest distance)."""
    return [_new(Turn, ((s, r), _NO_CAPTURE, PLAIN)) for s, ray, k in plain for r in ray[:k]]


class State(GameState):
    """An immutable Whistling position: both sides' stones, side to move, quiet counter."""

    name = "whistling"
    player_names = ("x", "o")
    __slots__ = ("stones", "side", "quiet", "_ply", "_turns", "_most", "_turn_set", "_chains")

    def __init__(self, x: int, o: int, side: int = X, quiet: int = 0, ply: int = 0) -> None:
        """Build a position from X's and O's stone bitmasks (bit i = cell i in board order)."""
        self.stones = (x, o)
        self.side = side
        self.quiet = quiet
        self._ply = ply
        self._turns: list[Turn] | None = None
        self._most = -1  # N of spec section 8; -1 until the turns are generated
        self._turn_set: frozenset[Turn] | None = None
        self._chains: Chains | None = None

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

    def _generate(self) -> None:
        """Find the legal turns once: the list in quiet and crush positions, the
        maximum-capture search (never its list of turns) when a stone can whistle-capture."""
        own, enemy = self.stones[self.side], self.stones[1 - self.side]
        if not own or not enemy or self.quiet >= DRAW_QUIET:
            self._turns, self._most = [], 0
            return
        plain, capturers, crushes, mx = _scan(own, enemy)
        if capturers:
            self._chains = Chains(own, enemy, capturers, crushes, mx)
            self._most = self._chains.n
        elif crushes:
            self._turns, self._most = crushes, 1
        else:
            self._turns, self._most = _plain_turns(plain), 0

    def chains(self) -> Chains | None:
        """Return the maximum-capture search when some stone can whistle-capture, else None."""
        if self._most < 0:
            self._generate()
        return self._chains

    def legal_moves(self) -> list[Turn]:
        """Return every legal turn; in chain positions the list can be huge (hundreds of
        thousands of turns, docs/whistling.md): prefer ``iter_legal_moves``/``legal_count``."""
        if self._turns is None:
            chains = self.chains()
            if self._turns is None:
                self._turns = list(chains.turns())  # type: ignore[union-attr]
        return self._turns

    def iter_legal_moves(self) -> Iterator[Turn]:
        """Yield the turns of ``legal_moves()`` in the same order, in bounded memory."""
        chains = self.chains()
        if self._turns is None:
            return chains.turns()  # type: ignore[union-attr]
        return iter(self._turns)

    def iter_legal_move_strs(self) -> Iterator[str]:
        """Yield ``legal_move_strs()`` (sorted notation) one by one, in bounded memory."""
        chains = self.chains()
        if self._turns is None:
            return chains.strs()  # type: ignore[union-attr]
        return iter(self.legal_move_strs())

    def legal_count(self) -> int:
        """Return ``len(legal_moves())`` without building the turns."""
        if self._turns is not None:
            return len(self._turns)
        if self._most < 0:
            own, enemy = self.stones[self.side], self.stones[1 - self.side]
            if not own or not enemy or self.quiet >= DRAW_QUIET:
                return 0
            plain, capturers, crushes, mx = _scan(own, enemy)
            if not capturers:  # why not _generate: perft's leaves need no plain-move list
                return len(crushes) if crushes else sum(k for _, _, k in plain)
            self._chains = Chains(own, enemy, capturers, crushes, mx)
            self._most = self._chains.n
        return self._chains.count()  # type: ignore[union-attr]

    def max_capture(self) -> int:
        """Return N of spec section 8: the stones every legal turn captures (0: plain moves)."""
        if self._most < 0:
            self._generate()
        return self._most

    def is_legal(self, move: object) -> bool:
        """Return True when ``move`` is one of this position's legal turns."""
        chains = self.chains()
        if chains is not None:  # follow the move through the search (no list, no set)
            return chains.contains(move)
        if self._turn_set is None:
            self._turn_set = frozenset(self.legal_moves())
        try:
            return move in self._turn_set
        except TypeError:  # unhashable input is no legal turn
            return False

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
        if depth <= 0:
            return 1
        if depth == 1:
            return self.legal_count()
        return sum(self.play(m).perft(depth - 1) for m in self.iter_legal_moves())

    # -- outcome ----------------------------------------------------------------------
    def winner(self) -> int | None:
        if not self.stones[self.side]:
            return 1 - self.side  # elimination
        if self.quiet >= DRAW_QUIET:
            return None
        if not self._has_turns():
            return 1 - self.side  # no legal turn (cannot happen; spec section 9.3)
        return None

    def is_terminal(self) -> bool:
        return not self._has_turns()

    def draw_reason(self) -> str | None:
        if self.is_terminal() and self.winner() is None and self.quiet >= DRAW_QUIET:
            return f"{DRAW_QUIET} turns without capture"
        return None

    def _has_turns(self) -> bool:
        """Return True when the side to move has a legal turn (a chain search always has)."""
        if self._turns is not None:
            return bool(self._turns)
        return self.chains() is not None or bool(self._turns)

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
