"""``boardzoo engine AGENT``: serve any boardzoo agent over the engine protocol on stdin/stdout.

The other side of :mod:`.client` (the protocol is in docs/arena.md; its messages are
:mod:`.protocol`'s): other tools and GUIs can use boardzoo's agents, and two boardzoo
processes can play each other through pipes. The agent is built in one place
(:meth:`Server.agent_for`): a ``newgame seed N`` builds it as ``make_agent(AGENT, game, N)``,
exactly as the arena builds an in-process agent, so a served agent plays the same moves as
in-process. Each ``go``'s limits hold for that move: ``movetime`` through
:meth:`Agent.set_move_time`, ``nodes`` through :meth:`Agent.set_node_limit` (agents with a
simulation budget, MCTS); an agent without one refuses ``nodes`` with an ``error`` line.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import IO

from boardzoo.agents.agent_spec import kind_of
from boardzoo.agents.base import INTERACTIVE_KINDS, Agent, UnknownAgentError, check_spec, make_agent
from boardzoo.envs.core.game import BoardzooError, GameState, echo
from boardzoo.envs.core.registry import GAMES, state_class
from boardzoo.envs.core.threads import one_torch_thread

from .protocol import (
    Answer,
    BestMove,
    Command,
    Error,
    Game,
    Games,
    Go,
    Hello,
    Id,
    Info,
    IsReady,
    Legal,
    NewGame,
    Ok,
    Position,
    ProtocolVersion,
    Quit,
    ReadyOk,
    parse_command,
)

#: The longest command line read whole; a longer one is answered ``error`` and skipped
#: without being kept (a game's ``position startpos moves ...`` line is a few KB).
MAX_LINE = 1_000_000
#: The most ``go nodes`` a client may ask for (why: a search tree grows with each
#: simulation, and the memory a client can make the server use stays bounded).
MAX_NODES = 1_000_000


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

    def say(self, *answers: Answer) -> None:
        """Write answer lines to the client and flush (the client waits for whole lines)."""
        for answer in answers:
            self.out.write(answer.format() + "\n")
        self.out.flush()

    def handle(self, line: str) -> bool:
        """Answer one command line; return False after ``quit``."""
        try:
            command = parse_command(line)
            if isinstance(command, Quit):
                return False
            if command is not None:
                self.answer(command)
        except BoardzooError as exc:  # a malformed line, or one the rules or agent refuse
            self.say(Error(str(exc)))
        return True

    def answer(self, command: Command) -> None:
        """Carry out one command (all but ``quit``), answering where the protocol says."""
        if isinstance(command, Hello):
            self.say(Id(Id.NAME, self.name), Id(Id.AUTHOR, "boardzoo"),
                     ProtocolVersion(), Games(tuple(self.games)), Ok())
        elif isinstance(command, Game):
            if command.name not in self.games:
                raise UnknownAgentError(f"this engine plays {', '.join(self.games)}, "
                                        f"not {echo(command.name)}")
            self.game, self.agent, self.state, self.history = command.name, None, None, None
        elif isinstance(command, NewGame):
            self.agent_for(command.seed, fresh=command.seed is not None).reset()
            self.state, self.history = None, None
        elif isinstance(command, IsReady):
            if self.game:
                self.agent_for()  # heavy loading happens before `go`
            self.say(ReadyOk())
        elif isinstance(command, Position):
            self.set_position(command)
        elif isinstance(command, Go):
            self.go(command)
        elif not isinstance(command, Legal):  # `legal`: the agent finds the moves itself
            raise AssertionError(f"a command without a handler: {command!r}")

    def agent_for(self, seed: int | None = None, fresh: bool = False) -> Agent:
        """The served agent: built as ``make_agent(AGENT, game, seed)`` when there is none
        yet or ``fresh`` asks for a new one (a ``newgame`` with a seed)."""
        if self.agent is None or fresh:
            self.agent = make_agent(self.spec, self._game(), seed)
        return self.agent

    def set_position(self, command: Position) -> None:
        """Set the game so far: the first position and the moves played from it."""
        self.state, self.history, self.refused = None, None, True
        cls = state_class(self._game())
        state = cls.start() if command.text is None else cls.from_text(command.text)
        first, moves = state, list(command.moves)
        for move in moves:
            state = state.apply(state.parse_move(move))
        self.state, self.history, self.refused = state, (first, moves), False

    def go(self, command: Go) -> None:
        """Choose a move in the position set last, within the command's limits."""
        if self.refused:
            raise UnknownAgentError("no position to move in: the last 'position' was refused")
        state = self.state
        if state is None:  # guessing the start position would play a move of another game
            raise UnknownAgentError("no position to move in: send 'position startpos' or "
                                    "'position text TEXT' first")
        agent = self.agent_for()
        if state.is_terminal():
            raise UnknownAgentError("the game is over: no move to make")
        limits = command.limits
        if limits.nodes is not None and limits.nodes > MAX_NODES:
            raise UnknownAgentError(f"go: nodes must be at most {MAX_NODES:,}, got "
                                    f"{limits.nodes:,}")
        if not agent.set_node_limit(limits.nodes):
            raise UnknownAgentError(f"go: {self.spec} has no node or simulation budget; "
                                    "its spec sets the search size: send go without nodes")
        agent.set_move_time(limits.movetime)
        if self.history is not None:
            agent.see_game(*self.history)
        before = agent.stats()
        started = time.perf_counter()
        move = agent.select_move(state)
        info = _info(before, agent, time.perf_counter() - started)
        self.say(info, BestMove(state.move_to_str(move)))

    def _game(self) -> str:
        if not self.game:
            raise UnknownAgentError("no game chosen: send 'game NAME' first")
        return self.game


def _info(before: dict[str, float], agent: Agent, seconds: float) -> Info:
    """The ``info`` of one move: depth, score, nodes (what the agent counts) and time."""
    after = agent.stats()
    pairs = []
    if after.get("moves", 0) > before.get("moves", 0) and "depth_sum" in after:
        pairs.append(("depth", f"{after['depth_sum'] - before.get('depth_sum', 0):g}"))
    if agent.last_value is not None:
        pairs.append(("score", f"{agent.last_value:.4g}"))
    for key in ("nodes", "simulations"):  # the agent's counter of searched nodes
        if key in after:
            pairs.append(("nodes", f"{after[key] - before.get(key, 0):g}"))
            break
    pairs.append(("time", f"{seconds:.3f}"))
    return Info(tuple(pairs))


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
            server.say(Error(f"a command line over {MAX_LINE:,} characters was skipped"))
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
