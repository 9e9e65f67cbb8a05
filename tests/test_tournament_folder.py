"""A tournament folder holds one tournament: locked while it runs, resumed only with the same
game, agents (in order), seed and games per pair, its files written whole; a full disk is
one line naming the file (also for training checkpoints)."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from boardzoo.agents import arena
from boardzoo.agents.arena import ArenaError, run_tournament
from boardzoo.cli import main
from boardzoo.training.checkpoint import save_atomic

from conftest import REPO

BASE = ["tournament", "--game", "loa", "--games-per-pair", "2", "--max-plies", "6",
        "--no-progress", "--no-png", "--no-html"]


def tournament(capsys, out: Path, agents: str = "random,greedy", *extra: str) -> tuple[int, str]:
    """Run the CLI tournament into ``out``; return the exit status and stderr."""
    code = main([*BASE, "--agents", agents, "--out", str(out), *extra])
    return code, capsys.readouterr().err


def one_line(err: str) -> str:
    """Return the only line of ``err`` (fails if there are more)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_second_tournament_on_a_locked_folder_stops_at_once(tmp_path: Path, capsys):
    out = tmp_path / "t"
    out.mkdir()
    holder = subprocess.Popen(  # another process holding the folder, as a running tournament
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
         str(out / arena.LOCK_FILE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        code, err = tournament(capsys, out, "random,greedy", "--resume")
        assert code == 2 and "in use by another tournament" in one_line(err)
        assert not (out / arena.GAMES_FILE).exists()
        with pytest.raises(ArenaError, match="in use"):
            run_tournament("loa", ["random", "greedy"], 1, out, max_plies=4, progress=False)
    finally:
        holder.communicate("")
    # released with its holder: the folder can be used (and resumed) again
    assert tournament(capsys, out)[0] == 0
    assert tournament(capsys, out, "random,greedy", "--resume")[0] == 0
    assert len((out / arena.GAMES_FILE).read_text().splitlines()) == 2


@pytest.mark.parametrize("change, field", [
    (["--agents", "greedy,random"], "agents"),
    (["--agents", "random,greedy,mcts:2"], "agents"),
    (["--games-per-pair", "4"], "games_per_pair"),
    (["--seed", "5"], "seed"),
    (["--game", "ultima"], "game"),
])
def test_a_resume_that_changes_the_tournament_is_refused(tmp_path: Path, capsys, change, field):
    out = tmp_path / "t"
    argv = [*BASE, "--agents", "random,greedy", "--out", str(out)]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code = main([*argv, *change, "--resume"])
    line = one_line(capsys.readouterr().err)
    assert code == 2 and f"--resume with {field}=" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing rewritten


def test_games_of_another_tournament_are_refused_without_tournament_json(tmp_path: Path,
                                                                         capsys):
    out = tmp_path / "t"
    assert tournament(capsys, out, "random,greedy")[0] == 0
    (out / arena.CONFIG_FILE).unlink()
    code, err = tournament(capsys, out, "greedy,random", "--resume")
    assert code == 2 and "not in this tournament" in one_line(err)


@pytest.mark.parametrize("text", ["", "{\"game\": \"lo", "[1, 2]", "\xff\xfe"])
def test_a_damaged_tournament_json_is_one_error_line(tmp_path: Path, capsys, text):
    out = tmp_path / "t"
    assert tournament(capsys, out)[0] == 0
    (out / arena.CONFIG_FILE).write_bytes(text.encode("latin-1"))
    code, err = tournament(capsys, out, "random,greedy", "--resume")
    assert code == 2 and "tournament.json is damaged" in one_line(err)


def fail_fsync(monkeypatch, suffix: str) -> None:
    """Make fsync fail as on a full disk for files whose name ends with ``suffix``."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(suffix):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_tournament_json_is_written_atomically(tmp_path: Path, monkeypatch):
    out = tmp_path / "t"
    run_tournament("loa", ["random", "greedy"], 1, out, max_plies=4, progress=False)
    before = (out / arena.CONFIG_FILE).read_text()
    fail_fsync(monkeypatch, "tournament.json.tmp")
    with pytest.raises(OSError, match="No space") as info:
        run_tournament("loa", ["random", "greedy"], 1, out, max_plies=4, progress=False,
                       resume=True)
    assert info.value.filename == str(out / arena.CONFIG_FILE)
    assert (out / arena.CONFIG_FILE).read_text() == before
    assert sorted(p.name for p in out.iterdir()) == [arena.GAMES_FILE, arena.CONFIG_FILE,
                                                    arena.LOCK_FILE]


def test_a_full_disk_on_games_jsonl_names_the_file(tmp_path: Path, capsys, monkeypatch):
    fail_fsync(monkeypatch, arena.GAMES_FILE)
    out = tmp_path / "t"
    code, err = tournament(capsys, out)
    line = one_line(err)
    assert code == 2 and line == f"boardzoo: error: No space left on device: {out}/games.jsonl"


def limited(size: int):
    """Return a preexec_fn that caps the size of any file the child writes at ``size`` bytes
    (writing past it fails with EFBIG, as a full disk fails with ENOSPC)."""
    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return cap


def test_a_failed_checkpoint_save_is_one_line_and_keeps_the_old_file(tmp_path: Path):
    out = tmp_path / "m.pt"
    src = REPO / "agents" / "nets" / "loa.pt"
    cmd = [sys.executable, "-m", "boardzoo", "export", str(src), str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    good = out.read_bytes()
    proc = subprocess.run([*cmd, "--note", "x"], capture_output=True, text=True,
                          preexec_fn=limited(len(good) // 2))
    assert proc.returncode == 2, proc.stderr
    assert one_line(proc.stderr) == f"boardzoo: error: File too large: {out}"
    assert out.read_bytes() == good and sorted(tmp_path.iterdir()) == [out]


def test_save_atomic_with_a_full_disk(tmp_path: Path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_atomic({"w": torch.zeros(10)}, path)
    good = path.read_bytes()

    fail_fsync(monkeypatch, "checkpoint.pt.tmp")
    with pytest.raises(OSError) as info:
        save_atomic({"w": torch.ones(10)}, path)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert path.read_bytes() == good and sorted(tmp_path.iterdir()) == [path]
