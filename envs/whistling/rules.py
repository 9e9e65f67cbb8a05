"""Monochromatic Whistling rules engine (spec: shared/rules/whistling.md), on cell bitmasks.

A move is a :class:`Turn`: the start cell and every hop destination, the
stones each hop captures (bitmasks) and the kind (plain move, whistling
capture, crush). ``legal_moves()`` returns whole turns: a chain of hops is one
move, and only turns that capture the maximum number of stones (spec section 8).

Speed notes (why the code looks like this): the closer rule along a direction
``u`` reduces to ``2k < max_E <u, E - S>`` (spec section 4 with D's metric), so
the longest allowed hop per (stone, direction) costs one subtraction once the
six maxima over the enemy stones are known; the nearest blocker on a ray is
one bit trick on ``occupied & RAY_MASKS``; whistle zones are precomputed
bitmasks (:mod:`.hexgrid`). The maximum-capture search memoises the best
number of captures still reachable per (cell, last direction, enemy stones
left), then enumerates only the chains that reach the maximum.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

from ..core.game import GameState, MoveError, PositionError
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
    PROJ,
    RAY_MASKS,
    RAYS,
    SWEEPS,
    ZONES,
    cells_of,
    distance2,
    parse_cell,
)
from .notation import CRUSH, PLAIN, WHISTLE, parse_turn, turn_to_str

X, O = 0, 1
SIDES = "xo"
DRAW_QUIET = 40  # spec section 9: 20 non-capturing turns by each player
START_TEXT = (
    "s1,u1,r2,t2,v2,s3,u3,H14,J14,g15,i15,G15,I15,K15,f16,h16,j16,H16,J16,g17,i17/"
    "G5,I5,f6,h6,F6,H6,J6,e7,g7,i7,G7,I7,f8,h8,u19,w19,t20,v20,x20,u21,w21 x 0"
)
_NO_CAPTURE = (0,)
# Directions a chain hop may not take after a hop in direction d (straight on or back);
# index 6 (= -1) is the first hop of a turn, which may go anywhere.
_BANNED = tuple((d, OPPOSITE[d]) for d in range(6)) + ((-1, -1),)


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


def _extremes(enemy_cells: list[int]) -> list[int]:
    """Return max over the enemy stones of PROJ[d] for each direction d (closer-rule bound)."""
    return [max(map(p.__getitem__, enemy_cells)) for p in PROJ]


#: LINE_POS[d][i]: position of cell i along lines of direction d (steps = difference).
LINE_POS: tuple[tuple[int, ...], ...] = tuple(
    tuple(c >> 1 if d in (0, 3) else r for c, r in CELLS) for d in range(6)
)
#: GEOM[s]: per direction with a non-empty ray from cell s, everything the move
#: generator needs, unpacked in one go (why: attribute and index lookups dominate).
GEOM: tuple[tuple[tuple, ...], ...] = tuple(
    tuple(
        (d, len(RAYS[s][d]), RAY_MASKS[s][d], LINE_POS[d], LINE_POS[d][s], PROJ[d][s],
         SWEEPS[s][d], ZONES[s][d], RAYS[s][d])
        for d in range(6) if RAYS[s][d]
    )
    for s in range(NUM_CELLS)
)
_new = tuple.__new__  # builds a Turn without NamedTuple's Python-level __new__


def capture_hops(cell: int, last: int, occ: int, enemy: int,
                  extremes: dict[int, list[int]]) -> list[tuple[int, int, int]]:
    """Return (direction, destination, captured mask) of every capturing hop from ``cell``.

    ``extremes`` caches the closer-rule maxima per enemy set; they are only computed when
    some free ray passes an enemy stone at all (why: most chain nodes are dead ends).
    """
    out = []
    banned = _BANNED[last]
    mx = None
    for d, n, rmask, lpd, lps, ps, sweeps, zones, ray in GEOM[cell]:
        if d in banned:
            continue
        b = occ & rmask
        if b:
            free = (lpd[(b & -b).bit_length() - 1] - lps - 1 if d < 3
                    else lps - lpd[b.bit_length() - 1] - 1)
        else:
            free = n
        if free < 3 or not sweeps[free] & enemy:
            continue
        if mx is None:
            mx = extremes.get(enemy)
            if mx is None:
                mx = extremes[enemy] = _extremes(cells_of(enemy))
        closer = (mx[d] - ps - 1) >> 1  # the largest k with 2k < <u, E - S>
        k_max = free if free < closer else closer
        if k_max >= 3 and sweeps[k_max] & enemy:
            for k in range(3, k_max + 1):
                c = zones[k] & enemy
                if c:
                    out.append((d, ray[k - 1], c))
    return out


def _scan(own: int, enemy: int) -> tuple[list[tuple[int, int, int]], list[int], list[Turn],
                                         list[int]]:
    """Return (plain slides as (cell, ray, longest k), stones with a capturing hop, crushes,
    closer-rule maxima) for the side with stones ``own`` against ``enemy``."""
    mx = _extremes(cells_of(enemy))
    occ = own | enemy
    plain: list[tuple[int, int, int]] = []
    crushes: list[Turn] = []
    capturers: list[int] = []
    for s in cells_of(own):
        captures = False
        for d, n, rmask, lpd, lps, ps, sweeps, zones, ray in GEOM[s]:
            b = occ & rmask
            if b:
                if d < 3:
                    first = (b & -b).bit_length() - 1
                    free = lpd[first] - lps - 1
                else:
                    first = b.bit_length() - 1
                    free = lps - lpd[first] - 1
                if not free:
                    if enemy & BIT[first]:
                        crushes.append(_new(Turn, ((s, first), (BIT[first],), CRUSH)))
                    continue
            else:
                free = n
            closer = (mx[d] - ps - 1) >> 1
            k_max = free if free < closer else closer
            if k_max <= 0:
                continue
            plain.append((s, ray, k_max))
            if not captures and k_max >= 3 and sweeps[k_max] & enemy:
                captures = any(zones[k] & enemy for k in range(3, k_max + 1))
        if captures:
            capturers.append(s)
    return plain, capturers, crushes, mx


def generate(own: int, enemy: int) -> tuple[list[Turn], int]:
    """Return (legal turns, stones each captures) for the mover's ``own`` and ``enemy`` masks."""
    if not own or not enemy:
        return [], 0
    plain, capturers, crushes, mx = _scan(own, enemy)
    if capturers:
        return _max_captures(own, enemy, capturers, crushes, mx)
    if crushes:
        return crushes, 1
    return [_new(Turn, ((s, r), _NO_CAPTURE, PLAIN)) for s, ray, k in plain for r in ray[:k]], 0


