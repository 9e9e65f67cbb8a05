"""Small games with known answers (tic-tac-toe, Nim) for testing agents, arena and ratings."""

from __future__ import annotations

from collections.abc import Hashable

from boardzoo.envs.core.game import GameState, MoveError, PositionError

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToe(GameState):
    """Tic-tac-toe; cells a1..c3 (index = 3 * (rank - 1) + file); x moves first."""

    name = "tictactoe"
    player_names = ("x", "o")

    def __init__(self, cells: str = "." * 9) -> None:
        self.cells = cells
        self._winner = next((("xo".index(cells[a])) for a, b, c in LINES
                             if cells[a] != "." and cells[a] == cells[b] == cells[c]), None)

    @classmethod
    def start(cls) -> TicTacToe:
        return cls()

    @classmethod
    def from_text(cls, text: str) -> TicTacToe:
        balance = text.count("x") - text.count("o")
        if len(text) != 9 or set(text) - set("xo.") or balance not in (0, 1):
            raise PositionError(f"bad tic-tac-toe position {text!r}")
        return cls(text)

    def to_text(self) -> str:
        return self.cells

    @property
    def to_move(self) -> int:
        return 0 if self.cells.count("x") == self.cells.count("o") else 1

    @property
    def ply(self) -> int:
        return 9 - self.cells.count(".")

    def legal_moves(self) -> list[int]:
        if self._winner is not None:
            return []
        return [i for i, c in enumerate(self.cells) if c == "."]

    def apply(self, move: int) -> TicTacToe:
        mark = "xo"[self.to_move]
        return type(self)(self.cells[:move] + mark + self.cells[move + 1:])

    def winner(self) -> int | None:
        return self._winner

    def is_terminal(self) -> bool:
        return self._winner is not None or "." not in self.cells

    def move_to_str(self, move: int) -> str:
        return "abc"[move % 3] + str(move // 3 + 1)

    def parse_move(self, text: str) -> int:
        t = text.strip().lower()
        if len(t) != 2 or t[0] not in "abc" or t[1] not in "123":
            raise MoveError(f"malformed move {text!r}: expected a cell a1..c3")
        move = "abc".index(t[0]) + 3 * (int(t[1]) - 1)
        if move not in self.legal_moves():
            raise MoveError(f"illegal move {text!r}: the cell is taken or the game is over")
        return move

    def key(self) -> Hashable:
        return self.cells

    def render_text(self) -> str:
        return "\n".join(" ".join(self.cells[3 * r: 3 * r + 3]) for r in (2, 1, 0))


class Nim(GameState):
    """One-pile Nim: take 1-3 stones, taking the last stone wins (lost iff pile % 4 == 0)."""

    name = "nim"
    player_names = ("first", "second")

    def __init__(self, pile: int = 21, side: int = 0, ply: int = 0) -> None:
        self.pile, self.side, self._ply = pile, side, ply

    @classmethod
    def start(cls) -> Nim:
        return cls()

    @classmethod
    def from_text(cls, text: str) -> Nim:
        pile, side = text.split()
        return cls(int(pile), int(side))

    def to_text(self) -> str:
        return f"{self.pile} {self.side}"

    @property
    def to_move(self) -> int:
        return self.side

    @property
    def ply(self) -> int:
        return self._ply

    def legal_moves(self) -> list[int]:
        return [n for n in (1, 2, 3) if n <= self.pile]

    def apply(self, move: int) -> Nim:
        return Nim(self.pile - move, 1 - self.side, self._ply + 1)

    def winner(self) -> int | None:
        return 1 - self.side if self.pile == 0 else None

    def is_terminal(self) -> bool:
        return self.pile == 0

    def move_to_str(self, move: int) -> str:
        return str(move)

    def parse_move(self, text: str) -> int:
        if text.strip() not in ("1", "2", "3") or int(text) > self.pile:
            raise MoveError(f"illegal move {text!r}")
        return int(text)

    def key(self) -> Hashable:
        return (self.pile, self.side)
