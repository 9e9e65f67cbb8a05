"""``engine:COMMAND``: an outside program that plays over boardzoo's engine protocol.

The protocol (docs/arena.md, "Outside engines") is a line protocol in the spirit of UCI
and GTP, the same for every game. This module is the arena's side: it starts the program
(:mod:`.engine_io`), checks every move it answers against the rules and turns any
misbehaviour into a :class:`~.base.Forfeit` with one of :data:`REASONS`, which the game
loop scores as a loss. :mod:`.engine_server` is the other side (``boardzoo engine``).

Spec: ``engine:COMMAND[,option=value...]`` (:data:`AGENT_KIND` declares the options).
COMMAND is split into arguments as a POSIX shell would (``shlex``: quote an argument with
spaces or commas); the pieces after the first comma outside quotes are options.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from boardzoo.envs.core.game import BoardzooError, GameState, Move, MoveError

from .agent_spec import AgentKind, AgentSpec, Option, Parser, whole
from .base import Agent, Forfeit, UnknownAgentError
from .engine_io import EngineClosed, EngineProcess, EngineSilent
from .movetime import seconds

#: The protocol version this boardzoo speaks (the handshake's ``boardzoo 1``).
PROTOCOL_VERSION = 1
#: Why an engine can lose a game without the rules deciding it.
ILLEGAL, TIMEOUT, CRASHED, NO_ANSWER = "illegal move", "timeout", "crashed", "no answer"
REASONS = (ILLEGAL, TIMEOUT, CRASHED, NO_ANSWER)
#: The features boardzoo knows (others an engine announces are ignored, not kept).
FEATURES = ("legal", "text")
#: What is kept of one move's ``info`` lines: at most this many keys, each key and value cut
#: to these lengths, so a flooding engine costs at most ~10 KB a move in memory and records.
INFO_KEYS, INFO_KEY_CHARS, INFO_VALUE_CHARS = 32, 40, 200
#: Characters kept of an engine's handshake fields (its name, protocol, games).
FIELD_CHARS = 1000


class EngineError(BoardzooError):
    """An engine that cannot take part as configured (wrong protocol, a game it lacks)."""


def shell_words(text: str) -> list[str]:
    """Return the program and arguments of ``text``, split as a POSIX shell would."""
    argv = shlex.split(text)
    if not argv or not argv[0]:
        raise ValueError(text)
    return argv


COMMAND = Option("command", Parser(shell_words, "a program and its arguments, quoted as in "
                                   "a POSIX shell", "COMMAND"), "a command")
#: ``engine:COMMAND[,movetime=S][,nodes=N][,timeout=S][,grace=S]`` (None: not sent).
AGENT_KIND = AgentKind("engine", (
    Option("movetime", seconds(), "seconds per move, sent with every go; the arena waits "
           "movetime + grace"),
    Option("nodes", whole(1), "a node limit, sent with every go"),
    Option("timeout", seconds(), "seconds to wait for the handshake, for readyok and "
           "(without movetime) for a move", 30.0),
    Option("grace", seconds(allow_zero=True), "seconds allowed beyond movetime", 1.0),
), value=COMMAND, required=True, hint=" (quote a command argument that holds a comma)")


def find_program(argv0: str) -> str:
    """Return ``argv0`` if it names a runnable program; UnknownAgentError otherwise."""
    if os.sep in argv0 or (os.altsep and os.altsep in argv0):
        if not (os.path.isfile(argv0) and os.access(argv0, os.X_OK)):
            raise UnknownAgentError(f"agent engine: {argv0!r} is not an executable file")
    elif shutil.which(argv0) is None:
        raise UnknownAgentError(f"agent engine: command {argv0!r} not found on PATH")
    return argv0


def parse_info(text: str) -> dict[str, float | int | str]:
    """Return an ``info`` line's ``key value`` pairs; numbers become numbers, and ``pv`` or
    ``string`` take the rest of the line."""
    words, info, i = text.split(), {}, 0
    while i + 1 < len(words):
        key = words[i]
        if key in ("pv", "string"):
            info[key] = " ".join(words[i + 1:])
            break
        info[key] = _info_value(words[i + 1])
        i += 2
    return info


def _info_value(text: str) -> float | int | str:
    """Return ``text`` as an int or a finite float where it is a short number, else as text
    (why: ``1e999`` or 5000 digits would be ``inf`` or a ValueError, and no JSON number)."""
    if len(text) <= 30:
        for cast in (int, float):
            try:
                value = cast(text)
            except ValueError:
                continue
            if math.isfinite(value):
                return value
    return text


def keep_info(kept: dict[str, float | int | str], text: str) -> None:
    """Merge one ``info`` line into ``kept`` within the bounds of :data:`INFO_KEYS`."""
    for key, value in parse_info(text).items():
        if len(key) > INFO_KEY_CHARS or (key not in kept and len(kept) >= INFO_KEYS):
            continue
        kept[key] = value[:INFO_VALUE_CHARS] if isinstance(value, str) else value


def log_name(game_id: str, seat: int) -> str:
    """Return the stderr log file name of seat ``seat`` (0 or 1) in game ``game_id``."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", game_id)[:60].strip("_")
    digest = hashlib.sha256(game_id.encode()).hexdigest()[:8]
    return f"{safe}-{digest}.{seat}.stderr.log"


