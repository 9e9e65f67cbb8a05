"""The learner: the network, its optimiser and replay buffer, and the gradient steps.

Loss = ``policy_loss_weight`` x cross-entropy of the masked policy against the search
policy + ``value_loss_weight`` x MSE of the value against its target (the game's outcome,
mixed with the root search value by ``train.value_target_q`` when the batch is drawn, for
old and new positions alike; positions whose target is NaN, none, are left out) +
``prior_kl`` x KL(the action prior's policy || the network's policy) for a
``model.policy_prior`` network.
Batches are drawn from the replay buffer with a generator seeded by ``(seed, iteration)``
and a random board symmetry each (``train.augment``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .buffer import ReplayBuffer
from .config import Config
from .network import build_net, masked_log_softmax


def train_step_count(train: Any, new_positions: int) -> int:
    """Gradient steps of an iteration that added ``new_positions`` examples: the fixed
    ``steps_per_iteration``, or with ``replay_ratio`` > 0 ceil(replay_ratio x new_positions /
    batch_size) capped at ``steps_per_iteration`` (each new example is drawn about
    ``replay_ratio`` times in its first iteration, whatever the games' length)."""
    if train.replay_ratio <= 0:
        return train.steps_per_iteration
    return min(train.steps_per_iteration,
               math.ceil(train.replay_ratio * new_positions / train.batch_size))


def value_loss_weight(cfg: Config) -> float:
    """The value loss's weight: ``train.value_loss_weight``, or 0 when the value is the static
    evaluation alone (``model.value: static``)."""
    return 0.0 if cfg.model.value == "static" else cfg.train.value_loss_weight


def compute_loss(net: torch.nn.Module, batch: dict[str, torch.Tensor],
                 value_weight: float = 1.0, policy_weight: float = 1.0,
                 prior_kl: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return (total, policy, value) losses of a batch (see the module docstring); the
    policy loss is the cross-entropy alone, unweighted."""
    if getattr(getattr(net, "policy", None), "cheaper_at_legal_actions", False):
        value, policy_loss, kl = _legal_policy_losses(net, batch, prior_kl > 0)
    else:
        value, policy_loss, kl = _dense_policy_losses(net, batch, prior_kl > 0)
    target = batch["value"]
    known = ~torch.isnan(target)  # NaN: no value target (train.value_capped_games: false)
    if bool(known.all()):  # the expression runs always used, so that they repeat bit for bit
        value_loss = torch.mean((value - target) ** 2)
    else:  # the mean over the positions that have a target (0 if none has)
        value_loss = torch.where(known, value - target, 0.0).pow(2).sum() / known.sum().clamp(min=1)
    total = policy_weight * policy_loss + value_weight * value_loss
    if prior_kl > 0:
        total = total + prior_kl * kl
    return total, policy_loss, value_loss


def _dense_policy_losses(net: torch.nn.Module, batch: dict[str, torch.Tensor], with_kl: bool,
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Return (values, the policy's cross-entropy, the KL from the action prior's policy or
    None) from every action's logits."""
    logits, value = net(batch["obs"], batch.get("prior"), batch.get("action_prior"))
    mask = batch["mask"]
    logp = masked_log_softmax(logits, mask).masked_fill(~mask, 0.0)
    policy_loss = -(batch["policy"] * logp).sum(-1).mean()
    kl = None
    if with_kl:
        # The action prior's own policy (the fresh network's): a pull toward it keeps the
        # prior's tactics; with the cross-entropy it amounts to a target mixed with it.
        prior_logp = masked_log_softmax(net.prior_logits(batch["action_prior"]), mask)
        prior_logp = prior_logp.masked_fill(~mask, 0.0)
        kl = (prior_logp.exp() * (prior_logp - logp)).sum(-1).mean()
    return value, policy_loss, kl


def _legal_policy_losses(net: torch.nn.Module, batch: dict[str, torch.Tensor], with_kl: bool,
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """:func:`_dense_policy_losses` (equal up to rounding) from the legal actions' logits
    alone: the bilinear head's full (cell x cell) product costs most of a training step."""
    mask = batch["mask"]
    rows, cols = mask.nonzero(as_tuple=True)
    logits, value = net.forward_at(batch["obs"], rows, cols, batch.get("prior"),
                                   batch.get("action_prior"))
    n = mask.shape[0]
    logp = logits - _row_logsumexp(logits, rows, n)[rows]
    policy_loss = -(batch["policy"][rows, cols] * logp).sum() / n
    kl = None
    if with_kl:
        prior = net.prior_logits(batch["action_prior"][rows, cols])
        prior_logp = prior - _row_logsumexp(prior, rows, n)[rows]
        kl = (prior_logp.exp() * (prior_logp - logp)).sum() / n
    return value, policy_loss, kl


def _row_logsumexp(x: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """Return the logsumexp ``(n,)`` of the entries of ``x`` in each row (``rows[i]``: the row
    of ``x[i]``; every row has one at least)."""
    top = x.new_full((n,), -torch.inf).scatter_reduce(0, rows, x.detach(), "amax")
    total = x.new_zeros(n).index_add(0, rows, torch.exp(x - top[rows]))
    return top + torch.log(total)


class Learner:
    """The network being trained, its AdamW optimiser and its replay buffer."""

    def __init__(self, cfg: Config, game: Any, symmetries: Any = None) -> None:
        """Build a fresh network from ``cfg`` (torch seeded by ``cfg.seed``) for the
        ActionGame ``game``; ``symmetries``: the board symmetries to augment with."""
        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.net = build_net(cfg, game)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.train.lr,
                                     weight_decay=cfg.train.weight_decay)
        self.buffer = ReplayBuffer(cfg.train.buffer_size, game.observation_shape,
                                   game.num_actions, priors=cfg.model.value_prior,
                                   action_priors=cfg.model.policy_prior > 0)
        self.syms = symmetries
        #: Gradient steps of the last call of :meth:`train_steps`.
        self.last_steps = 0

    def set_hyperparameters(self) -> None:
        """Apply the config's learning rate and weight decay (a resumed run may change them)."""
        for group in self.opt.param_groups:
            group["lr"] = self.cfg.train.lr
            group["weight_decay"] = self.cfg.train.weight_decay

    def train_steps(self, iteration: int, new_positions: int | None = None) -> dict[str, float]:
        """Train on the buffer after an iteration that added ``new_positions`` examples
        (None: the fixed ``steps_per_iteration``); return the mean losses."""
        t = self.cfg.train
        steps = (t.steps_per_iteration if new_positions is None
                 else train_step_count(t, new_positions))
        self.last_steps = 0
        if len(self.buffer) < max(t.min_buffer, 1) or steps == 0:
            return {"loss": math.nan, "policy_loss": math.nan, "value_loss": math.nan}
        rng = np.random.default_rng([self.cfg.seed, iteration, 1])
        weight = value_loss_weight(self.cfg)
        # a file's prior_kl stays in the config when an override turns the prior off
        # (model.policy_prior=0 on configs/ultima.yaml): without a prior it pulls toward nothing
        prior_kl = t.prior_kl if self.cfg.model.policy_prior > 0 else 0.0
        self.net.train()
        totals = np.zeros(3)
        self.last_steps = steps
        for _ in range(steps):
            batch = self.buffer.sample(t.batch_size, rng, self.syms, t.value_target_q,
                                       t.value_capped_games)
            loss, pl, vl = compute_loss(self.net, batch, weight, t.policy_loss_weight,
                                        prior_kl)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            totals += (loss.item(), pl.item(), vl.item())
        self.net.eval()
        mean = totals / steps
        return {"loss": float(mean[0]), "policy_loss": float(mean[1]),
                "value_loss": float(mean[2])}
