"""Outside engines over the engine protocol: `engine:` specs, `boardzoo engine`, real processes.

Every test here starts real programs (a POSIX shell engine in tests/engines/, boardzoo
itself as `python -m boardzoo engine`) and checks that none is left running afterwards:
each test's processes carry a unique environment marker, and /proc is searched for it.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from boardzoo.agents.agent_spec import AgentSpec, spec_list
from boardzoo.agents.arena import (
    ENGINE_LOGS,
    GAMES_FILE,
    Pairing,
    play_game,
    read_games,
    run_tournament,
)
from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.agents.engine import AGENT_KIND, CRASHED, ILLEGAL, NO_ANSWER, TIMEOUT, parse_info
from boardzoo.agents.engine.server import serve
from boardzoo.cli import main
from boardzoo.envs.core.registry import state_class

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/environ").exists(),
                                reason="outside engines need POSIX; the checks read /proc")

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SH = TESTS / "engines" / "first_legal.sh"
PY = shlex.quote(sys.executable)


def served(spec: str, game: str = "loa") -> str:
    """The spec of boardzoo serving ``spec`` as an outside engine."""
    return f"engine:{PY} -m boardzoo engine {shlex.quote(spec)} --game {game}"


def sh(mode: str = "play", options: str = "") -> str:
    """The spec of the shell engine in ``mode`` (tests/engines/first_legal.sh)."""
    return f"engine:{SH} {mode}" + (f",{options}" if options else "")


def wait_until_an_engine_thinks(proc: subprocess.Popen, out: Path) -> None:
    """Wait (60 s at most, while ``proc`` runs) until an engine log of the tournament in
    ``out`` shows the shell engine thinking ("first legal")."""
    deadline = time.monotonic() + 60
    logs = out / ENGINE_LOGS
    while not (logs.is_dir() and any("first legal" in p.read_text() for p in logs.iterdir())):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)


@pytest.fixture
def marker(monkeypatch) -> str:
    """A value in every child process's environment; the test fails if one outlives it."""
    value = uuid.uuid4().hex
    monkeypatch.setenv("BOARDZOO_ENGINE_TEST", value)
    yield value
    assert leftovers(value) == [], "engine processes were left running"


def leftovers(value: str, wait: float = 3.0) -> list[str]:
    """Return the command lines of live processes whose environment holds ``value``."""
    needle = f"BOARDZOO_ENGINE_TEST={value}".encode()
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                if needle in (proc / "environ").read_bytes():
                    status = (proc / "status").read_text()
                    if "\nState:\tZ" not in status:  # a zombie is already gone
                        found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ")
                                     .decode(errors="replace"))
            except OSError:
                continue  # ended meanwhile, or not ours
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def replay_legal(record: dict) -> None:
    """Replay a record's moves on the rules engine; each must be exactly a legal move's text."""
    state = state_class(record["game"]).start()
    for move in record["moves"]:
        assert move in state.legal_move_strs()
        state = state.apply(state.parse_move(move))


# -- specs ------------------------------------------------------------------------------------
def test_spec_splits_command_and_options_with_shell_quoting() -> None:
    opts = AGENT_KIND.bind(AgentSpec.parse(
        "engine:'./my engine' --hash 64 \"--list=a,b\",movetime=0.5s,nodes=100"))
    assert opts["command"] == ["./my engine", "--hash", "64", "--list=a,b"]
    assert opts["movetime"] == 0.5 and opts["nodes"] == 100 and opts["timeout"] == 30.0
    assert spec_list(f"random,engine:{SH} \"a,b\",movetime=1,mcts:5,c=2") == [
        "random", f"engine:{SH} \"a,b\",movetime=1", "mcts:5,c=2"]


