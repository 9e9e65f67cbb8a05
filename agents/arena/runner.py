"""Playing scheduled games: one in this process (:func:`play_game`, the games.jsonl line of a
:class:`~.schedule.Pairing`), or many in worker processes (:func:`run_games`).

The worker processes are the arena's own (spawned, one torch thread each); only the parent
writes records, so a worker that dies loses at most the game it was playing.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import signal
from collections.abc import Iterable, Iterator
from pathlib import Path

from boardzoo.agents.base import Agent, make_agent
from boardzoo.agents.engine import EngineAgent
from boardzoo.agents.engine.process import engine_run, join_run, kill_all
from boardzoo.agents.movetime import limit_agents
from boardzoo.agents.processes import die_with_parent, start_quiet_resource_tracker
from boardzoo.envs.core.game import GameState
from boardzoo.envs.core.registry import state_class
from boardzoo.envs.core.threads import one_torch_thread

from .play import play_from
from .schedule import Pairing

#: Folder (beside games.jsonl) of the outside engines' stderr logs, one file per engine a game.
ENGINE_LOGS = "engine_logs"
DEFAULT_MAX_PLIES = 1000  # safety net only: every boardzoo game has its own draw rules


GameRef = str | type[GameState]


def game_class(game: GameRef) -> type[GameState]:
    """Return the state class of a game name (via the registry) or the class itself."""
    return state_class(game) if isinstance(game, str) else game


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


def display_name(agent: Agent) -> str:
    """Return what tables call ``agent``: its ``name=``, else the ``id name`` an outside
    engine gave, else its spec."""
    engine_name = agent.name if isinstance(agent, EngineAgent) else ""
    return agent.display_name or engine_name or agent.spec


def play_game_in_worker(game: GameRef, pairing: Pairing, max_plies: int = DEFAULT_MAX_PLIES,
                        opening_moves: int = 0, log_dir: Path | None = None) -> dict:
    """:func:`play_game` in a worker process the arena owns (one torch thread)."""
    one_torch_thread()
    return play_game(game, pairing, max_plies, opening_moves, log_dir)


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
