"""``boardzoo plot`` of a run not yet evaluated writes a note in its evaluation panel."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402

from boardzoo.cli import main  # noqa: E402
from boardzoo.training.plot import NO_EVAL_NOTE  # noqa: E402

HEADER = "iteration,loss,policy_loss,value_loss,games_per_hour,avg_length\n"
ROWS = "1,2.0,1.5,0.5,100,30\n2,1.8,1.4,0.4,110,31\n"


def panel_texts(monkeypatch, run: Path, tmp_path: Path) -> list[str]:
    """Plot ``run``; return the texts written inside its panels."""
    seen: list[str] = []
    save = Figure.savefig

    def record(fig, *args, **kwargs):
        seen.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    assert main(["plot", str(run), "-o", str(tmp_path / "c.png")]) == 0
    return seen


def test_plot_before_any_evaluation_says_so(monkeypatch, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text(HEADER + ROWS)
    assert NO_EVAL_NOTE in panel_texts(monkeypatch, run, tmp_path)
    (run / "eval.csv").write_text("iteration,opponent,score\n")  # header only: none yet
    assert NO_EVAL_NOTE in panel_texts(monkeypatch, run, tmp_path)


def test_plot_with_evaluations_has_no_note(monkeypatch, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text(HEADER + ROWS)
    (run / "eval.csv").write_text("iteration,opponent,score\n2,random,0.9\n")
    assert NO_EVAL_NOTE not in panel_texts(monkeypatch, run, tmp_path)
