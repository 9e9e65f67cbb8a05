"""Where training spends its CPU: root candidates at play time (play.gumbel_m), forced
moves without search, training steps that follow the data (train.replay_ratio),
evaluation at the target's settings (eval.max_moves), and the learning benchmark."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from batched_toygames import BatchedBonusNim, BatchedTicTacToe, BonusNimActions
from toygames import TicTacToe

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training import agent as agent_module
from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.checkpoint import model_file, save_atomic
from boardzoo.training.config import ConfigError, load_config, play_search
from boardzoo.training.network import build_net
from boardzoo.training.search.batched import run_batched_search
from boardzoo.training.search.tree import run_search
from boardzoo.training.selfplay import play_games
from boardzoo.training.trainer import Trainer, train_step_count

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "configs" / "tiny.yaml"
LOA = action_game("loa")


def uniform_eval(num_actions: int, calls: list | None = None):
    """Reference evaluator: uniform logits, value 0; records each batch's states."""

    def evaluate(states):
        if calls is not None:
            calls.append(list(states))
        return np.zeros((len(states), num_actions), np.float32), np.zeros(len(states), np.float32)

    return evaluate


def batched_uniform_eval(engine, calls: list | None = None):
    def evaluate(batch):
        if calls is not None:
            calls.append(engine.to_states(batch))
        return torch.zeros(batch.size, engine.num_actions), torch.zeros(batch.size)

    return evaluate


# -- root candidates at play time ---------------------------------------------------------------
def visited_root_actions(search) -> int:
    return int((search.root.N > 0).sum())


@pytest.mark.parametrize("play_m, noise, expected", [
    (0, False, 16),  # 0: gumbel_m, as before the setting existed
    (30, False, 30),
    (64, False, 36),  # capped at the 36 legal moves of the LOA start
    (30, True, 16),  # self-play (noise) keeps gumbel_m
])
def test_play_gumbel_m_sets_the_root_candidates_without_noise(play_m, noise, expected):
    full = load_config(TINY, ["mcts.root=gumbel", f"play.gumbel_m={play_m}"])
    assert full.mcts.gumbel_m == 16
    # self-play (noise) searches with mcts as it is; play with the play section applied
    cfg = full.mcts if noise else play_search(full)
    state = LOA.initial_state()
    search = run_search(LOA, uniform_eval(LOA.num_actions), state, cfg,
                        np.random.default_rng(0), 100, add_noise=noise)
    assert visited_root_actions(search) == expected
    # the batched search takes the same candidates (the same visits, without noise)
    engine = batched_game("loa")
    bs = run_batched_search(engine, batched_uniform_eval(engine), engine.from_states([state]), cfg,
                            torch.Generator().manual_seed(0), 100, add_noise=noise)
    assert int((bs.tree.N[0, 0] > 0).sum()) == expected
    if not noise:
        assert bs.tree.N[0, 0, :36].tolist() == search.root.N.tolist()


def test_play_gumbel_m_is_capped_by_the_simulations():
    cfg = play_search(load_config(TINY, ["mcts.root=gumbel", "play.gumbel_m=64"]))
    search = run_search(LOA, uniform_eval(LOA.num_actions), LOA.initial_state(), cfg,
                        np.random.default_rng(0), 20)
    assert visited_root_actions(search) == 19  # the root's own evaluation is simulation 1


def test_config_validation_of_the_new_keys():
    for bad, message in [("play.gumbel_m=-1", "play.gumbel_m must be"),
                         ("train.replay_ratio=-0.5", "train.replay_ratio must be"),
                         ("eval.max_moves=-2", "eval.max_moves must be"),
                         ("train.replay_rate=2", "unknown config key(s) train.replay_rate")]:
        with pytest.raises(ConfigError) as info:
            load_config(TINY, [bad])
        assert message in str(info.value)


def test_ultima_and_whistling_configs_evaluate_at_the_targets_settings():
    for name in ("ultima", "whistling"):
        cfg = load_config(REPO / "configs" / f"{name}.yaml")
        # Whistling plays with Gumbel's top 64; Ultima plays with PUCT (no candidates)
        assert cfg.play.gumbel_m == (64 if name == "whistling" else 0)
        assert play_search(cfg).gumbel_m == (64 if name == "whistling" else 16)
        assert play_search(cfg).root == ("gumbel" if name == "whistling" else "puct")
        assert (cfg.eval.simulations, cfg.eval.max_moves, cfg.eval.opening_moves) == (100, 0, 2)
        assert cfg.train.replay_ratio > 0
    for name in ("loa", "tiny"):  # the LOA runs keep their exact behaviour
        cfg = load_config(REPO / "configs" / f"{name}.yaml")
        assert (cfg.play.gumbel_m, cfg.train.replay_ratio, cfg.eval.max_moves) == (0, 0, -1)


def loa_model(tmp_path: Path, *sets: str) -> Path:
    cfg = load_config(TINY, ["mcts.root=gumbel", *sets])
    torch.manual_seed(0)
    net = build_net(cfg, LOA)
    path = tmp_path / "loa.pt"
    save_atomic(model_file("loa", cfg.to_dict(), LOA.observation_shape, LOA.num_actions,
                           net.state_dict()), path)
    return path


