"""Where training spends its CPU: root candidates at play time (mcts.play_gumbel_m)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training import agent as agent_module
from boardzoo.training.batched_mcts import run_batched_search
from boardzoo.training.checkpoint import model_file, save_atomic
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.mcts import run_search
from boardzoo.training.network import build_net

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
    cfg = load_config(TINY, ["mcts.root=gumbel", f"mcts.play_gumbel_m={play_m}"]).mcts
    assert cfg.gumbel_m == 16
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
    cfg = load_config(TINY, ["mcts.root=gumbel", "mcts.play_gumbel_m=64"]).mcts
    search = run_search(LOA, uniform_eval(LOA.num_actions), LOA.initial_state(), cfg,
                        np.random.default_rng(0), 20)
    assert visited_root_actions(search) == 19  # the root's own evaluation is simulation 1


def test_config_validation_of_the_new_keys():
    for bad, message in [("mcts.play_gumbel_m=-1", "mcts.play_gumbel_m must be"),
                         ("mcts.play_m=2", "unknown config key(s) mcts.play_m")]:
        with pytest.raises(ConfigError) as info:
            load_config(TINY, [bad])
        assert message in str(info.value)


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

    path = loa_model(tmp_path, "mcts.play_gumbel_m=20")
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
