"""One game record: what :func:`~.play.play_from` returns, the one games.jsonl line that the
arena, ``boardzoo play`` and training's evaluation write, and the one reader of those files.

A games.jsonl file holds one JSON object per finished game (flushed and fsynced as it is
appended, so a kill loses at most the game in progress; a torn last line is dropped when read).
Every line has at least ``id``, ``game``, ``players`` (specs, first mover first), ``scores``,
``result`` (``1-0``, ``0-1`` or ``1/2-1/2``), ``termination`` (``rules``, ``max_plies`` or a
forfeit's reason), ``moves`` (canonical notation), ``seed``, ``plies``, ``seconds`` and each
side's thinking time; docs/arena.md lists the rest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardzoo.envs.core.files import append_line, write_atomic
from boardzoo.envs.core.game import BoardzooError

#: ``winner`` (None: a draw or an unfinished game) as the result the records write.
RESULTS = {None: "1/2-1/2", 0: "1-0", 1: "0-1"}


class ArenaError(BoardzooError):
    """A tournament that cannot run as asked (bad agents list, clashing output folder), or a
    games file that holds something other than game records."""


@dataclass
class GameRecord:
    """One game played by :func:`~.play.play_from`."""

    #: The agents' specs, first mover first.
    players: list[str]
    #: The game's names of the two sides (e.g. ``black``, ``white``).
    player_names: list[str]
    #: 1, 0.5 or 0 for each player (a game stopped by a move limit scores as a draw).
    scores: list[float]
    #: 0 or 1, None for a draw or an unfinished game.
    winner: int | None
    #: False when the move limit stopped the game.
    terminated: bool
    #: The outcome in words (``black wins: ...``, ``unfinished (max moves)``), for people.
    description: str
    #: Canonical moves, opening moves included.
    moves: list[str]
    seconds: float
    #: Each agent's thinking time, moves chosen and longest move.
    think_seconds: list[float]
    think_moves: list[int]
    max_move_seconds: list[float]
    #: Seconds of each ply (0 for an opening move).
    move_seconds: list[float]
    #: The last position as position text.
    final_position: str
    #: ``{"player", "reason", "detail"}`` when an agent forfeited (it loses), else None.
    forfeit: dict[str, Any] | None = None
    #: What the agents said of each ply (None where nothing), when any agent reported.
    move_info: list[dict[str, Any] | None] | None = field(default=None)

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def result(self) -> str:
        """``1-0``, ``0-1`` or ``1/2-1/2``."""
        return RESULTS[self.winner]

    @property
    def termination(self) -> str:
        """Why the game ended: ``rules``, ``max_plies`` or the forfeit's reason."""
        if self.forfeit is not None:
            return self.forfeit["reason"]
        return "rules" if self.terminated else "max_plies"

    def line(self, game_id: str, game: str, players: list[str], seed: int,
             agent_stats: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """Return the games.jsonl record of this game: ``players`` as the file names them
        (specs in a tournament, roles in a training run's evaluation), each agent's
        ``stats()``, then what the agents said of their moves, a forfeit, and ``extra``
        (names, opening, logs, ...)."""
        info = {"move_info": self.move_info} if self.move_info is not None else {}
        lost = {"forfeit": self.forfeit} if self.forfeit is not None else {}
        return {
            "id": game_id,
            "game": game,
            "players": players,
            "scores": self.scores,
            "result": self.result,
            "termination": self.termination,
            "moves": self.moves,
            "seed": seed,
            "plies": self.plies,
            "seconds": self.seconds,
            "think_seconds": self.think_seconds,
            "think_moves": self.think_moves,
            "max_move_seconds": self.max_move_seconds,
            "move_seconds": self.move_seconds,
            "agent_stats": agent_stats,
            **info,
            **lost,
            **extra,
        }


# -- games.jsonl ----------------------------------------------------------------------------
#: Fields every game record has, with the check each value must pass.
RECORD_FIELDS = {
    "id": lambda v: isinstance(v, str),
    "players": lambda v: isinstance(v, list) and len(v) == 2
    and all(isinstance(p, str) for p in v),
    "scores": lambda v: isinstance(v, list) and len(v) == 2
    and all(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s <= 1 for s in v),
    "moves": lambda v: isinstance(v, list),
    "plies": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
}


def check_record(record: object, where: str) -> dict:
    """Return ``record`` if it is a game record; ArenaError naming ``where`` otherwise."""
    if not isinstance(record, dict):
        raise ArenaError(f"{where} is not a game record (a JSON object)")
    for key, ok in RECORD_FIELDS.items():
        if key not in record or not ok(record[key]):
            raise ArenaError(f"{where} is not a game record (bad or missing {key!r})")
    return record


def read_games(path: Path, repair: bool = False) -> list[dict]:
    """Read games.jsonl; a torn last line (killed writer) is dropped, and cut off if ``repair``;
    a line that is whole but not a game record is an error."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records, offset = [], 0
    for line in data.splitlines(keepends=True):
        try:
            if not line.endswith(b"\n"):
                raise ValueError("unterminated line")
            record = json.loads(line)
        except RecursionError:  # e.g. 100,000 nested brackets: no record nests like that
            raise ArenaError(f"{path}: line {len(records) + 1} nests too deeply to be a game "
                             f"record") from None
        except ValueError:
            if offset + len(line) < len(data):
                raise ArenaError(f"{path}: line {len(records) + 1} is not valid JSON") from None
            if repair:
                with open(path, "r+b") as f:
                    f.truncate(offset)
            break
        records.append(check_record(record, f"{path}: line {len(records) + 1}"))
        offset += len(line)
    return records


def _line(record: dict) -> str:
    """Return ``record`` as one games.jsonl line."""
    return json.dumps(record, separators=(",", ":")) + "\n"


def append_game(path: Path, record: dict) -> None:
    """Append one record as one line and force it to disk (why: a crash must not lose it)."""
    append_line(path, _line(record))


def write_games(path: Path, records: list[dict]) -> None:
    """Replace the file with ``records`` atomically."""
    write_atomic(path, "".join(_line(r) for r in records))
