"""Replays of recorded games: positions, GIF frames against the env's own pictures, the
HTML page's data and the CLI's errors (the page in a real browser: test_viewer_browser.py)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from boardzoo.agents.arena import GAMES_FILE, run_tournament
from boardzoo.agents.arena.gif import read_frames, shared_palette, to_palette
from boardzoo.agents.arena.replay import load_games, pick, replay, result_text
from boardzoo.agents.arena.viewer import page_data
from boardzoo.cli import main
from boardzoo.envs.aec import BoardGameEnv
from boardzoo.envs.core.registry import get_spec

GAMES = ("loa", "ultima", "whistling")


def tournament(tmp_path: Path, game: str, games: int = 1) -> Path:
    """Play a tiny random-vs-greedy round robin (short games); return its folder."""
    out = tmp_path / f"{game}_arena"
    run_tournament(game, ["random", "greedy"], games, out, seed=3, progress=False)
    return out


def hops(turn: str) -> list[str]:
    """Split a move into the texts of its env actions (one per Whistling hop, else the move);
    the same split as docs/make_figures.py."""
    if turn.count("-") < 2:
        return [turn]
    parts = turn.split("-")
    return [f"{a.split(':')[0]}-{b}" for a, b in zip(parts, parts[1:], strict=False)]


def colour_count(pictures: Sequence[np.ndarray]) -> int:
    """Return the number of distinct colours of some pictures."""
    packed = [(p.astype(np.int64) @ np.array([1 << 16, 1 << 8, 1])).ravel() for p in pictures]
    return len(np.unique(np.concatenate(packed)))


def env_pictures(game: str, moves: Sequence[str]) -> tuple[list[np.ndarray], list[str]]:
    """Return the env's rgb_array picture and position text after each whole move."""
    env = BoardGameEnv(game, render_mode="rgb_array")
    env.reset(seed=0)
    pictures, texts = [env.render()], [env.game.to_text()]
    for move in moves:
        for hop in hops(move):
            env.step(env.move_str_to_action(hop))
        pictures.append(env.render())
        texts.append(env.game.to_text())
    return pictures, texts


@pytest.mark.parametrize("game", GAMES)
def test_gif_frames_are_the_env_pictures_of_the_replayed_positions(tmp_path, game):
    out = tournament(tmp_path, game)
    record = load_games(out)[0]
    gif = tmp_path / "game.gif"
    assert main(["replay", str(out), "--game", record["id"], "--gif", str(gif)]) == 0
    frames = read_frames(gif)
    pictures, texts = env_pictures(game, record["moves"])
    assert len(frames) == len(pictures) == record["plies"] + 1
    assert [s.to_text() for s in replay(record).states] == texts
    # A GIF palette holds 256 colours: pictures with no more are stored exactly; the rest
    # (antialiased letters) equal the picture mapped to the GIF's shared palette, pixel for
    # pixel, and stay within a hair of the picture itself.
    palette = shared_palette(pictures)
    exact = colour_count(pictures) <= 256  # LOA (test_loa_gif_is_exact); not Ultima
    for frame, picture in zip(frames, pictures, strict=True):
        assert frame.shape == picture.shape
        assert np.array_equal(frame, np.asarray(to_palette(picture, palette).convert("RGB")))
        if exact:
            assert np.array_equal(frame, picture)
        assert np.abs(frame.astype(int) - picture).mean() < 0.5
    assert not np.array_equal(frames[0], frames[-1])


def test_loa_gif_is_exact(tmp_path):
    # LOA's pictures have fewer than 256 colours: the GIF holds them exactly
    record = load_games(tournament(tmp_path, "loa"))[0]
    gif = tmp_path / "loa.gif"
    main(["replay", str(tmp_path / "loa_arena" / GAMES_FILE), "--gif", str(gif)])
    pictures, _ = env_pictures("loa", record["moves"])
    assert all(np.array_equal(f, p) for f, p in zip(read_frames(gif), pictures, strict=True))


def test_page_data_holds_every_position_and_board(tmp_path):
    records = load_games(tournament(tmp_path, "whistling", games=2))
    data = page_data(records)
    view = get_spec("whistling").board_view()
    assert len(data["games"]) == 2 and set(data["boards"]) == {"whistling"}
    assert len(data["boards"]["whistling"]["cells"]) == len(view.centres)
    for rec, game in zip(records, data["games"], strict=True):
        rep = replay(rec)
        assert game["positions"] == [s.to_text() for s in rep.states]
        assert all(len(p) == len(view.centres) for p in game["pieces"])
        assert game["moveSeconds"] is not None and len(game["moveSeconds"]) == rec["plies"]


def test_html_page_is_self_contained(tmp_path, capsys):
    out = tmp_path / "arena"
    assert main(["tournament", "--game", "loa", "--agents", "random,greedy", "--no-png",
                 "--games-per-pair", "2", "--out", str(out), "--no-progress"]) == 0
    assert (out / "report.html").is_file()  # the tournament writes it
    assert main(["report", str(out), "--html", "--no-png", "--out", str(tmp_path / "r")]) == 0
    page = (tmp_path / "r" / "report.html").read_text()
    assert "report.html" in capsys.readouterr().out
    # no fetches: no external scripts, styles, images or links (the SVG namespace is a name)
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", page)
    assert re.findall(r"https?://[^\s\"']+", page) == ["http://www.w3.org/2000/svg"] * 2
    assert "id='ratings'" in page and "id='crosstable'" in page and "&plusmn;" in page


