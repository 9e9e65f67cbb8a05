"""Stable-Baselines3 policies as boardzoo agents (needs the ``sb3`` extra).

``sb3:PATH`` loads a saved sb3-contrib ``MaskablePPO`` model (a ``.zip``) and plays
it as an agent anywhere an agent spec goes (``play``, ``tournament``, a
:class:`~boardzoo.agents.single_agent.SingleAgentEnv` opponent, hence SB3
self-play against a frozen copy). ``sb3:PATH,stochastic`` samples instead of
taking the most likely action (:class:`~boardzoo.agents.policy.PolicyAgent` plays it).

:class:`PlanesCNN` is the features extractor for the planes (channels last) that
the example ``training/examples/sb3_maskable_ppo.py`` trains with ``--policy cnn``;
it lives here so that saved models load wherever boardzoo is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from .base import UnknownAgentError
from .policy import PolicyAgent, check_observation_shape, parse_model_spec


class PlanesCNN(BaseFeaturesExtractor):
    """Two 3x3 conv layers over (height, width, planes) observations, then a linear layer."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 128,
                 channels: int = 32) -> None:
        super().__init__(observation_space, features_dim)
        h, w, c = observation_space.shape
        self.net = nn.Sequential(
            nn.Conv2d(c, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(channels * h * w, features_dim), nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Map a batch of channels-last planes to features."""
        return self.net(observations.permute(0, 3, 1, 2))


def load_model(path: str | Path) -> Any:
    """Load a saved MaskablePPO model on the CPU; UnknownAgentError if it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise UnknownAgentError(f"sb3: no model file at {str(path)!r}")
    try:
        return MaskablePPO.load(path, device="cpu")
    except Exception as exc:  # a zip SB3 cannot read: say so in one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UnknownAgentError(f"sb3: {str(path)!r} is not a MaskablePPO model ({first})") \
            from None


def from_spec(arg: str | None, game: str, seed: int | None) -> PolicyAgent:
    """Build ``sb3:PATH[,stochastic]`` for ``game``."""
    where, stochastic = parse_model_spec("sb3", arg, "a model file")
    model = load_model(where)
    if seed is not None:
        model.set_random_seed(seed)
    check_observation_shape("sb3", where, tuple(model.observation_space.shape or ()), game)
    return PolicyAgent(model, game, deterministic=not stochastic)
