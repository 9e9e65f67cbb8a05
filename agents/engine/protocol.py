"""The engine protocol's codec: every message as a dataclass, with ``format`` (to its line) and
``parse`` (from a line), shared by the arena's side (:mod:`.client`) and ``boardzoo engine``
(:mod:`.server`), so that no protocol word is spelled anywhere else.

The protocol (docs/arena.md, "The protocol (version 1)") is lines of text; a line's first
word says what it is and the rest is its arguments. boardzoo (the client) sends
:data:`COMMANDS`; the engine answers with :data:`ANSWERS`. :func:`parse_command` reads a
client line strictly (a malformed one is a :class:`ProtocolError` that names the line);
:func:`parse_answer` reads an engine's line as the client must: an unknown line is None
(ignored, so future versions can add lines), a known one that is malformed is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from boardzoo.agents.movetime import MAX_SECONDS
from boardzoo.envs.core.game import BoardzooError, echo

#: The protocol version this boardzoo speaks (the handshake's ``boardzoo 1``).
PROTOCOL_VERSION = 1
#: Why an engine can lose a game without the rules deciding it (a Forfeit's reason).
ILLEGAL, TIMEOUT, CRASHED, NO_ANSWER = "illegal move", "timeout", "crashed", "no answer"
REASONS = (ILLEGAL, TIMEOUT, CRASHED, NO_ANSWER)
#: The features boardzoo knows (others an engine announces are ignored, not kept): ``legal``
#: (send the legal moves before each ``go``) and ``text`` (send positions as text alone).
FEATURE_LEGAL, FEATURE_TEXT = "legal", "text"
FEATURES = (FEATURE_LEGAL, FEATURE_TEXT)
#: ``info`` keys whose value is the rest of the line.
REST_OF_LINE = ("pv", "string")


class ProtocolError(BoardzooError):
    """A line that is not a well-formed message; ``line`` is the line, and the message says
    what is wrong with it (naming the command and quoting the bad part)."""

    def __init__(self, message: str, line: str) -> None:
        super().__init__(message)
        self.line = line


def split_line(line: str) -> tuple[str, str]:
    """Return a line's first word and the rest, both stripped (words are single-space
    separated; a line's end and outer blanks do not count)."""
    word, _, rest = line.strip().partition(" ")
    return word, rest.strip()


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit() and text.isascii() and len(text) <= 30


def _positive(key: str, value: str, line: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ProtocolError(f"go: {key} must be a number, got {echo(value)}", line) from None
    if not (math.isfinite(number) and number > 0):
        raise ProtocolError(f"go: {key} must be a positive number, got {echo(value)}", line)
    return number


@dataclass(frozen=True)
class Limits:
    """What ``go`` may limit a move by: seconds (``movetime``) and nodes (``nodes``); None:
    not limited. (The protocol carries no depth: an agent's spec sets it.)"""

    movetime: float | None = None
    nodes: int | None = None

    def words(self) -> str:
        """The ``go`` arguments, e.g. ``movetime 0.5 nodes 100`` (empty without limits)."""
        parts = [] if self.movetime is None else [f"movetime {self.movetime:g}"]
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes:d}")
        return " ".join(parts)

    @classmethod
    def parse(cls, rest: str, line: str) -> Limits:
        """Read ``go``'s ``movetime S`` and ``nodes N`` pairs (any order; a repeated one:
        the last counts)."""
        words, found = rest.split(), {}
        if len(words) % 2:
            raise ProtocolError(f"go takes 'movetime S' and/or 'nodes N', got {echo(rest)}",
                                line)
        for key, value in zip(words[::2], words[1::2], strict=True):
            if key not in ("movetime", "nodes"):
                raise ProtocolError(f"go: unknown limit {echo(key)}; use movetime, nodes", line)
            found[key] = _positive(key, value, line)
        movetime, nodes = found.get("movetime"), found.get("nodes")
        if movetime is not None and movetime > MAX_SECONDS:
            raise ProtocolError(f"go: movetime must be at most {MAX_SECONDS:g} seconds, "
                                f"got {echo(movetime)}", line)
        if nodes is not None and not nodes.is_integer():
            raise ProtocolError(f"go: nodes must be a whole number, got {echo(nodes)}", line)
        return cls(movetime, None if nodes is None else int(nodes))


# -- what the client sends ------------------------------------------------------------------
@dataclass(frozen=True)
class Hello:
    """``boardzoo V``: the handshake, in protocol version ``version`` (text as sent)."""

    WORD: ClassVar[str] = "boardzoo"
    version: str = str(PROTOCOL_VERSION)

    def format(self) -> str:
        return f"{self.WORD} {self.version}"

    @classmethod
    def parse(cls, rest: str, line: str) -> Hello:
        return cls(rest)