def test_replay_prints_text_boards_and_lists_games(tmp_path, capsys):
    out = tournament(tmp_path, "ultima")
    record = load_games(out)[0]
    assert main(["replay", str(out), "--list"]) == 0
    assert record["id"] in capsys.readouterr().out
    assert main(["replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("start\n") and f"{record['plies']}. {record['moves'][-1]}" in text
    assert pick(load_games(out), None) == record


def test_results_read_alike_from_tournament_and_training_records(tmp_path, capsys):
    """A tournament record says ``1-0``, a training run's evaluation record ``black``: the
    listing shows both from their scores, with how the game ended if not by the rules."""
    moves = ["b1-b3"]
    base = {"game": "loa", "moves": moves, "plies": 1}
    tour = [{**base, "id": "a|b|0", "players": ["a", "b"], "scores": [1.0, 0.0],
             "result": "1-0", "termination": "rules"},
            {**base, "id": "a|b|1", "players": ["b", "a"], "scores": [0.5, 0.5],
             "result": "1/2-1/2", "termination": "max_plies"},
            {**base, "id": "a|b|2", "players": ["a", "b"], "scores": [1.0, 0.0],
             "result": "1-0", "termination": "timeout",
             "forfeit": {"player": 1, "reason": "timeout", "detail": ""}}]
    evals = [{**base, "id": "it1:net@1|random|1", "players": ["net@1", "random"],
              "scores": [0.0, 1.0], "winner": 1, "terminated": True, "forfeit": None,
              "result": "white"},
             {**base, "id": "it1:random|net@1|2", "players": ["random", "net@1"],
              "scores": [0.5, 0.5], "winner": None, "terminated": False, "forfeit": None,
              "result": "unfinished (max moves)"}]
    assert [result_text(r) for r in tour] == ["1-0", "1/2-1/2 (max plies)",
                                              "1-0 (forfeit: timeout)"]
    assert [result_text(r) for r in evals] == ["0-1", "1/2-1/2 (max plies)"]
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval_games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in evals))
    assert main(["replay", str(run), "--list"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[3] for row in rows] == ["0-1", "1/2-1/2 (max plies)"]


def bad_games(tmp_path: Path) -> dict[str, list[str]]:
    """Return argument lists that must each fail as one error line."""
    out = tournament(tmp_path, "loa")
    record = load_games(out)[0]
    (tmp_path / "empty").mkdir()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{oops\n" + json.dumps(record) + "\n")
    illegal = tmp_path / "illegal.jsonl"
    illegal.write_text(json.dumps({**record, "moves": ["a1-a9", *record["moves"]]}) + "\n")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({**record, "game": "chess"}) + "\n")
    return {
        "no file": ["replay", str(tmp_path / "nope.jsonl")],
        "no games in folder": ["replay", str(tmp_path / "empty")],
        "unknown id": ["replay", str(out), "--game", "x|y|0"],
        "broken line": ["replay", str(broken)],
        "illegal move": ["replay", str(illegal), "--gif", str(tmp_path / "x.gif")],
        "unknown game": ["report", str(unknown), "--html"],
        "unwritable gif": ["replay", str(out), "--gif", str(tmp_path / "no" / "x.gif")],
        "bad frame time": ["replay", str(out), "--gif", str(tmp_path / "y.gif"), "--frame-ms",
                           "0"],
    }


def test_errors_are_one_line_and_exit_2(tmp_path, capsys):
    for name, argv in bad_games(tmp_path).items():
        capsys.readouterr()
        assert main(argv) == 2, name
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("boardzoo: error: "), (name, lines)
        assert "Traceback" not in captured.err and not captured.out, name
    assert "move 1 'a1-a9'" in main_error(["replay", str(tmp_path / "illegal.jsonl")], capsys)


def main_error(argv: list[str], capsys) -> str:
    """Return the error line of a failing command."""
    capsys.readouterr()
    assert main(argv) == 2
    return capsys.readouterr().err


DOCS = Path(__file__).resolve().parent.parent / "docs"
MAX_GIF_BYTES = 300 * 1024


@pytest.mark.parametrize("game", GAMES)
def test_docs_gif_is_made_by_the_commands_its_page_shows(tmp_path, game):
    gif = DOCS / "images" / f"{game}_replay.gif"
    assert gif.stat().st_size < MAX_GIF_BYTES
    page = (DOCS / f"{game}.md").read_text()
    assert f"(images/{game}_replay.gif)" in page
    section = page.split("## A recorded game", 1)[1].split("```")[1]
    commands = [line for line in section.splitlines() if line.startswith("boardzoo ")]
    # the demo writes to /tmp (not into the tracked docs/images/, which a reader may not have)
    assert len(commands) == 2 and f"--gif /tmp/{game}_replay.gif" in commands[1]
    assert f"`docs/images/{game}_replay.gif`" in page
    for command in commands:
        argv = shlex.split(command.replace("/tmp/", f"{tmp_path}/"))[1:]
        argv = [str(tmp_path / "made.gif") if a.endswith(".gif") else a for a in argv]
        assert main([*argv, "--no-progress"] if argv[0] == "tournament" else argv) == 0
    made, committed = read_frames(tmp_path / "made.gif"), read_frames(gif)
    assert len(made) == len(committed)
    assert all(np.array_equal(a, b) for a, b in zip(made, committed, strict=True))