def count_turns(own: int, enemy: int) -> int:
    """Return the number of legal turns without building them (fast in quiet positions)."""
    if not own or not enemy:
        return 0
    plain, capturers, crushes, mx = _scan(own, enemy)
    if capturers:
        return len(_max_captures(own, enemy, capturers, crushes, mx)[0])
    return len(crushes) if crushes else sum(k for _, _, k in plain)


def _max_captures(own: int, enemy: int, capturers: list[int], crushes: list[Turn],
                  mx0: list[int]) -> tuple[list[Turn], int]:
    """Return the whistling captures (and crushes) that take the most stones (spec section 8)."""
    extremes: dict[int, list[int]] = {enemy: mx0}
    best_of: dict[int, int] = {}
    memos: dict[int, dict[tuple[int, int, int], tuple[int, list]]] = {}

    for s in capturers:
        rest = own ^ BIT[s]  # the moving stone's start cell is empty for the whole turn
        memo: dict[tuple[int, int, int], tuple[int, list]] = {}
        memos[s] = memo

        def best(cell: int, last: int, left: int, rest: int = rest,
                 memo: dict = memo) -> int:
            key = (cell, last, left)
            got = memo.get(key)
            if got is not None:
                return got[0]
            hops = capture_hops(cell, last, rest | left, left, extremes) if left else []
            b = 0
            for d, dest, c in hops:
                v = c.bit_count() + best(dest, d, left & ~c)
                if v > b:
                    b = v
            memo[key] = (b, hops)
            return b

        best_of[s] = best(s, -1, enemy)
    n = max(best_of.values())
    turns: list[Turn] = []
    for s in capturers:
        if best_of[s] != n:
            continue
        memo = memos[s]

        def walk(cell: int, last: int, left: int, need: int, path: tuple[int, ...],
                 caps: tuple[int, ...], memo: dict = memo) -> None:
            if need == 0:  # best(...) == 0 here: no capturing hop is left
                turns.append(_new(Turn, (path, caps, WHISTLE)))
                return
            for d, dest, c in memo[cell, last, left][1]:
                k = c.bit_count()
                if k <= need and k + memo[dest, d, left & ~c][0] == need:
                    walk(dest, d, left & ~c, need - k, path + (dest,), caps + (c,))

        walk(s, -1, enemy, n, (s,), ())
    if n == 1:
        turns.extend(crushes)
    return turns, n


