"""Kill tournaments and training runs at random moments, resume them, and check nothing is lost.

Each trial starts the same small job as a reference run, kills it after a random
delay (SIGKILL or SIGINT, alternating), resumes it with ``--resume`` until it
finishes, and compares:

* tournaments: the finished games.jsonl against the uninterrupted one: no game
  lost, none written twice, every record the same game (same moves, scores);
* training: the final weights (model.pt, best.pt) and metrics.csv / eval.csv
  (time columns aside) against the uninterrupted run with the same seed;
* concurrent resumes (``--concurrent N`` trials): a tournament killed early, then two
  ``--resume`` runs on its folder started at once; one must finish it and the other stop
  at once (the folder lock), with no game lost or written twice;
* tournaments of outside engines (``--engine-kills N`` trials, ``--workers 2``, one engine
  starting children that leave its process group): SIGTERM and SIGKILL alternating; a
  SIGTERM must end with exit 143 and one line, and 2 s after the arena's exit no process
  it started (marked in the environment) may be left; then ``--resume`` and the checks
  above.

    python bench/kill_resume.py --kills 10 --concurrent 3 --engine-kills 6
Last line: one JSON object (kills, lost, duplicated, differing records, identical runs,
engine trials with processes left behind).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
BOARDZOO = [sys.executable, "-m", "boardzoo"]
TOURNAMENT = ["tournament", "--game", "loa", "--agents", "random,greedy,mcts:60",
              "--games-per-pair", "6", "--seed", "7", "--max-plies", "200", "--no-progress",
              "--no-png"]
TRAIN = ["train", "--config", str(REPO / "configs" / "tiny.yaml"), "--set", "iterations=8",
         "--set", "eval.every=2", "--quiet"]
ENGINES = REPO / "tests" / "engines"
ENGINE_TOURNAMENT = ["tournament", "--game", "loa", "--agent",
                     f"engine:{sys.executable} {ENGINES / 'hostile.py'} setsid",
                     "--agent", f"engine:{ENGINES / 'first_legal.sh'}", "--agent", "random",
                     "--games-per-pair", "4", "--seed", "3", "--max-plies", "60", "--workers",
                     "2", "--no-progress", "--no-png", "--no-html"]
MARK = "BOARDZOO_KILL_MARK"
TIME_COLUMNS = {"elapsed_s", "cpu_s", "selfplay_s", "train_s", "eval_s", "games_per_hour",
                "positions_per_s"}


def run(argv: list[str], timeout: float = 600) -> None:
    """Run the CLI to completion; raise if it fails."""
    subprocess.run([*BOARDZOO, *argv], check=True, capture_output=True, timeout=timeout)


def killed(argv: list[str], delay: float, sig: int, seen: dict | None = None) -> bool:
    """Start the CLI, send ``sig`` after ``delay`` seconds and wait for it; return False if it
    had already finished (no kill happened). ``seen`` gets its exit status and stderr."""
    proc = subprocess.Popen([*BOARDZOO, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.communicate(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        if seen is not None:
            seen.update(code=proc.returncode, err=err)
        return True


def marked_processes() -> int:
    """Count live processes (not zombies) other than this one that carry this campaign's
    environment mark: whatever the killed CLI, its workers and engines left running."""
    needle = f"{MARK}={os.environ[MARK]}".encode()
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(pid) != os.getpid() and needle in Path(f"/proc/{pid}/environ").read_bytes():
                count += Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            continue
    return count


def engine_trial(root: Path, k: int, sig: int, delay: float, reference: set[tuple],
                 out: dict) -> None:
    """Kill a tournament of outside engines with ``sig``, count what is left 2 s after its
    exit, resume it and check its games."""
    folder = root / f"e_{k}"
    seen: dict = {}
    if not killed([*ENGINE_TOURNAMENT, "--out", str(folder)], delay, sig, seen):
        out["engine_finished_first"] += 1
        return
    out["engine_trials"] += 1
    out["engine_sigterm" if sig == signal.SIGTERM else "engine_sigkill"] += 1
    lines = seen["err"].strip().splitlines()
    if sig == signal.SIGTERM and not (seen["code"] == 143 and len(lines) == 1):
        out["engine_unclean_sigterm"] += 1
    if sig == signal.SIGKILL and lines:
        out["engine_noisy_sigkill"] += 1
    time.sleep(2.0)
    out["engine_processes_left"] += marked_processes()
    run([*ENGINE_TOURNAMENT, "--out", str(folder)]
        + (["--resume"] if (folder / "games.jsonl").exists() else []))
    check_games(folder, reference, out, "engine_")


def concurrent_resumes(folder: Path) -> list[tuple[int, str]]:
    """Start two ``--resume`` runs of the tournament in ``folder`` at once; return each one's
    exit status and last stderr line."""
    procs = [subprocess.Popen([*BOARDZOO, *TOURNAMENT, "--out", str(folder), "--resume"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    return [(p.returncode, (err.strip().splitlines() or [""])[-1])
            for p, err in ((p, p.communicate(timeout=600)[1]) for p in procs)]


def check_games(folder: Path, reference: set[tuple], out: dict, prefix: str = "") -> None:
    """Add the games of ``folder`` lost, written twice or differing from ``reference`` to
    ``out``'s counters (named with ``prefix``)."""
    got = games(folder / "games.jsonl")
    ids = [r["id"] for r in got]
    out[prefix + "duplicated"] += len(ids) - len(set(ids))
    out[prefix + "lost"] += len({g[0] for g in reference} - set(ids))
    out[prefix + "differing_records"] += len({same_game(r) for r in got} - reference)


