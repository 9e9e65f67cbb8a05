"""Tournament reports: ranking table, pairwise score matrix, per-match trinomial and
pentanomial figures, as Markdown, JSON and a PNG heatmap.

A game identical to an earlier one (same players in the same seats, same start, same
moves: two deterministic agents replaying a game) is no new evidence: it is flagged
(``repeated`` in report.json, a line under the table) and left out of the ratings, the
counts and the intervals, which therefore come from distinct games only.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from boardzoo.agents.agent_spec import canonical_spec
from boardzoo.envs.core.files import write_atomic
from boardzoo.envs.core.game import printable

from .pairs import match_stats
from .ratings import RatingError, Ratings, Result, fit


def results_of(records: Sequence[dict]) -> list[Result]:
    """Return the rating results of games.jsonl records (first mover listed first)."""
    return [Result(r["players"][0], r["players"][1], float(r["scores"][0])) for r in records]


def canonical(records: Sequence[dict]) -> list[dict]:
    """Return the records with their players named as the arena names them (kinds in lower
    case: ``MCTS:20`` in an old or hand-written file is ``mcts:20``)."""
    return [{**r, "players": [canonical_spec(p) for p in r["players"]]} for r in records]


def display_names(records: Sequence[dict]) -> dict[str, str]:
    """Return ``{spec: name}`` for the agents whose records give them one display name
    (``names``: a ``name=`` option or an engine's ``id name``) that no other agent has; the
    tables show those names, the rest by their spec."""
    seen: dict[str, set[str]] = {}
    for r in records:
        names = r.get("names")
        if isinstance(names, list) and len(names) == 2:
            for spec, name in zip(r["players"], names, strict=True):
                if isinstance(name, str) and name.strip():
                    seen.setdefault(spec, set()).add(name.strip()[:60])
    chosen = {spec: next(iter(names)) for spec, names in seen.items() if len(names) == 1}
    taken = list(chosen.values())
    specs = {p for r in records for p in r["players"]}
    return {spec: name for spec, name in chosen.items()
            if taken.count(name) == 1 and (name not in specs or name == spec)}


def repeats(records: Sequence[dict]) -> dict[int, int]:
    """Return ``{index: index of the earlier identical game}`` for every game that repeats one
    before it: the same players in the same seats, start position and moves (a record
    without its moves as text is never taken for a repeat)."""
    first: dict[tuple, int] = {}
    out = {}
    for i, r in enumerate(records):
        moves, start = r.get("moves"), r.get("start")
        if not (isinstance(moves, list) and all(isinstance(m, str) for m in moves)
                and (start is None or isinstance(start, str))):
            continue
        key = (tuple(r["players"]), r.get("start"), tuple(r["moves"]))
        if key in first:
            out[i] = first[key]
        else:
            first[key] = i
    return out


def build(records: Sequence[dict], agents: Sequence[str] | None = None,
          anchor: str | None = None, prior: float = 1.0) -> dict:
    """Return the report of a set of games: ratings table and pairwise matrix (JSON-ready).

    Games of different boardzoo games cannot share one rating list: that is an error.
    """
    kinds = sorted({str(r.get("game", "?")) for r in records})
    if len(kinds) > 1:
        raise RatingError(f"these games are of {len(kinds)} different games "
                          f"({', '.join(kinds)}); rate each game's games on their own")
    records = canonical(records)
    agents = None if agents is None else [canonical_spec(a) for a in agents]
    if anchor is not None:
        anchor = canonical_spec(anchor)
    again = repeats(records)
    distinct = [r for i, r in enumerate(records) if i not in again]
    ratings = fit(results_of(distinct), anchor=anchor, prior=prior, players=agents)
    rep = from_ratings(ratings, distinct, prior)
    rep["names"] = display_names(records)
    rep["games"] = len(records)
    rep["distinct_games"] = len(distinct)
    name = [str(r.get("id", f"line {i + 1}")) for i, r in enumerate(records)]
    rep["repeated"] = [{"id": name[i], "same_as": name[j]} for i, j in again.items()]
    return rep


def move_times(records: Sequence[dict]) -> dict[str, tuple[float, float]]:
    """Return each agent's mean and max seconds per move, from the records' ``think_seconds``,
    ``think_moves`` and ``max_move_seconds`` (games recorded without them are left out)."""
    spent: dict[str, list[float]] = {}  # agent -> [seconds, moves, longest]
    for rec in records:
        for k, agent in enumerate(rec["players"]):
            entry = _time_entry(rec, k)
            if entry is not None:
                acc = spent.setdefault(agent, [0.0, 0, 0.0])
                acc[0] += entry[0]
                acc[1] += entry[1]
                acc[2] = max(acc[2], entry[2])
    return {a: (round(sec / moves, 4), round(longest, 4))
            for a, (sec, moves, longest) in spent.items() if moves}


def _time_entry(record: dict, side: int) -> tuple[float, int, float] | None:
    """Return (seconds, moves, longest) of one side of a record, or None where the record
    lacks them or holds something else (why: games.jsonl may come from elsewhere, and
    ``"x"``, ``-1`` or ``1e999`` there must neither stop the report nor show as a time)."""
    try:
        entry = (_list_of(record, "think_seconds")[side], _list_of(record, "think_moves")[side],
                 _list_of(record, "max_move_seconds")[side])
    except IndexError:
        return None
    seconds_, moves, longest = entry
    ok = [isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
          for v in entry]
    return (seconds_, moves, longest) if all(ok) and isinstance(moves, int) else None


def _list_of(record: dict, key: str) -> list:
    """Return ``record[key]`` if it is a list, else an empty list."""
    value = record.get(key)
    return value if isinstance(value, list) else []


def from_ratings(r: Ratings, records: Sequence[dict], prior: float) -> dict:
    """Return the JSON-ready report of fitted ratings."""
    games, score, draws = r.games.sum(1), r.score.sum(1), r.draws.sum(1)
    times = move_times(records)
    rows = []
    for i in np.argsort(-r.rating, kind="stable"):
        mean_s, max_s = times.get(r.players[i], (None, None))
        rows.append({
            "agent": r.players[i],
            "rating": round(float(r.rating[i]), 1),
            "ci95": round(float(r.ci[i]), 1),
            "mean_move_seconds": mean_s,
            "max_move_seconds": max_s,
            "games": int(games[i]),
            "score": round(float(score[i] / games[i]), 4) if games[i] else None,
            "draw_rate": round(float(draws[i] / games[i]), 4) if games[i] else None,
        })
    matrix = {a: {b: (round(float(r.score[i, j] / r.games[i, j]), 4) if r.games[i, j] else None)
                  for j, b in enumerate(r.players)} for i, a in enumerate(r.players)}
    counts = {a: {b: int(r.games[i, j]) for j, b in enumerate(r.players)}
              for i, a in enumerate(r.players)}
    plies = [rec["plies"] for rec in records]
    order = [row["agent"] for row in rows]
    matches = [match_stats(records, a, b) for i, a in enumerate(order) for b in order[i + 1:]
               if r.games[r.index(a), r.index(b)]]
    return {
        "game": records[0]["game"] if records else None,
        "anchor": r.anchor,
        "prior_draws_per_pair": prior,
        "games": len(records),
        "mean_plies": round(float(np.mean(plies)), 1) if plies else None,
        "ranking": rows,
        "players": list(r.players),
        "score_matrix": matrix,
        "games_matrix": counts,
        "matches": matches,
    }


def seconds(value: float | None) -> str:
    """Return a time per move for the tables ("—" where the games did not record it)."""
    return "—" if value is None else f"{value:.3f}"


def markdown(report: dict) -> str:
    """Return the ranking table, the score matrix and the match figures as Markdown."""
    distinct = report.get("distinct_games", report["games"])
    counted = (f"{report['games']} games" if distinct == report["games"]
               else f"{report['games']} games, {distinct} distinct")
    name = report.get("names", {})
    lines = [f"Ratings: Bradley-Terry ML on the Elo scale, "
             f"{name.get(report['anchor'], report['anchor'])} = 0, "
             f"95% CI; {counted} (mean {report['mean_plies']} plies); "
             "s/move, max s: mean and longest seconds per move.", "",
             "| # | agent | rating | 95% CI | s/move | max s | games | score | draws |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k, row in enumerate(report["ranking"], 1):
        shown = name.get(row["agent"], row["agent"])
        lines.append(f"| {k} | {shown} | {row['rating']:.0f} | ±{row['ci95']:.0f} | "
                     f"{seconds(row.get('mean_move_seconds'))} | "
                     f"{seconds(row.get('max_move_seconds'))} | "
                     f"{row['games']} | {100 * row['score']:.1f}% | "
                     f"{100 * row['draw_rate']:.1f}% |")
    lines += _repeated_lines(report.get("repeated", []))
    order = [row["agent"] for row in report["ranking"]]
    lines += ["", "Score of the row agent against the column agent (games in brackets):", "",
              "| vs | " + " | ".join(name.get(a, a) for a in order) + " |",
              "|---|" + "---:|" * len(order)]
    for a in order:
        cells = []
        for b in order:
            s, n = report["score_matrix"][a][b], report["games_matrix"][a][b]
            cells.append("—" if a == b else "" if s is None else f"{100 * s:.0f}% ({n})")
        lines.append(f"| {name.get(a, a)} | " + " | ".join(cells) + " |")
    lines += _match_lines(report.get("matches", []), name)
    return "\n".join(lines) + "\n"


def _repeated_lines(repeated: Sequence[dict], shown: int = 5) -> list[str]:
    """Return the warning under the table that names the repeated games (none: [])."""
    if not repeated:
        return []
    names = ", ".join(f"{r['id']} (= {r['same_as']})" for r in repeated[:shown])
    more = f" and {len(repeated) - shown} more" if len(repeated) > shown else ""
    return ["", f"REPEATED: {len(repeated)} game(s) replay an earlier game move for move and "
            f"are not counted: {names}{more}. Use --openings to give each pair of games "
            "its own start."]


def _elo(stats: dict) -> str:
    """Return ``+35 [-103, +185]`` (Elo and its 95% interval), ``—`` where unbounded."""
    def one(v: float | None) -> str:
        return "—" if v is None else f"{round(v):+d}"
    if not stats["n"] or stats["elo"] is None:  # no games, or all won or all lost
        return "—"
    lo, hi = stats["elo_ci95"]
    return f"{one(stats['elo'])} [{one(lo)}, {one(hi)}]"


def _match_lines(matches: Sequence[dict], name: dict[str, str]) -> list[str]:
    """Return the table of each match's trinomial (games) and pentanomial (pairs) figures."""
    if not matches:
        return []
    lines = ["", "Each match from the first agent's side: Elo and 95% interval over games "
             "(trinomial, L-D-W) and over game pairs from one opening, colours swapped "
             "(pentanomial, pairs scoring 0-½-1-1½-2):", "",
             "| match | games | L-D-W | Elo (games) | pairs | 0-½-1-1½-2 | Elo (pairs) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for m in matches:
        tri, penta = m["trinomial"], m["pentanomial"]
        a, b = (name.get(x, x) for x in m["agents"])
        lines.append(f"| {a} vs {b} | {tri['n']} | "
                     f"{'-'.join(map(str, tri['counts']))} | {_elo(tri)} | {penta['n']} | "
                     f"{'-'.join(map(str, penta['counts']))} | {_elo(penta)} |")
    return lines


def heatmap(report: dict, path: Path) -> None:
    """Write a PNG heatmap of the pairwise score matrix (rows sorted by rating)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    order = [row["agent"] for row in report["ranking"]]
    n = len(order)
    grid = np.full((n, n), np.nan)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            s = report["score_matrix"][a][b]
            if s is not None and a != b:
                grid[i, j] = s
    fig, ax = plt.subplots(figsize=(1.2 * n + 2.5, 1.0 * n + 1.5))
    im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{100 * grid[i, j]:.0f}%", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(n), order, rotation=30, ha="right")
    ax.set_yticks(range(n), order)
    ax.set_xlabel("opponent")
    ax.set_title(f"{report['game']}: score of row vs column")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=100))
    plt.close(fig)


def write(report: dict, out: Path, png: bool = True) -> list[Path]:
    """Write report.md, report.json and (if ``png``) matrix.png into ``out``; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.md", out / "report.json"]
    write_atomic(paths[0], printable(markdown(report)))
    write_atomic(paths[1], json.dumps(report, indent=2, allow_nan=False) + "\n")
    if png:
        try:
            heatmap(report, out / "matrix.png")
            paths.append(out / "matrix.png")
        except ImportError:  # matplotlib is optional for the rest of the report
            print("boardzoo: matplotlib is not installed: no matrix.png", file=sys.stderr)
    return paths
