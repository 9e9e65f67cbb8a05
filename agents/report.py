"""Tournament reports: ranking table, pairwise score matrix, as Markdown, JSON and a PNG heatmap."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from boardzoo.envs.core.game import printable

from .ratings import RatingError, Ratings, Result, fit


def results_of(records: Sequence[dict]) -> list[Result]:
    """Return the rating results of games.jsonl records (first mover listed first)."""
    return [Result(r["players"][0], r["players"][1], float(r["scores"][0])) for r in records]


def build(records: Sequence[dict], agents: Sequence[str] | None = None,
          anchor: str | None = None, prior: float = 1.0) -> dict:
    """Return the report of a set of games: ratings table and pairwise matrix (JSON-ready).

    Games of different boardzoo games cannot share one rating list: that is an error.
    """
    kinds = sorted({str(r.get("game", "?")) for r in records})
    if len(kinds) > 1:
        raise RatingError(f"these games are of {len(kinds)} different games "
                          f"({', '.join(kinds)}); rate each game's games on their own")
    ratings = fit(results_of(records), anchor=anchor, prior=prior, players=agents)
    return from_ratings(ratings, records, prior)


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
    }


def seconds(value: float | None) -> str:
    """Return a time per move for the tables ("—" where the games did not record it)."""
    return "—" if value is None else f"{value:.3f}"


def markdown(report: dict) -> str:
    """Return the ranking table and the score matrix as Markdown."""
    lines = [f"Ratings: Bradley-Terry ML on the Elo scale, {report['anchor']} = 0, "
             f"95% CI; {report['games']} games (mean {report['mean_plies']} plies); "
             "s/move, max s: mean and longest seconds per move.", "",
             "| # | agent | rating | 95% CI | s/move | max s | games | score | draws |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k, row in enumerate(report["ranking"], 1):
        lines.append(f"| {k} | {row['agent']} | {row['rating']:.0f} | ±{row['ci95']:.0f} | "
                     f"{seconds(row.get('mean_move_seconds'))} | "
                     f"{seconds(row.get('max_move_seconds'))} | "
                     f"{row['games']} | {100 * row['score']:.1f}% | "
                     f"{100 * row['draw_rate']:.1f}% |")
    order = [row["agent"] for row in report["ranking"]]
    lines += ["", "Score of the row agent against the column agent (games in brackets):", "",
              "| vs | " + " | ".join(order) + " |", "|---|" + "---:|" * len(order)]
    for a in order:
        cells = []
        for b in order:
            s, n = report["score_matrix"][a][b], report["games_matrix"][a][b]
            cells.append("—" if a == b else "" if s is None else f"{100 * s:.0f}% ({n})")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


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
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(report: dict, out: Path, png: bool = True) -> list[Path]:
    """Write report.md, report.json and (if ``png``) matrix.png into ``out``; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.md", out / "report.json"]
    paths[0].write_text(printable(markdown(report)), encoding="utf-8")
    paths[1].write_text(json.dumps(report, indent=2, allow_nan=False) + "\n")
    if png:
        try:
            heatmap(report, out / "matrix.png")
            paths.append(out / "matrix.png")
        except ImportError:  # matplotlib is optional for the rest of the report
            print("boardzoo: matplotlib is not installed: no matrix.png", file=sys.stderr)
    return paths
