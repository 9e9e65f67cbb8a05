"""A training run's folder: config.yaml, metrics.csv, eval.csv, eval_games.jsonl, TensorBoard.

The checkpoint files themselves (checkpoint.pt, model.pt, best.pt) are written by the
trainer through :func:`boardzoo.training.checkpoint.save_atomic`; this module owns the
folder and the logs beside them, including their repair when a run resumes after a kill
(rows logged after the last checkpoint are forgotten, so nothing is counted twice).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from boardzoo.agents.arena.records import append_game, read_games, write_games
from boardzoo.envs.core.files import write_atomic

from .config import Config, ConfigError, dump_config

METRICS_FIELDS = ["iteration", "elapsed_s", "cpu_s", "selfplay_s", "train_s", "eval_s", "games",
                  "positions", "games_per_hour", "positions_per_s", "avg_length",
                  "first_player_wins", "second_player_wins", "draws", "buffer", "loss",
                  "policy_loss", "value_loss"]
#: Every evaluation game, one games.jsonl record per line (``boardzoo replay``, ``report --html``).
EVAL_GAMES = "eval_games.jsonl"
EVAL_FIELDS = ["iteration", "elapsed_s", "cpu_s", "opponent", "games", "wins", "draws", "losses",
               "score", "promoted"]


class RunDirError(ConfigError):
    """An output folder that already holds a run (without --resume), or none to resume."""


class RunDir:
    """The files of one run in ``out`` (see the module docstring)."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.checkpoint = self.out / "checkpoint.pt"

    def create(self, cfg: Config, config_source: str = "") -> None:
        """Start a new run: refuse a folder that holds one; write config.yaml and the CSV
        headers."""
        if self.checkpoint.exists():
            raise RunDirError(f"{str(self.out)!r} already holds a training run; continue it "
                              f"with --resume or choose another folder with --out")
        self.out.mkdir(parents=True, exist_ok=True)
        self.write_config(cfg, f"from {config_source}" if config_source else "")
        for name, fields in (("metrics.csv", METRICS_FIELDS), ("eval.csv", EVAL_FIELDS)):
            write_atomic(self.out / name, _csv_text([fields]))

    def write_config(self, cfg: Config, comment: str = "") -> None:
        """Write the config the run uses (a later plain --resume reads it)."""
        write_atomic(self.out / "config.yaml",
                     (f"# {comment}\n" if comment else "") + dump_config(cfg))

    def forget_after(self, iteration: int) -> None:
        """Drop log rows of iterations after ``iteration`` (a kill between log and save)."""
        for name in ("metrics.csv", "eval.csv"):
            path = self.out / name
            if path.exists():
                with open(path, newline="") as f:
                    rows = list(csv.reader(f))
                keep = rows[:1] + [r for r in rows[1:] if r and int(r[0]) <= iteration]
                write_atomic(path, _csv_text(keep))

    def append(self, name: str, fields: list[str], row: dict[str, Any]) -> None:
        """Append one row to a CSV log (floats with 6 significant digits)."""
        with open(self.out / name, "a", newline="") as f:
            csv.DictWriter(f, fields).writerow(
                {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})

    def append_eval(self, iteration: int, elapsed: float, cpu: float,
                    rows: list[dict[str, Any]], promoted: bool) -> None:
        """Append an evaluation's rows to eval.csv (``promoted`` on the vs-best row)."""
        for r in rows:
            self.append("eval.csv", EVAL_FIELDS, {
                "iteration": iteration, "elapsed_s": elapsed, "cpu_s": cpu,
                "opponent": r["opponent"], "games": r["games"], "wins": r["wins"],
                "draws": r["draws"], "losses": r["losses"], "score": r["score"],
                "promoted": int(promoted) if r["opponent"].startswith("best") else ""})

    def drop_eval_games_from(self, iteration: int) -> None:
        """Remove the games of ``iteration`` and later from eval_games.jsonl (a run killed
        during an evaluation plays it again on resume: no game is kept twice)."""
        path = self.out / EVAL_GAMES
        games = read_games(path, repair=True)  # the arena's reader cuts off a torn last line
        keep = [g for g in games if g.get("iteration", 0) < iteration]
        if len(keep) != len(games):
            write_games(path, keep)

    def keep_eval_game(self, iteration: int, record: dict[str, Any]) -> None:
        """Append one evaluation game to eval_games.jsonl (ids unique per run)."""
        record = {**record, "id": f"it{iteration}:{record['id']}", "iteration": iteration}
        append_game(self.out / EVAL_GAMES, record)


class TensorBoardLog:
    """TensorBoard event files in ``RUN/tb`` (nothing when off or not installed)."""

    def __init__(self, run: RunDir, enabled: bool, iteration: int) -> None:
        self.writer = None
        if not enabled:
            return
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard is optional
            return
        self.writer = SummaryWriter(str(run.out / "tb"), purge_step=iteration + 1)

    def log(self, metrics: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        """Write one iteration's training curves and evaluation scores."""
        if self.writer is None:
            return
        it = metrics["iteration"]
        for k in ("loss", "policy_loss", "value_loss", "games_per_hour", "avg_length"):
            if isinstance(metrics[k], float) and not math.isnan(metrics[k]):
                self.writer.add_scalar(f"train/{k}", metrics[k], it)
        for r in rows:
            self.writer.add_scalar(f"eval/{r['opponent']}", r["score"], it)
        self.writer.flush()

    def close(self) -> None:
        """Close the event files."""
        if self.writer is not None:
            self.writer.close()


def _csv_text(rows: list[list[str]]) -> str:
    """Return ``rows`` as CSV text, as ``csv.writer`` writes a file opened with newline=""."""
    buf = io.StringIO(newline="")
    csv.writer(buf).writerows(rows)
    return buf.getvalue()
