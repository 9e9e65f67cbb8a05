"""RLlib (the ``rllib`` extra): the masked module, RLlib's PettingZooEnv over our AEC env,
and the self-play example end to end on a tiny budget; skipped without ``ray.rllib``."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

if os.environ.get("BOARDZOO_REQUIRE_RLLIB"):  # CI's .venv-rllib: missing RLlib is a failure
    import ray.rllib  # noqa: F401
else:  # `ray` alone (the ray extra) lacks RLlib's dependencies (dm-tree, ...): skip
    pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from boardzoo.agents import UnknownAgentError, make_agent  # noqa: E402
from boardzoo.agents import rllib_support as rs  # noqa: E402
from boardzoo.agents.arena.play import play_game  # noqa: E402
from boardzoo.envs.core.registry import get_spec  # noqa: E402

from conftest import REPO  # noqa: E402

TINY = ["--iterations", "2", "--batch", "160", "--minibatch", "64", "--epochs", "1",
        "--envs", "2", "--max-moves", "10", "--channels", "4", "--hidden", "16",
        "--vs-random", "0.5", "--eval-games", "2", "--quiet"]


def load_example() -> ModuleType:
    """Import training/examples/rllib_ppo_selfplay.py by path, as a script."""
    path = REPO / "training" / "examples" / "rllib_ppo_selfplay.py"
    spec = importlib.util.spec_from_file_location("boardzoo_example_rllib", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray():
    """One small local Ray for the module's example runs (each would start its own); an
    instance another test module left running serves as well."""
    if ray.is_initialized():
        yield
        return
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def loa_module() -> rs.MaskedPlanesModule:
    """Return an untrained masked module for LOA's spaces."""
    env = rs.make_env("loa")
    return rs.MaskedPlanesModule(observation_space=env.observation_space["player_0"],
                                 action_space=env.action_space["player_0"],
                                 model_config={"channels": 4, "hidden": 16})


def test_masked_logits_in_every_forward_pass():
    torch.manual_seed(0)
    module = loa_module()
    env = rs.make_env("loa")
    obs, _ = env.reset(seed=0)
    o = obs["player_0"]
    mask = torch.from_numpy(np.stack([o["action_mask"], np.zeros_like(o["action_mask"])]))
    planes = torch.from_numpy(np.stack([o["observation"]] * 2))
    batch = {Columns.OBS: {"observation": planes, "action_mask": mask}}
    legal = mask[0].bool()
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        logits = forward({Columns.OBS: dict(batch[Columns.OBS])})[Columns.ACTION_DIST_INPUTS]
        assert (logits[0][~legal] == torch.finfo(logits.dtype).min).all()
        assert (logits[0][legal] > -1e6).all()
        dist = module.get_train_action_dist_cls().from_logits(logits)
        # an all-zero mask (a finished game's last observation) must not give NaN
        assert torch.isfinite(dist.logp(torch.tensor([0, 0]))).all()
        assert torch.isfinite(dist.entropy()).all()
        samples = torch.stack([dist.sample()[0] for _ in range(200)])
        assert legal[samples].all()
    values = module.compute_values(batch)
    assert values.shape == (2,) and torch.isfinite(values).all()


def test_pettingzoo_env_is_turn_based_and_rewards_both_at_the_end():
    env = rs.make_env("loa")
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    steps = 0
    while True:
        (agent,) = obs  # only the agent to move is asked for an action
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            break
        assert len(obs) == 1 and rewards[next(iter(obs))] == 0
    assert set(rewards) == set(rs.SEATS) and sorted(rewards.values()) == [-1, 1]
    assert steps == env.env.unwrapped.turns_played


def test_whistling_chain_keeps_the_same_agent_to_act():
    env = rs.make_env("whistling")
    actions = get_spec("whistling").actions
    obs, _ = env.reset(seed=0)
    raw = env.env.unwrapped
    rng = np.random.default_rng(0)
    movers = []
    for _ in range(300):  # random play until some chain makes an agent act twice in a row
        (agent,) = obs
        movers.append(agent)
        if len(movers) > 1 and movers[-1] == movers[-2]:
            break
        legal = np.flatnonzero(obs[agent]["action_mask"])
        assert set(legal) == set(actions.legal_actions(raw.action_state))
        obs, *_ = env.step({agent: int(rng.choice(legal))})
    assert movers[-1] == movers[-2]


def test_seat_mapping_alternates_the_opponent_seat_and_keeps_self_play():
    class Ep:
        def __init__(self, i: int) -> None:
            self.id_ = f"episode{i}"

    selfplay = rs.SeatMapping(0.0)
    assert {selfplay(a, Ep(i)) for i in range(50) for a in rs.SEATS} == {rs.MAIN}
    mixed = rs.SeatMapping(0.5)
    pairs = [(mixed("player_0", Ep(i)), mixed("player_1", Ep(i))) for i in range(400)]
    assert all(rs.MAIN in p for p in pairs)
    vs = [p for p in pairs if rs.RANDOM in p]
    assert 150 < len(vs) < 250
    assert 0.35 < sum(p[0] == rs.MAIN for p in vs) / len(vs) < 0.65


def test_example_trains_honours_the_mask_and_reports_the_arena_score(tmp_path: Path,
                                                                     local_ray):
    example = load_example()
    summary = example.main([*TINY, "--out", str(tmp_path / "run")])
    assert len(summary["history"]) == 2
    # every action of every finished training episode was checked against its mask
    assert 0 < summary["actions_checked"] <= summary["env_steps"]
    assert summary["illegal_actions"] == 0
    assert "score_vs_random" in summary["history"][-1]
    ev = summary["eval"]["random"]
    assert ev["games"] == 2 and ev["wins"] + ev["draws"] + ev["losses"] == 2
    assert 0 <= ev["score"] <= 1
    # the saved module plays as the agent spec rllib:PATH,trust_code (arena, play), always
    # legally; without trust_code it is refused (RLlib would unpickle the folder's files)
    with pytest.raises(UnknownAgentError, match="unpickles"):
        make_agent(f"rllib:{summary['module']}", "loa", 0)
    agent = make_agent(f"rllib:{summary['module']},trust_code", "loa", 0)
    record = play_game("loa", [agent, make_agent("random", "loa", 1)], max_moves=30)
    assert record.plies == 30 and agent.stats()["illegal"] == 0


def test_the_mask_check_catches_an_unmasked_module(tmp_path: Path, local_ray,
                                                   monkeypatch: pytest.MonkeyPatch):
    # Without masking, an untrained module over 513 actions picks illegal ones at once
    # (PettingZoo's wrapper then ends the game): the check must see them.
    monkeypatch.setattr(rs, "mask_logits", lambda logits, mask: logits)
    example = load_example()
    summary = example.main([*TINY, "--iterations", "1", "--eval-games", "0",
                            "--out", str(tmp_path / "run")])
    assert summary["illegal_actions"] > 0


def test_rllib_agent_spec_errors(tmp_path: Path):
    for spec, message in ((f"rllib:{tmp_path / 'none'},trust_code", "no module checkpoint"),
                          ("rllib:,trust_code", "needs a module folder"),
                          (f"rllib:{tmp_path},fast,trust_code", "unknown option")):
        with pytest.raises(UnknownAgentError, match=message):
            make_agent(spec, "loa", 0)
    with pytest.raises(UnknownAgentError, match="not an RLModule checkpoint"):
        make_agent(f"rllib:{tmp_path},trust_code", "loa", 0)
