"""Round-robin arena: schedule, tiny tournaments, worker-count independence, resume, CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from toygames import TicTacToe

from boardzoo.agents.arena import (
    GAMES_FILE,
    ArenaError,
    read_games,
    run_tournament,
    schedule,
)
from boardzoo.cli import main
from boardzoo.envs.core.game import BoardzooError

AGENTS = ["random", "greedy", "alphabeta:2", "mcts:20"]
TESTS = Path(__file__).resolve().parent


def same_games(records: list[dict]) -> dict[str, tuple]:
    """Return what must not depend on timing: id -> (players, scores, moves, seed)."""
    return {r["id"]: (tuple(r["players"]), tuple(r["scores"]), tuple(r["moves"]), r["seed"])
            for r in records}


def test_schedule_is_balanced_and_stable():
    plan = list(schedule(AGENTS, 4, seed=1))
    assert len(plan) == 6 * 4 and len({p.id for p in plan}) == len(plan)
    firsts = Counter((p.first, p.second) for p in plan)
    assert all(firsts[(a, b)] == firsts[(b, a)] == 2 for a, b in firsts)
    # Seeds depend on the game id only: adding an agent keeps the other games' seeds.
    bigger = {p.id: p.seed for p in schedule([*AGENTS, "mcts:5"], 4, seed=1)}
    assert all(bigger[p.id] == p.seed for p in plan)
    assert next(schedule(AGENTS, 4, seed=2)).seed != plan[0].seed


def test_tiny_tournament_writes_complete_records(tmp_path):
    records = run_tournament(TicTacToe, AGENTS, 2, tmp_path, seed=0, progress=False)
    assert len(records) == 12
    lines = (tmp_path / GAMES_FILE).read_text().splitlines()
    assert len(lines) == 12
    for line in lines:
        r = json.loads(line)
        assert {"players", "scores", "moves", "seed", "plies", "seconds"} <= set(r)
        assert sum(r["scores"]) == 1 and r["plies"] == len(r["moves"])
        state = TicTacToe()  # the moves replay to the recorded result
        for m in r["moves"]:
            state = state.apply(state.parse_move(m))
        assert state.is_terminal() and r["result"] == {0: "1-0", 1: "0-1", None: "1/2-1/2"}[
            state.winner()]
    assert json.loads((tmp_path / "tournament.json").read_text())["agents"] == AGENTS


def test_results_do_not_depend_on_workers_or_interruption(tmp_path):
    one = run_tournament(TicTacToe, AGENTS, 2, tmp_path / "one", seed=3, progress=False)
    two = run_tournament(TicTacToe, AGENTS, 2, tmp_path / "two", seed=3, workers=2,
                         progress=False)
    assert same_games(one) == same_games(two)
    part = run_tournament(TicTacToe, AGENTS, 2, tmp_path / "cut", seed=3, progress=False,
                          stop_after=5)
    assert len(part) == 5
    with pytest.raises(ArenaError, match="--resume"):
        run_tournament(TicTacToe, AGENTS, 2, tmp_path / "cut", seed=3, progress=False)
    with pytest.raises(ArenaError, match="seed"):
        run_tournament(TicTacToe, AGENTS, 2, tmp_path / "cut", seed=4, progress=False,
                       resume=True)
    rest = run_tournament(TicTacToe, AGENTS, 2, tmp_path / "cut", seed=3, progress=False,
                          resume=True)
    assert same_games(rest) == same_games(one)
    assert len(read_games(tmp_path / "cut" / GAMES_FILE)) == 12  # nothing played twice


KILLED_RUN = """
import sys
sys.path.insert(0, {tests!r})
from toygames import TicTacToe
from boardzoo.agents.arena import run_tournament
run_tournament(TicTacToe, {agents!r}, 4, {out!r}, seed=9, progress=False, resume=True)
"""


def test_resume_after_kill_loses_nothing(tmp_path):
    agents = ["random", "mcts:400"]  # slow enough to be killed part-way
    out = tmp_path / "killed"
    code = KILLED_RUN.format(tests=str(TESTS), agents=agents, out=str(out))
    proc = subprocess.Popen([sys.executable, "-c", code])
    games = out / GAMES_FILE
    deadline = time.time() + 60
    while time.time() < deadline and (not games.exists() or games.read_text().count("\n") < 1):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(read_games(games))
    assert 1 <= done < 4, done  # killed part-way
    with open(games, "a") as f:
        f.write('{"id": "torn')  # a line cut short by the kill
    records = run_tournament(TicTacToe, agents, 4, out, seed=9, progress=False, resume=True)
    full = run_tournament(TicTacToe, agents, 4, tmp_path / "full", seed=9, progress=False)
    assert same_games(records) == same_games(full)
    assert len(read_games(games)) == 4


@pytest.mark.parametrize("agents, message", [
    (["random"], "at least two"),
    (["random", "random"], "listed twice"),
    (["random", "human"], "human"),
    (["random", "gui"], "human players"),
    (["random", "mcts:abc"], "number"),
    (["random", "wizard"], "unknown agent"),
])
def test_bad_tournaments_raise(tmp_path, agents, message):
    with pytest.raises(BoardzooError, match=message):
        run_tournament(TicTacToe, agents, 2, tmp_path, progress=False)


def test_cli_tournament_and_rate(tmp_path, capsys):
    out = tmp_path / "loa"
    code = main(["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair",
                 "2", "--out", str(out), "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "| 1 | greedy |" in text and "Score of the row agent" in text
    assert {p.name for p in out.iterdir()} >= {GAMES_FILE, "report.md", "report.json",
                                               "matrix.png"}
    assert json.loads((out / "report.json").read_text())["ranking"][1]["rating"] == 0
    assert main(["rate", str(out), "--no-png"]) == 0
    assert "greedy" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["tournament", "--game", "chess", "--agents", "random,greedy"], "unknown game"),
    (["tournament", "--game", "loa", "--agents", "random,mcts:-3"], "mcts"),
    (["rate", "/nonexistent/folder"], "no games file"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    assert main([*argv, "--no-png"] + (["--out", str(tmp_path)] if argv[0] != "rate" else [])
                ) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_worker_processes_end_without_a_traceback(tmp_path):
    """A finished tournament lets its workers exit by themselves: no SIGTERM arriving in
    the middle of their exit handlers, so nothing like "Exception ignored ... SystemExit"
    on stderr."""
    for run in range(2):  # a race when it happens: try twice
        proc = subprocess.run(
            [sys.executable, "-m", "boardzoo", "tournament", "--game", "loa", "--agents",
             "random,checkpoint:loa,sims=2", "--games-per-pair", "2", "--workers", "2",
             "--no-progress", "--no-png", "--out", str(tmp_path / f"t{run}")],
            capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, \
            proc.stderr
