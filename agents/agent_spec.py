"""The one grammar of agent specs (``mcts:400,c=1.4``), and the typed options of each kind.

A spec is ``KIND[:VALUE][,PIECE]...`` (docs/arena.md, "Agent specs"):

* the kind is the text before the first ``:`` or ``,``, in any case (``MCTS`` is ``mcts``);
* pieces are split at commas outside quotes (``'...'``, ``"..."``) that no backslash escapes;
* the piece right after the colon is the VALUE (``400``, a path, an engine's command), kept as
  written (quotes included: an engine's command is split by the shell rules later); a VALUE
  that is ``word=...`` is an option instead (``alphabeta:t=0.3s``);
* later pieces are options ``key=value`` (key in any case; the value with its quotes and
  escapes removed), flags (a bare word: ``trust_code``) or, where no VALUE came first, the
  VALUE (``mcts:c=2,100``);
* ``name=`` gives any agent a display name; a key, a flag or the VALUE given twice, an empty
  piece and an unclosed quote are errors.

:class:`AgentSpec` is the parsed spec (syntax only); :class:`AgentKind` is what one kind
accepts, declared once with its :class:`Option` list, and its :meth:`AgentKind.bind` turns a
spec into checked values, with every error naming the option and what it allows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from boardzoo.envs.core.game import BoardzooError, echo


class UnknownAgentError(BoardzooError):
    """An agent spec that names no known agent or has bad parameters."""


#: The option every kind takes: the agent's display name in tables.
NAME = "name"
#: An option key or a flag: a word (why: ``./eng --x=1`` or ``runs/a=b.pt`` is not a key).
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: What a backslash escapes outside single quotes (others stay, so ``C:\runs`` is a path).
ESCAPABLE = ",\"'\\"


def pieces(text: str) -> list[str]:
    """Split ``text`` at the commas outside quotes that no backslash escapes (pieces raw)."""
    out, start, quote, i = [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'" and text[i + 1:i + 2] and text[i + 1] in ESCAPABLE:
            i += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            out.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise UnknownAgentError(f"agent {echo(text)}: no closing quotation ({quote})")
    out.append(text[start:])
    return out


def unquote(raw: str) -> str:
    """Return ``raw`` with its quotes and escaping backslashes removed (``"a,b"`` -> ``a,b``);
    inside double quotes a backslash escapes only ``"`` and a backslash, as in a shell."""
    out, quote, i = [], "", 0
    while i < len(raw):
        ch, nxt = raw[i], raw[i + 1:i + 2]
        escapes = '"\\' if quote == '"' else "" if quote else ESCAPABLE
        if ch == "\\" and nxt and nxt in escapes:
            out.append(nxt)
            i += 2
            continue
        if quote and ch == quote:
            quote = ""
        elif not quote and ch in "\"'":
            quote = ch
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def split_kind(text: str) -> tuple[str, str]:
    """Split ``text`` into its kind as written and the rest (``mcts``, ``:400,c=2``)."""
    end = min((i for i in (text.find(":"), text.find(",")) if i >= 0), default=len(text))
    return text[:end], text[end:]


def canonical_spec(spec: str) -> str:
    """Return ``spec`` as the arena and reports name it: stripped, its kind in lower case
    (``ALPHABETA:1`` -> ``alphabeta:1``, ``Greedy,name=Bob`` -> ``greedy,name=Bob``); the
    rest keeps its case (it may be a path or a name). Never raises (records hold any text)."""
    kind, rest = split_kind(spec.strip())
    return kind.lower() + rest


def kind_of(spec: str) -> str:
    """Return the kind of ``spec`` in lower case (``Human,name=Ann`` -> ``human``)."""
    return split_kind(spec.strip())[0].lower()


def is_option(piece: str) -> bool:
    """Whether ``piece`` is a ``word=value`` option (``c=1.5``; not ``engine:./e --x=1``)."""
    return _option_piece(piece) is not None


