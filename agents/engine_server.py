"""``boardzoo engine AGENT``: serve any boardzoo agent over the engine protocol on stdin/stdout.

The other side of :mod:`.engine` (the protocol is in docs/arena.md): other tools and GUIs
can use boardzoo's agents, and two boardzoo processes can play each other through pipes.
A ``newgame seed N`` builds the agent as ``make_agent(AGENT, game, N)``, exactly as the
arena builds an in-process agent, so a served agent plays the same moves as in-process.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from typing import IO

from boardzoo.envs.core.game import BoardzooError, GameState, echo
from boardzoo.envs.core.registry import GAMES, state_class
from boardzoo.envs.core.threads import one_torch_thread

from .agent_spec import kind_of
from .base import INTERACTIVE_KINDS, Agent, UnknownAgentError, check_spec, make_agent
from .engine import PROTOCOL_VERSION
from .movetime import MAX_SECONDS

#: The longest command line read whole; a longer one is answered ``error`` and skipped
#: without being kept (a game's ``position startpos moves ...`` line is a few KB).
MAX_LINE = 1_000_000


class Server:
    """The protocol state of one served agent: game, position and the agent itself."""

    def __init__(self, spec: str, games: Sequence[str], out: IO[str], name: str = "") -> None:
        self.spec, self.games, self.out = spec, list(games), out
        self.name = name or f"boardzoo {spec}"
        self.game = self.games[0] if len(self.games) == 1 else ""
        self.agent: Agent | None = None
        self.state: GameState | None = None
        self.history: tuple[GameState, list[str]] | None = None
        self.refused = False  # the last `position` was refused: `go` must not guess

    def say(self, line: str) -> None:
        """Write one line to the client and flush it (the client waits for whole lines)."""
        self.out.write(line + "\n")
        self.out.flush()

    def handle(self, line: str) -> bool:
        """Answer one command line; return False after ``quit``."""
        word, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        try:
            if word == "quit":
                return False
            command = getattr(self, f"do_{word}", None) if word.isidentifier() else None
            if command is None:
                if word:
                    self.say(f"error unknown command {echo(word)}")
            else:
                command(rest)
        except BoardzooError as exc:
            self.say(f"error {' '.join(str(exc).split())}")
        return True

    # -- commands ------------------------------------------------------------------------
    def do_boardzoo(self, rest: str) -> None:
        self.say(f"id name {self.name}")
        self.say("id author boardzoo")
        self.say(f"protocol {PROTOCOL_VERSION}")
        self.say("games " + " ".join(self.games))
        self.say("ok")

    def do_game(self, rest: str) -> None:
        if rest not in self.games:
            raise UnknownAgentError(f"this engine plays {', '.join(self.games)}, "
                                    f"not {echo(rest)}")
        self.game, self.agent, self.state, self.history = rest, None, None, None

    def do_newgame(self, rest: str) -> None:
        words = rest.split()
        if words and (len(words) != 2 or words[0] != "seed" or not _is_int(words[1])):
            raise UnknownAgentError(f"newgame takes 'seed N', got {echo(rest)}")
        if words or self.agent is None:
            self.agent = make_agent(self.spec, self._game(), int(words[1]) if words else None)
        self.agent.reset()
        self.state, self.history = None, None

    def do_isready(self, rest: str) -> None:
        if self.agent is None and self.game:
            self.agent = make_agent(self.spec, self.game)  # heavy loading happens before `go`
        self.say("readyok")

    def do_position(self, rest: str) -> None:
        self.state, self.history, self.refused = None, None, True
        base, _, moves_text = rest.partition(" moves")
        kind, _, text = base.strip().partition(" ")
        cls = state_class(self._game())
        if kind == "startpos" and not text:
            state = cls.start()
        elif kind == "text" and text:
            state = cls.from_text(text.strip())
        else:
            raise UnknownAgentError("position takes 'startpos' or 'text TEXT', then "
                                    "optionally 'moves M1 M2 ...'")
        first, moves = state, moves_text.split()
        for move in moves:
            state = state.apply(state.parse_move(move))
        self.state, self.history, self.refused = state, (first, moves), False

    def do_legal(self, rest: str) -> None:
        return None  # the served agent finds the legal moves itself

    def do_go(self, rest: str) -> None:
        limits = _limits(rest)
        if self.refused:
            raise UnknownAgentError("no position to move in: the last 'position' was refused")
        state = self.state
        if state is None:  # guessing the start position would play a move of another game
            raise UnknownAgentError("no position to move in: send 'position startpos' or "
                                    "'position text TEXT' first")
        if self.agent is None:
            self.agent = make_agent(self.spec, self._game())
        if state.is_terminal():
            raise UnknownAgentError("the game is over: no move to make")
        if "movetime" in limits:
            set_time = getattr(self.agent, "set_move_time", None)  # agents with a clock
            if set_time is not None:
                set_time(limits["movetime"])
        if self.history is not None:
            self.agent.see_game(*self.history)
        before = self.agent.stats()
        started = time.perf_counter()
        move = self.agent.select_move(state)
        info = _info(before, self.agent, time.perf_counter() - started)
        if info:
            self.say("info " + info)
        self.say(f"bestmove {state.move_to_str(move)}")

    def _game(self) -> str:
        if not self.game:
            raise UnknownAgentError("no game chosen: send 'game NAME' first")
        return self.game


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit() and text.isascii() and len(text) <= 30


def _limits(rest: str) -> dict[str, float]:
    """Parse ``go``'s ``movetime S`` and ``nodes N`` pairs."""
    words, limits = rest.split(), {}
    if len(words) % 2:
        raise UnknownAgentError(f"go takes 'movetime S' and/or 'nodes N', got {echo(rest)}")
    for key, value in zip(words[::2], words[1::2], strict=True):
        if key not in ("movetime", "nodes"):
            raise UnknownAgentError(f"go: unknown limit {echo(key)}; use movetime, nodes")
        try:
            limits[key] = float(value)
        except ValueError:
            raise UnknownAgentError(f"go: {key} must be a number, got {echo(value)}") from None
        if not (math.isfinite(limits[key]) and limits[key] > 0):
            raise UnknownAgentError(f"go: {key} must be a positive number, got {echo(value)}")
    if limits.get("movetime", 0) > MAX_SECONDS:
        raise UnknownAgentError(f"go: movetime must be at most {MAX_SECONDS:g} seconds, "
                                f"got {echo(limits['movetime'])}")
    return limits