@pytest.mark.parametrize(("arg", "message"), [
    ("", "needs a command"),
    ("'./unclosed", "quotation"),
    (f"{SH},depth=3", "unknown option 'depth'; options: movetime=S, nodes=N, timeout=S, "
                      "grace=S, name=NAME"),
    (f"{SH},movetime=0", "movetime must be a positive time"),
    (f"{SH},nodes=1.5", "nodes must be a whole number >= 1, got '1.5'"),
    (f"{SH},grace=-1", "grace must be a time of 0 or more"),
    ("/no/such/engine", "not an executable file"),
    ("no-such-engine-xyz", "not found on PATH"),
])
def test_bad_engine_spec_is_one_clear_error(arg: str, message: str, capsys) -> None:
    with pytest.raises(UnknownAgentError, match=message):
        make_agent(f"engine:{arg}", "loa", 0)
    assert main(["play", "loa", "--agents", f"engine:{arg}", "random"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boardzoo: error: ") and message in err[0]


def test_info_line_keeps_numbers_and_the_pv() -> None:
    assert parse_info("depth 3 score -0.25 nodes 812 pv b1-b3 h2-f2") == {
        "depth": 3, "score": -0.25, "nodes": 812, "pv": "b1-b3 h2-f2"}


# -- boardzoo engine: the server --------------------------------------------------------------
def test_boardzoo_engine_answers_the_protocol_over_pipes(marker: str) -> None:
    script = ("boardzoo 1\ngame loa\nnewgame seed 3\nisready\nposition startpos moves b1-b3\n"
              "go movetime 5\nposition text 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 0\n"
              "go\nfly\nposition startpos moves b1-b2\ngo\ngame chess\nquit\nisready\n")
    out = subprocess.run([sys.executable, "-m", "boardzoo", "engine", "alphabeta:1",
                          "--game", "loa"], input=script, capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    assert out[:5] == ["id name boardzoo alphabeta:1", "id author boardzoo", "protocol 1",
                       "games loa", "ok"]
    assert out[5] == "readyok"
    after_b1b3 = state_class("loa").start()
    after_b1b3 = after_b1b3.apply(after_b1b3.parse_move("b1-b3"))
    assert out[6].startswith("info depth 1 score ")
    assert out[7].removeprefix("bestmove ") in after_b1b3.legal_move_strs()
    assert out[9].removeprefix("bestmove ") in state_class("loa").start().legal_move_strs()
    assert out[10] == "error unknown command 'fly'"
    assert out[11].startswith("error illegal move 'b1-b2'")
    assert out[12] == "error no position to move in: the last 'position' was refused"
    assert out[13].startswith("error this engine plays loa, not 'chess'")
    assert len(out) == 14  # nothing after quit


def test_served_agent_plays_as_the_in_process_agent_with_the_same_seed() -> None:
    start = state_class("ultima").start()
    moves = ["a2a3", "h7h6"]
    state = start
    for m in moves:
        state = state.apply(state.parse_move(m))
    commands = f"game ultima\nnewgame seed 11\nposition startpos moves {' '.join(moves)}\ngo\n"
    out = io.StringIO()
    serve("mcts:30", ["loa", "ultima"], io.StringIO(commands), out)
    agent = make_agent("mcts:30", "ultima", 11)
    agent.reset()
    expected = state.move_to_str(agent.select_move(state))
    assert out.getvalue().splitlines()[-1] == f"bestmove {expected}"


def test_boardzoo_engine_refuses_a_person_and_a_bad_spec(capsys) -> None:
    assert main(["engine", "human", "--game", "loa"]) == 2
    assert main(["engine", "mcts:abc", "--game", "loa"]) == 2
    assert main(["engine", "random", "--game", "chess"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("boardzoo: error: ") for line in err)
    assert "waits for a person" in err[0] and "mcts" in err[1] and "chess" in err[2]


# -- real processes in the arena --------------------------------------------------------------
def test_two_boardzoo_engines_give_the_in_process_records(tmp_path: Path, marker: str) -> None:
    inside = ["mcts:8", "alphabeta:1"]
    outside = [served(spec) for spec in inside]
    records = run_tournament("loa", outside, 2, tmp_path, seed=5, max_plies=12, progress=False)
    assert len(records) == 2
    for rec in records:
        first, second = (inside[outside.index(p)] for p in rec["players"])
        twin = play_game("loa", Pairing("twin", first, second, rec["seed"]), max_plies=12)
        assert (rec["moves"], rec["scores"]) == (twin["moves"], twin["scores"])
        assert rec["termination"] == twin["termination"]
        seat = rec["players"].index(outside[1])  # alpha-beta reports its depth and score
        info = [rec["move_info"][i] for i in range(seat, rec["plies"], 2)]
        assert all(i["depth"] == 1 and isinstance(i["score"], (int, float)) for i in info)
        assert [bool(i) for i in rec["move_info"][1 - seat::2]] == [True] * len(
            rec["move_info"][1 - seat::2])  # MCTS: nodes and time


def test_shell_engine_plays_a_legal_game_with_its_stderr_logged(tmp_path: Path,
                                                               marker: str) -> None:
    records = run_tournament("whistling", [sh(), "random"], 2, tmp_path, seed=1, max_plies=30,
                             progress=False)
    assert [r["termination"] for r in records] != []
    for rec in records:
        assert "forfeit" not in rec and rec["plies"] > 10
        replay_legal(rec)
        seat = rec["players"].index(sh())
        log = tmp_path / rec["logs"][seat]
        assert rec["logs"][1 - seat] is None and log.parent.name == ENGINE_LOGS
        lines = log.read_text().splitlines()
        assert lines[0] == f"first legal move: {rec['moves'][seat]}"
        assert all(rec["move_info"][i] == {"depth": 0, "nodes": 1}
                   for i in range(seat, rec["plies"], 2))


def test_misbehaving_engines_lose_with_the_reason(tmp_path: Path, marker: str) -> None:
    reasons = {"crash": CRASHED, "illegal": ILLEGAL, "silent": NO_ANSWER, "slow": TIMEOUT}
    specs = {sh(mode, "timeout=1,movetime=0.2,grace=0.3"): why for mode, why in reasons.items()}
    started = time.monotonic()
    records = run_tournament("loa", ["random", *specs], 1, tmp_path, max_plies=20,
                             progress=False)
    assert time.monotonic() - started < 60  # nothing waited for long
    assert len(records) == 10
    for rec in records:
        assert rec["forfeit"]["reason"] == specs[rec["players"][rec["forfeit"]["player"]]]
        assert rec["termination"] == rec["forfeit"]["reason"]
        loser = rec["forfeit"]["player"]
        assert rec["scores"][loser] == 0.0 and rec["scores"][1 - loser] == 1.0
        assert rec["result"] == ("0-1" if loser == 0 else "1-0")
    crash = next(r for r in records if r["players"] == ["random", sh(
        "crash", "timeout=1,movetime=0.2,grace=0.3")])
    assert "exit status 3" in crash["forfeit"]["detail"]
    assert (tmp_path / crash["logs"][1]).read_text().startswith("first legal move: ")
    games = read_games(tmp_path / GAMES_FILE)
    assert [g["termination"] for g in games] == [r["termination"] for r in records]


def test_engine_without_the_game_or_protocol_is_one_error(tmp_path: Path, marker: str,
                                                          capsys) -> None:
    assert main(["play", "ultima", "--agents", served("random", "loa"), "random"]) == 2
    other = tmp_path / "protocol2.sh"
    other.write_text("#!/bin/sh\nread line\necho 'protocol 2'\necho 'games loa'\necho ok\n"
                     "cat >/dev/null\n")
    other.chmod(0o755)
    assert main(["play", "loa", "--agents", f"engine:{other}", "random"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert "does not play ultima (it plays: loa)" in err[0]
    assert "speaks protocol '2'; boardzoo speaks 1" in err[1]


def test_play_prints_the_forfeit(marker: str, capsys) -> None:
    assert main(["play", "ultima", "--agents", "random", sh("illegal"), "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "white wins: black forfeits (illegal move: bestmove z9-z10:" in out


def test_training_evaluation_plays_an_engine_baseline(marker: str) -> None:
    from boardzoo.training.config import from_dict
    from boardzoo.training.evaluate import match, spec_factory

    cfg = from_dict({"game": "loa", "eval": {"baselines": [sh("crash"), "random"]}})
    assert cfg.eval.baselines[0] == sh("crash")
    result = match("loa", spec_factory("random", "loa"), spec_factory(sh("crash"), "loa"),
                   2, seed=0, opening_moves=0)
    assert result["wins"] == 2  # the crashing engine loses both colours


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_and_resume_leave_no_engine_behind(tmp_path: Path, marker: str,
                                                  monkeypatch, workers: int) -> None:
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv("BOARDZOO_ENGINE_HOLD", str(hold))  # the engine waits while it exists
    out = tmp_path / "arena"
    cmd = [sys.executable, "-m", "boardzoo", "tournament", "--game", "loa", "--agent", "random",
           "--agent", sh("hold"), "--games-per-pair", "2", "--max-plies", "6", "--out",
           str(out), "--no-progress", "--no-png", "--no-html", "--workers", str(workers)]
    # Ctrl-C as a terminal sends it: SIGINT at its default even when this test runs in a
    # background job (which starts with SIGINT ignored, and Python then keeps ignoring it)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_until_an_engine_thinks(proc, out)
        proc.send_signal(signal.SIGINT)  # the engine is thinking (held): interrupt the arena
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "--resume" in err
    assert leftovers(marker) == []
    hold.unlink()
    done = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    games = read_games(out / GAMES_FILE)
    assert len(games) == 2 and all("forfeit" not in g for g in games)


WORKER_THAT_SWALLOWS = """
import sys, time
from boardzoo.agents.arena.runner import _exit_on_sigterm
from boardzoo.agents.engine.process import EngineProcess
import os
_exit_on_sigterm(os.getppid(), "test")
engine = EngineProcess(["sleep", "120"])  # an engine that never answers
print(engine.pid, flush=True)
while True:  # code that ignores every exception, as an at-fork hook does
    try:
        time.sleep(60)
    except BaseException:
        pass
"""


WORKER_SIGNALLED_WHILE_AN_ENGINE_STARTS = """
import os, signal, subprocess, sys, time
from boardzoo.agents.arena.runner import _exit_on_sigterm
from boardzoo.agents.engine.process import EngineProcess
_exit_on_sigterm(os.getppid(), "test")
class LatePopen(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        time.sleep(3)  # the engine runs and starts children in new sessions meanwhile
        os.kill(os.getpid(), signal.SIGTERM)  # Pool.terminate's, before the engine is recorded
        time.sleep(2)
subprocess.Popen = LatePopen
EngineProcess([sys.executable, sys.argv[1], "setsid"])
time.sleep(30)
"""


def test_worker_signalled_while_an_engine_starts_leaves_nothing_behind(marker: str) -> None:
    """The flaky case of the signalled tournament below, made certain: SIGTERM reached a
    worker after an engine's fork but before it was recorded, so the worker killed nothing
    and exited; the kernel killed the engine (PR_SET_PDEATHSIG), and the `sleep`s it had
    started in new sessions ran on. Now the signal waits until the engine is recorded."""
    done = subprocess.run([sys.executable, "-c", WORKER_SIGNALLED_WHILE_AN_ENGINE_STARTS,
                           str(TESTS / "engines" / "hostile.py")], timeout=60)
    assert done.returncode == 128 + signal.SIGTERM  # the marker fixture: nothing left


def test_the_end_of_an_engine_run_kills_what_its_lost_engines_started(marker: str) -> None:
    """An engine whose owner could not end it (a worker killed outright: no clean-up, its
    _LIVE gone) leaves its new-session children; the tournament's run mark finds them."""
    from boardzoo.agents.engine import process

    with process.engine_run():
        engine = process.EngineProcess([sys.executable, str(TESTS / "engines" / "hostile.py"),
                                        "setsid"])
        engine.send("boardzoo 1", time.monotonic() + 30)
        assert engine.read_line(time.monotonic() + 30) == "id name hostile.py"  # it has started
        engine._finalizer.detach()  # lost, as with its worker
        del process._LIVE[engine.proc]
        os.kill(engine.pid, signal.SIGKILL)
        engine.proc.wait()
        assert len(leftovers(marker, wait=0)) == 2  # the two `sleep`s in their own sessions
    # the marker fixture checks that nothing is left


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_arena_worker_ends_on_sigterm_even_inside_code_that_ignores_exceptions():
    """Pool.terminate's SIGTERM ends an arena worker and kills its engine wherever it lands.

    A handler that raised SystemExit was lost when the signal came during code that ignores
    exceptions (an at-fork hook while an engine started): the worker ran on and the arena
    waited for it forever."""
    proc = subprocess.Popen([sys.executable, "-c", WORKER_THAT_SWALLOWS], stdout=subprocess.PIPE,
                            text=True)
    try:
        engine = int(proc.stdout.readline())
        time.sleep(0.2)  # inside the loop
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 10
        while _alive(engine) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(engine)
    finally:
        proc.kill()
        proc.wait()


def test_boardzoo_engine_bounds_what_it_reads_and_echoes_and_refuses_bad_limits() -> None:
    long_number = "9" * 5000
    script = ("game loa\ngo\n" + "x" * 3_000_000 + "\n" + "fly" * 100_000 + "\n"
              f"position text 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b {long_number}\n"
              "position startpos\ngo movetime -1\ngo movetime nan\ngo movetime inf\n"
              "go movetime 1e10\ngo movetime 0.5\nquit\n")
    done = subprocess.run([sys.executable, "-m", "boardzoo", "engine", "random", "--game", "loa"],
                          input=script.encode() + b"\xff\xfe\n", capture_output=True,
                          timeout=120)
    out = done.stdout.decode().splitlines()
    assert done.returncode == 0 and done.stderr == b"", done.stderr[-500:]
    assert out[0] == ("error no position to move in: send 'position startpos' or "
                      "'position text TEXT' first")
    assert out[1] == "error a command line over 1,000,000 characters was skipped"
    assert out[2].startswith("error unknown command 'flyfly") and len(out[2]) < 300
    assert out[3] == "error ply has 5,000 digits; at most 18 are allowed"
    assert out[4:7] == [f"error go: movetime must be a positive number, got '{v}'"
                        for v in ("-1", "nan", "inf")]
    assert out[7].startswith("error go: movetime must be at most 86400 seconds")
    assert out[-1].removeprefix("bestmove ") in state_class("loa").start().legal_move_strs()


def hostile(mode: str) -> str:
    """The spec of tests/engines/hostile.py in ``mode``."""
    return f"engine:{PY} {TESTS / 'engines' / 'hostile.py'} {mode}"


def test_flooding_engines_are_kept_within_bounds(tmp_path: Path, marker: str) -> None:
    """info floods keep at most 32 short keys a move, a feature flood keeps only the known
    features, a 1 MB bestmove leaves a forfeit detail of about 200 characters."""
    out = tmp_path / "t"
    run_tournament("loa", [hostile("info"), hostile("feature")], 2, out, max_plies=4,
                   progress=False)
    games_file = out / GAMES_FILE
    assert games_file.stat().st_size < 100_000
    text = games_file.read_text()
    assert "Infinity" not in text and "NaN" not in text
    for record in read_games(games_file):
        assert record["termination"] != "forfeit", record.get("forfeit")
        for info in filter(None, record["move_info"]):
            assert len(info) <= 32 and all(len(str(v)) <= 200 for v in info.values())
            assert info["big"] == "1e999"  # not a float: no JSON number holds it
    record = play_game("loa", Pairing("x|y|0", hostile("longmove"), "random", 1))
    assert record["forfeit"]["reason"] == ILLEGAL
    assert len(record["forfeit"]["detail"]) < 300


def test_children_that_leave_the_engines_process_group_end_with_it(tmp_path: Path,
                                                                   marker: str) -> None:
    """setsid and double-forked `sleep`s escape a process-group kill; the engine's mark in
    their environment still finds them (the marker fixture checks nothing is left)."""
    records = run_tournament("loa", [hostile("setsid"), "random"], 2, tmp_path / "t",
                             max_plies=4, progress=False)
    assert len(records) == 2 and all("forfeit" not in r for r in records)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_signalled_tournament_with_workers_leaves_nothing_behind(tmp_path: Path, marker: str,
                                                                 sig: int) -> None:
    """SIGTERM ends like Ctrl-C (one line, exit 143); after SIGKILL the workers see their
    parent gone and end with their engines, quietly. Then --resume completes every game."""
    out = tmp_path / "arena"
    cmd = [sys.executable, "-m", "boardzoo", "tournament", "--game", "loa",
           "--agent", hostile("setsid"), "--agent", sh("slow"),
           "--games-per-pair", "2", "--max-plies", "4", "--out", str(out), "--no-progress",
           "--no-png", "--no-html", "--workers", "2", "--openings", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_an_engine_thinks(proc, out)
        proc.send_signal(sig)  # the slow engine is thinking
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    if sig == signal.SIGTERM:
        lines = err.strip().splitlines()
        assert proc.returncode == 143 and len(lines) == 1 and "--resume" in lines[0], err
    else:
        assert proc.returncode == -signal.SIGKILL and err == "", err
    assert leftovers(marker, wait=2.0) == []
