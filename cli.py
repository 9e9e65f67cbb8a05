"""The boardzoo command line: legal, perft, play, tournament, rate, replay, report, train, plot,
export (``boardzoo --help`` lists them from the parser).

Every user error (bad game, position, move, agent, config or checkpoint)
ends as one ``boardzoo: error: ...`` line on stderr and exit status 2.
Feature packages add their own subcommands through a ``register(subparsers)``
function (``boardzoo.agents.arena.commands``, ``boardzoo.training.commands``).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import time
from collections.abc import Sequence

from boardzoo import __version__
from boardzoo.agents import AGENT_FACTORIES, make_agent, movetime
from boardzoo.agents.agent_spec import canonical_spec
from boardzoo.agents.arena import commands as arena_commands
from boardzoo.agents.arena import openings
from boardzoo.agents.arena.play import play_game
from boardzoo.agents.engine import server as engine_server
from boardzoo.agents.human import HumanQuit
from boardzoo.agents.processes import Terminated
from boardzoo.envs.core.game import BoardzooError, divide
from boardzoo.envs.core.registry import GAMES, get_spec, load_state
from boardzoo.envs.core.threads import one_torch_thread
from boardzoo.training import commands as training_commands

EXIT_USAGE = 2
#: Longest error line printed (library messages cut what they echo; this bounds the rest).
ERROR_LIMIT = 1000
#: Errors of writing stdout itself (full device, closed or broken stream).
OUTPUT_ERRNOS = (errno.ENOSPC, errno.EBADF, errno.EPIPE, errno.EIO)


class UsageError(BoardzooError):
    """A command-line usage error (bad option, missing argument)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line instead of usage text plus exit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _add_game(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=f"game name: {', '.join(GAMES)}")


def _add_position(p: argparse.ArgumentParser) -> None:
    p.add_argument("--position", metavar="TEXT", help="position text (default: start position)")


def cmd_legal(args: argparse.Namespace) -> int:
    """Print every legal move of the position in canonical notation, one per line."""
    state = load_state(args.game, args.position)
    for move in state.iter_legal_move_strs():  # streamed: a position may have 10^5+ turns
        print(move)
    return 0