class State(GameState):
    """An immutable Whistling position: both sides' stones, side to move, quiet counter."""

    name = "whistling"
    player_names = ("x", "o")
    __slots__ = ("stones", "side", "quiet", "_ply", "_turns", "_most", "_turn_set")

    def __init__(self, x: int, o: int, side: int = X, quiet: int = 0, ply: int = 0) -> None:
        """Build a position from X's and O's stone bitmasks (bit i = cell i in board order)."""
        self.stones = (x, o)
        self.side = side
        self.quiet = quiet
        self._ply = ply
        self._turns: list[Turn] | None = None
        self._most = 0
        self._turn_set: frozenset[Turn] | None = None

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
                                f"<quiet>', got {len(fields)}: {text!r}")
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
            raise PositionError(f"side to move must be 'x' or 'o', got {side!r}")
        if not (quiet.isascii() and quiet.isdigit()):
            raise PositionError(f"quiet counter must be a non-negative integer, got {quiet!r}")
        mover = SIDES.index(side)
        if not (x, o)[1 - mover]:
            raise PositionError(f"{SIDES[1 - mover]} (not to move) has no stones: unreachable, "
                                "the game ended when its last stone was captured")
        return cls(x, o, mover, int(quiet))

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

    def legal_moves(self) -> list[Turn]:
        if self._turns is None:
            own, enemy = self.stones[self.side], self.stones[1 - self.side]
            if not own or self.quiet >= DRAW_QUIET:
                self._turns, self._most = [], 0
            else:
                self._turns, self._most = generate(own, enemy)
        return self._turns

    def legal_count(self) -> int:
        """Return ``len(legal_moves())``, without building the turns when none captures."""
        if self._turns is not None:
            return len(self._turns)
        own, enemy = self.stones[self.side], self.stones[1 - self.side]
        return 0 if not own or self.quiet >= DRAW_QUIET else count_turns(own, enemy)

    def max_capture(self) -> int:
        """Return N of spec section 8: the stones every legal turn captures (0: plain moves)."""
        self.legal_moves()
        return self._most

    def is_legal(self, move: object) -> bool:
        """Return True when ``move`` is one of this position's legal turns."""
        if self._turn_set is None:
            self._turn_set = frozenset(self.legal_moves())
        try:
            return move in self._turn_set
        except TypeError:  # unhashable input is no legal turn
            return False

    def apply(self, move: Turn) -> State:
        if not self.is_legal(move):
            raise MoveError(f"{move!r} is not a legal turn in {self.to_text()!r}")
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
        return sum(self.play(m).perft(depth - 1) for m in self.legal_moves())

    # -- outcome ----------------------------------------------------------------------
    def winner(self) -> int | None:
        if not self.stones[self.side]:
            return 1 - self.side  # elimination
        if self.quiet >= DRAW_QUIET:
            return None
        if not self.legal_moves():
            return 1 - self.side  # no legal turn (cannot happen; spec section 9.3)
        return None

    def is_terminal(self) -> bool:
        return not self.legal_moves()

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
            raise PositionError(f"{side}'s stone list {text!r} has an empty entry")
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
