"""Geometry of the 331-cell Whistling board (spec section 1), as tables built once at import.

Cells are numbered 0..330 in *board order* (row 1..21, then column), so sorting
cell numbers sorts cells in board order, and a set of cells is a Python ``int``
bitmask (bit ``i`` = cell ``i``). Directions 0..5 are E, SE, SW, W, NW, NE
(clockwise as drawn, rows growing downwards); ``OPPOSITE[d] = (d + 3) % 6``.

Hot-path tables (all indexed ``[cell][direction]``): ``RAYS`` (cells from the
cell to the edge), ``RAY_MASKS``, ``ZONES[cell][d][k]`` (whistle zone of the
hop of ``k`` cells, spec section 5) and ``SWEEPS[cell][d][k]`` (every cell next
to the first ``k - 1`` ray cells: contains the zone of each hop of at most
``k`` cells, so one AND rules out a whole direction).
"""

from __future__ import annotations

from ..core.bits import indices_of, mask_of  # noqa: F401 - re-exported
from ..core.game import BoardzooError, echo

COLUMNS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO"
NUM_ROWS, NUM_COLUMNS = 21, 41
MAX_DISTANCE = 20  # the longest line (a11..O11, k1..E21, E1..k21) has 21 cells
#: (column step, row step) of directions E, SE, SW, W, NW, NE.
DIRECTIONS: tuple[tuple[int, int], ...] = ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1))
DIRECTION_NAMES = ("E", "SE", "SW", "W", "NW", "NE")
OPPOSITE = tuple((d + 3) % 6 for d in range(6))
#: Whether cell numbers grow along a direction (E, SE, SW), so the nearest
#: blocker on a ray is its lowest set bit (else its highest).
INCREASING = tuple(d < 3 for d in range(6))


def on_board(c: int, r: int) -> bool:
    """Return True when column ``c`` and row ``r`` name a cell (spec section 1)."""
    return 1 <= r <= NUM_ROWS and (c + r) % 2 == 1 and abs(r - 11) <= c <= 40 - abs(r - 11)


#: CELLS[i] = (column, row) of cell i, in board order.
CELLS: tuple[tuple[int, int], ...] = tuple(
    (c, r) for r in range(1, NUM_ROWS + 1) for c in range(NUM_COLUMNS) if on_board(c, r)
)
NUM_CELLS = len(CELLS)
COL = tuple(c for c, _ in CELLS)
ROW = tuple(r for _, r in CELLS)
CELL_NAMES: tuple[str, ...] = tuple(f"{COLUMNS[c]}{r}" for c, r in CELLS)
CELL_INDEX: dict[str, int] = {name: i for i, name in enumerate(CELL_NAMES)}
COORD_INDEX: dict[tuple[int, int], int] = {cr: i for i, cr in enumerate(CELLS)}
BIT: tuple[int, ...] = tuple(1 << i for i in range(NUM_CELLS))
ALL_CELLS = (1 << NUM_CELLS) - 1


def _ray(cell: int, d: int) -> tuple[int, ...]:
    (c, r), (dc, dr) = CELLS[cell], DIRECTIONS[d]
    out = []
    c, r = c + dc, r + dr
    while (c, r) in COORD_INDEX:
        out.append(COORD_INDEX[c, r])
        c, r = c + dc, r + dr
    return tuple(out)


#: Cell numbers of a bitmask, in board order (the shared bitboard helper, by its cell name).
cells_of = indices_of


RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_ray(i, d) for d in range(6)) for i in range(NUM_CELLS)
)
RAY_MASKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(mask_of(ray) for ray in rays) for rays in RAYS
)
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(RAYS[i][d][0] for d in range(6) if RAYS[i][d]) for i in range(NUM_CELLS)
)
NEIGHBOUR_MASKS: tuple[int, ...] = tuple(mask_of(n) for n in NEIGHBOURS)
#: PROJ[d][i]: the metric dot product of direction d with cell i's centre,
#: <u, v> = u_c * v_c + 3 * u_r * v_r (spec section 1's D is <v, v>).
PROJ: tuple[tuple[int, ...], ...] = tuple(
    tuple(dc * c + 3 * dr * r for c, r in CELLS) for dc, dr in DIRECTIONS
)


def _zones(cell: int, d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return (ZONES, SWEEPS) rows for every hop length 0..len(ray) from ``cell`` along ``d``."""
    ray = RAYS[cell][d]
    zones, sweeps = [0], [0]
    near_start = NEIGHBOUR_MASKS[cell]
    path = BIT[cell]
    swept = 0  # cells next to the interior P1..P(k-1)
    for k in range(1, len(ray) + 1):
        finish = ray[k - 1]
        if k >= 2:
            swept |= NEIGHBOUR_MASKS[ray[k - 2]]
        path |= BIT[finish]
        zones.append(swept & ~near_start & ~NEIGHBOUR_MASKS[finish] & ~path)
        sweeps.append(swept)
    return tuple(zones), tuple(sweeps)


_TABLES = [[_zones(i, d) for d in range(6)] for i in range(NUM_CELLS)]
ZONES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(t[0] for t in row) for row in _TABLES
)
SWEEPS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(t[1] for t in row) for row in _TABLES
)
del _TABLES

#: HOPS[a * NUM_CELLS + b] = (direction, distance) for every two cells on one line.
HOPS: dict[int, tuple[int, int]] = {
    a * NUM_CELLS + b: (d, k)
    for a in range(NUM_CELLS) for d in range(6) for k, b in enumerate(RAYS[a][d], 1)
}


def parse_cell(text: str, error: type[BoardzooError] = BoardzooError) -> int:
    """Return the cell number of a cell name; raise ``error`` naming the problem otherwise."""
    cell = CELL_INDEX.get(text)
    if cell is None:
        if 2 <= len(text) <= 4 and text[0] in COLUMNS and text[1:].isdigit() and text[1:].isascii():
            raise error(f"{echo(text)} is not a cell of the board (column {text[0]!r} "
                        f"has no row {text[1:]}; names are case-sensitive)")
        raise error(f"{echo(text)} is not a cell name (a column letter a-z or A-O, "
                    f"then a row 1-21)")
    return cell


def distance2(a: int, b: int) -> int:
    """Return the squared distance D of spec section 1 between two cells."""
    return (COL[a] - COL[b]) ** 2 + 3 * (ROW[a] - ROW[b]) ** 2