def cmd_perft(args: argparse.Namespace) -> int:
    """Count leaf nodes at a depth; the last line printed is the count alone."""
    if args.depth < 0:
        raise UsageError(f"depth must be >= 0, got {args.depth}")
    state = load_state(args.game, args.position)
    fast = get_spec(args.game).perft  # a compiled kernel's, where the game has one
    if fast:
        fast(state, 0)  # load (the first time: compile) the kernel before the clock starts
    started = time.perf_counter()
    if args.divide and args.depth >= 1:
        counts = divide(state, args.depth, fast)
        for move, count in counts.items():
            print(f"{move}: {count}")
        total = sum(counts.values())
    else:
        total = fast(state, args.depth) if fast else state.perft(args.depth)
    seconds = time.perf_counter() - started
    rate = total / seconds if seconds > 0 else float("inf")
    print(f"perft({args.depth}) = {total} in {seconds:.3f} s ({rate:,.0f} leaves/s)")
    print(total)
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    """Play games between two agents and print each result and the totals."""
    if len(args.agents) != 2:
        raise UsageError("--agents needs exactly two agent specs")
    if args.games < 1:
        raise UsageError(f"--games must be >= 1, got {args.games}")
    if args.max_moves is not None and args.max_moves < 1:
        raise UsageError(f"--max-moves must be >= 1, got {args.max_moves}")
    load_state(args.game, args.position)  # validate game and position before building agents
    if args.position is not None and args.openings != "none":
        raise UsageError("--position and --openings both say where games start; give one")
    lines = openings.book(args.openings, args.game, args.seed or 0)
    specs = [canonical_spec(a) for a in args.agents]  # ALPHABETA:1 and alphabeta:1 are one agent
    one_torch_thread()  # this command owns the process
    totals = {specs[0]: 0.0, specs[1]: 0.0} if specs[0] != specs[1] else None
    for g in range(args.games):
        # colours alternate between games so neither agent always moves first; the two games
        # of a pair share an opening
        order = specs if g % 2 == 0 else specs[::-1]
        opening = lines[g // 2]
        seed = None if args.seed is None else args.seed + g
        agents = [make_agent(s, args.game, None if seed is None else seed * 2 + i)
                  for i, s in enumerate(order)]
        movetime.limit_agents(agents, args.movetime)
        try:
            record = play_game(args.game, agents, position=args.position or opening.position,
                               max_moves=args.max_moves, show=args.show,
                               opening=opening.moves)
        except HumanQuit as exc:  # leaving a game is a choice, not an error
            print(f"game {g + 1} abandoned: {exc}")
            return 0
        names = record.player_names
        print(f"game {g + 1}: {order[0]} ({names[0]}) vs {order[1]} ({names[1]}): "
              f"{record.description} after {record.plies} plies, "
              f"score {record.scores[0]}-{record.scores[1]}")
        if args.show:
            print("moves: " + " ".join(record.moves))
        if totals is not None:
            for spec, score in zip(order, record.scores, strict=True):
                totals[spec] += score
    if totals is not None and args.games > 1:
        print("total: " + ", ".join(f"{s} {v:g}" for s, v in totals.items()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand."""
    parser = _Parser(prog="boardzoo")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("legal", help="list the legal moves of a position")
    _add_game(p)
    _add_position(p)
    p.set_defaults(func=cmd_legal)

    p = sub.add_parser("perft", help="count move sequences to a depth")
    _add_game(p)
    p.add_argument("depth", type=int, help="number of plies")
    _add_position(p)
    p.add_argument("--divide", action="store_true", help="print the count below each move")
    p.set_defaults(func=cmd_perft)

    p = sub.add_parser("play", help="play games between two agents")
    _add_game(p)
    p.add_argument("--agents", nargs=2, metavar=("A", "B"), default=["random", "random"],
                   help="agent specs, first mover of game 1 first (e.g. random mcts:400); kinds: "
                   + ", ".join(sorted(AGENT_FACTORIES)))
    p.add_argument("--games", type=int, default=1, help="number of games (colours alternate)")
    p.add_argument("--seed", type=int, default=None, help="seed for reproducible games")
    p.add_argument("--show", action="store_true", help="show the board after every move")
    p.add_argument("--max-moves", type=int, default=None, help="stop a game after N turns")
    movetime.add_option(p)
    openings.add_option(p, default="none")
    _add_position(p)
    p.set_defaults(func=cmd_play)

    arena_commands.register(sub)
    engine_server.register(sub)
    training_commands.register(sub)
    # from the parser itself, so that the summary never leaves out a subcommand
    parser.description = f"The boardzoo command line: {', '.join(sub.choices)}."
    return parser


def _version() -> str:
    return f"boardzoo {__version__}"


def error_line(exc: BaseException) -> str:
    """Return the one line that reports ``exc`` (no doubled ``boardzoo:`` prefix)."""
    if isinstance(exc, OSError) and not isinstance(exc, BoardzooError):
        where = f": {exc.filename}" if exc.filename else ""
        text = f"{exc.strerror or exc}{where}"
    else:
        text = str(exc)
    for prefix in ("boardzoo: ", "boardzoo "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    line = " ".join(text.split())
    if len(line) > ERROR_LIMIT:  # e.g. an OS error naming a 100 KB path: keep one short line
        line = f"{line[:ERROR_LIMIT]}... ({len(line):,} characters)"
    return "boardzoo: error: " + line


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (2 for any user error, a file-system fault
    included: a folder that cannot be written, a full disk, stdout on /dev/full)."""
    try:
        args = build_parser().parse_args(argv)
        status = args.func(args) or 0
        sys.stdout.flush()  # why here: a full or closed stdout must fail inside the try
        return status
    except BrokenPipeError:  # e.g. `boardzoo legal loa | head -1`
        _quiet_stdout()
        return 0
    except (BoardzooError, OSError) as exc:
        if isinstance(exc, OSError) and not exc.filename and exc.errno in OUTPUT_ERRNOS:
            _quiet_stdout()  # the output itself failed (e.g. stdout on /dev/full)
            exc = OSError(exc.errno, f"cannot write the output: {exc.strerror}")
        print(error_line(exc), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:  # Terminated: SIGTERM where a command stops cleanly
        terminated = isinstance(exc, Terminated)
        print(f"boardzoo: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
