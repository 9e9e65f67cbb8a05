"""``engine:COMMAND``: an outside program that plays over boardzoo's engine protocol.

This is the arena's side: it starts the program (:mod:`.process`), speaks to it only in
:mod:`.protocol`'s messages, checks every move it answers against the rules and turns any
misbehaviour into a :class:`~boardzoo.agents.base.Forfeit` with one of the protocol's
``REASONS``, which the game loop scores as a loss. :mod:`.server` is the other side
(``boardzoo engine``).

Spec: ``engine:COMMAND[,option=value...]`` (:data:`AGENT_KIND` declares the options).
COMMAND is split into arguments as a POSIX shell would (``shlex``: quote an argument with
spaces or commas); the pieces after the first comma outside quotes are options.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TypeVar

from boardzoo.agents.agent_spec import AgentKind, AgentSpec, Option, Parser, whole
from boardzoo.agents.base import Agent, Forfeit, UnknownAgentError
from boardzoo.agents.movetime import seconds
from boardzoo.envs.core.game import BoardzooError, GameState, Move, MoveError

from .process import EngineClosed, EngineProcess, EngineSilent
from .protocol import (
    CRASHED,
    FEATURE_LEGAL,
    FEATURE_TEXT,
    FEATURES,
    ILLEGAL,
    NO_ANSWER,
    PROTOCOL_VERSION,
    TIMEOUT,
    Answer,
    BestMove,
    Command,
    Feature,
    Game,
    Games,
    Go,
    Hello,
    Id,
    Info,
    IsReady,
    Legal,
    Limits,
    NewGame,
    Ok,
    Position,
    ProtocolError,
    ProtocolVersion,
    ReadyOk,
    parse_answer,
    split_line,
)

#: What is kept of one move's ``info`` lines: at most this many keys, each key and value cut
#: to these lengths, so a flooding engine costs at most ~10 KB a move in memory and records.
INFO_KEYS, INFO_KEY_CHARS, INFO_VALUE_CHARS = 32, 40, 200
#: Characters kept of an engine's handshake fields (its name, protocol, games).
FIELD_CHARS = 1000

A = TypeVar("A", bound=Answer)


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


def keep_info(kept: dict[str, float | int | str], info: Info) -> None:
    """Merge one ``info`` line into ``kept`` within the bounds of :data:`INFO_KEYS`."""
    for key, value in info.values().items():
        if len(key) > INFO_KEY_CHARS or (key not in kept and len(kept) >= INFO_KEYS):
            continue
        kept[key] = value[:INFO_VALUE_CHARS] if isinstance(value, str) else value


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
        self._send(NewGame(None if self._seeded else self.seed), NO_ANSWER)
        self._seeded = True
        self._send(IsReady(), NO_ANSWER)
        self._expect(ReadyOk, NO_ANSWER, self.timeout)

    def select_move(self, state: GameState) -> Move:
        if self._proc is None:
            self.reset()
        started = time.perf_counter()
        self._send(self._position(state), TIMEOUT)
        if FEATURE_LEGAL in self.features:
            self._send(Legal(tuple(state.legal_move_strs())), TIMEOUT)
        self._send(Go(Limits(self.move_time, self.nodes)), TIMEOUT)
        wait = self.timeout if self.move_time is None else self.move_time + self.grace
        self._info = {}
        try:
            answer, malformed = self._expect(BestMove, TIMEOUT, wait).move, ""
        except ProtocolError as exc:  # a bestmove without a move: answered, but no move
            answer, malformed = "", str(exc)
        self.counters["moves"] += 1
        self.counters["seconds"] += time.perf_counter() - started
        if malformed:
            self._forfeit(ILLEGAL, malformed)
        try:
            return state.parse_move(answer)
        except MoveError as exc:
            self._forfeit(ILLEGAL, f"{BestMove(answer).format()}: {exc}")

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

    def _position(self, state: GameState) -> Position:
        """The ``position`` message: the game from its first position (the draw rules need
        the history), or the current position's text alone when the game is not known or
        the engine asked for ``feature text``."""
        game, self._game = self._game, None
        if FEATURE_TEXT in self.features or game is None or game[0].ply + len(game[1]) != state.ply:
            return Position(state.to_text())
        first, moves = game
        text = first.to_text()
        return Position(None if text == type(first).start().to_text() else text, tuple(moves))

    def _start(self) -> None:
        try:
            self._proc = EngineProcess(self.argv, self.stderr_path)
        except OSError as exc:
            raise Forfeit(CRASHED, f"cannot start {self.argv[0]!r}: {exc.strerror}") from None
        self._seeded, self.features = False, set()
        self._send(Hello(), NO_ANSWER)
        version, games = "", ""
        deadline = time.monotonic() + self.timeout
        while not isinstance(answer := self._expect(None, NO_ANSWER, self.timeout, Ok.WORD,
                                                    deadline), Ok):
            if isinstance(answer, Id) and answer.key == Id.NAME:
                self.name = answer.value[:FIELD_CHARS]
            elif isinstance(answer, Feature):
                self.features.update(f for f in answer.names if f in FEATURES)
            elif isinstance(answer, ProtocolVersion):
                version = answer.version[:FIELD_CHARS]
            elif isinstance(answer, Games):
                games = " ".join(answer.names)[:FIELD_CHARS]
        if version != str(PROTOCOL_VERSION):
            self.close()
            raise EngineError(f"engine {' '.join(self.argv)!r} speaks protocol "
                              f"{version or '(none)'!r}; boardzoo speaks {PROTOCOL_VERSION}")
        if self.game not in games.split():
            self.close()
            raise EngineError(f"engine {' '.join(self.argv)!r} does not play {self.game} "
                              f"(it plays: {games or 'nothing'})")
        self._send(Game(self.game), NO_ANSWER)

    def _send(self, message: Command, reason: str) -> None:
        assert self._proc is not None
        try:
            self._proc.send(message.format(), time.monotonic() + self.timeout)
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

    def _expect(self, kind: type[A] | None, reason: str, seconds: float, awaited: str = "",
                deadline: float | None = None) -> A:
        """Read lines until a message of ``kind`` (any known message if None) and return it.
        ``info`` lines on the way are kept for the game record, other lines ignored; the
        awaited kind malformed (``bestmove`` without a move) is a ProtocolError; no such
        line by the deadline is a Forfeit for ``reason``."""
        deadline = time.monotonic() + seconds if deadline is None else deadline
        while True:
            try:
                line = self._read(reason, deadline)
            except Forfeit as exc:
                if exc.reason == reason:  # say what was awaited
                    raise Forfeit(reason, f"no {awaited or kind.WORD!r} within "
                                          f"{seconds:g}s") from None
                raise
            try:
                answer = parse_answer(line)
            except ProtocolError:
                if kind is not None and split_line(line)[0] == kind.WORD:
                    raise  # the awaited answer, malformed
                continue  # another answer, malformed: ignored as an unknown line is
            if answer is None:
                continue
            if kind is None or isinstance(answer, kind):
                return answer
            if isinstance(answer, Info):
                keep_info(self._info, answer)

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
