"""Shipped configs by name (issue 23): ``train --config NAME`` from any folder, a path that
exists wins, and ``boardzoo config list|show|copy``; errors are one line and exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from boardzoo.cli import main
from boardzoo.training.configfiles import resolve_config

from conftest import REPO

#: The configs of the repository's configs/ folder: what an installed package must offer.
CONFIGS = {p.stem: p for p in (REPO / "configs").glob("*.yaml")}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch) -> Path:
    """Work in an empty folder with no configs/ beside it, as a user of the wheel does."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_repository_ships_the_configs_the_docs_name():
    assert {"loa", "ultima", "whistling", "tiny"} <= set(CONFIGS)


def test_train_finds_a_shipped_config_by_name(capsys, elsewhere):
    code, out, err = run(capsys, "train", "--config", "tiny", "--out", "run", "--quiet",
                         "--set", "iterations=1")
    assert code == 0, err
    assert out.startswith("training loa into run/ (1 iterations)")
    recorded = (elsewhere / "run" / "config.yaml").read_text()
    assert recorded.startswith("# from the shipped config tiny --set iterations=1\n")
    shipped = yaml.safe_load(CONFIGS["tiny"].read_text())
    used = yaml.safe_load(recorded)
    assert used["model"]["channels"] == shipped["model"]["channels"]
    assert used["selfplay"]["games_per_iteration"] == shipped["selfplay"]["games_per_iteration"]
    assert (elsewhere / "run" / "best.pt").is_file()


def test_a_config_name_resolves_to_the_shipped_file(elsewhere):
    for name, source in CONFIGS.items():
        path, shipped = resolve_config(name)
        assert shipped and path.name == f"{name}.yaml"
        assert path.read_bytes() == source.read_bytes()


def test_a_file_that_exists_wins_over_a_shipped_name(elsewhere):
    (elsewhere / "loa").write_text("game: ultima\n")
    path, shipped = resolve_config("loa")
    assert (path, shipped) == (Path("loa"), False)
    (elsewhere / "tiny").mkdir()  # a folder is no config: the name still means the shipped one
    path, shipped = resolve_config("tiny")
    assert shipped and path.read_bytes() == CONFIGS["tiny"].read_bytes()


def test_a_path_still_works(capsys, elsewhere):
    path, shipped = resolve_config(str(CONFIGS["tiny"]))
    assert (path, shipped) == (CONFIGS["tiny"], False)


@pytest.mark.parametrize("text", ["nope", "configs/loa.yaml", "loa.yaml"])
def test_unknown_name_is_one_line_listing_the_shipped_names(capsys, elsewhere, text):
    code, out, err = run(capsys, "train", "--config", text, "--out", "run")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("boardzoo: error: ")
    assert repr(text) in err
    assert "shipped: " + ", ".join(sorted(CONFIGS)) in err
    assert not (elsewhere / "run").exists()


def test_config_list_names_each_shipped_config_and_its_game(capsys, elsewhere):
    code, out, _ = run(capsys, "config", "list")
    assert code == 0
    rows = [line.split() for line in out.splitlines()]
    assert [r[0] for r in rows] == sorted(CONFIGS)
    for name, game, path in rows:
        assert game == yaml.safe_load(CONFIGS[name].read_text())["game"]
        assert Path(path).read_bytes() == CONFIGS[name].read_bytes()


def test_config_list_columns_line_up(capsys, elsewhere):
    code, out, _ = run(capsys, "config", "list")
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(CONFIGS)
    for column in (1, 2):  # game and file start at the same offset on every line
        starts = {len(re.match(rf"(\S+\s+){{{column}}}", line).group(0)) for line in lines}
        assert len(starts) == 1, out


def test_config_show_prints_the_file_with_its_comments(capsys, elsewhere):
    code, out, _ = run(capsys, "config", "show", "loa")
    assert code == 0
    assert out == CONFIGS["loa"].read_text()


def test_config_copy_writes_an_editable_copy_and_refuses_to_overwrite(capsys, elsewhere):
    code, out, _ = run(capsys, "config", "copy", "loa")
    assert code == 0
    copy = elsewhere / "loa.yaml"
    assert copy.read_bytes() == CONFIGS["loa"].read_bytes()
    assert "boardzoo train --config loa.yaml" in out
    copy.write_text("game: loa\niterations: 3\n")  # the user's edit
    code, _, err = run(capsys, "config", "copy", "loa")
    assert code == 2 and "already exists" in err and "--force" in err
    assert copy.read_text() == "game: loa\niterations: 3\n"
    code, _, _ = run(capsys, "config", "copy", "loa", "--force", "loa.yaml")  # options anywhere
    assert code == 0 and copy.read_bytes() == CONFIGS["loa"].read_bytes()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["loa.yaml"]  # no temp file left


def test_config_copy_into_a_folder_or_a_named_file(capsys, elsewhere):
    (elsewhere / "mine").mkdir()
    assert run(capsys, "config", "copy", "ultima", "mine")[0] == 0
    assert (elsewhere / "mine" / "ultima.yaml").read_bytes() == CONFIGS["ultima"].read_bytes()
    assert run(capsys, "config", "copy", "tiny", "mine/smoke.yaml")[0] == 0
    assert (elsewhere / "mine" / "smoke.yaml").read_bytes() == CONFIGS["tiny"].read_bytes()
    code, out, err = run(capsys, "train", "--config", "mine/smoke.yaml", "--out", "run",
                         "--quiet", "--set", "iterations=1")
    assert code == 0, err
    assert (elsewhere / "run" / "config.yaml").read_text().startswith("# from mine/smoke.yaml")


@pytest.mark.parametrize(("argv", "message"), [
    (("config", "copy", "chess"), "unknown config 'chess'; shipped configs: "),
    (("config", "show", "chess"), "unknown config 'chess'; shipped configs: "),
    (("config", "copy", "loa", "nowhere/loa.yaml"), "folder 'nowhere' does not exist"),
    (("config", "copy", "loa", "nowhere/"), "no such folder"),
    (("config",), "required: ACTION"),
    (("config", "copy"), "required: NAME"),
])
def test_config_errors_are_one_line(capsys, elsewhere, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err
    assert not list(elsewhere.iterdir())


def test_config_copy_under_a_file_or_onto_a_dangling_link(capsys, elsewhere):
    (elsewhere / "a_file").write_text("x")
    code, out, err = run(capsys, "config", "copy", "loa", "a_file/x.yaml")
    assert code == 2 and len(err.splitlines()) == 1 and "'a_file' is a file, not a folder" in err
    (elsewhere / "link.yaml").symlink_to(elsewhere / "missing-target")
    code, out, err = run(capsys, "config", "copy", "loa", "link.yaml")
    assert code == 2 and "already exists; use --force" in err
    assert (elsewhere / "link.yaml").is_symlink()  # left as it was
    assert run(capsys, "config", "copy", "loa", "link.yaml", "--force")[0] == 0
    assert (elsewhere / "link.yaml").read_bytes() == CONFIGS["loa"].read_bytes()
