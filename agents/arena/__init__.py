"""The arena: agents play recorded games against each other, and the records are rated,
reported and replayed.

- :mod:`.play`: the one game loop, :func:`~.play.play_from` (``boardzoo play``, tournaments
  and training's evaluation games all play through it);
- :mod:`.records`: its :class:`~.records.GameRecord`, written as one games.jsonl line, and
  the one reader of games.jsonl files;
- :mod:`.openings`: where each game pair starts (the shipped suites are ``openings/GAME.txt``);
- :mod:`.schedule`: the round robin's games, their ids and seeds;
- :mod:`.runner`: a scheduled game played here or in worker processes (and the names of
  its outside engines' logs);
- :mod:`.tournament`: the tournament folder (resume, lock, settings) and
  :func:`~.tournament.run_tournament`;
- :mod:`.ratings`: Bradley-Terry ratings on the Elo scale;
- :mod:`.pairs`: per-match statistics over games and game pairs, and the SPRT;
- :mod:`.report`: the report (Markdown, JSON, score matrix picture);
- :mod:`.replay`: a recorded game stepped again through the rules;
- :mod:`.viewer`: the self-contained ``report.html`` (``viewer.html`` is its template);
- :mod:`.gif`: a recorded game as an animated GIF;
- :mod:`.commands` and :mod:`.viewer_commands`: the ``tournament``, ``match``, ``rate``,
  ``replay`` and ``report`` subcommands.

The arena uses agents and envs; no agent imports the arena.
"""

from .records import ArenaError, append_game, read_games
from .runner import DEFAULT_MAX_PLIES, ENGINE_LOGS, play_game, run_games
from .schedule import Pairing, game_id, game_seed, schedule
from .tournament import CONFIG_FILE, GAMES_FILE, LOCK_FILE, run_tournament

__all__ = [
    "CONFIG_FILE", "DEFAULT_MAX_PLIES", "ENGINE_LOGS", "GAMES_FILE", "LOCK_FILE", "ArenaError",
    "Pairing", "append_game", "game_id", "game_seed", "play_game", "read_games", "run_games",
    "run_tournament", "schedule",
]
