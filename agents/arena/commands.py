"""The ``tournament``, ``rate``, ``replay`` and ``report`` subcommands, added to the CLI by
:func:`register` (the last two live in :mod:`.viewer_commands`)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from boardzoo.agents import movetime
from boardzoo.agents.agent_spec import canonical_spec, spec_list
from boardzoo.agents.distributed import check_backend
from boardzoo.agents.processes import Terminated, sigterm_as_interrupt, worker_count_problem
from boardzoo.envs.core.game import printable
from boardzoo.envs.core.threads import one_torch_thread

from . import openings, report, viewer_commands
from .pairs import Sprt, pentanomial
from .records import ArenaError, read_games
from .runner import DEFAULT_MAX_PLIES
from .tournament import GAMES_FILE, locked, run_tournament, validate
from .viewer import HTML_FILE, write_html


def cmd_tournament(args: argparse.Namespace) -> int:
    """Run (or resume) a round robin, then print and write its report."""
    agents = [canonical_spec(a) for a in
              [*(spec_list(args.agents) if args.agents else []), *(args.agent or [])]]
    if len(agents) < 2:
        raise ArenaError("a tournament needs at least two agents: --agents A,B,... and/or "
                         "--agent SPEC (repeatable)")
    if args.out == "":
        raise ArenaError(f"--out is empty; name a folder (default results/GAME_{args.folder})")
    out = Path(args.out or f"results/{args.game}_{args.folder}")
    if args.workers < 1:
        raise ArenaError(f"--workers must be at least 1, got {args.workers}")
    too_many = worker_count_problem(args.workers) if args.address is None else None
    if too_many:  # local processes (or a local Ray instance's CPUs)
        raise ArenaError(f"--workers {too_many}")
    if args.max_plies < 1:  # 0 would make every game a draw before its first move
        raise ArenaError(f"--max-plies must be at least 1, got {args.max_plies}")
    validate(args.game, agents, args.games_per_pair)  # bad input creates no folder
    opening_book = openings.book(args.openings, args.game, args.seed)
    if opening_book.longest() >= args.max_plies:  # opening plies count: no agent would move
        raise ArenaError(f"--max-plies {args.max_plies} leaves the agents no move after the "
                         f"openings' {opening_book.longest()} plies (--openings "
                         f"{opening_book.spec}); give a larger --max-plies or --openings none")
    check_backend(args.backend, args.address)
    sprt = SprtWatch(Sprt.parse(args.sprt), agents) if args.sprt is not None else None
    one_torch_thread()  # this command owns the process
    with locked(out), sigterm_as_interrupt():  # one tournament per folder; SIGTERM as Ctrl-C
        try:
            records = run_tournament(args.game, agents, args.games_per_pair, out,
                                     seed=args.seed, workers=args.workers, resume=args.resume,
                                     max_plies=args.max_plies, progress=not args.no_progress,
                                     backend=args.backend, address=args.address,
                                     movetime=args.movetime, openings=args.openings,
                                     stop=sprt)
        except KeyboardInterrupt as exc:
            done = len(read_games(out / GAMES_FILE))
            how = "terminated" if isinstance(exc, Terminated) else "interrupted"
            print(printable(f"boardzoo: {how}; {done} finished game(s) are in "
                            f"{out / GAMES_FILE}: run the same command with --resume to "
                            "continue"), file=sys.stderr)
            return 143 if isinstance(exc, Terminated) else 130
        rep = report.build(records, agents, anchor=args.anchor, prior=args.prior)
        if sprt is not None:
            rep["sprt"] = sprt.summary()
        paths = report.write(rep, out, png=not args.no_png)
        if not args.no_html:
            paths.append(write_html(records, rep, out / HTML_FILE,
                                    f"{args.game} tournament {out}"))
    if sprt is not None:
        print(sprt.conclusion())
    print(printable(report.markdown(rep)))
    print(printable(f"games: {out / GAMES_FILE}; report: " + ", ".join(str(p) for p in paths)))
    return 0


class SprtWatch:
    """The stop rule of an SPRT match: after each finished game pair, print the pairs so
    far, the LLR and its bounds; stop once the LLR crosses one."""

    def __init__(self, test: Sprt, agents: list[str]) -> None:
        if len(agents) != 2:
            raise ArenaError(f"--sprt tests one agent against another: give two agents, "
                             f"not {len(agents)}")
        self.test, self.agents = test, agents
        self.pairs, self.llr, self.verdict = 0, 0.0, None
        self.trace: list[dict] = []

    def __call__(self, record: dict, finished: dict[str, dict]) -> bool:
        games = list(finished.values())
        again = report.repeats(games)  # a replayed game is no evidence: its pair drops out
        counts = pentanomial([g for i, g in enumerate(games) if i not in again], *self.agents)
        if sum(counts) == self.pairs:
            return False  # no new pair finished
        self.pairs, self.llr = sum(counts), self.test.llr(counts)
        self.verdict = self.test.verdict(self.llr)
        lower, upper = self.test.bounds
        self.trace.append({"pairs": self.pairs, "counts": counts, "llr": round(self.llr, 4)})
        print(f"SPRT {self.pairs} pairs ({'-'.join(map(str, counts))}): LLR {self.llr:.3f} "
              f"[{lower:.3f}, {upper:.3f}]", flush=True)
        return self.verdict is not None

    def summary(self) -> dict:
        """Return the test, its bounds, the verdict (None: undecided) and the LLR trace."""
        t = self.test
        return {"elo0": t.elo0, "elo1": t.elo1, "alpha": t.alpha, "beta": t.beta,
                "bounds": [round(b, 4) for b in t.bounds], "agents": self.agents,
                "pairs": self.pairs, "llr": round(self.llr, 4), "verdict": self.verdict,
                "trace": self.trace}

    def conclusion(self) -> str:
        """Return the line that ends the match: which hypothesis was accepted, or none."""
        a, b = self.agents
        t = self.test
        if self.verdict is None:
            return (f"SPRT: no decision after {self.pairs} pairs (LLR {self.llr:.3f}): "
                    "the games ran out; play more with --resume and a larger count")
        elo = t.elo1 if self.verdict == "H1" else t.elo0
        return (f"SPRT: {self.verdict} accepted after {self.pairs} pairs (LLR {self.llr:.3f}): "
                f"{a} vs {b} is nearer Elo {elo:g} than {t.elo0 + t.elo1 - elo:g} "
                f"(alpha {t.alpha:g}, beta {t.beta:g})")


def cmd_rate(args: argparse.Namespace) -> int:
    """Rate the games of a games.jsonl (or a tournament folder) and print the report."""
    src = Path(args.games)
    path = src / GAMES_FILE if src.is_dir() else src
    if not path.exists():
        raise ArenaError(f"no games file at {path}")
    records = read_games(path)
    if not records:
        raise ArenaError(f"{path} holds no games")
    rep = report.build(records, anchor=args.anchor, prior=args.prior)
    if args.out:  # write first: a folder that cannot be written fails before any output
        paths = report.write(rep, Path(args.out), png=not args.no_png)
    print(printable(report.markdown(rep)))
    if args.out:
        print(printable("report: " + ", ".join(str(p) for p in paths)))
    return 0


def _prior(text: str) -> float:
    """argparse type of ``--prior``: a finite number of at least 0, checked before any game."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of at least 0, got {text!r}")
    return value


