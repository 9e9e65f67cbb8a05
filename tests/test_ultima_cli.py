"""The boardzoo command line with Ultima: legal, perft, play and the error paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardzoo.cli import main

from conftest import VECTORS, load_vector

START = load_vector("ultima", "start.json")
CASES = sorted(p.name for p in Path(VECTORS / "ultima").glob("*.json")
               if p.name not in ("repetition_draw.json", "start.json"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_legal_start(capsys):
    code, out, _ = run(capsys, "legal", "ultima")
    assert code == 0 and sorted(out.split()) == START["legal"]


@pytest.mark.parametrize("name", CASES)
def test_legal_vectors(capsys, name):
    v = load_vector("ultima", name)
    code, out, _ = run(capsys, "legal", "ultima", "--position", v["position"])
    assert code == 0 and sorted(out.split()) == v["legal"]


@pytest.mark.parametrize("name", CASES)
def test_perft_and_divide_vectors(capsys, name):
    # a finished position (draw, checkmate, stalemate) has no perft in its vector: 0 here
    v = load_vector("ultima", name)
    for depth in (1, 2):
        code, out, _ = run(capsys, "perft", "ultima", str(depth), "--position", v["position"])
        assert code == 0
        assert out.strip().splitlines()[-1] == str(v.get("perft", {}).get(str(depth), 0))
    code, out, _ = run(capsys, "perft", "ultima", "2", "--divide", "--position", v["position"])
    lines = out.strip().splitlines()
    divide = {k: int(c) for k, c in (line.split(": ") for line in lines[:-2])}
    assert code == 0 and sorted(divide) == v["legal"]
    assert sum(divide.values()) == int(lines[-1]) == v.get("perft", {}).get("2", 0)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_perft_last_line_is_count(capsys, depth):
    code, out, _ = run(capsys, "perft", "ultima", str(depth))
    assert code == 0
    assert out.strip().splitlines()[-1] == str(START["perft"][str(depth)])


def test_perft_divide(capsys):
    code, out, _ = run(capsys, "perft", "ultima", "3", "--divide")
    lines = out.strip().splitlines()
    divide = dict(line.split(": ") for line in lines if ": " in line and "=" not in line)
    assert {k: int(v) for k, v in divide.items()} == START["divide_depth3"]
    assert lines[-1] == "42738"


def test_play_random_games(capsys):
    argv = ("play", "ultima", "--agents", "random", "random", "--games", "1", "--seed", "3",
            "--max-moves", "30")
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.count("game ") == 1
    assert run(capsys, *argv)[1] == out  # same seed, same game


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["legal", "ultima", "--position", "8/8/8 w 0 1"], "8 ranks"),
        (["legal", "ultima", "--position", "7k/8/8/8/8/8/8/K7 q 0 1"], "side"),
        (["legal", "ultima", "--position", "8/8/8/8/8/8/8/K7 w 0 1"], "king"),
        (["legal", "ultima", "--position", "4k3/3C4/8/8/8/8/8/7K w 0 1"], "in check"),
        (["perft", "ultima", "2", "--position", "7k/8/8/8/8/8/8/K7 w 0"], "field"),
    ],
)
def test_errors_are_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1