def games(path: Path) -> list[dict]:
    """Return the records of a games.jsonl."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def same_game(record: dict) -> tuple:
    """The part of a record that defines the game (not its timings)."""
    return (record["id"], tuple(record["players"]), tuple(record["scores"]),
            tuple(record["moves"]), record["seed"])


def rows(path: Path) -> list[dict]:
    """Return a CSV's rows without the time columns."""
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k not in TIME_COLUMNS} for r in csv.DictReader(f)]


def weights(path: Path) -> dict:
    """Return the network weights of a model file."""
    return torch.load(path, map_location="cpu", weights_only=True)["model"]


def same_run(a: Path, b: Path) -> bool:
    """True when two finished training runs have identical weights and metrics."""
    for name in ("model.pt", "best.pt"):
        wa, wb = weights(a / name), weights(b / name)
        if wa.keys() != wb.keys() or not all(torch.equal(wa[k], wb[k]) for k in wa):
            return False
    return all(rows(a / f) == rows(b / f) for f in ("metrics.csv", "eval.csv"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=10,
                    help="kills (half of tournaments, half of training runs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-delay", type=float, default=6.0, help="latest kill, in seconds")
    ap.add_argument("--concurrent", type=int, default=3,
                    help="trials of two concurrent --resume runs on one tournament folder")
    ap.add_argument("--engine-kills", type=int, default=6,
                    help="SIGTERM/SIGKILL trials of a tournament of outside engines")
    args = ap.parse_args()
    os.environ[MARK] = uuid.uuid4().hex  # every process the CLI starts inherits it
    rng = random.Random(args.seed)
    out = {"kills": 0, "sigkill": 0, "sigint": 0, "finished_first": 0, "tournament_trials": 0,
           "lost": 0, "duplicated": 0, "differing_records": 0, "training_trials": 0,
           "training_identical": 0, "resumes": 0, "concurrent_trials": 0,
           "concurrent_refused": 0, "concurrent_both_ran": 0, "concurrent_failed": 0,
           "concurrent_lost": 0, "concurrent_duplicated": 0, "concurrent_differing_records": 0,
           "engine_trials": 0, "engine_sigterm": 0, "engine_sigkill": 0,
           "engine_finished_first": 0, "engine_unclean_sigterm": 0, "engine_noisy_sigkill": 0,
           "engine_processes_left": 0, "engine_lost": 0, "engine_duplicated": 0,
           "engine_differing_records": 0}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run([*TOURNAMENT, "--out", str(root / "t_ref")])
        reference = {same_game(r) for r in games(root / "t_ref" / "games.jsonl")}
        run([*TRAIN, "--out", str(root / "r_ref")])
        k = 0
        while out["kills"] < args.kills and out["finished_first"] <= 10 * args.kills:
            sig = (signal.SIGKILL, signal.SIGINT)[out["kills"] % 2]
            delay = rng.uniform(1.0, args.max_delay)
            tournament = out["kills"] % 4 < 2  # kills 0, 1, 4, 5, ... hit tournaments
            k += 1
            folder = root / f"{'t' if tournament else 'r'}_{k}"
            job = TOURNAMENT if tournament else TRAIN
            if not killed([*job, "--out", str(folder)], delay, sig):
                out["finished_first"] += 1  # no kill: try again with another delay
                continue
            out["kills"] += 1
            out["sigkill" if sig == signal.SIGKILL else "sigint"] += 1
            if tournament:
                if (folder / "games.jsonl").exists():
                    out["resumes"] += 1
                    run([*TOURNAMENT, "--out", str(folder), "--resume"])
                else:  # killed before the first game: starting again is the resume
                    run([*TOURNAMENT, "--out", str(folder)])
                out["tournament_trials"] += 1
                check_games(folder, reference, out)
            else:
                if (folder / "checkpoint.pt").exists():
                    out["resumes"] += 1
                    run([*TRAIN, "--out", str(folder), "--resume"])
                else:  # killed before the first checkpoint: nothing to resume
                    shutil.rmtree(folder, ignore_errors=True)
                    run([*TRAIN, "--out", str(folder)])
                out["training_trials"] += 1
                out["training_identical"] += same_run(root / "r_ref", folder)
        for i in range(args.concurrent):
            folder = root / f"c_{i}"
            killed([*TOURNAMENT, "--out", str(folder)], rng.uniform(1.0, args.max_delay),
                   signal.SIGKILL)
            statuses = concurrent_resumes(folder)
            out["concurrent_trials"] += 1
            refused = [s for s in statuses if s[0] == 2 and "in use by another" in s[1]]
            out["concurrent_refused"] += len(refused)
            out["concurrent_both_ran"] += sum(s[0] == 0 for s in statuses) == 2
            out["concurrent_failed"] += sum(s[0] != 0 for s in statuses) - len(refused)
            check_games(folder, reference, out, "concurrent_")
        if args.engine_kills:
            run([*ENGINE_TOURNAMENT, "--out", str(root / "e_ref")])
            engine_reference = {same_game(r) for r in games(root / "e_ref" / "games.jsonl")}
        k = 0
        while out["engine_trials"] < args.engine_kills and k < 10 * args.engine_kills + 10:
            k += 1
            sig = (signal.SIGTERM, signal.SIGKILL)[out["engine_trials"] % 2]
            engine_trial(root, k, sig, rng.uniform(1.0, args.max_delay), engine_reference, out)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
