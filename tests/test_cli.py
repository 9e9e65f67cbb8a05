"""The boardzoo command line: outputs other tools rely on, and the error paths."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boardzoo.cli import main

from conftest import load_vector

START = load_vector("loa", "start.json")
RULES = load_vector("loa", "rules.json")["cases"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_legal_start(capsys):
    code, out, _ = run(capsys, "legal", "loa")
    assert code == 0
    assert sorted(out.split()) == START["legal"]


@pytest.mark.parametrize("case", RULES, ids=[c["id"] for c in RULES])
def test_legal_vectors(capsys, case):
    code, out, _ = run(capsys, "legal", "loa", "--position", case["position"])
    assert code == 0
    assert sorted(out.split()) == case["legal"]


def test_legal_finished_position_prints_nothing(capsys):
    code, out, _ = run(capsys, "legal", "loa", "--position", "8/8/8/3bb3/3bb3/8/8/6ww w 30")
    assert (code, out) == (0, "")


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_perft_last_line_is_count(capsys, depth):
    code, out, _ = run(capsys, "perft", "loa", str(depth))
    assert code == 0
    assert out.strip().splitlines()[-1] == str(START["perft"][str(depth)])


def test_perft_divide(capsys):
    code, out, _ = run(capsys, "perft", "loa", "2", "--divide")
    lines = out.strip().splitlines()
    divide = dict(line.split(": ") for line in lines if ": " in line and "=" not in line)
    assert {k: int(v) for k, v in divide.items()} == START["divide_2"]
    assert lines[-1] == "1244"


def test_perft_finished_position_counts_nothing(capsys):
    finished = "8/8/8/3bb3/3bb3/8/8/6ww w 30"
    for argv in (("perft", "loa", "2"), ("perft", "loa", "2", "--divide")):
        code, out, _ = run(capsys, *argv, "--position", finished)
        lines = out.strip().splitlines()
        assert code == 0 and len(lines) == 2 and lines[-1] == "0"  # no move, no divide line


def test_play_random_games(capsys):
    code, out, _ = run(capsys, "play", "loa", "--agents", "random", "random", "--games", "2",
                       "--seed", "3")
    assert code == 0
    assert out.count("game ") == 2
    code2, out2, _ = run(capsys, "play", "loa", "--agents", "random", "random", "--games", "2",
                         "--seed", "3")
    assert out2 == out  # same seed, same games


def test_play_totals_count_one_agent_spelt_two_ways_once(capsys):
    code, out, _ = run(capsys, "play", "loa", "--agents", "RANDOM", "greedy", "--games", "2",
                       "--seed", "3", "--max-moves", "4")
    assert code == 0 and "total: random 1, greedy 1" in out  # two draws, kinds in lower case
    code, out, _ = run(capsys, "play", "loa", "--agents", "RANDOM", "random", "--games", "2",
                       "--seed", "3", "--max-moves", "4")
    assert code == 0 and "total:" not in out and "random (" in out  # one agent: no totals


def test_play_show_prints_boards(capsys):
    code, out, _ = run(capsys, "play", "loa", "--show", "--max-moves", "2", "--seed", "1")
    assert code == 0 and "a b c d e f g h" in out and "moves:" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["legal", "chess"], "unknown game"),
        (["legal", "loa", "--position", "8/8/8 b 0"], "8 ranks"),
        (["legal", "loa", "--position", "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 q 0"], "side"),
        (["perft", "loa", "-1"], "depth"),
        (["perft", "loa", "two"], "invalid int"),
        (["play", "loa", "--agents", "random", "nonsense"], "unknown agent"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err


def test_console_script_error_has_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "boardzoo", "legal", "loa", "--position", "garbage"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("boardzoo: error:") and "Traceback" not in proc.stderr


def test_help_on_every_subcommand(capsys):
    # legal, perft, play from the CLI; tournament, rate, replay, report (agents) and train,
    # plot (training)
    for sub in ("legal", "perft", "play", "tournament", "rate", "replay", "report", "train",
                "plot"):
        with pytest.raises(SystemExit) as exc:
            main([sub, "--help"])
        assert exc.value.code == 0
        assert "usage:" in capsys.readouterr().out


def test_play_human_from_the_terminal():
    proc = subprocess.run(
        [sys.executable, "-m", "boardzoo", "play", "loa", "--agents", "human", "random",
         "--seed", "1"],
        input="b1-b9\nb1-b3\nquit\n", capture_output=True, text=True, check=False, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "rejected 'b1-b9'" in proc.stdout  # explains the bad move, then asks again
    assert "white played" in proc.stdout  # the legal move was played and the opponent replied
    assert "abandoned" in proc.stdout
