"""The ``replay`` and ``report`` subcommands: recorded games as a GIF, text or an HTML page."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from boardzoo.envs.core.game import printable

from . import report
from .gif import replay_gif
from .records import ArenaError
from .replay import FRAME_MS, games_path, load_games, pick, replay, result_text
from .viewer import HTML_FILE, write_html


def cmd_replay(args: argparse.Namespace) -> int:
    """List the games, or replay one as a GIF or as text boards."""
    records = load_games(args.source)
    if args.list:
        for r in records:
            print(printable(f"{r['id']}\t{r.get('game', '?')}\t{r['players'][0]} vs "
                            f"{r['players'][1]}\t{result_text(r)}\t{r['plies']} plies"))
        return 0
    if args.frame_ms < 1:
        raise ArenaError(f"--frame-ms must be at least 1, got {args.frame_ms}")
    game = replay(pick(records, args.game))
    if args.gif:
        path = replay_gif(game, args.gif, args.frame_ms)
        print(f"{path}: {len(game.states)} frames, game {game.record['id']} "
              f"({result_text(game.record)}, {len(game.moves)} plies)")
        return 0
    for ply, state in enumerate(game.states):
        head = "start" if not ply else f"{ply}. {game.moves[ply - 1]}"
        print(f"{head}\n{state.render_text()}\n{game.status(ply)}\n")
    return 0


def write_page(source: str, out: Path, rep: dict) -> Path:
    """Write report.html of the games of ``source`` into ``out``; return its path."""
    records = load_games(source)
    title = f"{rep['game']} games: {Path(source).resolve().parent.name}"
    return write_html(records, rep, out / HTML_FILE, title)


def cmd_report(args: argparse.Namespace) -> int:
    """Write the report files of a games.jsonl (and, with --html, the HTML viewer)."""
    path = games_path(args.source)
    out = Path(args.out) if args.out else path.parent
    records = load_games(path)
    rep = report.build(records, anchor=args.anchor, prior=args.prior)
    paths = report.write(rep, out, png=not args.no_png)
    if args.html:
        paths.append(write_page(str(path), out, rep))
    print(printable("report: " + ", ".join(str(p) for p in paths)))
    return 0


def register(subparsers: argparse._SubParsersAction,
             rating_options: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``replay`` and ``report`` subcommands (``rating_options`` adds the options
    shared with ``rate``) to the boardzoo CLI."""
    p = subparsers.add_parser("replay", help="replay a recorded game as a GIF or as text",
                              description="Replay one game of a games.jsonl file or folder "
                              "(a tournament folder, or a folder with an eval_games.jsonl).")
    p.add_argument("source", help="games.jsonl file or tournament folder")
    p.add_argument("--game", default=None, metavar="ID",
                   help="id of the game, e.g. 'random|greedy|0' (default: the first game)")
    p.add_argument("--gif", default=None, metavar="OUT",
                   help="write an animated GIF, one frame per position (default: print the "
                   "text boards)")
    p.add_argument("--frame-ms", type=int, default=FRAME_MS,
                   help=f"milliseconds per GIF frame (default {FRAME_MS}; the last is held longer)")
    p.add_argument("--list", action="store_true", help="list the games' ids and results")
    p.set_defaults(func=cmd_replay)

    p = subparsers.add_parser("report", help="write the report files of a games.jsonl",
                              description="Ratings and score matrix (report.md, report.json, "
                              "matrix.png) and, with --html, report.html: one self-contained "
                              "page with every game steppable move by move.")
    p.add_argument("source", help="games.jsonl file or tournament folder")
    p.add_argument("--out", default=None,
                   help="folder for the files (default: the folder of the games file)")
    p.add_argument("--html", action="store_true", help="also write the HTML viewer report.html")
    rating_options(p)
    p.set_defaults(func=cmd_report)