def _add_rating_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--anchor", default=None,
                   help="agent rated 0 (default: random if it played, else the first agent)")
    p.add_argument("--prior", type=_prior, default=1.0,
                   help="virtual drawn games per pair that met (keeps perfect scores finite)")
    p.add_argument("--no-png", action="store_true", help="skip the matrix.png heatmap")


def cmd_match(args: argparse.Namespace) -> int:
    """Play A against B (a two-agent tournament), with --sprt until a bound."""
    if args.games_per_pair is None:
        args.games_per_pair = 20 if args.sprt is None else 2000
    return cmd_tournament(args)


def _add_match_options(p: argparse.ArgumentParser, command: str) -> None:
    """Add the options shared by ``tournament`` and ``match``."""
    p.add_argument("--game", required=True, help="game name: loa, ultima, whistling")
    p.add_argument("--workers", type=int, default=1,
                   help="parallel game processes, or CPUs of a local Ray instance (default 1)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="where games run: local processes (default) or Ray tasks "
                   "(docs/distributed.md)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="with --backend ray: the cluster to join (auto or HOST:PORT); "
                   "default: start a local Ray instance")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    folder = "arena" if command == "tournament" else command
    p.add_argument("--out", default=None, help=f"output folder (default results/GAME_{folder})")
    p.add_argument("--resume", action="store_true", help="continue the games.jsonl in --out")
    p.add_argument("--max-plies", type=int, default=DEFAULT_MAX_PLIES,
                   help=f"adjudicate a draw after this many plies (default {DEFAULT_MAX_PLIES})")
    movetime.add_option(p)
    openings.add_option(p)
    p.add_argument("--sprt", default=None, metavar="TEST",
                   help="two agents only: stop at a bound of the sequential probability ratio "
                   "test on game pairs, e.g. elo0=0,elo1=10,alpha=0.05,beta=0.05 "
                   "(docs/arena.md#sprt)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-html", action="store_true",
                   help="skip report.html (the ratings and every game, steppable)")
    _add_rating_options(p)
    p.set_defaults(func=cmd_match if command == "match" else cmd_tournament, folder=folder)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``tournament``, ``rate``, ``replay`` and ``report`` subcommands to the CLI."""
    p = subparsers.add_parser("tournament", help="round-robin tournament between agents",
                              description="Every pair of agents plays --games-per-pair games "
                              "in pairs from one opening, colours swapped; results go to "
                              "OUT/games.jsonl.")
    p.add_argument("--agents", default=None,
                   help="comma-separated agent specs, e.g. random,greedy,mcts:200,alphabeta:2; "
                   "options stay with their spec: mcts:20,c=1.5,checkpoint:loa,sims=0")
    p.add_argument("--agent", action="append", metavar="SPEC",
                   help="one more agent spec (repeatable), e.g. --agent checkpoint:loa,sims=0")
    p.add_argument("--games-per-pair", type=int, default=20, help="games per pair (default 20)")
    _add_match_options(p, "tournament")

    p = subparsers.add_parser("match", help="one agent against another, optionally an SPRT",
                              description="A against B in game pairs (a two-agent "
                              "tournament); with --sprt, until the test accepts H0 or H1.")
    p.add_argument("agent", nargs=2, metavar="SPEC", help="the two agent specs, A then B")
    p.add_argument("--games", dest="games_per_pair", type=int, default=None,
                   help="games to play at most (default 20, with --sprt 2000)")
    p.set_defaults(agents=None)
    _add_match_options(p, "match")

    p = subparsers.add_parser("rate", help="rate the games of a games.jsonl",
                              description="Bradley-Terry ratings and the score matrix of the "
                              "games in a games.jsonl file or tournament folder.")
    p.add_argument("games", help="games.jsonl file or tournament folder")
    p.add_argument("--out", default=None, help="also write report.md/.json/.png here")
    _add_rating_options(p)
    p.set_defaults(func=cmd_rate)
    viewer_commands.register(subparsers, _add_rating_options)