def spec_list(text: str) -> list[str]:
    """Split a list of specs, ``random,mcts:20,c=1.5,checkpoint:loa,sims=0``, as ``--agents``
    and ``eval.baselines`` take it: at commas outside quotes (:func:`pieces`), a piece that is
    an option (:func:`is_option`) belonging to the spec before it (a bare word is a spec: a
    flag such as ``trust_code`` needs a list of one)."""
    specs: list[str] = []
    for piece in (p.strip() for p in pieces(text)):
        if not piece:
            continue
        if is_option(piece):
            if not specs:
                raise UnknownAgentError(f"agent list {echo(text)}: option {echo(piece)} "
                                        "follows no agent spec")
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def _option_piece(piece: str) -> tuple[str, str] | None:
    """Return (key in lower case, value unquoted) of a ``word=value`` piece, else None."""
    key, eq, value = piece.partition("=")
    if not eq or not WORD.fullmatch(key.strip()):
        return None
    return key.strip().lower(), unquote(value.strip())


@dataclass(frozen=True)
class AgentSpec:
    """One parsed agent spec (syntax only: :meth:`AgentKind.bind` checks what a kind takes)."""

    #: The spec as written, stripped, its kind in lower case: the agent's name in records.
    text: str
    #: The kind in lower case (``mcts``).
    kind: str
    #: The VALUE as written (quotes kept), None when there is none or it is empty.
    value: str | None = None
    #: ``key=value`` options in order: keys in lower case, values unquoted.
    options: dict[str, str] = field(default_factory=dict)
    #: Bare-word flags in lower case (``trust_code``), in order.
    flags: tuple[str, ...] = ()

    @property
    def name(self) -> str | None:
        """The display name (``name=``), or None."""
        return self.options.get(NAME)

    @classmethod
    def parse(cls, spec: str) -> AgentSpec:
        """Parse ``spec``; UnknownAgentError for a spec the grammar refuses."""
        text = canonical_spec(spec)
        head, *tail = pieces(text)
        kind, colon, first = head.partition(":")
        value: str | None = None
        options: dict[str, str] = {}
        flags: list[str] = []

        def twice(what: str) -> UnknownAgentError:
            return UnknownAgentError(f"agent {echo(text)}: {what} given twice")

        for k, piece in enumerate([first, *tail] if colon else tail):
            piece = piece.strip()
            option = _option_piece(piece)
            if k == 0 and colon and option is None:
                value = piece or None  # ``mcts:`` has no value, as ``mcts``
            elif option is not None:
                key, text_value = option
                if key in options or key in flags:
                    raise twice(key)
                if key == NAME and not text_value:
                    raise UnknownAgentError(f"agent {echo(text)}: name= needs a name")
                options[key] = text_value
            elif not piece:
                raise UnknownAgentError(f"agent {echo(text)}: an empty option (two commas, or "
                                        "a comma at the end)")
            elif WORD.fullmatch(piece):
                if piece.lower() in flags or piece.lower() in options:
                    raise twice(piece.lower())
                flags.append(piece.lower())
            elif value is None:
                value = piece
            else:
                raise UnknownAgentError(f"agent {echo(text)}: two values, {echo(value)} and "
                                        f"{echo(piece)}")
        return cls(text, kind, value, options, tuple(flags))


@dataclass(frozen=True)
class Parser:
    """Turns an option's text into its value: ``convert`` raises ValueError for text that
    is not ``allowed`` (the error says "X must be <allowed>"); ``metavar`` stands for the
    value in usage lines (``sims=N``)."""

    convert: Callable[[str], Any]
    allowed: str
    metavar: str


def whole(low: int, high: int | None = None, metavar: str = "N") -> Parser:
    """A whole number from ``low`` (to ``high``)."""
    def convert(text: str) -> int:
        value = int(text)
        if value < low or (high is not None and value > high):
            raise ValueError(text)
        return value

    allowed = f"from {low} to {high}" if high is not None else f">= {low}"
    return Parser(convert, f"a whole number {allowed}", metavar)


def number(low: float | None = None, above: bool = False, metavar: str = "X") -> Parser:
    """A finite number (at least ``low``, or above it when ``above``)."""
    def convert(text: str) -> float:
        value = float(text)
        if not math.isfinite(value) or (low is not None and (value <= low if above
                                                             else value < low)):
            raise ValueError(text)
        return value

    bound = "" if low is None else f" {'>' if above else '>='} {low:g}"
    return Parser(convert, f"a number{bound}", metavar)


def choice(*words: str) -> Parser:
    """One of ``words`` (as written)."""
    def convert(text: str) -> str:
        if text not in words:
            raise ValueError(text)
        return text

    return Parser(convert, " or ".join(words), "|".join(words))


