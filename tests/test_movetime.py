"""Per-move time limits (--movetime) for every agent kind, and the time columns of reports."""

from __future__ import annotations

import json
import time

import pytest
from toygames import TicTacToe

from boardzoo.agents import make_agent, mcts
from boardzoo.agents.arena import ArenaError, run_tournament
from boardzoo.agents.arena.play import play_game
from boardzoo.agents.arena.report import build, markdown
from boardzoo.agents.arena.viewer import ratings_html
from boardzoo.agents.base import Agent
from boardzoo.agents.movetime import MoveTimeError, limit_agents, parse_seconds
from boardzoo.cli import main
from boardzoo.envs.core.registry import load_state

# Games played by the code before --movetime existed (commit 3f05ce7, `play_game(game,
# [make_agent(spec, game, 7), make_agent("alphabeta:1", game, 8)], max_moves=8)`): games
# without a time limit must stay move for move the same.
BEFORE = {
    ("loa", "mcts:20"): "d1-f3 h7-h1 g1-e3 h6xe3 b1-c2 h1xf3 c2-d3 h2-f2",
    ("loa", "alphabeta"): "g8-e6 a7-a1 f8-d6 h7-g7 e8-e5 h2-h7 d8-d5 h3xf1",
    ("ultima", "mcts:20"): "b2b5 c7c3 g2g4 e7e4 f2f4 d7d5 c2b2 b8g3xf4",
    ("ultima", "alphabeta"): "f2f6 c7c3 d2d4 b7b5 f1f5 e7e6 g2g6 a8e4",
    ("whistling", "mcts:20"): "s3-u5 F6-j6:u5 H14-d14 f8-h10 r2-f14:h10 h8-c13 "
                              "d14-l6:i7-A21:w19x20 c13-i13:f14-l16:i15-i19:i17",
    ("whistling", "alphabeta"): "J16-H18 w19-x18 i17-G17:x18 u19-G19 H18:G19 t20-u19 j16-l18 "
                                "u19-i19:l18",
}


def moves(game: str, spec: str, movetime: float | None = None) -> list[str]:
    """Return the moves of the fixture game of ``spec`` (optionally under a time limit)."""
    agents = [make_agent(spec, game, 7), make_agent("alphabeta:1", game, 8)]
    limit_agents(agents, movetime)
    return play_game(game, agents, max_moves=8).moves


@pytest.mark.parametrize(("text", "seconds"), [("0.5s", 0.5), ("0.5", 0.5), ("500ms", 0.5),
                                               (" 2S ", 2.0), ("1e-3", 0.001)])
def test_parse_seconds_accepts_seconds_and_milliseconds(text: str, seconds: float) -> None:
    assert parse_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "0", "-1s", "inf", "nan", "5m", "ms", "1h"])
def test_parse_seconds_rejects_other_text(text: str) -> None:
    with pytest.raises(MoveTimeError, match="0.5s, 0.5 or 500ms"):
        parse_seconds(text)


@pytest.mark.parametrize("command", [["play", "loa"], ["tournament", "--game", "loa",
                                                       "--agents", "random,greedy"]])
