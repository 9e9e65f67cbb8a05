"""8x8 square-board geometry and FEN-style rank text shared by LOA and Ultima.

Squares are numbered ``index = 8 * rank + file`` with ``a1 = 0``, ``h1 = 7``,
``a8 = 56``, ``h8 = 63``. Directions are numbered 0..7 = N, NE, E, SE, S, SW,
W, NW. All tables are built once at import.
"""

from __future__ import annotations

from .game import PositionError, echo

FILES = "abcdefgh"
#: (file step, rank step) of directions N, NE, E, SE, S, SW, W, NW.
DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1),
)
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
#: Opposite direction of each direction.
OPPOSITE = tuple((d + 4) % 8 for d in range(8))
ORTHOGONAL = (0, 2, 4, 6)
DIAGONAL = (1, 3, 5, 7)

SQUARE_NAMES: tuple[str, ...] = tuple(f"{FILES[i % 8]}{i // 8 + 1}" for i in range(64))
_SQUARE_INDEX = {name: i for i, name in enumerate(SQUARE_NAMES)}


def _ray(square: int, direction: int) -> tuple[int, ...]:
    f, r = square % 8, square // 8
    df, dr = DIRECTIONS[direction]
    out = []
    f, r = f + df, r + dr
    while 0 <= f < 8 and 0 <= r < 8:
        out.append(8 * r + f)
        f, r = f + df, r + dr
    return tuple(out)


#: RAYS[square][direction]: the squares from ``square`` (exclusive) to the edge.
RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_ray(s, d) for d in range(8)) for s in range(64)
)
#: NEIGHBOURS[square]: the up-to-8 adjacent squares.
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(RAYS[s][d][0] for d in range(8) if RAYS[s][d]) for s in range(64)
)


def square_name(index: int) -> str:
    """Return the name (``"e4"``) of a square index."""
    return SQUARE_NAMES[index]


def parse_square(text: str) -> int | None:
    """Return the index of a lowercase square name, or None if it is not one."""
    return _SQUARE_INDEX.get(text)


def parse_placement(text: str, pieces: str) -> list[str | None]:
    """Parse ``ranks 8..1`` separated by ``/`` into 64 cells (None = empty).

    ``pieces`` lists the allowed piece letters; digits 1-8 are runs of empty
    squares (adjacent digits are accepted as long as each rank totals 8).
    Raises PositionError naming the problem.
    """
    ranks = text.split("/")
    if len(ranks) != 8:
        raise PositionError(f"board must have 8 ranks separated by '/', got {len(ranks)}")
    cells: list[str | None] = [None] * 64
    for i, rank_text in enumerate(ranks):
        rank = 7 - i
        file = 0
        for ch in rank_text:
            if ch in "12345678":
                file += int(ch)
            elif ch in pieces:
                if file < 8:
                    cells[8 * rank + file] = ch
                file += 1
            else:
                raise PositionError(f"unexpected character {ch!r} in rank {rank + 1}")
            if file > 8:
                break
        if file != 8:
            raise PositionError(f"rank {rank + 1} ({echo(rank_text)}) does not describe 8 squares")
    return cells


def placement_text(cells: list[str | None]) -> str:
    """Return the canonical ``ranks 8..1`` text of 64 cells (None = empty)."""
    ranks = []
    for rank in range(7, -1, -1):
        out, empty = [], 0
        for file in range(8):
            piece = cells[8 * rank + file]
            if piece is None:
                empty += 1
                continue
            if empty:
                out.append(str(empty))
                empty = 0
            out.append(piece)
        if empty:
            out.append(str(empty))
        ranks.append("".join(out))
    return "/".join(ranks)


def diagram(cells: list[str | None], empty: str = ".") -> str:
    """Return a text diagram of 64 cells with rank numbers and file letters."""
    rows = []
    for rank in range(7, -1, -1):
        row = " ".join(cells[8 * rank + f] or empty for f in range(8))
        rows.append(f"{rank + 1}  {row}")
    rows.append("   " + " ".join(FILES))
    return "\n".join(rows)