@pytest.mark.parametrize("spec, expected", [(",sims=60", 16), (",sims=60,m=24", 24),
                                            (",sims=60,m=500", 36)])
def test_checkpoint_agent_m_option(tmp_path, monkeypatch, spec, expected):
    from boardzoo.agents import make_agent

    searches = []
    real = agent_module.run_search

    def spy(*args, **kwargs):
        searches.append(real(*args, **kwargs))
        return searches[-1]

    monkeypatch.setattr(agent_module, "run_search", spy)
    agent = make_agent(f"checkpoint:{loa_model(tmp_path)}{spec}", "loa", 0)
    agent.select_action(LOA.initial_state())
    assert visited_root_actions(searches[0]) == expected


def test_checkpoint_agent_uses_the_networks_play_gumbel_m(tmp_path, monkeypatch):
    from boardzoo.agents import make_agent

    path = loa_model(tmp_path, "play.gumbel_m=20")
    searches = []
    real = agent_module.run_search
    monkeypatch.setattr(agent_module, "run_search",
                        lambda *a, **k: searches.append(real(*a, **k)) or searches[-1])
    make_agent(f"checkpoint:{path},sims=40", "loa", 0).select_action(LOA.initial_state())
    assert visited_root_actions(searches[0]) == 20
    from boardzoo.agents.base import UnknownAgentError

    for bad in ("m=0", "m=x", "mm=3"):
        with pytest.raises(UnknownAgentError):
            make_agent(f"checkpoint:{path},{bad}", "loa", 0)


# -- forced moves --------------------------------------------------------------------------------
class ForcedNim(BonusNimActions):
    """Bonus Nim from a pile of ``pile``: a pile of 1 has one legal action (take it)."""

    def __init__(self, pile: int) -> None:
        self.pile = pile

    def initial_state(self, pile: int | None = None) -> tuple[int, int]:
        return (self.pile if pile is None else pile, 0)


class BatchedForcedNim(BatchedBonusNim):
    def __init__(self, pile: int) -> None:
        super().__init__()
        self.pile = pile
        self.action_game = ForcedNim(pile)

    def initial(self, n: int, pile: int | None = None):
        return super().initial(n, self.pile if pile is None else pile)


def nim_config(*sets: str):
    return load_config(TINY, ["mcts.simulations=6", "selfplay.parallel_games=3", *sets])


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_forced_move_calls_no_evaluator(root):
    """A game that is one forced action long is played without any network call."""
    cfg = nim_config(f"mcts.root={root}")
    calls: list = []
    recs = play_games(None, ForcedNim(1), cfg, [1, 2], evaluate=uniform_eval(3, calls))
    bcalls: list = []
    engine = BatchedForcedNim(1)
    brecs = play_games_batched(None, engine, cfg, [1, 2],
                               evaluate=batched_uniform_eval(engine, bcalls))
    assert calls == [] and bcalls == []
    for rec in [*recs, *brecs]:
        assert (rec.length, rec.forced, len(rec.obs), rec.outcome) == (1, 1, 0, 1.0)


def check_forced_records(recs) -> None:
    """Examples only at the positions with a choice; every action is an example or forced."""
    for rec in recs:
        assert len(rec.obs) + rec.forced == rec.length
        assert len(rec.obs) == len(rec.actions) == len(rec.probs) == len(rec.players)
        assert all(len(a) >= 2 for a in rec.actions)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_forced_moves_in_selfplay_records(root):
    """Tic-tac-toe: the last empty cell is a forced move, played without an example."""
    cfg = nim_config(f"mcts.root={root}",
                     *(["selfplay.temperature_moves=9"] if root == "puct" else []))
    seeds = list(range(24))
    ttt = BatchedTicTacToe()
    for recs in (play_games(None, ttt.action_game, cfg, seeds, evaluate=uniform_eval(9)),
                 play_games_batched(None, ttt, cfg, seeds, evaluate=batched_uniform_eval(ttt))):
        check_forced_records(recs)
        full = [r for r in recs if r.forced]
        assert full  # some games fill the board
        assert all((r.length, r.forced, len(r.obs)) == (9, 1, 8) for r in full)
        assert all(r.length < 9 or r.forced == 1 for r in recs)


@pytest.mark.parametrize("engine", ["reference", "batched"])
def test_whistling_forced_hops_are_not_searched(engine):
    """Whistling: hops with one way on are played without the network; no example has a
    single legal action, and the evaluator never sees such a position as a root."""
    cfg = load_config(TINY, ["game=whistling", "mcts.root=gumbel", "mcts.simulations=3",
                             "selfplay.max_moves=60", "selfplay.parallel_games=2",
                             "model.policy_head=conv"])
    game = action_game("whistling")
    calls: list = []
    if engine == "reference":
        recs = play_games(None, game, cfg, [3, 4], evaluate=uniform_eval(game.num_actions, calls))
    else:
        eng = batched_game("whistling")
        recs = play_games_batched(None, eng, cfg, [3, 4],
                                  evaluate=batched_uniform_eval(eng, calls))
    check_forced_records(recs)
    forced = sum(r.forced for r in recs)
    assert forced > 0
    # only the positions with a choice were searched: at most `simulations` evaluations each
    searched = sum(r.length for r in recs) - forced
    assert sum(len(c) for c in calls) <= searched * cfg.mcts.simulations


