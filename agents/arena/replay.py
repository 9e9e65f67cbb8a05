"""Replays of recorded games: every position of a games.jsonl game, as pictures or a GIF.

A game record (a games.jsonl line: tournament games, or evaluation games in that
format) holds its moves in canonical notation, random opening moves included, from the
standard start (or from the position text of its optional ``start`` field). Replaying
parses each move with the rules state and applies it; a move that does not parse is an
error naming the game and the ply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardzoo.envs.core.game import BoardzooError, GameState, echo
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.core.spec import GameSpec

from .records import ArenaError, read_games
from .tournament import GAMES_FILE

#: Games files looked for, in order, when a folder is given (eval_games.jsonl: the name kept
#: for a training run's evaluation games, which the trainer does not record yet).
GAMES_FILES = (GAMES_FILE, "eval_games.jsonl")
FRAME_MS = 700  # per position in a GIF; the last one stays 4 times as long
LAST_FRAME_HOLD = 4


def games_path(source: str | Path) -> Path:
    """Return the games.jsonl of ``source`` (the file itself, or the one in a folder)."""
    path = Path(source)
    if path.is_dir():
        for name in GAMES_FILES:
            if (path / name).is_file():
                return path / name
        raise ArenaError(f"no {' or '.join(GAMES_FILES)} in {path}")
    if not path.is_file():
        raise ArenaError(f"no games file at {path}")
    return path


def load_games(source: str | Path) -> list[dict]:
    """Return the game records of a games.jsonl file or folder; an error if there are none."""
    path = games_path(source)
    records = read_games(path)
    if not records:
        raise ArenaError(f"{path} holds no games")
    return records


def result_text(record: dict) -> str:
    """Return a record's result the same way for every games file: ``1-0``, ``0-1`` or
    ``1/2-1/2`` from the first mover's side, read from ``scores``, and how the game ended
    when the rules did not end it: ``1/2-1/2 (max plies)``, ``0-1 (forfeit: timeout)``.

    (Every games file is written as :meth:`~.records.GameRecord.line` writes it, with a
    ``termination``; a training run's eval_games.jsonl written before 2026-12-06 has the
    rules' ``result()`` (``black``, ``draw``) and ``terminated`` instead. Both keep ``scores``.)"""
    first, second = record["scores"]
    code = {(1, 0): "1-0", (0, 1): "0-1", (0.5, 0.5): "1/2-1/2"}.get(
        (first, second), f"{first:g}-{second:g}")
    forfeit = record.get("forfeit")
    if isinstance(forfeit, dict) and forfeit.get("reason"):
        return f"{code} (forfeit: {forfeit['reason']})"
    ending = record.get("termination")
    if ending is None:  # an older run's evaluation game: whether the rules ended it
        ending = "rules" if record.get("terminated", True) else "max_plies"
    return code if ending == "rules" else f"{code} ({str(ending).replace('_', ' ')})"


def pick(records: Sequence[dict], game_id: str | None) -> dict:
    """Return the record with id ``game_id`` (the first record if None)."""
    if game_id is None:
        return records[0]
    for record in records:
        if record["id"] == game_id:
            return record
    ids = ", ".join(repr(r["id"]) for r in records[:5])
    more = f" and {len(records) - 5} more" if len(records) > 5 else ""
    raise ArenaError(f"no game with id {game_id!r}; the ids are {ids}{more}")


@dataclass(frozen=True)
class Replay:
    """A recorded game replayed: its descriptor, record and every position (start first)."""

    spec: GameSpec
    record: dict
    states: list[GameState]

    @property
    def moves(self) -> list[str]:
        """The moves as recorded (``moves[i]`` leads from ``states[i]`` to ``states[i + 1]``)."""
        return self.record["moves"]

    def action_state(self, ply: int) -> Any:
        """Return the env's action state of the position after ``ply`` moves."""
        return self.spec.actions.from_game_state(self.states[ply])

    def last_move(self, ply: int) -> str | None:
        """Return the move that led to the position after ``ply`` moves (None at the start)."""
        return self.moves[ply - 1] if ply else None

    def status(self, ply: int) -> str:
        """Return the env's status line of a position (``to move: ...`` or ``black wins``)."""
        state = self.states[ply]
        if state.is_terminal():
            return state.outcome()
        return f"to move: {state.player_names[state.to_move]}"

    def frame(self, ply: int) -> np.ndarray:
        """Return the ``rgb_array`` picture of the position after ``ply`` moves."""
        if self.spec.render_rgb is None:
            raise BoardzooError(f"{self.spec.name} has no picture to replay")
        return self.spec.render_rgb(self.action_state(ply), self.last_move(ply), self.status(ply))


def replay(record: dict) -> Replay:
    """Replay a game record; BoardzooError if its game is unknown or a move does not parse."""
    spec = get_spec(str(record.get("game")))
    where = f"game {record.get('id')!r}"
    try:
        state = spec.load_state(record.get("start"))
    except BoardzooError as exc:
        raise ArenaError(f"{where}: bad start position: {exc}") from None
    states = [state]
    for ply, text in enumerate(record["moves"], 1):
        if state.is_terminal():
            raise ArenaError(f"{where}: move {ply} {echo(text)} comes after the game ended")
        try:
            state = state.apply(state.parse_move(str(text)))
        except BoardzooError as exc:
            raise ArenaError(f"{where}: move {ply} {echo(text)}: {exc}") from None
        states.append(state)
    return Replay(spec, record, states)
