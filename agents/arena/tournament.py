"""Round-robin tournaments: a folder that holds one tournament, resumable and locked.

:func:`run_tournament` plays the :mod:`~.schedule`'s games that ``games.jsonl`` does not
hold yet (through :mod:`~.runner`'s worker processes or the Ray backend), appending each
finished game (one JSON object per line, flushed and fsynced) from the parent process only.
``tournament.json`` keeps the settings, so ``--resume`` can refuse another tournament, and
``tournament.lock`` keeps a second tournament out of the folder while one runs.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no folder lock
    fcntl = None  # type: ignore[assignment]

from boardzoo.agents.agent_spec import canonical_spec, kind_of
from boardzoo.agents.base import INTERACTIVE_KINDS, check_spec
from boardzoo.agents.distributed import check_backend, ray_games
from boardzoo.envs.core.files import write_atomic
from boardzoo.envs.core.game import GameState, echo

from .openings import book
from .records import ArenaError, append_game, read_games
from .runner import (
    DEFAULT_MAX_PLIES,
    ENGINE_LOGS,
    GameRef,
    game_class,
    play_game_in_worker,
    run_games,
)
from .schedule import Pairing, check_count, schedule

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "tournament.json"
LOCK_FILE = "tournament.lock"


@dataclass
class TournamentConfig:
    """What defines a tournament's games; stored as tournament.json next to games.jsonl."""

    game: str
    agents: list[str]
    games_per_pair: int
    seed: int
    max_plies: int
    movetime: float | None = None
    openings: str = "none"


#: What a tournament.json written before a field existed meant by its absence.
_OLD_DEFAULTS = {"openings": "none"}


def _check_resume(out: Path, config: TournamentConfig, done: list[dict]) -> None:
    """Raise ArenaError if the tournament in ``out`` is not ``config`` (another game, agents
    or their order, seed, games per pair, ply limit or openings: its ids, seeds and games
    would differ), its tournament.json is damaged, or its games.jsonl holds a game twice or
    a game this schedule does not have."""
    path = out / CONFIG_FILE
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:  # RecursionError: brackets nested deep
            raise ArenaError(f"{path} is damaged ({type(exc).__name__}); it says which "
                             f"tournament {out} holds, so --resume cannot go on") from None
        if not isinstance(old, dict):
            raise ArenaError(f"{path} is damaged (not a JSON object)")
        for field, value in asdict(config).items():
            was = old.get(field, _OLD_DEFAULTS.get(field))
            if was != value:
                raise ArenaError(f"--resume with {field}={echo(value)}, but {out} was started "
                                 f"with {field}={echo(was)}")
    seen: dict[str, int] = {}
    for n, record in enumerate(done, 1):
        if record["id"] in seen:
            raise ArenaError(f"--resume: {out / GAMES_FILE} holds game {record['id'][:100]!r} "
                             f"twice (lines {seen[record['id']]} and {n}); a report would "
                             "count it twice: remove one line and resume again")
        seen[record["id"]] = n
    for p in schedule(config.agents, config.games_per_pair, config.seed):  # ids only
        seen.pop(p.id, None)
    if seen:
        strange = next(iter(seen))
        raise ArenaError(f"--resume: {out / GAMES_FILE} holds {len(seen)} game(s) that are "
                         f"not in this tournament (e.g. {strange[:100]!r})")