@dataclass(frozen=True)
class Game:
    """``game G``: the game of what follows."""

    WORD: ClassVar[str] = "game"
    name: str

    def format(self) -> str:
        return f"{self.WORD} {self.name}"

    @classmethod
    def parse(cls, rest: str, line: str) -> Game:
        return cls(rest)


@dataclass(frozen=True)
class NewGame:
    """``newgame [seed N]``: a new game (the seed with a process's first game only)."""

    WORD: ClassVar[str] = "newgame"
    seed: int | None = None

    def format(self) -> str:
        return self.WORD if self.seed is None else f"{self.WORD} seed {self.seed:d}"

    @classmethod
    def parse(cls, rest: str, line: str) -> NewGame:
        words = rest.split()
        if not words:
            return cls()
        if len(words) != 2 or words[0] != "seed" or not _is_int(words[1]):
            raise ProtocolError(f"newgame takes 'seed N', got {echo(rest)}", line)
        return cls(int(words[1]))


@dataclass(frozen=True)
class IsReady:
    """``isready``: answer ``readyok`` once ready."""

    WORD: ClassVar[str] = "isready"

    def format(self) -> str:
        return self.WORD

    @classmethod
    def parse(cls, rest: str, line: str) -> IsReady:
        return cls()


@dataclass(frozen=True)
class Position:
    """``position startpos|text TEXT [moves M1 M2 ...]``: the game so far (``text`` None:
    the start position)."""

    WORD: ClassVar[str] = "position"
    text: str | None = None
    moves: tuple[str, ...] = ()

    def format(self) -> str:
        base = "startpos" if self.text is None else f"text {self.text}"
        return f"{self.WORD} {base}" + (" moves " + " ".join(self.moves) if self.moves else "")

    @classmethod
    def parse(cls, rest: str, line: str) -> Position:
        base, _, moves = rest.partition(" moves")
        kind, _, text = base.strip().partition(" ")
        text = text.strip()
        if kind == "startpos" and not text:
            return cls(None, tuple(moves.split()))
        if kind == "text" and text:
            return cls(text, tuple(moves.split()))
        raise ProtocolError("position takes 'startpos' or 'text TEXT', then optionally "
                            f"'moves M1 M2 ...', got {echo(rest)}", line)


@dataclass(frozen=True)
class Legal:
    """``legal M1 M2 ...``: the legal moves (to an engine that asked: ``feature legal``)."""

    WORD: ClassVar[str] = "legal"
    moves: tuple[str, ...] = ()

    def format(self) -> str:
        return " ".join((self.WORD, *self.moves))

    @classmethod
    def parse(cls, rest: str, line: str) -> Legal:
        return cls(tuple(rest.split()))


@dataclass(frozen=True)
class Go:
    """``go [movetime S] [nodes N]``: choose a move within the limits."""

    WORD: ClassVar[str] = "go"
    limits: Limits = field(default_factory=Limits)

    def format(self) -> str:
        words = self.limits.words()
        return f"{self.WORD} {words}" if words else self.WORD

    @classmethod
    def parse(cls, rest: str, line: str) -> Go:
        return cls(Limits.parse(rest, line))


@dataclass(frozen=True)
class Quit:
    """``quit``: end (closing the engine's input means the same)."""

    WORD: ClassVar[str] = "quit"

    def format(self) -> str:
        return self.WORD

    @classmethod
    def parse(cls, rest: str, line: str) -> Quit:
        return cls()


Command = Hello | Game | NewGame | IsReady | Position | Legal | Go | Quit
#: The client's messages by their first word.
COMMANDS: dict[str, type[Command]] = {
    c.WORD: c for c in (Hello, Game, NewGame, IsReady, Position, Legal, Go, Quit)}


# -- what the engine answers ----------------------------------------------------------------
@dataclass(frozen=True)
class Id:
    """``id KEY VALUE``: the engine's ``name`` or ``author``."""

    WORD: ClassVar[str] = "id"
    NAME: ClassVar[str] = "name"
    AUTHOR: ClassVar[str] = "author"
    key: str
    value: str

    def format(self) -> str:
        return f"{self.WORD} {self.key} {self.value}"

    @classmethod
    def parse(cls, rest: str, line: str) -> Id:
        key, value = split_line(rest)
        if not key:
            raise ProtocolError("id takes 'KEY VALUE' (name or author), got nothing", line)
        return cls(key, value)


@dataclass(frozen=True)
class ProtocolVersion:
    """``protocol V``: the version the engine speaks (text as sent)."""

    WORD: ClassVar[str] = "protocol"
    version: str = str(PROTOCOL_VERSION)

    def format(self) -> str:
        return f"{self.WORD} {self.version}"

    @classmethod
    def parse(cls, rest: str, line: str) -> ProtocolVersion:
        return cls(rest)


