"""The training loop on configs/tiny.yaml: runs, checkpoints, kill and resume, CLI errors."""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from boardzoo.agents import make_agent
from boardzoo.agents.arena.play import play_game
from boardzoo.cli import main
from boardzoo.training.checkpoint import CheckpointError, load
from boardzoo.training.config import load_config
from boardzoo.training.trainer import Trainer

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """One finished two-iteration tiny run, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("runs") / "tiny"
    Trainer(load_config(TINY), out, progress=False, echo=False).run()
    return out


def test_tiny_run_writes_everything_with_finite_losses(tiny_run):
    for name in ("checkpoint.pt", "model.pt", "best.pt", "config.yaml", "metrics.csv",
                 "eval.csv"):
        assert (tiny_run / name).is_file(), name
    metrics = rows(tiny_run / "metrics.csv")
    assert [r["iteration"] for r in metrics] == ["1", "2"]
    for r in metrics:
        for key in ("loss", "policy_loss", "value_loss"):
            assert math.isfinite(float(r[key])), (key, r[key])
        assert float(r["games_per_hour"]) > 0
    opponents = {r["opponent"] for r in rows(tiny_run / "eval.csv")}
    assert {"raw_policy_vs_random", "random", "best(iter 0)"} <= opponents
    assert not list(tiny_run.glob("*.tmp"))  # atomic saves leave no temp files


def test_checkpoint_round_trip(tiny_run):
    data = load(tiny_run / "checkpoint.pt")  # torch.load(weights_only=True) inside
    assert data["iteration"] == 2 and data["game"] == "loa"
    assert data["config"] == load_config(TINY).to_dict()
    trainer = Trainer(load_config(TINY), tiny_run, resume=True, progress=False, echo=False)
    assert same_weights(trainer.net.state_dict(), data["model"])
    assert trainer.buffer.added == data["buffer"]["added"]
    assert trainer.iteration == 2
    assert trainer.run()["iteration"] == 2  # nothing left to do
    model = load(tiny_run / "model.pt")
    assert same_weights(model["model"], data["model"])


def test_checkpoint_agent_plays_legal_moves(tiny_run):
    for spec in (f"checkpoint:{tiny_run}/best.pt,sims=4", f"checkpoint:{tiny_run}/model.pt,sims=0",
                 f"checkpoint:{tiny_run}/checkpoint.pt,sims=3,root=gumbel"):
        agent = make_agent(spec, "loa", 0)
        record = play_game("loa", [agent, make_agent("random", "loa", 1)], max_moves=6)
        assert record.plies == 6


def test_resume_continues_exactly(tmp_path):
    """Two iterations in one go == one iteration, stop, resume for the second."""
    straight, split = tmp_path / "straight", tmp_path / "split"
    cfg = load_config(TINY)
    Trainer(cfg, straight, progress=False, echo=False).run()
    Trainer(load_config(TINY, ["iterations=1"]), split, progress=False, echo=False).run()
    Trainer(cfg, split, resume=True, progress=False, echo=False).run()
    a, b = load(straight / "checkpoint.pt"), load(split / "checkpoint.pt")
    assert same_weights(a["model"], b["model"])
    assert a["buffer"]["added"] == b["buffer"]["added"]
    assert torch.equal(a["buffer"]["obs"], b["buffer"]["obs"])
    m1, m2 = rows(straight / "metrics.csv"), rows(split / "metrics.csv")
    assert [r["loss"] for r in m1] == [r["loss"] for r in m2]


def test_interrupted_evaluation_resumes_with_the_evaluation_only(tmp_path, monkeypatch):
    """Ctrl-C during an evaluation keeps the iteration's self-play and training: the resumed
    run plays no self-play for it, only the evaluation, and ends as a run never stopped."""
    from boardzoo.training import backends, evaluate

    straight, split = tmp_path / "straight", tmp_path / "split"
    cfg = load_config(TINY, ["eval.every=1"])
    Trainer(cfg, straight, progress=False, echo=False).run()
    real = evaluate.Evaluator.evaluate

    def interrupted(self, iteration, *args, **kwargs):
        if iteration == 2:
            raise KeyboardInterrupt
        return real(self, iteration, *args, **kwargs)

    monkeypatch.setattr(evaluate.Evaluator, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Trainer(cfg, split, progress=False, echo=False).run()
    assert load(split / "checkpoint.pt")["pending"]["games"] == 2  # iteration 2 trained
    monkeypatch.setattr(evaluate.Evaluator, "evaluate", real)
    played = []
    monkeypatch.setattr(backends.InProcess, "play",
                        lambda self, net, seeds: played.append(seeds) or [])
    Trainer(cfg, split, resume=True, progress=False, echo=False).run()
    assert played == []  # no self-play again
    a, b = load(straight / "checkpoint.pt"), load(split / "checkpoint.pt")
    assert same_weights(a["model"], b["model"]) and "pending" not in b
    assert same_weights(a["best_model"], b["best_model"])
    for name in ("metrics.csv", "eval.csv"):
        keep = ("iteration", "loss", "games", "positions", "opponent", "wins", "draws",
                "losses", "promoted")
        strip = [[{k: v for k, v in r.items() if k in keep} for r in rows(d / name)]
                 for d in (straight, split)]
        assert strip[0] == strip[1], name


def test_kill_and_resume_from_the_command_line(tmp_path):
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "boardzoo", "train", "--config", TINY, "--out", str(out),
           "--quiet", "--set", "iterations=200", "--set", "eval.every=0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 180  # a loaded 2-core machine starts torch slowly
    try:
        while time.time() < deadline and not (out / "checkpoint.pt").exists():
            time.sleep(0.05)
        assert (out / "checkpoint.pt").exists(), proc.stderr.read() if proc.poll() else ""
    finally:
        proc.send_signal(signal.SIGKILL)  # no chance to clean up
        proc.wait(10)
    done = load(out / "checkpoint.pt")["iteration"]
    assert 1 <= done < 200
    target = done + 1
    result = subprocess.run(cmd[:-4] + ["--resume", "--set", f"iterations={target}", "--set",
                                        "eval.every=0"],
                            env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert load(out / "checkpoint.pt")["iteration"] == target
    its = [int(r["iteration"]) for r in rows(out / "metrics.csv")]
    assert its == list(range(1, target + 1))  # no duplicated or missing rows
    assert f"iterations: {target}\n" in (out / "config.yaml").read_text()  # follows --set


def test_resume_with_config_notes_the_settings_it_drops(tmp_path, capsys):
    # a run started with --set options; --resume --config FILE reads FILE alone, so it says
    # which of the run's settings it changes beyond its own --set (none for --resume --out)
    out = str(tmp_path / "run")
    common = ["--quiet", "--set", "eval.every=0"]
    assert main(["train", "--config", TINY, "--out", out, *common, "--set", "iterations=1",
                 "--set", "train.lr=0.0005"]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "--out", out, *common, "--set", "iterations=2"]) == 0
    assert "note:" not in capsys.readouterr().out
    assert main(["train", "--resume", "--config", TINY, "--out", out, *common,
                 "--set", "iterations=3"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "train.lr 0.0005 -> " in notes[0]
    assert "iterations" not in notes[0] and f"--resume --out {out} alone" in notes[0]


# -- user errors: one line, exit 2 ---------------------------------------------------------------
def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_existing_run_without_resume_is_refused(capsys, tiny_run):
    code, _, err = run_cli(capsys, "train", "--config", TINY, "--out", str(tiny_run))
    assert code == 2 and "already holds a training run" in err and err.count("\n") == 1


def test_resume_without_checkpoint(capsys, tmp_path):
    code, _, err = run_cli(capsys, "train", "--config", TINY, "--out", str(tmp_path / "x"),
                           "--resume")
    assert code == 2 and "nothing to resume" in err


def test_bad_config_key_from_the_command_line(capsys, tmp_path):
    code, _, err = run_cli(capsys, "train", "--config", TINY, "--out", str(tmp_path / "y"),
                           "--set", "mcts.simulatons=3")
    assert code == 2 and "mcts.simulatons" in err and err.count("\n") == 1


def test_resume_with_a_different_model_is_refused(capsys, tiny_run):
    code, _, err = run_cli(capsys, "train", "--config", TINY, "--out", str(tiny_run), "--resume",
                           "--set", "model.channels=9")
    assert code == 2 and "trained with another model: model.channels" in err


def test_corrupt_and_mismatched_checkpoints(capsys, tmp_path, tiny_run):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt or not a boardzoo checkpoint"):
        load(bad)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((tiny_run / "model.pt").read_bytes()[:1000])
    code, _, err = run_cli(capsys, "play", "loa", "--agents", f"checkpoint:{truncated}",
                           "random")
    assert code == 2 and "corrupt" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "play", "loa", "--agents", f"checkpoint:{tmp_path}/none.pt",
                           "random")
    assert code == 2 and "not found" in err
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a boardzoo checkpoint of the expected kind"):
        load(other)
    wrong_game = tmp_path / "wrong_game.pt"
    data = load(tiny_run / "model.pt")
    torch.save({**data, "game": "ultima"}, wrong_game)
    with pytest.raises(CheckpointError, match="is a network for ultima, not loa"):
        make_agent(f"checkpoint:{wrong_game}", "loa", 0)
    wrong_shape = tmp_path / "wrong_shape.pt"
    cfg = dict(data["config"], model=dict(data["config"]["model"], channels=5))
    torch.save({**data, "config": cfg}, wrong_shape)
    with pytest.raises(CheckpointError, match="does not match"):
        make_agent(f"checkpoint:{wrong_shape}", "loa", 0)


def test_plot_writes_png(capsys, tiny_run, tmp_path):
    png = tmp_path / "curves.png"
    code, out, _ = run_cli(capsys, "plot", str(tiny_run), "-o", str(png))
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = run_cli(capsys, "plot", str(tmp_path))
    assert code == 2 and "not a training run" in err


def test_checkpoint_agent_spec_errors(tiny_run):
    from boardzoo.agents.base import UnknownAgentError
    from boardzoo.training import agent as checkpoint_agent

    with pytest.raises(UnknownAgentError, match="needs a path or game name"):
        make_agent("checkpoint", "loa", 0)
    with pytest.raises(UnknownAgentError,
                       match=r"unknown option 'depth'; options: sims=N, root=puct\|gumbel"):
        make_agent(f"checkpoint:{tiny_run}/best.pt,depth=3", "loa", 0)
    with pytest.raises(UnknownAgentError, match="sims must be a whole number"):
        make_agent(f"checkpoint:{tiny_run}/best.pt,sims=lots", "loa", 0)
    with pytest.raises(UnknownAgentError, match="root must be puct or gumbel"):
        make_agent(f"checkpoint:{tiny_run}/best.pt,root=alphabeta", "loa", 0)
    for game in ("loa", "ultima", "whistling"):
        if checkpoint_agent.shipped_net(game).is_file():
            assert make_agent(f"checkpoint:{game},sims=0", game, 0).simulations == 0
        else:
            with pytest.raises(CheckpointError, match="no network is shipped"):
                make_agent(f"checkpoint:{game}", game, 0)


def test_without_gate_best_is_latest(tmp_path):
    out = tmp_path / "nogate"
    Trainer(load_config(TINY, ["eval.vs_best=false"]), out, progress=False, echo=False).run()
    assert same_weights(load(out / "best.pt")["model"], load(out / "model.pt")["model"])
    assert load(out / "checkpoint.pt")["best_iteration"] == 2


def test_cpu_hour_snapshots_keep_the_network_of_the_first_save_past_each_mark(tmp_path):
    """snapshot_cpu_hours: 0 is passed by the first iteration and kept as it was then (the
    second iteration does not overwrite it); a mark never reached writes nothing."""
    sets = ["snapshot_cpu_hours=[0, 1000]", "eval.every=0", "eval.games=0"]
    out, one = tmp_path / "two", tmp_path / "one"
    Trainer(load_config(TINY, sets), out, progress=False, echo=False).run()
    Trainer(load_config(TINY, [*sets, "iterations=1"]), one, progress=False, echo=False).run()
    assert sorted(p.name for p in (out / "snapshots").iterdir()) == ["cpu_0h.pt"]
    snap = load(out / "snapshots" / "cpu_0h.pt")
    assert same_weights(snap["model"], load(one / "model.pt")["model"])  # iteration 1's
    assert not same_weights(snap["model"], load(out / "model.pt")["model"])
    assert "iteration 1" in snap["note"] and "CPU-hours" in snap["note"]
    with pytest.raises(Exception, match="snapshot_cpu_hours must be between"):
        load_config(TINY, ["snapshot_cpu_hours=[1, -1]"])