def test_cli_rejects_a_bad_movetime_in_one_line(command: list[str], capsys) -> None:
    assert main([*command, "--movetime", "fast"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("--movetime: must be a positive time such as 0.5s, 0.5 or 500ms, at most 86400 "
            "seconds (a day), got 'fast'") in err


@pytest.mark.parametrize(("game", "spec"), list(BEFORE))
def test_games_without_a_time_limit_are_the_games_of_before(game: str, spec: str) -> None:
    assert moves(game, spec) == BEFORE[(game, spec)].split()


@pytest.mark.parametrize(("game", "spec"), [("loa", "mcts:20"), ("whistling", "alphabeta:2"),
                                            ("ultima", "checkpoint:ultima,sims=8"),
                                            ("whistling", "checkpoint:whistling,sims=8")])
def test_a_time_limit_never_reached_plays_the_same_game(game: str, spec: str) -> None:
    # the count ends every search first: the timed loop must search exactly as the plain one
    assert moves(game, spec, movetime=1000.0) == moves(game, spec)


@pytest.mark.parametrize(("game", "spec"), [("loa", "mcts"), ("ultima", "alphabeta"),
                                            ("whistling", "alphabeta"),
                                            ("loa", "checkpoint:loa,sims=100000"),
                                            ("whistling", "checkpoint:whistling,sims=100000")])
def test_search_agents_stop_at_the_time_limit(game: str, spec: str) -> None:
    agents = [make_agent(spec, game, 0), make_agent("random", game, 1)]
    limit_agents(agents, 0.2)
    record = play_game(game, agents, max_moves=4)
    assert record.think_moves == [2, 2]
    # a search with work left uses its time (at least one simulation/iteration) and stops
    # there. The slack is for one slow simulation (a long random LOA playout) on a busy CI
    # machine, which took 1.56 s once; each search here ignoring its limit would run for
    # minutes (or forever: an uncounted timed MCTS), so 5 s still catches that.
    assert 0.2 <= record.max_move_seconds[0] < 5.0
    # every move of the searching agent with a choice to make used its time (which position
    # it meets second depends on how deep its timed first search got, so a forced one, played
    # at once, can come up on a busy machine). No depth is given: alphabeta:5 finishes its
    # depth in 0.19 s where a Whistling capture leaves two moves, and CI met that position.
    # A network's later timed searches plan for what the last one's rate runs by then
    # (NetAgent.budget), so they may end a little before it where this one runs faster.
    state = load_state(game)
    for ply, text in enumerate(record.moves):
        if ply % 2 == 0 and len(state.legal_moves()) > 1:
            least = 0.1 if ply and spec.startswith("checkpoint") else 0.2 - 1e-3
            assert record.move_seconds[ply] >= least, (ply, record.move_seconds)
        state = state.apply(state.parse_move(text))


def test_a_count_that_comes_first_ends_the_search() -> None:
    agent = make_agent("mcts:5", "loa", 0)
    agent.set_move_time(30.0)
    started = time.perf_counter()
    play_game("loa", [agent, make_agent("random", "loa", 1)], max_moves=2)
    assert time.perf_counter() - started < 10
    assert agent.stats()["simulations"] == 5


class Clock:
    """A perf_counter that advances 1 ms per reading (timed searches become deterministic)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 0.001
        return self.now


def test_without_a_count_the_time_limit_lifts_the_default(monkeypatch) -> None:
    agent = make_agent("mcts", "tictactoe", 0)
    assert agent.simulations == 200
    monkeypatch.setattr(mcts, "time", Clock())
    agent.set_move_time(0.5)  # 0.5 s = 500 readings of this clock, one per simulation
    agent.select_move(TicTacToe.start())
    assert agent.stats()["simulations"] == 500
    counted = make_agent("mcts:200", "tictactoe", 0)
    counted.set_move_time(0.5)
    counted.select_move(TicTacToe.start())
    assert counted.stats()["simulations"] == 200


@pytest.mark.parametrize("spec", ["random", "greedy"])
def test_fast_agents_play_the_same_under_a_time_limit(spec: str) -> None:
    plain = [make_agent(spec, "loa", 3), make_agent(spec, "loa", 4)]
    timed = [make_agent(spec, "loa", 3), make_agent(spec, "loa", 4)]
    limit_agents(timed, 0.001)
    assert play_game("loa", timed, max_moves=30).moves == \
        play_game("loa", plain, max_moves=30).moves


def test_the_base_class_stores_the_limit_for_every_kind() -> None:
    class Fixed(Agent):
        def select_move(self, state):
            return state.legal_moves()[0]

    agent = Fixed()
    assert agent.move_time is None
    agent.set_move_time(0.25)
    assert agent.move_time == 0.25


def test_tournament_records_and_checks_its_movetime(tmp_path) -> None:
    records = run_tournament(TicTacToe, ["random", "mcts:50"], 2, tmp_path, progress=False,
                             movetime=0.002)
    assert all(r["movetime"] == 0.002 for r in records)
    mcts_moves = sum(r["think_moves"][r["players"].index("mcts:50")] for r in records)
    assert mcts_moves > 0
    assert json.loads((tmp_path / "tournament.json").read_text())["movetime"] == 0.002
    with pytest.raises(ArenaError, match="movetime"):  # the same tournament, another limit
        run_tournament(TicTacToe, ["random", "mcts:50"], 2, tmp_path, progress=False,
                       resume=True)
    plain = run_tournament(TicTacToe, ["random", "mcts:50"], 1, tmp_path / "plain",
                           progress=False)
    assert "movetime" not in plain[0]


def record(players: list[str], think: list[float], count: list[int],
           longest: list[float]) -> dict:
    """Return a hand-made game record with the given per-agent times."""
    return {"game": "nim", "players": players, "scores": [1.0, 0.0], "plies": sum(count),
            "think_seconds": think, "think_moves": count, "max_move_seconds": longest}


def test_report_times_come_from_the_records() -> None:
    records = [record(["a", "b"], [3.0, 0.5], [10, 10], [0.9, 0.1]),
               record(["b", "a"], [1.5, 1.0], [5, 5], [0.7, 0.4]),
               {"game": "nim", "players": ["a", "b"], "scores": [0.5, 0.5], "plies": 3}]
    rep = build(records)
    rows = {row["agent"]: row for row in rep["ranking"]}
    assert rows["a"]["mean_move_seconds"] == pytest.approx(4.0 / 15, abs=1e-4)
    assert rows["b"]["mean_move_seconds"] == pytest.approx(2.0 / 15, abs=1e-4)
    assert (rows["a"]["max_move_seconds"], rows["b"]["max_move_seconds"]) == (0.9, 0.7)
    text = markdown(rep)
    assert "| s/move | max s |" in text
    assert "| 0.267 | 0.900 |" in text and "| 0.133 | 0.700 |" in text
    page = ratings_html(rep)
    assert "<th>s/move</th><th>max s</th>" in page and "<td>0.267</td><td>0.900</td>" in page


def test_report_of_games_without_times_shows_dashes() -> None:
    rep = build([{"game": "nim", "players": ["a", "b"], "scores": [1.0, 0.0], "plies": 3}])
    assert rep["ranking"][0]["mean_move_seconds"] is None
    assert "| — | — |" in markdown(rep)


def test_cli_play_and_tournament_take_a_movetime(tmp_path, capsys) -> None:
    assert main(["play", "loa", "--agents", "mcts", "random", "--movetime", "50ms",
                 "--max-moves", "2", "--seed", "0"]) == 0
    assert "game 1: mcts (black) vs random (white)" in capsys.readouterr().out
    out = tmp_path / "t"
    assert main(["tournament", "--game", "loa", "--agents", "random,alphabeta", "--movetime",
                 "0.02", "--games-per-pair", "1", "--max-plies", "4", "--openings", "none",
                 "--out", str(out), "--no-progress", "--no-png", "--no-html"]) == 0
    text = capsys.readouterr().out
    assert "| s/move | max s |" in text
    assert json.loads((out / "tournament.json").read_text())["movetime"] == 0.02
    record = json.loads((out / "games.jsonl").read_text())
    assert record["movetime"] == 0.02 and sum(record["think_moves"]) == 4