class EngineAgent(Agent):
    """Plays the moves of an outside program over the engine protocol (one process a game)."""

    def __init__(self, argv: list[str], game: str, seed: int | None = None,
                 movetime: float | None = None, nodes: int | None = None,
                 timeout: float = 30.0, grace: float = 1.0) -> None:
        self.argv, self.game, self.seed = argv, game, seed
        self.move_time = movetime
        self.nodes, self.timeout, self.grace = nodes, timeout, grace
        #: Where the program's stderr goes (None: boardzoo's own stderr); the arena sets it.
        self.stderr_path: Path | None = None
        self.name = ""
        self.features: set[str] = set()
        self._proc: EngineProcess | None = None
        self._info: dict[str, float | int | str] = {}
        self._seeded = False
        self._game: tuple[GameState, list[str]] | None = None
        self.counters = {"moves": 0, "seconds": 0.0}

    def set_move_time(self, seconds: float | None) -> None:
        """Limit each move to ``seconds`` (sent with ``go``; None: the engine's own pace)."""
        self.move_time = seconds

    # -- the agent interface -----------------------------------------------------------
    def reset(self) -> None:
        """Start the program if needed, then begin a new game (its seed goes with it)."""
        if self._proc is None:
            self._start()
        # the seed only with the first game of a process: a later `newgame` continues it,
        # as an in-process agent's random generator continues after reset()
        seed = "" if self._seeded or self.seed is None else f" seed {self.seed}"
        self._seeded = True
        self._send(f"newgame{seed}", NO_ANSWER)
        self._send("isready", NO_ANSWER)
        self._expect("readyok", NO_ANSWER, self.timeout)

    def select_move(self, state: GameState) -> Move:
        if self._proc is None:
            self.reset()
        started = time.perf_counter()
        self._send(self._position(state), TIMEOUT)
        if "legal" in self.features:
            self._send("legal " + " ".join(state.legal_move_strs()), TIMEOUT)
        go = "go"
        if self.move_time is not None:
            go += f" movetime {self.move_time:g}"
        if self.nodes is not None:
            go += f" nodes {self.nodes:d}"
        self._send(go, TIMEOUT)
        wait = self.timeout if self.move_time is None else self.move_time + self.grace
        self._info = {}
        answer = self._expect("bestmove", TIMEOUT, wait)[2].strip()
        self.counters["moves"] += 1
        self.counters["seconds"] += time.perf_counter() - started
        if not answer:
            self._forfeit(ILLEGAL, "'bestmove' without a move")
        try:
            return state.parse_move(answer)
        except MoveError as exc:
            self._forfeit(ILLEGAL, f"bestmove {answer}: {exc}")

    def finish(self, state: GameState) -> None:
        """The game is over: let the program quit."""
        self.close()

    def stats(self) -> dict[str, float]:
        return dict(self.counters)

    def move_info(self) -> dict[str, float | int | str]:
        return dict(self._info)

    def close(self) -> None:
        """Send ``quit`` and end the process (and anything it started)."""
        if self._proc is not None:
            self._proc.close()
            self._proc = None

    # -- protocol ----------------------------------------------------------------------
    def see_game(self, first: GameState, moves: Sequence[str]) -> None:
        self._game = (first, list(moves))

    def _position(self, state: GameState) -> str:
        """The ``position`` line: the game from its first position (the draw rules need the
        history), or the current position's text alone when the game is not known or the
        engine asked for ``feature text``."""
        game, self._game = self._game, None
        if "text" in self.features or game is None or game[0].ply + len(game[1]) != state.ply:
            return f"position text {state.to_text()}"
        first, moves = game
        base = ("startpos" if first.to_text() == type(first).start().to_text()
                else f"text {first.to_text()}")
        return f"position {base}" + (" moves " + " ".join(moves) if moves else "")

    def _start(self) -> None:
        try:
            self._proc = EngineProcess(self.argv, self.stderr_path)
        except OSError as exc:
            raise Forfeit(CRASHED, f"cannot start {self.argv[0]!r}: {exc.strerror}") from None
        self._seeded, self.features = False, set()
        self._send(f"boardzoo {PROTOCOL_VERSION}", NO_ANSWER)
        fields: dict[str, str] = {}
        deadline = time.monotonic() + self.timeout
        while True:
            word, _, rest = self._expect("", NO_ANSWER, self.timeout, "ok", deadline)
            if word == "ok":
                break
            if word == "id" and rest.startswith("name "):
                self.name = rest[5:FIELD_CHARS].strip()
            elif word == "feature":
                self.features.update(f for f in rest.split() if f in FEATURES)
            elif word in ("protocol", "games"):
                fields[word] = rest[:FIELD_CHARS].strip()
        if fields.get("protocol") != str(PROTOCOL_VERSION):
            self.close()
            raise EngineError(f"engine {' '.join(self.argv)!r} speaks protocol "
                              f"{fields.get('protocol', '(none)')!r}; boardzoo speaks "
                              f"{PROTOCOL_VERSION}")
        if self.game not in fields.get("games", "").split():
            self.close()
            raise EngineError(f"engine {' '.join(self.argv)!r} does not play {self.game} "
                              f"(it plays: {fields.get('games') or 'nothing'})")
        self._send(f"game {self.game}", NO_ANSWER)

    def _send(self, line: str, reason: str) -> None:
        assert self._proc is not None
        try:
            self._proc.send(line, time.monotonic() + self.timeout)
        except EngineClosed:
            self._forfeit(CRASHED, self._exit_text("it stopped reading"))
        except EngineSilent as exc:
            self._forfeit(reason, str(exc))

    def _read(self, reason: str, deadline: float) -> str:
        assert self._proc is not None
        try:
            return self._proc.read_line(deadline)
        except EngineClosed:
            self._forfeit(CRASHED, self._exit_text("its output ended"))
        except EngineSilent as exc:
            self._forfeit(reason, str(exc))

    def _expect(self, word: str, reason: str, seconds: float, awaited: str = "",
                deadline: float | None = None) -> tuple[str, str, str]:
        """Read lines until one starts with ``word`` (any line if ``word`` is empty); return
        it split as ``(first word, " ", rest)``. ``info`` lines on the way are kept for the
        game record; no such line by the deadline is a Forfeit for ``reason``."""
        deadline = time.monotonic() + seconds if deadline is None else deadline
        while True:
            try:
                line = self._read(reason, deadline)
            except Forfeit as exc:
                if exc.reason == reason:  # say what was awaited
                    raise Forfeit(reason, f"no {awaited or word!r} within {seconds:g}s") from None
                raise
            parts = line.strip().partition(" ")
            if not word or parts[0] == word:
                return parts
            if parts[0] == "info":
                keep_info(self._info, parts[2])

    def _exit_text(self, what: str) -> str:
        status = self._proc.exit_status() if self._proc is not None else None
        return what + ("" if status is None else f" (exit status {status})")

    def _forfeit(self, reason: str, detail: str) -> NoReturn:
        """End the process and raise the Forfeit that loses the game."""
        if self._proc is not None:
            self._proc.close(polite=reason != CRASHED)
            self._proc = None
        raise Forfeit(reason, detail)


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> EngineAgent:
    """Build ``engine:COMMAND[,movetime=S][,nodes=N][,timeout=S][,grace=S]``."""
    if os.name != "posix":
        raise UnknownAgentError("agent engine: outside engines need a POSIX system")
    opts = AGENT_KIND.bind(spec)
    argv = opts["command"]
    find_program(argv[0])
    return EngineAgent(argv, game, seed, movetime=opts["movetime"], nodes=opts["nodes"],
                       timeout=opts["timeout"], grace=opts["grace"])


def attach_log(agent: Agent, folder: Path, game_id: str, seat: int) -> str | None:
    """Send an engine agent's stderr to a log in ``folder``; return the file's name (None
    for another agent)."""
    if not isinstance(agent, EngineAgent):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    name = log_name(game_id, seat)
    agent.stderr_path = folder / name
    return name
