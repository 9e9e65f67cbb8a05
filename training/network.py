"""The policy/value network: a small residual conv net over a game's observation planes.

Input: the ActionGame's float32 ``(H, W, C)`` observation (from the view of the
player to act), moved to ``(C, H, W)``. Trunk: a 3x3 conv stem and ``blocks``
residual blocks of ``channels`` (batch norm, ReLU). Heads:

* policy, one logit per action of the game's ``Discrete`` space, either
  ``linear`` (1x1 conv to ``policy_channels`` planes, then a linear layer: fine
  for LOA's 513 actions) or ``conv`` (for action spaces laid out per board cell,
  the game descriptor's :mod:`~boardzoo.envs.core.layout`: a 1x1 conv gives each
  cell one logit per action that starts there, e.g. Ultima's 64 destinations per origin or
  Whistling's 120 hops per cell, so the head stays small; extra actions such
  as LOA's pass come from a linear layer on the pooled features).
  :func:`masked_log_softmax` sets illegal logits to ``-inf`` before the
  softmax, so illegal actions get exactly zero probability (nothing is
  renormalised after sampling);
* value: 1x1 conv, linear, ReLU, linear, ``tanh``: the expected outcome in
  [-1, 1] for the player to act.

Irregular boards drawn on a rectangular grid (Whistling's hex board on 21 x 41)
give the index of their real-cell plane: the trunk's features are multiplied by
that mask after every layer, so off-board grid points stay exactly zero and the
convolutions see the hex board's edge as an edge.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from boardzoo.envs.core.layout import ActionLayout
from boardzoo.envs.core.registry import get_spec

from .config import ConfigError, ModelConfig


class ResBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        if mask is not None:
            y = y * mask
        y = self.bn2(self.conv2(y))
        out = F.relu(x + y)
        return out if mask is None else out * mask


class PolicyValueNet(nn.Module):
    """Residual conv net with a masked policy head and a tanh value head."""

    def __init__(self, obs_shape: tuple[int, int, int], num_actions: int, cfg: ModelConfig,
                 cell_mask_plane: int | None = None, layout: ActionLayout | None = None) -> None:
        super().__init__()
        h, w, c = obs_shape
        self.obs_shape = tuple(obs_shape)
        self.num_actions = int(num_actions)
        self.cell_mask_plane = cell_mask_plane
        ch = cfg.channels
        self.stem = nn.Sequential(nn.Conv2d(c, ch, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(ch), nn.ReLU())
        self.blocks = nn.ModuleList(ResBlock(ch) for _ in range(cfg.blocks))
        self.policy_conv = nn.Sequential(nn.Conv2d(ch, cfg.policy_channels, 1, bias=False),
                                         nn.BatchNorm2d(cfg.policy_channels), nn.ReLU())
        self.layout = layout
        if layout is None:
            self.policy_fc = nn.Linear(cfg.policy_channels * h * w, num_actions)
        else:
            if layout.num_actions != num_actions:
                raise ValueError(f"action layout covers {layout.num_actions} actions, the game "
                                 f"has {num_actions}")
            self.policy_cells = nn.Conv2d(cfg.policy_channels, layout.per_cell, 1)
            self.register_buffer("cell_grid", torch.as_tensor(layout.cell_grid),
                                 persistent=False)
            self.policy_extra = nn.Linear(ch, layout.extra) if layout.extra else None
        self.value_conv = nn.Sequential(nn.Conv2d(ch, 1, 1, bias=False), nn.BatchNorm2d(1),
                                        nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(h * w, cfg.value_hidden), nn.ReLU(),
                                      nn.Linear(cfg.value_hidden, 1))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Map a batch ``(B, H, W, C)`` of observations to (logits ``(B, A)``, value ``(B,)``).

        The logits are raw: mask them with :func:`masked_log_softmax` before use.
        """
        x = obs.permute(0, 3, 1, 2)
        mask = None
        if self.cell_mask_plane is not None:
            mask = x[:, self.cell_mask_plane : self.cell_mask_plane + 1]
        x = self.stem(x)
        if mask is not None:
            x = x * mask
        for block in self.blocks:
            x = block(x, mask)
        p = self.policy_conv(x)
        if mask is not None:
            p = p * mask
        if self.layout is None:
            logits = self.policy_fc(p.flatten(1))
        else:
            # (B, per_cell, H*W) -> the board cells -> (B, cells * per_cell), cell-major
            cells = self.policy_cells(p).flatten(2)[:, :, self.cell_grid]
            logits = cells.transpose(1, 2).flatten(1)
            if self.policy_extra is not None:
                pooled = x.mean(dim=(2, 3))
                logits = torch.cat([logits, self.policy_extra(pooled)], dim=1)
        v = self.value_conv(x)
        if mask is not None:
            v = v * mask
        value = torch.tanh(self.value_fc(v.flatten(1))).squeeze(1)
        return logits, value


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return log-probabilities over the legal actions (``mask`` true) and ``-inf`` elsewhere.

    Every row must have at least one legal action.
    """
    return torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return probabilities over the legal actions; illegal actions get exactly 0."""
    return torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def cell_mask_plane(cfg) -> int | None:
    """The real-cell plane: the config's ``model.cell_mask_plane``, else the game
    descriptor's (irregular boards), else None."""
    if cfg.model.cell_mask_plane >= 0:
        return cfg.model.cell_mask_plane
    return get_spec(cfg.game).cell_mask_plane


def policy_layout(cfg, game) -> ActionLayout | None:
    """The action layout of the conv policy head, or None for the linear head."""
    head = cfg.model.policy_head
    layout = get_spec(cfg.game).action_layout if head != "linear" else None
    if head == "conv" and layout is None:
        raise ConfigError(f"model.policy_head: conv needs an action layout, and {cfg.game} "
                          f"has none; use linear")
    if head == "auto" and game.num_actions <= 1024:
        return None  # small action space: the linear head is cheap
    return layout


def build_net(cfg, game) -> PolicyValueNet:
    """Return a fresh network for ``game`` (an ActionGame) as ``cfg`` (a Config) describes."""
    return PolicyValueNet(tuple(game.observation_shape), game.num_actions, cfg.model,
                          cell_mask_plane(cfg), policy_layout(cfg, game))
