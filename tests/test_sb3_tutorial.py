"""PettingZoo's SB3 action-mask tutorial, as its current version writes the wrapper (declared
``(pettingzoo.utils.BaseWrapper, gymnasium.Env)``), runs unchanged on every boardzoo game."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

from boardzoo.envs import loa_v0, ultima_v0, whistling_v0

pytest.importorskip("sb3_contrib")
import pettingzoo.utils  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy  # noqa: E402
from sb3_contrib.common.wrappers import ActionMasker  # noqa: E402


class TutorialWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """The tutorial's wrapper: one policy plays both seats of an AEC env through SB3."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])[
            "observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        mover = self.agent_selection
        super().step(action)
        return (self.observe(self.agent_selection), self._cumulative_rewards[mover],
                self.terminations[mover], self.truncations[mover], self.infos[mover])

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


@pytest.mark.parametrize("module", [loa_v0, ultima_v0, whistling_v0],
                         ids=["loa", "ultima", "whistling"])
def test_the_tutorial_trains_and_its_masked_predictions_are_legal(module):
    torch.set_num_threads(1)
    env = TutorialWrapper(module.env(max_moves=30))
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=32, batch_size=16, n_epochs=1,
                        seed=0, verbose=0)
    model.learn(total_timesteps=32)
    obs, _ = env.reset(seed=1)
    for _ in range(20):  # the trained model's masked predictions are legal moves
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, _, term, trunc, _ = env.step(int(action))
        if term or trunc:
            obs, _ = env.reset()
    assert np.asarray(obs).shape == env.observation_space.shape