def switch(yes: str, no: str) -> Parser:
    """``yes`` (True) or ``no`` (False): ``on|off``, ``skip|search``."""
    def convert(text: str) -> bool:
        if text not in (yes, no):
            raise ValueError(text)
        return text == yes

    return Parser(convert, f"{yes} or {no}", f"{yes}|{no}")


#: Text taken as it is, its quotes removed (a path).
TEXT = Parser(unquote, "some text", "TEXT")


@dataclass(frozen=True)
class Option:
    """One option of an agent kind: ``name=`` text through ``parser``, ``default`` when
    absent; a ``flag`` is a bare word instead (True when given)."""

    name: str
    parser: Parser | None
    doc: str
    default: Any = None
    flag: bool = False

    @property
    def usage(self) -> str:
        """``sims=N`` (a flag: its name)."""
        return self.name if self.parser is None else f"{self.name}={self.parser.metavar}"


def flag(name: str, doc: str) -> Option:
    """An option given as a bare word (``,trust_code``)."""
    return Option(name, None, doc, False, flag=True)


@dataclass(frozen=True)
class AgentKind:
    """What agent kind ``name`` accepts: its ``options``, and its ``value`` (the text after
    ``kind:``), which is either one of the options (``mcts:400`` is ``mcts:sims=400``) or
    a ``required`` option of its own (a path, a command: ``doc`` says what it names)."""

    name: str
    options: Sequence[Option] = ()
    value: Option | None = None
    required: bool = False
    #: Said after an unknown option (how a piece of the value may hold a comma).
    hint: str = ""

    def usage(self) -> str:
        """``mcts[:N][,sims=N][,c=X]...``: the spec's shape, for error messages."""
        value = f":{self.value.usage.partition('=')[2]}" if self.value is not None else ""
        head = f"{self.name}{value}" if self.required else f"{self.name}[{value}]" if value \
            else self.name
        return head + "".join(f"[,{o.usage}]" for o in self.options if o is not self.value)

    def listing(self) -> str:
        """``sims=N, c=X, ..., name=NAME``: every option a spec of this kind may give."""
        return ", ".join([*(o.usage for o in self.options), f"{NAME}=NAME"])

    def bind(self, spec: AgentSpec) -> dict[str, Any]:
        """Return every option's value (the default where the spec gives none; a flag: True
        or False), keyed by option name; UnknownAgentError naming the option otherwise."""
        known = {o.name: o for o in self.options}
        values = {o.name: o.default for o in self.options}
        if spec.value is not None:
            if self.value is None:
                raise UnknownAgentError(f"agent {self.name!r} takes no parameter (got "
                                        f"{echo(spec.text)})")
            values[self.value.name] = self._convert(self.value, spec.value)
        elif self.required:
            assert self.value is not None
            raise UnknownAgentError(f"agent {self.name} needs {self.value.doc}: {self.usage()}")
        for key, text in spec.options.items():
            if key == NAME:
                continue  # every kind's: AgentSpec.name
            option = known.get(key)
            if option is None:
                raise self._unknown(key)
            if option.flag:
                raise UnknownAgentError(f"agent {self.name}: {key} is a flag: write ,{key} "
                                        "without a value")
            if option is self.value and spec.value is not None:
                raise UnknownAgentError(f"agent {self.name}: {key} given twice (the value "
                                        f"after {self.name}: is {key})")
            values[key] = self._convert(option, text)
        for word in spec.flags:
            option = known.get(word)
            if option is None:
                raise self._unknown(word)
            if not option.flag:
                raise UnknownAgentError(f"agent {self.name}: {word} needs a value: "
                                        f"{option.usage}")
            values[word] = True
        return values

    def _unknown(self, key: str) -> UnknownAgentError:
        return UnknownAgentError(f"agent {self.name}: unknown option {echo(key)}; options: "
                                 f"{self.listing()}{self.hint}")

    def _convert(self, option: Option, text: str) -> Any:
        assert option.parser is not None
        try:
            return option.parser.convert(text)
        except ValueError:
            raise UnknownAgentError(f"agent {self.name}: {option.name} must be "
                                    f"{option.parser.allowed}, got {echo(text)}") from None