@dataclass(frozen=True)
class Games:
    """``games G1 G2 ...``: the games the engine plays."""

    WORD: ClassVar[str] = "games"
    names: tuple[str, ...] = ()

    def format(self) -> str:
        return " ".join((self.WORD, *self.names))

    @classmethod
    def parse(cls, rest: str, line: str) -> Games:
        return cls(tuple(rest.split()))


@dataclass(frozen=True)
class Feature:
    """``feature F ...``: protocol features the engine wants (one or more a line)."""

    WORD: ClassVar[str] = "feature"
    names: tuple[str, ...] = ()

    def format(self) -> str:
        return " ".join((self.WORD, *self.names))

    @classmethod
    def parse(cls, rest: str, line: str) -> Feature:
        return cls(tuple(rest.split()))


@dataclass(frozen=True)
class Ok:
    """``ok``: the end of the handshake."""

    WORD: ClassVar[str] = "ok"

    def format(self) -> str:
        return self.WORD

    @classmethod
    def parse(cls, rest: str, line: str) -> Ok:
        return cls()


@dataclass(frozen=True)
class ReadyOk:
    """``readyok``: the answer to ``isready``."""

    WORD: ClassVar[str] = "readyok"

    def format(self) -> str:
        return self.WORD

    @classmethod
    def parse(cls, rest: str, line: str) -> ReadyOk:
        return cls()


@dataclass(frozen=True)
class Info:
    """``info KEY VALUE ...``: what the engine says about the move it is choosing, as text
    pairs (``pv`` and ``string`` take the rest of the line)."""

    WORD: ClassVar[str] = "info"
    pairs: tuple[tuple[str, str], ...] = ()

    def format(self) -> str:
        return " ".join((self.WORD, *(f"{k} {v}" for k, v in self.pairs)))

    @classmethod
    def parse(cls, rest: str, line: str) -> Info:
        words, pairs, i = rest.split(), [], 0
        while i + 1 < len(words):  # a key without a value at the end is dropped
            key = words[i]
            if key in REST_OF_LINE:
                pairs.append((key, " ".join(words[i + 1:])))
                break
            pairs.append((key, words[i + 1]))
            i += 2
        return cls(tuple(pairs))

    def values(self) -> dict[str, float | int | str]:
        """The pairs as a dict, numbers as numbers (a later key wins)."""
        return {key: _info_value(value) for key, value in self.pairs}


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


def parse_info(text: str) -> dict[str, float | int | str]:
    """Return an ``info`` line's ``key value`` pairs (the text after ``info``); numbers
    become numbers, and ``pv`` or ``string`` take the rest of the line."""
    return Info.parse(text, text).values()


@dataclass(frozen=True)
class BestMove:
    """``bestmove MOVE``: the chosen move, in canonical notation."""

    WORD: ClassVar[str] = "bestmove"
    move: str

    def format(self) -> str:
        return f"{self.WORD} {self.move}"

    @classmethod
    def parse(cls, rest: str, line: str) -> BestMove:
        if not rest:
            raise ProtocolError("'bestmove' without a move", line)
        return cls(rest)


@dataclass(frozen=True)
class Error:
    """``error TEXT``: a command was refused (the engine goes on; the arena ignores it)."""

    WORD: ClassVar[str] = "error"
    text: str

    def format(self) -> str:
        return f"{self.WORD} {' '.join(self.text.split())}"  # one line, whatever the text

    @classmethod
    def parse(cls, rest: str, line: str) -> Error:
        return cls(rest)


Answer = Id | ProtocolVersion | Games | Feature | Ok | ReadyOk | Info | BestMove | Error
#: The engine's messages by their first word.
ANSWERS: dict[str, type[Answer]] = {
    a.WORD: a for a in (Id, ProtocolVersion, Games, Feature, Ok, ReadyOk, Info, BestMove, Error)}


def parse_command(line: str) -> Command | None:
    """Return the client's message on ``line`` (None for a blank line); ProtocolError for an
    unknown command or malformed arguments."""
    word, rest = split_line(line)
    if not word:
        return None
    kind = COMMANDS.get(word)
    if kind is None:
        raise ProtocolError(f"unknown command {echo(word)}", line)
    return kind.parse(rest, line)


def parse_answer(line: str) -> Answer | None:
    """Return the engine's message on ``line``; None for a line this version does not know
    (ignored); ProtocolError for a known one with malformed arguments."""
    word, rest = split_line(line)
    kind = ANSWERS.get(word)
    return None if kind is None else kind.parse(rest, line)
