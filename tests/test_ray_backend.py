"""The Ray backend: the local backend's tournament records and self-play games, re-runs, errors."""

from __future__ import annotations

import functools
import os
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.agents.arena import (
    GAMES_FILE,
    Pairing,
    play_game,
    run_tournament,
    schedule,
    tournament,
)
from boardzoo.agents.arena.records import read_games
from boardzoo.agents.distributed import BackendError, connect, ray_games
from boardzoo.cli import main
from boardzoo.envs.core.registry import action_game, state_class
from boardzoo.training.backends import RaySelfPlayPool, split_seeds
from boardzoo.training.checkpoint import load
from boardzoo.training.config import load_config
from boardzoo.training.network import build_net
from boardzoo.training.selfplay import play_games, selfplay_seed

TESTS = Path(__file__).resolve().parent
TINY = str(TESTS.parent / "configs" / "tiny.yaml")
AGENTS = ["random", "greedy"]


@pytest.fixture(scope="session")
def ray_local():
    """One small local Ray instance for the whole session (the code under test reuses it)."""
    ray = pytest.importorskip("ray")
    # Ray workers cannot import this test module: send its functions (crash_first_attempt) by
    # value instead of by name.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(address="local", num_cpus=2, include_dashboard=False,
             object_store_memory=100 * 2**20, logging_level="ERROR")
    yield ray
    ray.shutdown()
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def same_games(records: list[dict]) -> dict[str, tuple]:
    """Return what must not depend on the backend: id -> (players, scores, moves, seed)."""
    return {r["id"]: (tuple(r["players"]), tuple(r["scores"]), tuple(r["moves"]), r["seed"])
            for r in records}


def replayed_scores(record: dict) -> list[float]:
    """Replay a record's moves on the LOA rules engine and return the scores it gives."""
    state = state_class("loa").start()
    for m in record["moves"]:
        state = state.apply(state.parse_move(m))
    assert state.is_terminal()
    w = state.winner()
    return [0.5, 0.5] if w is None else [1.0 - w, float(w)]


def test_ray_tournament_equals_local_and_resumes_across_backends(ray_local, tmp_path):
    local = run_tournament("loa", AGENTS, 4, tmp_path / "local", seed=5, progress=False)
    remote = run_tournament("loa", AGENTS, 4, tmp_path / "ray", seed=5, progress=False,
                            backend="ray", workers=2)
    assert len(remote) == 4 and same_games(remote) == same_games(local)
    assert all(replayed_scores(r) == r["scores"] for r in remote)
    lines = read_games(tmp_path / "ray" / GAMES_FILE)
    assert sorted(r["id"] for r in lines) == sorted(r["id"] for r in local)
    assert all(set(a) == set(b) for a, b in zip(lines, local, strict=True))  # same fields
    # Half played locally, the rest resumed on Ray: the same tournament, nothing twice.
    cut = tmp_path / "cut"
    run_tournament("loa", AGENTS, 4, cut, seed=5, progress=False, stop_after=2)
    rest = run_tournament("loa", AGENTS, 4, cut, seed=5, progress=False, resume=True,
                          backend="ray")
    assert same_games(rest) == same_games(local) and len(read_games(cut / GAMES_FILE)) == 4
    assert ray_local.is_initialized()  # the backend used, and left up, the caller's instance


def crash_first_attempt(marker_dir: str, game: str, pairing: Pairing,
                        max_plies: int) -> dict:
    """Kill the worker process the first time game ``|1`` is played, then play normally."""
    marker = Path(marker_dir) / "crashed"
    if pairing.id.endswith("|1") and not marker.exists():
        marker.touch()
        os._exit(1)  # the worker dies without a result, as when a node is lost
    return play_game(game, pairing, max_plies)


def test_lost_worker_game_is_rerun_and_written_once(ray_local, tmp_path, monkeypatch):
    crashing = functools.partial(crash_first_attempt, str(tmp_path))
    monkeypatch.setattr(tournament, "ray_games",
                        lambda *args, play, **kwargs: ray_games(*args, play=crashing, **kwargs))
    records = run_tournament("loa", AGENTS, 4, tmp_path / "out", seed=5, progress=False,
                             backend="ray")
    assert (tmp_path / "crashed").exists()  # the first attempt did die
    expected = [play_game("loa", p) for p in list(schedule(AGENTS, 4, seed=5))]
    assert same_games(records) == same_games(expected)
    lines = read_games(tmp_path / "out" / GAMES_FILE)
    assert sorted(r["id"] for r in lines) == sorted(r["id"] for r in expected)  # once each
    # Without retries the same crash loses the game: one clear error.
    (tmp_path / "crashed").unlink()
    plan = list(schedule(AGENTS, 2, seed=5))
    with pytest.raises(BackendError, match=r"game random\|greedy\|1 was lost"):
        list(connect().stream(crashing, [("loa", p, 100) for p in plan],
                              describe=lambda i: f"game {plan[i].id}", max_retries=0))


