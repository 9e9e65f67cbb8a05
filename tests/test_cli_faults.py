"""Faults outside the rules (files, options, configs, ratings) end as one error line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boardzoo.agents.agent_spec import spec_list
from boardzoo.agents.arena.ratings import RatingError
from boardzoo.agents.arena.report import build
from boardzoo.cli import main
from boardzoo.training.config import ConfigError, load_config

REPO = Path(__file__).resolve().parent.parent
BOARDZOO = [sys.executable, "-m", "boardzoo"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("boardzoo: error: "), err
    assert "Traceback" not in err and "boardzoo: error: boardzoo" not in err
    return lines[0]


@pytest.fixture(scope="module")
def loa_games(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("arena") / "loa"
    assert main(["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair",
                 "2", "--max-plies", "20", "--no-progress", "--no-png", "--out", str(out)]) == 0
    return out


# -- the file system -----------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_dev_full_is_one_error_line():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*BOARDZOO, "legal", "whistling"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2
    assert "cannot write the output" in one_error_line(proc.stderr)


def test_out_under_a_file_tournament_rate_train(capsys, tmp_path, loa_games):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    below = str(afile / "out")
    cases = [
        ["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair", "1",
         "--no-progress", "--out", below],
        ["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair", "1",
         "--no-progress", "--out", str(afile)],
        ["rate", str(loa_games), "--out", below],
        ["train", "--config", str(REPO / "configs" / "tiny.yaml"), "--out", below, "--quiet"],
    ]
    for argv in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, argv
        one_error_line(err)
        assert out == "", f"{argv}: printed before failing"


@pytest.mark.skipif(shutil.which("chattr") is None or os.geteuid() != 0,
                    reason="needs root and chattr for a folder root cannot write")
def test_unwritable_folder(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    try:
        code, _, err = run(capsys, "train", "--config", str(REPO / "configs" / "tiny.yaml"),
                           "--out", str(locked / "run"), "--quiet")
        assert code == 2
        one_error_line(err)
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)


# -- agent specs with options --------------------------------------------------------------
@pytest.mark.parametrize("text, specs", [
    ("random,greedy,mcts:200,alphabeta:2", ["random", "greedy", "mcts:200", "alphabeta:2"]),
    ("checkpoint:loa,sims=0,mcts:20,c=1.5", ["checkpoint:loa,sims=0", "mcts:20,c=1.5"]),
    ("alphabeta:t=0.5s,alphabeta:2,t=1s", ["alphabeta:t=0.5s", "alphabeta:2,t=1s"]),
    (" random , mcts:5 ,c=1 ", ["random", "mcts:5,c=1"]),
])
def test_agents_list_keeps_options_with_their_spec(text, specs):
    assert spec_list(text) == specs


def test_tournament_with_spec_options_and_repeated_agent(capsys, tmp_path):
    code, out, err = run(capsys, "tournament", "--game", "loa", "--agents", "random,mcts:5,c=1.5",
                         "--agent", "alphabeta:1", "--games-per-pair", "1", "--max-plies", "6",
                         "--no-progress", "--no-png", "--out", str(tmp_path / "t"))
    assert code == 0, err
    lines = (tmp_path / "t" / "games.jsonl").read_text().splitlines()
    players = {p for line in lines for p in json.loads(line)["players"]}
    assert players == {"random", "mcts:5,c=1.5", "alphabeta:1"}


def test_an_option_first_is_an_error(capsys):
    code, _, err = run(capsys, "tournament", "--game", "loa", "--agents", "sims=0,random",
                       "--no-progress")
    assert code == 2 and "follows no agent spec" in one_error_line(err)


# -- ratings -------------------------------------------------------------------------------
def test_rate_unknown_anchor_and_mixed_games(capsys, tmp_path, loa_games):
    code, out, err = run(capsys, "rate", str(loa_games), "--anchor", "wizard")
    assert code == 2 and "wizard" in one_error_line(err) and out == ""
    records = [json.loads(x) for x in (loa_games / "games.jsonl").read_text().splitlines()]
    mixed = records + [{**records[0], "game": "ultima"}]
    with pytest.raises(RatingError, match="different games"):
        build(mixed)
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in mixed))
    code, _, err = run(capsys, "rate", str(path))
    assert code == 2 and "different games" in one_error_line(err)


# -- configs -------------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("# only a comment\n", "is empty"),
    ("game: loa\nmcts: {simulations: [\n", "line 3, column 1"),
    ("mcts: 3\n", "mcts: expected a mapping"),
])
def test_config_file_errors_are_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)
    code, _, err = run(capsys, "train", "--config", str(path), "--out", str(tmp_path / "r"))
    assert code == 2 and message in one_error_line(err)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("override, message", [
    ("mcts.simulations.x=5", "a key is KEY or SECTION.KEY"),
    ("mcts.simulations=[", "line 1, column 2"),
    ("wizard.x=1", "unknown section 'wizard'"),
])
def test_set_errors_are_one_line(capsys, tmp_path, override, message):
    code, _, err = run(capsys, "train", "--config", str(REPO / "configs" / "tiny.yaml"),
                       "--set", override, "--out", str(tmp_path / "r"))
    assert code == 2 and message in one_error_line(err)


# -- smaller ones --------------------------------------------------------------------------
def test_help_texts(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "rate" in out.split("\n\n")[1]
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert ("kinds: alphabeta, checkpoint, engine, greedy, gui, human, mcts, openspiel_mcts, "
            "random") in out


def test_negative_max_moves_and_checkpoint_folder(capsys, tmp_path):
    code, _, err = run(capsys, "play", "loa", "--max-moves", "-3")
    assert code == 2 and "--max-moves" in one_error_line(err)
    code, _, err = run(capsys, "play", "loa", "--agents", "random", f"checkpoint:{tmp_path}")
    assert code == 2 and "is a folder" in one_error_line(err)


def test_model_mismatch_names_the_fields(capsys, tmp_path):
    tiny = str(REPO / "configs" / "tiny.yaml")
    out = str(tmp_path / "run")
    assert main(["train", "--config", tiny, "--out", out, "--quiet", "--set", "iterations=1",
                 "--set", "eval.every=0", "--set", "eval.games=0"]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "train", "--config", tiny, "--out", out, "--resume",
                       "--set", "model.channels=9")
    line = one_error_line(err)
    assert code == 2 and "model.channels 8 -> 9" in line and "ModelConfig(" not in line


def test_missing_ray_fails_before_anything_is_created(capsys, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    code, out, err = run(capsys, "train", "--config", str(REPO / "configs" / "tiny.yaml"),
                         "--set", "selfplay.backend=ray", "--out", str(tmp_path / "r"))
    assert code == 2 and "boardzoo[ray]" in one_error_line(err)
    assert out == "" and not (tmp_path / "r").exists()


def test_tensorboard_missing_is_said_once(capsys, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorboard" else real(name, *a))
    code, out, _ = run(capsys, "train", "--config", str(REPO / "configs" / "tiny.yaml"),
                       "--set", "tensorboard=true", "--set", "iterations=1", "--quiet",
                       "--out", str(tmp_path / "r"))
    assert code == 0
    assert out.count("TensorBoard is not installed") == 1 and "boardzoo[tensorboard]" in out


def test_plot_unknown_format_and_unwritable_output(capsys, tmp_path):
    out = str(tmp_path / "run")
    assert main(["train", "--config", str(REPO / "configs" / "tiny.yaml"), "--out", out,
                 "--quiet", "--set", "iterations=1"]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "plot", out, "--output", str(tmp_path / "x.xyz"))
    assert code == 2 and "unknown image format" in one_error_line(err)
    afile = tmp_path / "afile"
    afile.write_text("")
    code, _, err = run(capsys, "plot", out, "--output", str(afile / "c.png"))
    assert code == 2
    one_error_line(err)


def test_the_default_config_needs_nothing_the_default_install_lacks(monkeypatch):
    """The README's main command (configs/loa.yaml) on the README's install (no extras)
    prints no note about a missing package."""
    import importlib.util

    from boardzoo.training.config import check_extras, load_config

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorboard" else real(name, *a))
    assert check_extras(load_config(REPO / "configs" / "loa.yaml")) == []
