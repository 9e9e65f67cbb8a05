"""Round-robin tournaments: a deterministic schedule, parallel games, a resumable games.jsonl.

Every pair of agents plays ``games_per_pair`` games in game pairs: pair ``k`` (games ``2k``
and ``2k + 1``) starts both games from opening ``k`` of the tournament's
:class:`~.openings.OpeningBook`, the first-listed agent moving first in the even game and
second in the odd one. Each game has a stable id (:func:`game_id`: ``"A|B|g"``, the specs
escaped so that no two games share one) and a seed derived from the tournament seed and
that id alone, so the set of results does not depend on the number of workers or on
interruptions. The schedule is generated lazily. Finished games are appended to
``games.jsonl`` (one JSON object per line, flushed and fsynced) by the parent process only.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import multiprocessing
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote

try:
    import fcntl
except ImportError:  # Windows: no folder lock
    fcntl = None  # type: ignore[assignment]

from boardzoo.agents.engine import EngineAgent
from boardzoo.agents.engine.process import engine_run, join_run, kill_all
from boardzoo.envs.core.files import write_atomic
from boardzoo.envs.core.game import GameState, echo
from boardzoo.envs.core.registry import state_class
from boardzoo.envs.core.threads import one_torch_thread

from .agent_spec import canonical_spec, kind_of
from .base import INTERACTIVE_KINDS, Agent, check_spec, make_agent
from .distributed import check_backend, ray_games
from .movetime import limit_agents
from .openings import NO_OPENING, Opening, OpeningBook, book
from .play import play_from
from .processes import die_with_parent, start_quiet_resource_tracker
from .records import ArenaError, append_game, read_games

GAMES_FILE = "games.jsonl"
#: Folder (beside games.jsonl) of the outside engines' stderr logs, one file per engine a game.
ENGINE_LOGS = "engine_logs"
CONFIG_FILE = "tournament.json"
LOCK_FILE = "tournament.lock"
DEFAULT_MAX_PLIES = 1000  # safety net only: every boardzoo game has its own draw rules
#: Most games one tournament may schedule (a typo such as 10**9 games per pair is refused
#: before anything is written, not after the folder filled up).
MAX_GAMES = 1_000_000


GameRef = str | type[GameState]


def game_class(game: GameRef) -> type[GameState]:
    """Return the state class of a game name (via the registry) or the class itself."""
    return state_class(game) if isinstance(game, str) else game


@dataclass(frozen=True)
class Pairing:
    """One scheduled game: its id, the agents in move order and its seed (and the seed of its
    random opening moves, when it has some: by default ``seed``; the agents' per-move time
    limit in seconds, when there is one; the index of its game pair and the opening both
    games of that pair start from)."""

    id: str
    first: str
    second: str
    seed: int
    opening_seed: int | None = None
    movetime: float | None = None
    pair: int | None = None
    opening: Opening = NO_OPENING


def game_seed(seed: int, game_id: str) -> int:
    """Return the seed of one game from the tournament seed and the game id (stable hash)."""
    digest = hashlib.sha256(f"{seed}|{game_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def game_id(a: str, b: str, g: int) -> str:
    """Return the id of game ``g`` between agents ``a`` and ``b``: ``"a|b|g"``, with ``%`` and
    ``|`` inside a spec written ``%25`` and ``%7C`` (percent-encoding is one-to-one, so two
    games never share an id or a seed whatever their specs hold; specs without those
    characters keep the readable ids of older tournaments)."""
    return f"{quote(a, safe=_KEEP)}|{quote(b, safe=_KEEP)}|{g}"


#: Every printable ASCII character but ``%`` and ``|`` stays as it is in an id.
_KEEP = "".join(chr(c) for c in range(32, 127) if chr(c) not in "%|")


def check_count(agents: Sequence[str], games_per_pair: int) -> None:
    """Raise ArenaError for a count below 1, or a schedule of more than MAX_GAMES games."""
    if games_per_pair < 1:
        raise ArenaError(f"--games-per-pair must be at least 1, got {games_per_pair}")
    pairs = len(agents) * (len(agents) - 1) // 2
    if games_per_pair * pairs > MAX_GAMES:
        raise ArenaError(f"--games-per-pair {games_per_pair} with {len(agents)} agents is "
                         f"{games_per_pair * pairs:,} games; a tournament plays at most "
                         f"{MAX_GAMES:,}")


def schedule(agents: Sequence[str], games_per_pair: int, seed: int = 0,
             openings: OpeningBook | None = None) -> Iterator[Pairing]:
    """Yield every game of the round robin, round by round so partial runs stay balanced;
    games ``2k`` and ``2k + 1`` of each pair of agents share opening ``k`` (none without
    ``openings``), colours swapped."""
    check_count(agents, games_per_pair)
    pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:]]
    for g in range(games_per_pair):
        opening = NO_OPENING if openings is None else openings[g // 2]
        for a, b in pairs:
            gid = game_id(a, b, g)
            first, second = (a, b) if g % 2 == 0 else (b, a)
            yield Pairing(gid, first, second, game_seed(seed, gid), pair=g // 2,
                          opening=opening)


def play_game(game: GameRef, pairing: Pairing, max_plies: int = DEFAULT_MAX_PLIES,
              opening_moves: int = 0, log_dir: Path | None = None) -> dict:
    """Play one game and return its record (the games.jsonl line as a dict).

    The game starts from the pairing's opening (its moves are in the record's ``moves``, a
    start position in ``start``); then the first ``opening_moves`` moves are uniformly
    random, drawn from the pairing's ``opening_seed`` (two games with the same one open
    alike). Outside engines write their stderr to logs in ``log_dir`` (None: to this
    process's stderr)."""
    cls = game_class(game)
    players = [make_agent(pairing.first, cls.name, pairing.seed),
               make_agent(pairing.second, cls.name, pairing.seed + 1)]
    logs = ([attach_log(p, log_dir, pairing.id, i) for i, p in enumerate(players)]
            if log_dir is not None else [None, None])
    limit_agents(players, pairing.movetime)
    opening_seed = pairing.seed if pairing.opening_seed is None else pairing.opening_seed
    opening = pairing.opening
    start = cls.start() if opening.position is None else cls.from_text(opening.position)
    record = play_from(start, players, max_moves=max_plies, opening_moves=opening_moves,
                       opening_seed=opening_seed, opening=opening.moves)
    extra: dict = {}
    if any(logs):
        extra["logs"] = [f"{ENGINE_LOGS}/{name}" if name else None for name in logs]
    if opening.position is not None:
        extra["start"] = opening.position
    names = [display_name(p) for p in players]
    if names != [p.spec for p in players]:
        extra["names"] = names
    if pairing.pair is not None:
        extra["pair"] = pairing.pair
        extra["opening"] = opening.label
    if pairing.movetime is not None:
        extra["movetime"] = pairing.movetime
    return record.line(pairing.id, cls.name, [pairing.first, pairing.second], pairing.seed,
                       [p.stats() for p in players], **extra)


def engine_log_name(game_id: str, seat: int) -> str:
    """Return the stderr log file name of seat ``seat`` (0 or 1) in game ``game_id``."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", game_id)[:60].strip("_")
    digest = hashlib.sha256(game_id.encode()).hexdigest()[:8]
    return f"{safe}-{digest}.{seat}.stderr.log"


def attach_log(agent: Agent, folder: Path, game_id: str, seat: int) -> str | None:
    """Send an outside engine's stderr to a log in ``folder``; return the file's name (None
    for another agent)."""
    if not isinstance(agent, EngineAgent):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    name = engine_log_name(game_id, seat)
    agent.stderr_path = folder / name
    return name


def display_name(agent: Agent) -> str:
    """Return what tables call ``agent``: its ``name=``, else the ``id name`` an outside
    engine gave, else its spec."""
    engine_name = getattr(agent, "name", "") if agent.spec.startswith("engine:") else ""
    return agent.display_name or (engine_name if isinstance(engine_name, str) else "") \
        or agent.spec


def play_game_in_worker(game: GameRef, pairing: Pairing, max_plies: int = DEFAULT_MAX_PLIES,
                        opening_moves: int = 0, log_dir: Path | None = None) -> dict:
    """:func:`play_game` in a worker process the arena owns (one torch thread)."""
    one_torch_thread()
    return play_game(game, pairing, max_plies, opening_moves, log_dir)


def _exit_on_sigterm(parent: int, run: str) -> None:
    """In a worker: on SIGTERM (Pool.terminate, after a Ctrl-C) kill the outside engines it
    started and exit at once; mark its engines with the arena's engine run mark ``run``.

    Ctrl-C itself is ignored here: the terminal sends it to the workers too, and a worker
    that died of it mid-task made the pool start a replacement while the arena was shutting
    down; the arena ends its workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_now)
    die_with_parent(parent)  # a SIGKILLed arena: SIGTERM here, not tracebacks on its pipes
    join_run(run)


