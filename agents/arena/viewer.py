"""One self-contained HTML file: the ratings, the crosstable and every game, steppable.

The page needs no server and no network: the CSS and JavaScript are inline
(``viewer.html`` is the template) and the boards are SVG drawn by the page from
per-ply data embedded as JSON: each position's text, one piece character per
cell, the highlighted cells. Each board's fixed geometry is embedded once
(:class:`~boardzoo.envs.core.board_view.BoardView`).
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from boardzoo.envs.core.board_view import BoardView, hex_colour
from boardzoo.envs.core.files import write_atomic
from boardzoo.envs.core.game import BoardzooError, printable

from .replay import Replay, replay
from .report import seconds

#: Screen pixels between neighbouring cell centres that a board is shown with at least (why:
#: the 417 small hexagons and 41 column letters of Whistling in 480 pixels were unreadable).
CELL_PIXELS = 36
MIN_WIDTH = 480
#: Characters that stand for the piece tokens of a board on the page ("." is an empty cell).
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HTML_FILE = "report.html"


def board_data(view: BoardView) -> tuple[dict, dict[str, str]]:
    """Return the JSON-ready geometry of a board and its token -> character map."""
    tokens = sorted(view.glyphs)
    if len(tokens) > len(TOKEN_CHARS):
        raise BoardzooError(f"a board with {len(tokens)} kinds of piece cannot be shown")
    chars = dict(zip(tokens, TOKEN_CHARS, strict=False))
    glyphs = {chars[t]: {"fill": hex_colour(g.fill), "outline": hex_colour(g.outline),
                         "label": g.label, "labelColor": hex_colour(g.label_color), "token": t}
              for t, g in view.glyphs.items()}
    data = {
        "width": view.width, "height": view.height,
        "background": hex_colour(view.background),
        "cells": [" ".join(f"{x:.1f},{y:.1f}" for x, y in pts) for pts in view.cells],
        "centres": [[round(x, 1), round(y, 1)] for x, y in view.centres],
        "fills": [hex_colour(c) for c in view.cell_fills],
        "edge": hex_colour(view.cell_edge) if view.cell_edge else None,
        "highlight": hex_colour(view.highlight),
        "radius": round(view.radius, 1),
        "glyphs": glyphs,
        "labels": [[round(lb.x, 1), round(lb.y, 1), lb.text] for lb in view.labels],
        "display": display_width(view),
        "legend": legend(view, chars),
    }
    return data, chars


def display_width(view: BoardView) -> int:
    """Return the width in screen pixels to show a board at: 480, or more where its cells sit
    closer than :data:`CELL_PIXELS` apart at that width."""
    (x0, y0), rest = view.centres[0], view.centres[1:]
    spacing = min((math.hypot(x - x0, y - y0) for x, y in rest), default=view.width)
    return max(MIN_WIDTH, math.ceil(view.width * CELL_PIXELS / spacing))


def legend(view: BoardView, chars: dict[str, str]) -> list[list]:
    """Return the board's key: ``[name, [piece characters]]`` per name, in the legend's order
    (``["king", ["K", "k"]]``: the pieces of both sides that the name stands for)."""
    groups: dict[str, list[str]] = {}
    for token, name in view.legend.items():
        if token in chars:
            groups.setdefault(name, []).append(chars[token])
    return [[name, tokens] for name, tokens in groups.items()]


def game_data(game: Replay, view: BoardView, chars: dict[str, str]) -> dict:
    """Return the JSON-ready record of one replayed game with every position it passed."""
    rec = game.record
    positions, pieces, marked = [], [], []
    for ply, state in enumerate(game.states):
        action_state = game.action_state(ply)
        positions.append(state.to_text())
        pieces.append("".join(chars[t] if t else "." for t in view.pieces(action_state)))
        marked.append(view.marked(action_state, game.last_move(ply)))
    names = list(game.states[0].player_names)
    return {
        "id": rec["id"], "game": game.spec.name, "players": rec["players"], "sides": names,
        "result": rec.get("result", ""), "termination": rec.get("termination", ""),
        "scores": rec["scores"], "plies": rec["plies"], "seconds": _seconds(rec.get("seconds")),
        "thinkSeconds": _seconds_list(rec.get("think_seconds")),
        "moveSeconds": _seconds_list(rec.get("move_seconds")),
        "moves": rec["moves"], "movers": [s.player_names[s.to_move] for s in game.states[:-1]],
        "positions": positions, "pieces": pieces, "marked": marked,
        "status": [game.status(p) for p in range(len(game.states))],
    }


def _seconds(value: object) -> float | None:
    """Return a finite time in seconds, or None for anything else (why: a record from
    elsewhere may hold "x" or NaN there, which the page's script cannot show)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def _seconds_list(value: object) -> list[float | None] | None:
    """Return a list of times with each entry checked by :func:`_seconds`; None if no list."""
    return [_seconds(v) for v in value] if isinstance(value, list) else None


def page_data(records: Sequence[dict]) -> dict:
    """Return the boards and games of ``records`` as the page's JSON data."""
    boards: dict[str, dict] = {}
    chars: dict[str, dict[str, str]] = {}
    views: dict[str, BoardView] = {}
    games = []
    for rec in records:
        game = replay(rec)
        name = game.spec.name
        if name not in views:
            if game.spec.board_view is None:
                raise BoardzooError(f"{name} has no board view to show its games")
            views[name] = game.spec.board_view()
            boards[name], chars[name] = board_data(views[name])
        games.append(game_data(game, views[name], chars[name]))
    return {"boards": boards, "games": games}


def _score_colour(score: float) -> str:
    """Return a red (0) - yellow (0.5) - green (1) cell colour, light enough for black text."""
    red = 255 if score < 0.5 else round(255 - 2 * (score - 0.5) * 120)
    green = 255 if score >= 0.5 else round(135 + 2 * score * 120)
    return f"#{red:02x}{green:02x}8c"


def ratings_html(report: dict) -> str:
    """Return the ratings table (with 95% intervals) and the crosstable as HTML."""
    e = html.escape
    rows = ["<table id='ratings'><tr><th>#</th><th>agent</th><th>rating</th><th>95% CI</th>"
            "<th>s/move</th><th>max s</th><th>games</th><th>score</th><th>draws</th></tr>"]
    for k, r in enumerate(report["ranking"], 1):
        score = "" if r["score"] is None else f"{100 * r['score']:.1f}%"
        draws = "" if r["draw_rate"] is None else f"{100 * r['draw_rate']:.1f}%"
        rows.append(f"<tr><td>{k}</td><td>{e(r['agent'])}</td><td>{r['rating']:.0f}</td>"
                    f"<td>&plusmn;{r['ci95']:.0f}</td>"
                    f"<td>{seconds(r.get('mean_move_seconds'))}</td>"
                    f"<td>{seconds(r.get('max_move_seconds'))}</td><td>{r['games']}</td><td>{score}</td>"
                    f"<td>{draws}</td></tr>")
    rows.append("</table>")
    order = [r["agent"] for r in report["ranking"]]
    rows.append("<table id='crosstable'><tr><th>vs</th>"
                + "".join(f"<th>{e(b)}</th>" for b in order) + "</tr>")
    for a in order:
        cells = []
        for b in order:
            s, n = report["score_matrix"][a][b], report["games_matrix"][a][b]
            if a == b or s is None:
                cells.append("<td>" + ("&mdash;" if a == b else "") + "</td>")
            else:
                cells.append(f"<td style='background:{_score_colour(s)}'>"
                             f"{100 * s:.0f}% ({n})</td>")
        rows.append(f"<tr><th>{e(a)}</th>{''.join(cells)}</tr>")
    rows.append("</table>")
    anchor = html.escape(str(report["anchor"]))
    intro = (f"<p>Bradley-Terry ratings on the Elo scale, {anchor} = 0, 95% confidence "
             f"intervals; {report['games']} games (mean {report['mean_plies']} plies). "
             "s/move and max s: the agent's mean and longest time per move. "
             "The crosstable gives the row agent's score against the column agent "
             "(games in brackets).</p>")
    return intro + "\n".join(rows)


def render_page(records: Sequence[dict], report: dict | None, title: str) -> str:
    """Return the whole HTML page for ``records`` (and the ratings ``report``, if given)."""
    template = resources.files(__package__).joinpath("viewer.html").read_text(encoding="utf-8")
    # "<" escaped: the JSON sits in a <script> element, which "</script>" would end
    data = json.dumps(page_data(records), separators=(",", ":")).replace("<", "\\u003c")
    ratings = ratings_html(report) if report else "<p>No ratings for these games.</p>"
    parts = {"TITLE": html.escape(title), "RATINGS": ratings, "DATA": data}
    # one pass: a title or an agent name that contains "{{DATA}}" stays text
    return re.sub(r"\{\{(TITLE|RATINGS|DATA)\}\}", lambda m: parts[m.group(1)], template)


def write_html(records: Sequence[dict], report: dict | None, path: str | Path,
               title: str = "boardzoo games") -> Path:
    """Write the self-contained HTML page of ``records`` to ``path``; return the path."""
    path = Path(path)
    # printable: a title or name holding the bytes of a non-UTF-8 file name cannot be encoded
    write_atomic(path, printable(render_page(records, report, title)))
    return path