# -- training steps that follow the data --------------------------------------------------------
def test_train_step_count():
    t = load_config(TINY).train
    assert train_step_count(t, 10_000) == t.steps_per_iteration == 2  # fixed without a ratio
    t = load_config(TINY, ["train.replay_ratio=4", "train.batch_size=128", "train.buffer_size=512",
                           "train.steps_per_iteration=80"]).train
    assert train_step_count(t, 1000) == math.ceil(4 * 1000 / 128) == 32
    assert train_step_count(t, 1) == 1
    assert train_step_count(t, 0) == 0
    assert train_step_count(t, 100_000) == 80  # capped by steps_per_iteration


def test_replay_ratio_in_a_run(tmp_path):
    sets = ["train.replay_ratio=2", "train.steps_per_iteration=50", "train.min_buffer=1",
            "iterations=1", "eval.games=0"]
    trainer = Trainer(load_config(TINY, sets), tmp_path / "r", progress=False, echo=False)
    trainer.run()
    new = trainer.buffer.added
    assert new > 0 and trainer.last_steps == math.ceil(2 * new / 8)


# -- evaluation at the target's settings -------------------------------------------------------
@pytest.mark.parametrize("value, cap", [(-1, 12), (0, None), (30, 30)])
def test_eval_max_moves(tmp_path, monkeypatch, value, cap):
    from boardzoo.training import evaluate as evaluate_module

    seen = []

    def fake_match(game, make_a, make_b, games, seed, max_moves=None, opening_moves=2,
                   names=("A", "B"), on_game=None):
        seen.append(max_moves)
        return {"games": games, "wins": 0, "draws": games, "losses": 0, "score": 0.5,
                "plies": 0}

    monkeypatch.setattr(evaluate_module, "match", fake_match)
    cfg = load_config(TINY, [f"eval.max_moves={value}"])
    assert cfg.selfplay.max_moves == 12
    Trainer(cfg, tmp_path / "e", progress=False, echo=False).evaluate(1)
    assert seen and all(m == cap for m in seen)


# -- the learning benchmark ----------------------------------------------------------------------
def test_arena_games_with_shared_random_openings():
    from boardzoo.agents.arena import Pairing, play_game

    def moves(pairing, opening):
        return play_game(TicTacToe, pairing, 20, opening)["moves"]

    a = moves(Pairing("a", "random", "random", 1, opening_seed=7), 3)
    b = moves(Pairing("b", "random", "random", 2, opening_seed=7), 3)
    assert a[:3] == b[:3] and a != b  # the same opening, then each game its own way
    assert len({tuple(moves(Pairing("c", "random", "random", 1, opening_seed=s), 3)[:3])
                for s in range(8)}) > 1
    # without opening_seed the opening is drawn from the game's own seed
    assert moves(Pairing("d", "random", "random", 5), 3)[:3] == moves(
        Pairing("d", "random", "random", 9, opening_seed=5), 3)[:3]


def test_train_learns_bench_prints_its_figures_last(tmp_path):
    import json
    import subprocess
    import sys

    path = loa_model(tmp_path)
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / "train_learns.py"), "--game", "loa",
         "--checkpoint", str(path), "--games", "4", "--workers", "1", "--sims", "3",
         "--max-moves", "8", "--opponents", "greedy,alphabeta:1"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(result["matches"]) == ["raw_vs_random", "greedy", "alphabeta:1"]
    for m in result["matches"].values():
        assert m["games"] == 4 and m["wins"] + m["draws"] + m["losses"] == 4
        # seconds per move of both sides (a 3-simulation search thinks longer than random)
        assert 0 < m["net_s_per_move"] <= m["net_max_s_per_move"]
        assert m["opponent_s_per_move"] <= m["opponent_max_s_per_move"]
    assert result["scores"]["greedy"] == result["matches"]["greedy"]["score"]
    assert result["cpu_seconds"] > 0 and result["net_spec"].endswith(",sims=3")


def test_train_learns_tally_gives_the_score_and_its_interval():
    """2 wins, 1 draw, 1 loss: score 0.625; the games' scores 1, 1, 0.5, 0 have variance
    0.171875, so the 95% half-width is 1.96 x sqrt(0.171875 / 4) = 0.406 (by hand)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_learns",
                                                  REPO / "bench" / "train_learns.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    records = [{"players": ["n", "o"], "scores": s, "plies": 10, "termination": "rules"}
               for s in ([1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [0.0, 1.0])]
    out = bench.tally(records, "n")
    assert out["wdl"] == "2-1-1" and out["score"] == 0.625
    assert out["score_ci95"] == 0.406
    assert bench.tally(records[:2], "n")["score_ci95"] == 0.0  # every game won: no spread
