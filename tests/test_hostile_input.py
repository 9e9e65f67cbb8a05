"""Hostile input outside configs: nested JSON, odd game records, huge positions and moves,
non-integer actions, agent specs that differ in case: one clear error, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.agents.agent_spec import canonical_spec
from boardzoo.agents.arena import ArenaError, Pairing, play_game, run_tournament
from boardzoo.agents.arena.records import read_games
from boardzoo.agents.arena.viewer import page_data, render_page
from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.agents.single_agent import SingleAgentEnv, SingleAgentError
from boardzoo.cli import main
from boardzoo.envs.aec import BoardGameEnv, make_env
from boardzoo.envs.core.game import MoveError, PositionError, UnknownGameError
from boardzoo.envs.core.registry import GAMES, get_spec
from boardzoo.envs.vector import BoardzooVectorEnv
from boardzoo.training.config import ConfigError, load_config

REPO = Path(__file__).resolve().parent.parent
BIG = 120_000  # characters of a hostile input
LIMIT = 600  # an error message that echoes it stays below this


def one_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("boardzoo: error: "), err[:500]
    return lines[0]


# -- games.jsonl and the HTML viewer ---------------------------------------------------------
def test_games_file_line_of_nested_brackets_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ArenaError, match="line 1 nests too deeply"):
        read_games(path)
    line = one_line(main(["rate", str(path)]), capsys.readouterr().err)
    assert "nests too deeply" in line


@pytest.fixture(scope="module")
def record() -> dict:
    return play_game("loa", Pairing("random|greedy|0", "random", "greedy", 3), max_plies=12)


def test_viewer_ignores_times_that_are_not_numbers(record):
    bad = {**record, "seconds": "x", "think_seconds": "x", "move_seconds": [None, "y", 1.5]}
    game = page_data([bad])["games"][0]
    assert game["seconds"] is None and game["thinkSeconds"] is None
    assert game["moveSeconds"] == [None, None, 1.5]
    nan = {**record, "think_seconds": [float("nan"), 2.0], "seconds": float("inf")}
    game = page_data([nan])["games"][0]
    assert game["thinkSeconds"] == [None, 2.0] and game["seconds"] is None
    page = render_page([nan], None, "t")
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    json.loads(blob.group(1), parse_constant=lambda c: pytest.fail(f"{c} in the page data"))


def test_page_template_is_filled_in_one_pass(record):
    title = "run {{DATA}} and {{RATINGS}}"
    page = render_page([record], None, title)
    assert "<title>run {{DATA}} and {{RATINGS}}</title>" in page
    assert page.count('"positions":') == 1  # the data blob appears once, in its script


# -- inputs echoed by error messages ---------------------------------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_errors_echo_at_most_a_short_part_of_a_huge_position_or_move(game, capsys):
    start = get_spec(game).state_cls.start().to_text()
    for text in ("a" * BIG, start + "a" * BIG, start + " " + "a" * BIG):
        env = BoardGameEnv(game)
        with pytest.raises(PositionError) as info:
            env.reset(options={"position": text})
        assert len(str(info.value)) < LIMIT
        line = one_line(main(["legal", game, "--position", text]), capsys.readouterr().err)
        assert len(line) < LIMIT and "characters)" in line
    for move in ("a" * BIG, "a1-" + "a" * BIG):
        with pytest.raises(MoveError) as info:
            get_spec(game).state_cls.start().parse_move(move)
        assert len(str(info.value)) < LIMIT


def test_errors_echo_at_most_a_short_part_of_a_huge_spec_game_or_config_value(tmp_path):
    for spec in ("x" * BIG, "mcts:" + "9x" * BIG, "alphabeta:" + "x" * BIG):
        with pytest.raises(UnknownAgentError) as info:
            make_agent(spec, "loa", 0)
        assert len(str(info.value)) < LIMIT
    with pytest.raises(UnknownGameError) as info:
        get_spec("g" * BIG)
    assert len(str(info.value)) < LIMIT
    for override in ("mcts.simulations=" + "x" * BIG, "game=" + "x" * BIG,
                     "mcts.root=" + "x" * BIG, "x" * BIG + "=1", "model." + "y" * BIG + "=1"):
        with pytest.raises(ConfigError) as info:
            load_config(REPO / "configs" / "tiny.yaml", [override])
        assert len(str(info.value)) < LIMIT, str(info.value)[:300]


# -- actions: integers only, one error type for every game -----------------------------------
@pytest.mark.parametrize("game", GAMES)
def test_env_actions_must_be_integers(game):
    env = BoardGameEnv(game)
    env.reset()
    action = env.legal_actions()[0]
    before = env.game.to_text()
    for bad in (action + 0.9, float(action), str(action), True, np.float64(action), None):
        with pytest.raises(MoveError, match="an action is an integer"):
            env.step(bad)
        assert env.game.to_text() == before and env.turns_played == 0  # nothing was played
    wrapped = make_env(game)
    wrapped.reset()
    for bad in (True, False, float(action), str(action)):
        with pytest.raises(MoveError, match="an action is an integer"):
            wrapped.step(bad)
    for bad in (10**6, -1):  # the same error type for out-of-range integers
        with pytest.raises(MoveError, match="outside the action space"):
            wrapped.step(bad)
    wrapped.step(np.int64(action))  # NumPy integers (a policy's output) are actions
    env.step(np.array(action))
    assert env.game.to_text() != before


@pytest.mark.parametrize("game", GAMES)
def test_reset_with_a_position_that_is_not_text_is_a_position_error(game):
    env = BoardGameEnv(game)
    for bad in (12345, ["x"], b"abc"):
        with pytest.raises(PositionError, match="a position is text"):
            env.reset(options={"position": bad})


def test_vector_env_refuses_float_and_bool_actions():
    env = BoardzooVectorEnv("loa", 2)
    env.reset(seed=0)
    actions = env.random_actions()
    for bad in (actions + 0.5, actions.astype(np.float64), actions.tolist() and [1.5, 2.0],
                torch.as_tensor(actions, dtype=torch.float32), np.array([True, False])):
        with pytest.raises(MoveError, match="actions must be integers"):
            env.step(bad)
    env.step(actions.tolist())  # plain ints, as a list, are fine


# -- agent specs -------------------------------------------------------------------------------
def test_agent_kind_case_is_canonical(tmp_path):
    assert canonical_spec(" ALPHABETA:1 ") == "alphabeta:1"
    assert canonical_spec("Checkpoint:Runs/A.pt") == "checkpoint:Runs/A.pt"  # paths keep case
    assert make_agent("RANDOM", "loa", 0).spec == "random"
    with pytest.raises(ArenaError, match="listed twice: alphabeta:1"):
        run_tournament("loa", ["alphabeta:1", "ALPHABETA:1"], 1, tmp_path / "t",
                       progress=False)
    games = run_tournament("loa", ["Random", "GREEDY"], 1, tmp_path / "u", progress=False)
    assert {p for g in games for p in g["players"]} == {"random", "greedy"}


def test_single_agent_env_refuses_bool_actions():
    env = SingleAgentEnv("loa", learner_side=0, seed=0)
    env.reset()
    legal = int(np.flatnonzero(env.action_masks())[0])
    for bad in (True, np.bool_(True), float(legal)):
        with pytest.raises(SingleAgentError, match="an action is an integer"):
            env.step(bad)
    env.step(np.int64(legal))


# -- round three: resume files, recorded times -----------------------------------------------
def test_resume_with_deeply_nested_tournament_json_is_one_line(tmp_path, capsys):
    out = tmp_path / "t"
    argv = ["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair", "1",
            "--max-plies", "8", "--out", str(out), "--no-progress", "--no-png", "--no-html"]
    assert main(argv) == 0
    (out / "tournament.json").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    capsys.readouterr()
    assert "tournament.json is damaged" in one_line(main(argv + ["--resume"]),
                                                    capsys.readouterr().err)


HOSTILE_TIMES = [("x", [3, 3]), (["x", None], [3, 3]), ({"a": 1}, [3, 3]),
                 ([1.0, 1.0], ["x", -1]), ([-5.0, 1e999], [3, 3]), ([1.0, 1.0], [3, 3])]


def refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def test_rate_and_report_skip_hostile_think_times(record, tmp_path, capsys):
    lines = []
    for k, (think_seconds, think_moves) in enumerate(HOSTILE_TIMES):
        # each game its own (fewer moves): a repeated game would not be counted
        moves = record["moves"][: len(record["moves"]) - k]
        lines.append(json.dumps({**record, "id": f"g{k}", "think_seconds": think_seconds,
                                 "think_moves": think_moves, "moves": moves}))
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["rate", str(path)]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()
            if re.match(r"\| \d+ \|", line)]
    assert [row[5].strip() for row in rows] == ["0.333", "0.333"]  # s/move: the sound game
    assert all(float(row[6]) >= 0 for row in rows)  # max s
    assert main(["report", str(path), "--out", str(tmp_path / "r"), "--no-png"]) == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text(),
                        parse_constant=refuse_constant)
    times = [row["mean_move_seconds"] for row in report["ranking"]]
    assert times == [pytest.approx(1 / 3, abs=1e-3)] * 2  # only the last, sound game counts


@pytest.mark.parametrize("game", GAMES)
def test_counter_fields_past_python_digit_limit_are_position_errors(game, capsys):
    fields = get_spec(game).state_cls.start().to_text().split()
    counters = [k for k, field in enumerate(fields) if field.isdigit()]
    assert counters  # LOA's ply, Ultima's two clocks, Whistling's quiet counter
    for k in counters:
        text = " ".join(fields[:k] + ["9" * 5000] + fields[k + 1:])
        with pytest.raises(PositionError, match="has 5,000 digits"):
            BoardGameEnv(game).reset(options={"position": text})
        line = one_line(main(["legal", game, "--position", text]), capsys.readouterr().err)
        assert "5,000 digits" in line
    huge_note = get_spec(game).state_cls.start().legal_move_strs()[0] + ":" + "9" * 5000
    with pytest.raises(MoveError):  # a capture count of Whistling's notation, too
        get_spec(game).state_cls.start().parse_move(huge_note)


# -- round three: agent options, tournament options, names and paths -------------------------
@pytest.mark.parametrize("argv,message", [
    (["play", "loa", "--agents", "mcts:10,c=nan", "random"], "c must be a number >= 0, got 'nan'"),
    (["play", "loa", "--agents", "mcts:10,c=inf", "random"], "c must be a number >= 0, got 'inf'"),
    (["play", "loa", "--agents", "alphabeta:t=1e308s", "random"],
     "t must be a positive time such as 0.5s, 0.5 or 500ms, at most 86400 seconds"),
    (["play", "loa", "--agents", "engine:/bin/cat,timeout=1e10", "random"],
     "timeout must be a positive time such as 0.5s, 0.5 or 500ms, at most 86400 seconds"),
    (["play", "loa", "--agents", "random", "random", "--movetime", "1e10"], "at most 86400"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--max-plies", "0"],
     "--max-plies must be at least 1, got 0"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--max-plies", "-1"],
     "--max-plies must be at least 1, got -1"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--max-plies", "4"],
     "--max-plies 4 leaves the agents no move after the openings' 4 plies (--openings suite)"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--prior", "nan"],
     "--prior: must be a finite number"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--prior", "inf"],
     "--prior: must be a finite number"),
    (["tournament", "--game", "loa", "--agents", "random,greedy", "--out", ""],
     "--out is empty"),
], ids=["c-nan", "c-inf", "t-1e308", "timeout-1e10", "movetime-1e10", "max-plies-0",
        "max-plies-neg", "max-plies-in-opening", "prior-nan", "prior-inf", "out-empty"])
def test_absurd_agent_and_tournament_options_are_one_line_before_any_game(argv, message, capsys,
                                                                          tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)  # where --out "" would have put results/
    if argv[0] == "tournament" and "--out" not in argv:
        argv = argv + ["--out", str(tmp_path / "t")]
    assert message in one_line(main(argv), capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []  # no game was played, no folder made


def test_out_folder_named_by_bytes_that_are_not_utf8_gets_every_report(tmp_path, capsys):
    out = tmp_path / "o\udcff"  # how Python hands over the argument bytes b"o\xff"
    assert main(["tournament", "--game", "loa", "--agents", "random,greedy",
                 "--games-per-pair", "1", "--max-plies", "6", "--out", str(out),
                 "--no-progress", "--no-png"]) == 0
    assert "o\\udcff" in capsys.readouterr().out  # shown escaped
    assert "o\\udcff" in (out / "report.html").read_text(encoding="utf-8")


ESCAPE = "\x1b]0;pwned\x07\x1b[2J"


def test_terminal_escapes_in_recorded_names_are_shown_escaped(record, tmp_path, capsys):
    hostile = {**record, "players": ["random" + ESCAPE, "greedy\u202e"]}
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(hostile) + "\n")
    for argv in (["replay", str(path), "--list"], ["rate", str(path)]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        # (a spec without ':' is all kind, and kinds are case-insensitive: shown lower-case)
        assert "random\\x1b]0;pwned\\x07\\x1b[2" in out and "greedy\\u202e" in out


def test_worker_counts_far_beyond_the_cores_are_one_line(tmp_path, capsys):
    line = one_line(main(["tournament", "--game", "loa", "--agents", "random,greedy",
                          "--workers", "100000", "--out", str(tmp_path / "t")]),
                    capsys.readouterr().err)
    assert "--workers must be at most" in line and "got 100000" in line
    line = one_line(main(["train", "--config", str(REPO / "configs" / "tiny.yaml"), "--set",
                          "selfplay.workers=1000", "--out", str(tmp_path / "run")]),
                    capsys.readouterr().err)
    assert "selfplay.workers must be at most" in line
    assert list(tmp_path.iterdir()) == []