def _info(before: dict[str, float], agent: Agent, seconds: float) -> str:
    """The ``info`` line of one move: depth, score, nodes (what the agent counts) and time."""
    after = agent.stats()
    parts = []
    if after.get("moves", 0) > before.get("moves", 0) and "depth_sum" in after:
        parts.append(f"depth {after['depth_sum'] - before.get('depth_sum', 0):g}")
    if isinstance(getattr(agent, "last_value", None), float):
        parts.append(f"score {agent.last_value:.4g}")
    for key in ("nodes", "simulations"):
        if key in after:
            parts.append(f"nodes {after[key] - before.get(key, 0):g}")
            break
    parts.append(f"time {seconds:.3f}")
    return " ".join(parts)


def serve(spec: str, games: Sequence[str], stdin: IO[str], stdout: IO[str],
          name: str = "") -> int:
    """Answer protocol commands from ``stdin`` until ``quit`` or the end of input."""
    server = Server(spec, games, stdout, name)
    while True:
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            return 0
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while line and not line.endswith("\n"):  # skip the rest, keeping none of it
                line = stdin.readline(MAX_LINE)
            server.say(f"error a command line over {MAX_LINE:,} characters was skipped")
            continue
        if not server.handle(line):
            return 0


def cmd_engine(args: argparse.Namespace) -> int:
    """Serve an agent over the engine protocol on stdin/stdout."""
    if kind_of(args.agent) in INTERACTIVE_KINDS:
        raise UnknownAgentError(f"{args.agent!r} waits for a person; it cannot be an engine")
    if args.game:
        state_class(args.game)  # an unknown game is an error now, not at the first `game`
        check_spec(args.agent, args.game)
        games = [args.game]
    else:  # every game the spec can play (checkpoint:loa plays LOA only)
        games, error = [], None
        for game in GAMES:
            try:
                check_spec(args.agent, game)
                games.append(game)
            except BoardzooError as exc:
                error = exc
        if not games and error is not None:
            raise error
    one_torch_thread()  # this command owns the process
    if hasattr(sys.stdin, "reconfigure"):  # bytes that are not UTF-8: an unknown command
        sys.stdin.reconfigure(errors="surrogateescape")
    return serve(args.agent, games, sys.stdin, sys.stdout, args.name)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``engine`` subcommand to the CLI."""
    p = subparsers.add_parser(
        "engine", help="serve an agent over the engine protocol on stdin/stdout",
        description="Serve a boardzoo agent to other programs over the engine protocol "
        "(docs/arena.md#outside-engines).")
    p.add_argument("agent", help="agent spec, e.g. alphabeta:3, mcts:400, checkpoint:loa")
    p.add_argument("--game", default=None,
                   help=f"the one game to offer: {', '.join(GAMES)} (default: every game)")
    p.add_argument("--name", default="", help="the name in the handshake "
                   "(default: boardzoo AGENT)")
    p.set_defaults(func=cmd_engine)