def _exit_now(signum: int, frame: object) -> None:  # noqa: ARG001 - handler signature
    """Kill this worker's engines and end the process without unwinding its stack.

    Raising SystemExit here instead (so that clean-up code ends the engines) could be lost:
    a signal that arrived while an engine was being started landed in an at-fork hook, which
    printed "Exception ignored" and went on, and Pool.terminate then waited for that worker
    forever (seen in test_ctrl_c_and_resume_leave_no_engine_behind). An engine being started
    is recorded before this runs (SIGTERM waits while it starts); what is left after all is
    found by the tournament's run mark when the pool has ended (:func:`run_games`)."""
    kill_all()
    os._exit(128 + signum)


def _play_task(task: tuple[GameRef, Pairing, int, int, Path | None]) -> dict:
    return play_game_in_worker(*task)


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


def run_games(game: GameRef, tasks: Iterable[Pairing], workers: int,
              max_plies: int, opening_moves: int = 0,
              log_dir: Path | None = None) -> Iterator[dict]:
    """Yield finished game records (in finishing order) from ``workers`` processes; at the
    end, however it comes, nothing an outside engine of these games started is left."""
    with engine_run() as run:
        if workers <= 1:
            for p in tasks:
                yield play_game(game, p, max_plies, opening_moves, log_dir)
            return
        # spawn: the same behaviour on every OS, and no fork of a process that holds threads.
        ctx = multiprocessing.get_context("spawn")
        start_quiet_resource_tracker()
        with ctx.Pool(workers, initializer=_exit_on_sigterm,
                      initargs=(os.getpid(), run)) as pool:
            yield from pool.imap_unordered(
                _play_task, ((game, p, max_plies, opening_moves, log_dir) for p in tasks))
            pool.close()  # every game is in: let the workers exit by themselves
            pool.join()



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
    order. ``backend="ray"`` plays the games as Ray tasks (:mod:`.distributed`; ``address``
    None starts a local instance with ``workers`` CPUs); the records are the same as with
    the local backend. ``movetime`` limits every agent's thinking per move (seconds; None:
    no limit). ``openings`` is an :mod:`.openings` spec (``suite``, ``random:N``, a file,
    ``none``); when it must repeat openings, a warning line says so on stderr.
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
