"""The RL framework examples (training/examples) run end to end on a tiny budget; each is
skipped where its extra (sb3, torchrl) is not installed."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from boardzoo.agents.single_agent import SingleAgentEnv
from boardzoo.envs.core.registry import load_state

from conftest import REPO, load_vector

EXAMPLES = REPO / "training" / "examples"
LOA_START = load_vector("loa", "start.json")


def load_example(name: str) -> ModuleType:
    """Import training/examples/<name>.py by path, as a script (not as the package module)."""
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"boardzoo_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo_example_trains_saves_and_evaluates(tmp_path: Path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    example = load_example("sb3_maskable_ppo")
    out = tmp_path / "ppo.zip"
    summary = example.main(["--timesteps", "256", "--n-envs", "1", "--eval-games", "2",
                            "--max-moves", "20", "--out", str(out)])
    assert summary["timesteps"] == 256 and summary["games"] == 2
    assert summary["wins"] + summary["draws"] + summary["losses"] == 2
    model = MaskablePPO.load(out, device="cpu")
    env = SingleAgentEnv("loa", learner_side=0, seed=0)
    obs, _ = env.reset()
    for _ in range(5):  # the saved policy only picks moves the rules engine allows
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert int(action) in env.raw.game.legal_moves()
        obs, *_ = env.step(int(action))
    check_sb3_model_as_agent_and_opponent(out, model)


def test_sb3_self_play_refreshes_the_frozen_copy_of_the_learner():
    pytest.importorskip("sb3_contrib")
    import torch

    example = load_example("sb3_maskable_ppo")
    frozen = example.FrozenOpponent()
    model = example.build_model("loa", "random", 0, 2, "cnn", max_moves=20, frozen=frozen,
                                random_envs=1)
    start = {k: v.clone() for k, v in model.policy.state_dict().items()}

    def same(a, b):
        return all(torch.equal(a[k], b[k]) for k in a)

    assert same(frozen.policy.state_dict(), start)  # starts as the untrained learner
    envs = model.get_env().envs
    assert envs[0].opponent_spec == "random" and envs[1].opponent_spec is None
    opponent = envs[1].opponent.agent  # the PolicyAgent around the frozen copy
    assert opponent.model is frozen and opponent.deterministic is False
    model.learn(total_timesteps=1024, callback=example.RefreshEvery(frozen, 1))  # 2 rollouts
    assert frozen.refreshes == 2
    # the second refresh copied the weights after the first update: not the start any more,
    # and not the learner's either (it was updated once more after that rollout)
    assert not same(frozen.policy.state_dict(), start)
    assert not same(frozen.policy.state_dict(), model.policy.state_dict())
    assert opponent.counters["actions"] > 0 and opponent.counters["illegal"] == 0


def check_sb3_model_as_agent_and_opponent(path: Path, model) -> None:
    """A saved model plays as the agent spec sb3:PATH (play, arena) and as a SingleAgentEnv
    opponent (a spec string, or the model object itself: SB3 self-play)."""
    from boardzoo.agents import UnknownAgentError, make_agent
    from boardzoo.agents.arena.play import play_game

    record = play_game("loa", [make_agent(f"sb3:{path}", "loa", 0), make_agent("random", "loa", 1)],
                       max_moves=30)
    assert record.plies > 0 and len(record.moves) == record.plies
    for opponent in (f"sb3:{path},stochastic", model):
        env = SingleAgentEnv("loa", opponent=opponent, learner_side=1, seed=3)
        obs, info = env.reset()
        assert len(info["opponent_moves"]) == 1  # the model moved first, legally
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        env.step(int(action))
    for spec, message in ((f"sb3:{path.parent / 'none.zip'}", "no model file"),
                          (f"sb3:{path},fast", "unknown option"),
                          ("sb3:", "needs a model file")):
        with pytest.raises(UnknownAgentError, match=message):
            make_agent(spec, "loa", 0)
    with pytest.raises(UnknownAgentError, match="trained on observations"):
        make_agent(f"sb3:{path}", "ultima", 0)


def test_sb3_cnn_features_see_the_planes():
    pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    example = load_example("sb3_maskable_ppo")
    env = SingleAgentEnv("loa")
    net = example.PlanesCNN(env.observation_space, features_dim=16)
    obs = torch.zeros((3, *env.observation_space.shape))
    assert tuple(net(obs).shape) == (3, 16)


def test_torchrl_example_trains_saves_and_evaluates(tmp_path: Path):
    pytest.importorskip("torchrl")
    torch = pytest.importorskip("torch")
    example = load_example("torchrl_loa")
    out = tmp_path / "torchrl.pt"
    summary = example.main(["--iterations", "2", "--games-per-iter", "1", "--max-moves", "20",
                            "--eval-games", "1", "--out", str(out)])
    # 20 whole turns and no LOA game ends that fast from the start: 10 moves per learner.
    assert [row["learner_moves"] for row in summary["history"]] == [10, 10]
    assert all(math.isfinite(v) for row in summary["history"] for v in row.values())
    assert summary["eval_games"] == 1
    nets = torch.load(out)
    example.conv_net(example.NUM_ACTIONS).load_state_dict(nets["policy"])


def test_torchrl_policy_picks_legal_moves_from_the_wrapped_env():
    pytest.importorskip("torchrl")
    torch = pytest.importorskip("torch")
    example = load_example("torchrl_loa")
    torch.manual_seed(0)
    env = example.make_env(seed=0)
    td = env.reset()
    mask = td[example.MASK][0].numpy()
    start = load_state("loa")
    assert set(np.flatnonzero(mask)) == set(start.legal_moves())
    assert int(mask.sum()) == len(LOA_START["legal"])
    for learner in (0, 1):
        out = example.VersusRandom(example.conv_net(example.NUM_ACTIONS), learner)(td.clone())
        assert int(out[example.ACTION][0]) in start.legal_moves()  # player_0 acts first
