"""Absurd config values, YAML alias bombs and crafted model files: one line, exit 2, at once."""

from __future__ import annotations

import dataclasses
import math
import pickle
import subprocess
import sys
import time
import typing
import warnings
from pathlib import Path

import pytest
import torch

from boardzoo.cli import main
from boardzoo.training.agent import shipped_net
from boardzoo.training.checkpoint import CheckpointError, load
from boardzoo.training.config import Config, ConfigError, check_ranges, load_config
from boardzoo.training.config_schema import KEYS

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "configs" / "tiny.yaml"


def numeric_keys(cls: type = Config, prefix: str = "") -> list[str]:
    """Return the dotted key of every int and float field (or list of them) of the config
    dataclasses."""
    keys = []
    for name, typ in typing.get_type_hints(cls).items():
        if dataclasses.is_dataclass(typ):
            keys += numeric_keys(typ, f"{prefix}{name}.")
        elif typ in (int, float, list[int], list[float]):
            keys.append(f"{prefix}{name}")
    return keys


def test_every_numeric_config_key_has_a_range_and_every_range_a_numeric_key():
    keys = numeric_keys()
    ranged = [name for name, k in KEYS.items() if k.range is not None]
    assert len(keys) > 30  # the walk found the sections' fields
    assert sorted(set(keys) - set(ranged)) == []  # a new key needs a range
    assert sorted(set(ranged) - set(keys)) == []  # only numbers have one


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.yaml")), ids=lambda p: p.stem)
def test_defaults_and_shipped_configs_are_inside_the_bounds(path):
    check_ranges(dataclasses.asdict(Config()))
    load_config(path)


BAD_VALUES = [
    ("seed=-1", "seed must be between 0 and"),
    ("seed=100000000000000000000", "seed must be between 0 and"),
    ("model.channels=100000", "model.channels must be between 1 and 1024, got 100000"),
    ("model.blocks=100000", "model.blocks must be between 0 and 64, got 100000"),
    ("train.buffer_size=10000000000", "train.buffer_size must be between"),
    ("threads=100000", "threads must be between 0 and"),
    ("train.lr=inf", "train.lr must be above 0 and at most 10, got inf"),
    ("mcts.c_puct=.inf", "mcts.c_puct must be above 0 and at most 1000, got inf"),
    ("mcts.fpu_reduction=.nan", "mcts.fpu_reduction must be between -10 and 10, got nan"),
    ("seed=" + "9" * 5000, "has 5000 characters"),  # over Python's int() digit limit
]


