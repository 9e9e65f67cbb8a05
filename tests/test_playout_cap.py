"""Playout-cap randomisation (selfplay.full_search_prob): the bookkeeping of full and fast
searches, their budgets, determinism, and the config rules."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.selfplay import play_games

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")


class CountingEvaluator:
    """A uniform network (logits 0, value 0) that counts the positions it evaluates."""

    def __init__(self, game) -> None:
        self.n = game.num_actions
        self.positions = 0

    def __call__(self, states):
        self.positions += len(states)
        return np.zeros((len(states), self.n), np.float32), np.zeros(len(states), np.float32)


def games(sets: list[str], seeds=(1, 2, 3, 4)) -> tuple[list, int]:
    """Self-play LOA games capped at 12 actions with a uniform network; return the records
    and the positions the network evaluated."""
    cfg = load_config(TINY, ["selfplay.max_moves=12", "mcts.simulations=16", *sets])
    game = action_game("loa")
    evaluator = CountingEvaluator(game)
    return play_games(None, game, cfg, list(seeds), evaluate=evaluator), evaluator.positions


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_fast_moves_are_played_but_not_kept_and_cost_their_own_budget(root):
    # LOA's first 12 actions never end a game and are never forced: every move is searched
    full, full_evals = games([f"mcts.root={root}", "mcts.reuse_tree=false"]
                             if root == "puct" else [f"mcts.root={root}"])
    assert all(len(r.obs) == r.length == 12 and r.fast == 0 for r in full)
    per_full = full_evals / 48  # 48 full searches: the simulations (and the root's call)
    sets = ["selfplay.full_search_prob=0.5", "selfplay.fast_simulations=2",
            f"mcts.root={root}"] + (["mcts.reuse_tree=false"] if root == "puct" else [])
    recs, evals = games(sets)
    kept, fast = sum(len(r.obs) for r in recs), sum(r.fast for r in recs)
    assert all(len(r.obs) + r.fast + r.forced == r.length == 12 for r in recs)
    assert 10 <= kept <= 38 and kept + fast == 48  # about half of 48, seeded
    per_fast = (evals - kept * per_full) / fast
    assert per_fast == per_full - 14  # 2 simulations instead of 16, the same root call
    for r in recs:  # the examples are whole: one policy over the legal actions each
        assert len(r.actions) == len(r.probs) == len(r.players) == len(r.root_values)
        assert all(abs(float(p.sum()) - 1) < 1e-5 for p in r.probs)
    again, _ = games(sets)  # the coin flips come from each game's own seed
    assert [r.fast for r in again] == [r.fast for r in recs]
    assert all(np.array_equal(a, b) for x, y in zip(recs, again, strict=True)
               for a, b in zip(x.obs, y.obs, strict=True))


class CountingBatchEvaluator:
    """The uniform network on a batched engine's states, counting what it evaluates."""

    def __init__(self, engine) -> None:
        self.n = engine.num_actions
        self.positions = 0

    def __call__(self, states):
        self.positions += states.size
        return torch.zeros(states.size, self.n), torch.zeros(states.size)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_the_batched_engine_plays_fast_searches_with_their_own_budget(root):
    engine = batched_game("loa")
    sets = ["selfplay.max_moves=12", "mcts.simulations=16", f"mcts.root={root}",
            "selfplay.engine=batched", "selfplay.parallel_games=4"] + (
        ["mcts.reuse_tree=false"] if root == "puct" else [])

    def play(extra: list[str]) -> tuple[list, int]:
        evaluator = CountingBatchEvaluator(engine)
        recs = play_games_batched(None, engine, load_config(TINY, sets + extra), [1, 2, 3, 4],
                                  evaluate=evaluator)
        return recs, evaluator.positions

    full, full_evals = play([])
    assert all(len(r.obs) == r.length == 12 and r.fast == 0 for r in full)
    assert full_evals == 48 * 16  # every search: the root's evaluation and 15 leaves
    capped = ["selfplay.full_search_prob=0.5", "selfplay.fast_simulations=2"]
    recs, evals = play(capped)
    kept, fast = sum(len(r.obs) for r in recs), sum(r.fast for r in recs)
    assert all(len(r.obs) + r.fast + r.forced == r.length == 12 for r in recs)
    assert 10 <= kept <= 38 and kept + fast == 48
    assert evals == kept * 16 + fast * 2  # a fast search costs its own 2 simulations
    for r in recs:
        assert len(r.actions) == len(r.probs) == len(r.players) == len(r.root_values)
    again, _ = play(capped)  # one generator seeded from the seeds: the same games
    assert [r.fast for r in again] == [r.fast for r in recs]
    assert all(np.array_equal(a, b) for x, y in zip(recs, again, strict=True)
               for a, b in zip(x.probs, y.probs, strict=True))


def test_randomisation_off_draws_nothing_so_games_stay_the_same():
    base, _ = games([])
    same, _ = games(["selfplay.full_search_prob=1"])
    for a, b in zip(base, same, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a.obs, b.obs, strict=True))
        assert all(np.array_equal(x, y) for x, y in zip(a.probs, b.probs, strict=True))


def test_config_rules():
    with pytest.raises(ConfigError, match="selfplay.fast_simulations must be between 1 and"):
        load_config(TINY, ["selfplay.full_search_prob=0.25"])
    with pytest.raises(ConfigError, match="selfplay.fast_simulations must be between 1 and"):
        load_config(TINY, ["selfplay.full_search_prob=0.25", "mcts.simulations=8",
                           "selfplay.fast_simulations=8"])
    with pytest.raises(ConfigError, match="selfplay.full_search_prob must be between"):
        load_config(TINY, ["selfplay.full_search_prob=0", "selfplay.fast_simulations=2"])
    with pytest.raises(ConfigError, match="fast_simulations has no effect"):
        load_config(TINY, ["selfplay.fast_simulations=2"])


def test_a_training_iteration_reports_fast_moves(tmp_path, capsys):
    from boardzoo.cli import main

    code = main(["train", "--config", TINY, "--out", str(tmp_path / "run"),
                 "--set", "iterations=1", "--set", "selfplay.full_search_prob=0.5",
                 "--set", "selfplay.fast_simulations=2", "--set", "eval.games=0",
                 "--set", "train.min_buffer=1"])
    out = capsys.readouterr().out
    assert code == 0 and re.search(r"avg 12 actions, \d+ fast,", out), out
