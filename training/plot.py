"""``boardzoo plot RUN``: learning curves of a training run to PNG (matplotlib, Agg)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from boardzoo.envs.core.files import write_atomic

from .config import ConfigError

#: Written in the evaluation panel of a run that has not been evaluated yet.
NO_EVAL_NOTE = ("no evaluation yet:\nthe run evaluates every eval.every iterations\n"
                "and after its last one")


class RunNotFoundError(ConfigError):
    """A run folder without the metrics a plot needs (or no matplotlib to draw it)."""


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def plot_run(run: str | Path, output: str | Path | None = None) -> Path:
    """Draw losses, self-play speed and game length, and evaluation scores; return the PNG."""
    run = Path(run)
    metrics_path = run / "metrics.csv"
    if not metrics_path.is_file():
        raise RunNotFoundError(f"{str(run)!r} is not a training run (no metrics.csv)")
    metrics = _read(metrics_path)
    evals = _read(run / "eval.csv") if (run / "eval.csv").is_file() else []
    if not metrics:
        raise RunNotFoundError(f"{str(run)!r} has no finished iteration to plot yet")

    try:
        import matplotlib
    except ImportError:
        raise RunNotFoundError("boardzoo plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(output) if output else run / "curves.png"
    formats = plt.gcf().canvas.get_supported_filetypes()
    plt.close("all")
    if out.suffix.lstrip(".").lower() not in formats:
        raise RunNotFoundError(f"--output {str(out)!r}: unknown image format; use one of "
                               f"{', '.join('.' + f for f in sorted(formats))}")

    it = [_num(r["iteration"]) for r in metrics]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0][0]
    for key, label in (("loss", "total"), ("policy_loss", "policy (cross-entropy)"),
                       ("value_loss", "value (MSE)")):
        ax.plot(it, [_num(r[key]) for r in metrics], label=label)
    ax.set_title("training loss")
    ax.set_xlabel("iteration")
    ax.legend()
    ax = axes[0][1]
    ax.plot(it, [_num(r["games_per_hour"]) for r in metrics], color="tab:green")
    ax.set_title("self-play games per hour")
    ax.set_xlabel("iteration")
    ax = axes[1][0]
    ax.plot(it, [_num(r["avg_length"]) for r in metrics], color="tab:purple")
    ax.set_title("self-play game length (actions)")
    ax.set_xlabel("iteration")
    ax = axes[1][1]
    opponents: dict[str, list[tuple[float, float]]] = {}
    for r in evals:
        name = "previous best" if r["opponent"].startswith("best") else r["opponent"]
        opponents.setdefault(name, []).append((_num(r["iteration"]), _num(r["score"])))
    # markers shrink down the list so that curves on top of each other stay visible
    for k, (name, pts) in enumerate(opponents.items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="osD^v<>"[k % 7],
                markersize=max(3, 10 - 2 * k), linewidth=1.5, label=name)
    ax.set_ylim(-0.05, 1.05)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_title("evaluation score (wins + draws/2)")
    ax.set_xlabel("iteration")
    if opponents:
        ax.legend(fontsize=8)
    else:  # an empty panel alone reads as a broken plot
        ax.text(0.5, 0.5, NO_EVAL_NOTE, ha="center", va="center", transform=ax.transAxes,
                color="dimgrey")
    from matplotlib.ticker import MaxNLocator

    for row in axes:
        for a in row:
            a.xaxis.set_major_locator(MaxNLocator(integer=True))
            a.grid(alpha=0.3)
    fig.suptitle(f"boardzoo training run {run.name}")
    fig.tight_layout()
    # the format from the name, as savefig would take it from a path (png without a suffix)
    kind = out.suffix.lstrip(".").lower() or "png"
    write_atomic(out, lambda f: fig.savefig(f, format=kind, dpi=90))
    plt.close(fig)
    return out