@pytest.mark.parametrize("override,message", BAD_VALUES, ids=[b[0][:30] for b in BAD_VALUES])
def test_absurd_config_value_is_one_line_and_exit_2_before_any_work(override, message, capsys,
                                                                     tmp_path):
    started = time.perf_counter()
    code = main(["train", "--config", str(TINY), "--set", override, "--out",
                 str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("boardzoo: error: "), err
    assert message in lines[0] and len(lines[0]) < 400
    assert not (tmp_path / "run").exists()  # refused before the run folder was made
    assert time.perf_counter() - started < 30


def alias_bomb(levels: int = 9) -> str:
    """Return a ~1 KB YAML config whose mcts.simulations stands for 10^levels items."""
    lines = ["game: loa", "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for k in range(1, levels):
        lines.append(f"x{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    lines.append(f"mcts: {{simulations: *a{levels - 1}}}")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused_without_expanding(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert len(path.read_bytes()) < 1500
    started = time.perf_counter()
    code = main(["train", "--config", str(path), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "aliases" in err and len(err) < 300, err
    assert time.perf_counter() - started < 10
    with pytest.raises(ConfigError, match="aliases"):  # --set values are YAML too
        load_config(TINY, ["mcts.simulations=[&a 1, *a]"])


def crafted_model(tmp_path: Path, **sections: dict) -> Path:
    """Return a copy of the shipped LOA network whose config has ``sections`` merged in."""
    data = torch.load(shipped_net("loa"), map_location="cpu", weights_only=True)
    config = dict(data["config"])
    for name, values in sections.items():
        config[name] = {**config[name], **values}
    path = tmp_path / "crafted.pt"
    torch.save({**data, "config": config}, path)
    return path


def shared_lists(levels: int) -> list:
    """Return a list that stands for 10^levels ones but is ``levels`` lists in memory."""
    value: list = [1] * 10
    for _ in range(levels - 1):
        value = [value] * 10
    return value


@pytest.mark.parametrize("sections,message", [
    ({"model": {"blocks": 10**7}}, "model.blocks must be between 0 and 64"),
    ({"model": {"channels": 100000}}, "model.channels must be between 1 and 1024"),
    ({"mcts": {"simulations": shared_lists(9)}}, "more than 10,000 values"),
    ({"eval": {"baselines": shared_lists(9)}}, "more than 10,000 values"),
    ({"model": {5: 1}}, "a key that is not text"),
], ids=["blocks", "channels", "list-bomb", "baselines-bomb", "int-key"])
def test_model_file_with_absurd_config_is_refused_before_building(tmp_path, capsys, sections,
                                                                  message):
    path = crafted_model(tmp_path, **sections)
    started = time.perf_counter()
    with pytest.raises(CheckpointError, match=message):
        load(path)
    code = main(["play", "loa", "--agents", f"checkpoint:{path},sims=0", "random"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err and len(err) < 400, err
    assert time.perf_counter() - started < 20


def test_plain_pickle_model_file_prints_one_line_and_no_torch_warning(tmp_path):

    path = tmp_path / "plain.pt"
    path.write_bytes(pickle.dumps({"format": "boardzoo-model-v1", "x": {1, 2}}, protocol=4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(CheckpointError, match="corrupt or not a boardzoo checkpoint"):
            load(path)
    assert [str(w.message) for w in caught] == []
    done = subprocess.run([sys.executable, "-m", "boardzoo", "play", "loa", "--agents",
                           f"checkpoint:{path}", "random"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_bound_message_names_key_range_and_value():
    with pytest.raises(ConfigError) as info:
        check_ranges({"model": {"channels": 100000}})
    assert str(info.value) == "model.channels must be between 1 and 1024, got 100000"
    with pytest.raises(ConfigError, match="train.lr .* got inf"):
        check_ranges({"train.lr": math.inf})
    check_ranges({"model.channels": 1024, "train.lr": 10.0})  # the ends are inside


DEEP = "[" * 400 + "]" * 400


@pytest.mark.parametrize("text,message", [
    (f"game: loa\nmcts: {{simulations: {DEEP}}}\n", "nested more than 32 deep"),
    # iterations 0: where a duplicate is accepted the error is another one, not a training
    ("game: ultima\ngame: loa\niterations: 0\n", "the key 'game' is given twice"),
    ("game: loa\niterations: 0\nmcts:\n  simulations: 8\n  simulations: 9\n",
     "'simulations' is given twice"),
    (b"game: lo\xffa\n", "is not UTF-8 text"),
], ids=["deep", "duplicate-top", "duplicate-section", "not-utf8"])
def test_deep_duplicate_or_undecodable_config_file_is_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "hostile.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    code = main(["train", "--config", str(path), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err


def test_deeply_nested_set_value_is_one_line(tmp_path, capsys):
    code = main(["train", "--config", str(TINY), "--set", f"mcts.simulations={DEEP}",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "nested more than 32 deep" in err, err


@pytest.mark.parametrize("baseline,message", [
    ("engine:/nonexistent", "'/nonexistent' is not an executable file"),
    ("checkpoint:/nonexistent.pt", "'/nonexistent.pt' not found"),
    ("sb3:/nonexistent.zip", "no model file at '/nonexistent.zip'"),
], ids=["engine", "checkpoint", "sb3"])
def test_every_baseline_is_checked_before_the_first_game(tmp_path, capsys, baseline, message):
    code = main(["train", "--config", str(TINY), "--set", "iterations=1", "--set",
                 f"eval.baselines=[random, '{baseline}']", "--out", str(tmp_path / "run"),
                 "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "eval.baselines: " in err, err
    assert message in err and not (tmp_path / "run").exists()
