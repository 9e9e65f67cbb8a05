"""BoardzooVectorEnv: Gymnasium vector API, spaces, and agreement with the AEC env."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from boardzoo.envs import loa_v0
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.vector import BoardzooVectorEnv


def test_spaces_match_the_aec_env():
    env = BoardzooVectorEnv("loa", 4)
    aec = loa_v0.raw_env()
    assert isinstance(env, VectorEnv) and env.num_envs == 4
    assert env.single_observation_space == aec.observation_space("player_0")
    assert env.single_action_space == aec.action_space("player_0") == spaces.Discrete(513)
    assert env.action_space == spaces.MultiDiscrete([513] * 4)
    assert env.observation_space["observation"].shape == (4, 8, 8, 5)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP


def test_random_run_agrees_with_the_aec_env_move_by_move():
    n = 3
    env = BoardzooVectorEnv("loa", n)
    obs, info = env.reset(seed=11)
    aecs = [loa_v0.raw_env() for _ in range(n)]
    for a in aecs:
        a.reset()
    ended = 0
    for _ in range(320):
        assert env.observation_space.contains(obs)
        for i, a in enumerate(aecs):
            ref = a.observe(a.agent_selection)
            assert np.array_equal(obs["action_mask"][i], ref["action_mask"])
            assert np.array_equal(obs["observation"][i], ref["observation"])
            assert info["to_move"][i] == a.agent_name_mapping[a.agent_selection]
        actions = env.random_actions()
        assert obs["action_mask"][np.arange(n), actions].all()
        obs, rewards, terms, truncs, info = env.step(actions)
        assert rewards.shape == (n,) and terms.dtype == np.bool_ and not truncs.any()
        for i, a in enumerate(aecs):
            mover = a.agent_selection
            a.step(int(actions[i]))
            assert rewards[i] == a.rewards[mover]
            assert terms[i] == a.terminations[mover]
            if terms[i]:
                ended += 1
                assert info["_returns"][i] and info["_final_obs"][i]
                assert list(info["returns"][i]) == [a.rewards["player_0"], a.rewards["player_1"]]
                assert info["_final_info"][i] and info["final_info"]["_returns"][i]
                assert list(info["final_info"]["returns"][i]) == list(info["returns"][i])
                final = a.observe(a.agent_selection)
                assert np.array_equal(info["final_obs"][i]["observation"], final["observation"])
                assert not info["final_obs"][i]["action_mask"].any()
                a.reset()
    assert ended >= 2


def test_torch_output_and_seeding():
    env = BoardzooVectorEnv("loa", 5, torch_output=True)
    obs, info = env.reset(seed=4)
    assert obs["observation"].dtype == torch.float32 and obs["action_mask"].dtype == torch.int8
    first = [env.random_actions() for _ in range(3)]
    env.reset(seed=4)
    assert all(torch.equal(a, env.random_actions()) for a in first)
    obs, rewards, terms, truncs, info = env.step(env.random_actions())
    assert isinstance(rewards, torch.Tensor) and rewards.shape == (5,)


def test_bad_actions_and_options():
    env = BoardzooVectorEnv("loa", 2)
    env.reset()
    with pytest.raises(MoveError):
        env.step(np.array([512, 512]))  # pass while moves exist
    with pytest.raises(ValueError):
        env.reset(options={"position": "x"})


def test_a_device_that_contradicts_the_given_engine_is_an_error():
    from boardzoo.envs.core.registry import batched_game

    with pytest.raises(ValueError, match="device"):
        BoardzooVectorEnv(batched_game("loa", "cpu"), 2, device="meta")


def test_make_vec_with_the_registered_vector_entry_point():
    import gymnasium

    import boardzoo  # noqa: F401  (registers the ids)

    env = gymnasium.make_vec("boardzoo/loa-vector-v0", num_envs=3,
                             vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    assert isinstance(env.unwrapped, BoardzooVectorEnv) and env.num_envs == 3
    assert obs["action_mask"].shape == (3, 513) and obs["action_mask"].sum(1).min() > 0
    env.close()


def test_max_moves_truncates_and_restarts_the_game():
    """A move cap of 3 whole turns: every LOA game (no game ends in 3 turns) is cut off after
    its 3rd turn with truncations True, reward 0, both returns 0, and a fresh game."""
    env = BoardzooVectorEnv("loa", 2, max_moves=3)
    obs, _ = env.reset(seed=1)
    start = obs["observation"].copy()
    for turn in range(1, 7):
        obs, rewards, terms, truncs, info = env.step(env.random_actions())
        assert not terms.any() and not rewards.any()
        if turn % 3:
            assert not truncs.any() and "final_info" not in info
        else:
            assert truncs.all() and info["_final_obs"].all()
            assert info["final_info"]["truncated"].all()
            assert info["final_info"]["length"].tolist() == [3, 3]
            assert not info["final_info"]["returns"].any()
            assert np.array_equal(obs["observation"], start)  # new games at the start
            assert not np.array_equal(info["final_obs"][0]["observation"], start[0])
    with pytest.raises(ValueError, match="max_moves"):
        BoardzooVectorEnv("loa", 2, max_moves=0)


def test_final_info_gives_both_players_results_and_the_length():
    env = BoardzooVectorEnv("loa", 4)
    _, info = env.reset(seed=2)
    lengths = np.zeros(4, dtype=int)
    for _ in range(400):
        mover = info["to_move"]
        obs, rewards, terms, truncs, info = env.step(env.random_actions())
        lengths += 1
        if terms.any():
            fi = info["final_info"]
            for i in np.flatnonzero(terms):
                assert fi["length"][i] == lengths[i]
                assert sorted(fi["returns"][i].tolist()) in ([-1.0, 1.0], [0.0, 0.0])
                assert rewards[i] == fi["returns"][i][mover[i]]  # the last mover's result
            lengths[terms] = 0
            return
    pytest.fail("no game ended in 400 steps")