def test_ray_selfplay_equals_local_pool(ray_local):
    cfg = load_config(TINY, ["selfplay.workers=2", "selfplay.backend=ray"])
    game = action_game("loa")
    torch.manual_seed(0)
    net = build_net(cfg, game)
    seeds = [selfplay_seed(cfg.seed, 1, g) for g in range(3)]
    pool = RaySelfPlayPool(cfg)
    try:
        remote = pool.play(net, seeds)
    finally:
        pool.close()
    # What SelfPlayPool's two worker processes compute (one torch thread each), in-process.
    torch.set_num_threads(1)
    local = [r for chunk in split_seeds(seeds, 2) for r in play_games(net, game, cfg, chunk)]
    assert [r.seed for r in remote] == seeds and [r.seed for r in local] == seeds
    for a, b in zip(remote, local, strict=True):
        assert (a.seed, a.outcome, a.length, a.capped, a.players) == \
            (b.seed, b.outcome, b.length, b.capped, b.players)
        for x, y in zip(a.actions + a.probs + a.obs, b.actions + b.probs + b.obs, strict=True):
            assert np.array_equal(x, y)
    assert pool.cpu > 0 and ray_local.is_initialized()


def test_train_cli_with_ray_selfplay_matches_local(ray_local, tmp_path):
    base = ["train", "--config", TINY, "--quiet", "--set", "iterations=1", "--set",
            "eval.games=0"]
    assert main([*base, "--out", str(tmp_path / "local")]) == 0
    assert main([*base, "--out", str(tmp_path / "ray"), "--set", "selfplay.backend=ray"]) == 0
    a, b = (load(tmp_path / d / "checkpoint.pt") for d in ("local", "ray"))
    assert a["buffer"]["added"] > 0 and a["buffer"]["added"] == b["buffer"]["added"]
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TOURNAMENT = ["tournament", "--game", "loa", "--agents", "random,greedy", "--games-per-pair",
              "1", "--no-progress", "--no-png"]


@pytest.mark.parametrize("extra, message", [
    (["--backend", "ray", "--address", "127.0.0.1:{port}"], "cannot reach a Ray cluster"),
    (["--backend", "ray", "--address", "nonsense"], "bad Ray address"),
    (["--address", "auto"], "needs the ray backend"),
])
def test_cli_bad_address_is_one_line(tmp_path, capsys, extra, message):
    pytest.importorskip("ray")
    argv = [*TOURNAMENT, "--out", str(tmp_path / "t"), *(a.format(port=free_port())
                                                        for a in extra)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("argv", [
    [*TOURNAMENT, "--backend", "ray"],
    ["train", "--config", TINY, "--quiet", "--set", "selfplay.backend=ray"],
])
def test_cli_without_ray_says_how_to_install(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if not installed
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'boardzoo[ray]'" in err[0], err


def test_auto_address_that_is_unreachable_fails_fast(monkeypatch):
    # "auto" resolves through RAY_ADDRESS (or the file a `ray start` leaves behind); ray.init
    # would retry a dead address for minutes, so it must be checked like an explicit one
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{free_port()}")

    def no_init(*args, **kwargs):
        raise AssertionError("ray.init must not be tried on an unreachable address")

    monkeypatch.setattr(ray, "init", no_init)
    with pytest.raises(BackendError, match="cannot reach a Ray cluster"):
        connect("auto")


def test_auto_joins_only_ray_address_or_a_ray_start_cluster(ray_local, tmp_path, monkeypatch):
    # a Ray instance runs on this machine (ray_local, started by ray.init as another program
    # would): without RAY_ADDRESS and a cluster recorded by `ray start`, "auto" joins nothing
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # where `ray start` records its address
    with pytest.raises(BackendError, match="no cluster to join"):
        connect("auto")
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{free_port()}\n")
    with pytest.raises(BackendError, match="cannot reach a Ray cluster"):  # it is read
        connect("auto")


def test_train_cli_rejects_a_ray_address_without_the_ray_backend(tmp_path, capsys):
    # with the local backend the address used to be ignored: the run trained locally
    argv = ["train", "--config", TINY, "--quiet", "--out", str(tmp_path / "o"),
            "--set", "selfplay.ray_address=10.0.0.5:6379"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "selfplay.ray_address" in err[0], err
    assert not (tmp_path / "o").exists()


def test_ray_tournament_with_an_outside_engine_equals_local(ray_local, tmp_path):
    """`engine:` agents run in Ray workers too, with their stderr logs in the tournament folder."""
    if os.name != "posix":
        pytest.skip("outside engines need POSIX")
    agents = ["random", f"engine:{TESTS / 'engines' / 'first_legal.sh'}"]
    local = run_tournament("loa", agents, 2, tmp_path / "local", seed=2, max_plies=30,
                           progress=False)
    remote = run_tournament("loa", agents, 2, tmp_path / "ray", seed=2, max_plies=30,
                            progress=False, backend="ray")
    assert same_games(remote) == same_games(local)
    assert all("forfeit" not in r for r in remote)
    logs = [tmp_path / "ray" / r["logs"][r["players"].index(agents[1])] for r in remote]
    assert all(log.read_text().startswith("first legal move: ") for log in logs)