def _prepare(out: Path, config: TournamentConfig, resume: bool) -> list[dict]:
    """Check the output folder against ``config``; return the games already played."""
    out.mkdir(parents=True, exist_ok=True)
    games_path = out / GAMES_FILE
    done = read_games(games_path, repair=resume)
    if done and not resume:
        raise ArenaError(f"{games_path} already holds {len(done)} game(s); "
                         "pass --resume to continue it or choose another --out")
    if resume:
        _check_resume(out, config, done)
    write_atomic(out / CONFIG_FILE, json.dumps(asdict(config), indent=2) + "\n")
    return done


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``out``/tournament.lock (an exclusive flock, released when the process ends) for
    the block, so that a second tournament on the same folder stops at once instead of
    writing every game again; re-entrant within one process. No-op where there is no
    ``fcntl`` (Windows)."""
    key = str(out.resolve())
    if fcntl is None or key in _HELD:
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    f = open(out / LOCK_FILE, "a")  # noqa: SIM115 - held until the block ends
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise ArenaError(f"{out} is in use by another tournament (it holds {LOCK_FILE}); "
                         "wait for it to finish, or choose another --out") from None
    _HELD.add(key)
    try:
        yield
    finally:
        _HELD.discard(key)
        f.close()


_HELD: set[str] = set()  # folders this process holds the lock of


def validate(game: GameRef, agents: Sequence[str], games_per_pair: int) -> type[GameState]:
    """Raise a BoardzooError for an unknown game, a bad agent spec or a bad count."""
    cls = game_class(game)
    if len(agents) < 2:
        raise ArenaError("a tournament needs at least two agents")
    dupes = sorted({a for a in agents if list(agents).count(a) > 1})
    if dupes:
        raise ArenaError(f"agent(s) listed twice: {', '.join(dupes)}")
    if any(kind_of(a) in INTERACTIVE_KINDS for a in agents):
        raise ArenaError("human players (human, gui) cannot take part in a tournament; "
                         "use 'boardzoo play'")
    check_count(agents, games_per_pair)
    for spec in agents:
        check_spec(spec, cls.name)
    return cls


#: Called with each finished game's record and every record so far; True stops the
#: tournament (an SPRT that reached a bound).
StopRule = Callable[[dict, dict[str, dict]], bool]


def run_tournament(game: GameRef, agents: Sequence[str], games_per_pair: int, out: str | Path,
                   seed: int = 0, workers: int = 1, resume: bool = False,
                   max_plies: int = DEFAULT_MAX_PLIES, progress: bool = True,
                   stop_after: int | None = None, backend: str = "local",
                   address: str | None = None, movetime: float | None = None,
                   openings: str = "none", stop: StopRule | None = None) -> list[dict]:
    """Play the missing games of a round robin into ``out``/games.jsonl; return its games.

    ``stop_after`` stops after that many newly played games (a planned interruption), ``stop``
    when it returns True. The returned records are those of this schedule, in schedule
    order. ``backend="ray"`` plays the games as Ray tasks
    (:mod:`boardzoo.agents.distributed`; ``address`` None starts a local instance with
    ``workers`` CPUs); the records are the same as with the local backend. ``movetime``
    limits every agent's thinking per move (seconds; None: no limit). ``openings`` is an
    :mod:`.openings` spec (``suite``, ``random:N``, a file, ``none``); when it must repeat
    openings, a warning line says so on stderr.
    """
    agents = [canonical_spec(a) for a in agents]  # ALPHABETA:1 and alphabeta:1 are one agent
    cls = validate(game, agents, games_per_pair)
    check_backend(backend, address)
    out = Path(out)
    lines = book(openings, cls.name, seed)
    config = TournamentConfig(cls.name, list(agents), games_per_pair, seed, max_plies, movetime,
                              lines.spec)
    with locked(out):  # held until the games are written: one tournament per folder
        done = _prepare(out, config, resume)
        finished = {r["id"]: r for r in done}
        total = games_per_pair * len(agents) * (len(agents) - 1) // 2
        if resume:
            print(f"boardzoo: --resume: {len(finished)} of {total} games were played; "
                  f"playing the {total - len(finished)} missing", file=sys.stderr)
        todo: Iterable[Pairing] = (
            dataclasses.replace(p, movetime=movetime)
            for p in schedule(agents, games_per_pair, seed, lines) if p.id not in finished)
        if stop_after is not None:
            todo = itertools.islice(todo, stop_after)
        logs = out.resolve() / ENGINE_LOGS
        games = (ray_games(game, list(todo), max_plies, address, workers,
                           play=functools.partial(play_game_in_worker, log_dir=logs))
                 if backend == "ray"
                 else run_games(game, todo, workers, max_plies, log_dir=logs))
        bar = _progress(total, len(finished), cls.name, progress)
        try:
            for record in games:
                append_game(out / GAMES_FILE, record)
                finished[record["id"]] = record
                bar.update(1)
                bar.set_postfix_str(f"{record['players'][0]} {record['result']} "
                                    f"{record['players'][1]}", refresh=False)
                if stop is not None and stop(record, finished):
                    break
        finally:
            close = getattr(games, "close", None)
            if close is not None:  # a stop rule left games unplayed: end the pool's workers
                close()
            bar.close()
        pairs = [r["pair"] for r in finished.values() if isinstance(r.get("pair"), int)]
        warning = lines.note(max(pairs) + 1) if pairs else None
        if warning:
            print(f"boardzoo: warning: {warning}", file=sys.stderr)
        return [finished[p.id] for p in schedule(agents, games_per_pair, seed, lines)
                if p.id in finished]


class _NoBar:
    """Stands in for tqdm when it is disabled or not installed."""

    def update(self, n: int = 1) -> None:
        return None

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        return None

    def close(self) -> None:
        return None


def _progress(total: int, initial: int, name: str, enabled: bool):
    """Return a tqdm progress bar on stderr (a no-op one when disabled or unavailable)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    if not enabled:
        return _NoBar()
    return tqdm(total=total, initial=initial, desc=f"{name} tournament", unit="game",
                dynamic_ncols=True)
