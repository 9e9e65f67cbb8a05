"""Self-play in worker processes plays the games one process plays (the shipped configs use two
workers, so a run's games must not depend on it), priors included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game
from boardzoo.training.backends import SelfPlayPool
from boardzoo.training.config import load_config
from boardzoo.training.network import build_net
from boardzoo.training.selfplay import play_games

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_two_workers_play_the_games_of_one_process(name):
    cfg = load_config(REPO / "configs" / f"{name}.yaml",
                      ["selfplay.max_moves=6", "mcts.simulations=4", "selfplay.workers=2",
                       "selfplay.engine=reference"])
    assert cfg.model.value_prior  # the priors are computed in the workers too
    game = action_game(name)
    torch.manual_seed(0)
    net = build_net(cfg, game).eval()
    with torch.no_grad():  # a network that is not exactly its priors
        for p in net.parameters():
            p.add_(0.01 * torch.randn_like(p))
    seeds = [21, 22, 23]
    pool = SelfPlayPool(cfg)
    try:
        two = pool.play(net, seeds)
    finally:
        pool.close()
    one = play_games(net, game, cfg, seeds)
    assert [r.seed for r in two] == seeds
    for a, b in zip(one, two, strict=True):
        assert a.length == b.length and len(a.obs) == len(b.obs) > 0
        assert all(np.array_equal(x, y) for x, y in zip(a.obs, b.obs, strict=True))
        assert all(np.allclose(x, y, atol=1e-6) for x, y in zip(a.probs, b.probs, strict=True))
        assert np.allclose(a.priors, b.priors)
