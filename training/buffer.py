"""Replay buffer of (observation, search policy, outcome) with symmetry-augmented sampling.

A ring of ``capacity`` positions: observations as float16 (the planes are 0/1
or small fractions), the policy target as the legal actions plus their
probabilities (sparse, so 4096-action games stay small), the outcome
for the player to act, the root search's value (NaN where none) and whether the game
was stopped at the move cap. The value targets are mixed from those three when a batch
is drawn (:func:`value_targets`, by the ``train.value_target_q`` and
``train.value_capped_games`` the caller passes), so a resumed run's new settings apply to
the positions already stored as well. ``ptr`` is the next slot to write and ``added`` the
number of positions ever added; both are saved in checkpoints, together with
the contents, so ``--resume`` continues with the same buffer. Observations made of 0s
and 1s only (every shipped game's) are saved bit-packed, 16 times smaller than float16:
a full Whistling buffer of 60,000 positions is about 70 MB instead of 1.1 GB, and
writing it each iteration no longer costs seconds.
With ``priors`` (``model.value_prior``) each position also keeps its static
evaluation prior, which batches and checkpoints then carry as ``prior``; with
``action_priors`` (``model.policy_prior``) the game's action prior of each legal
action, carried as ``action_prior`` (dense in batches, beside the policy).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from boardzoo.envs.core.symmetry import Symmetry

from .selfplay import GameRecord

# float16 bit patterns of 0.0 and 1.0: comparing them as integers is the fast test for a
# binary observation array
_F16_ZERO, _F16_ONE = np.float16(0).view(np.uint16), np.float16(1).view(np.uint16)


def _pack_obs(obs: np.ndarray) -> dict[str, torch.Tensor]:
    """The checkpoint entries of float16 observations: ``obs_bits`` (np.packbits of the
    flattened array) where every value is 0 or 1, else ``obs`` as it is."""
    bits = obs.view(np.uint16)
    ones = bits == _F16_ONE
    if np.all(ones | (bits == _F16_ZERO)):
        return {"obs_bits": torch.from_numpy(np.packbits(ones))}
    return {"obs": torch.from_numpy(obs.copy())}


def _unpack_obs(d: dict[str, Any], n: int, shape: tuple[int, ...]) -> np.ndarray:
    """The float16 observations of a buffer checkpoint (packed or not), checked against
    the expected per-position ``shape``."""
    if "obs_bits" not in d:
        obs = d["obs"].numpy()
        if obs.shape[1:] != shape:
            raise ValueError(f"buffer observations have shape {obs.shape[1:]}, "
                             f"expected {shape}")
        return obs
    packed = d["obs_bits"].numpy()
    count = n * int(np.prod(shape))
    if packed.dtype != np.uint8 or len(packed) != (count + 7) // 8:
        raise ValueError(f"buffer observation bits do not fit {n} positions of shape {shape}")
    return np.unpackbits(packed, count=count).astype(np.float16).reshape(n, *shape)


def value_targets(outcome: np.ndarray, root_value: np.ndarray, capped: np.ndarray,
                  q_weight: float = 0.0, capped_games: bool = True) -> np.ndarray:
    """The float32 value targets of positions with these outcomes for the player to act,
    root search values (NaN: none) and move-cap flags: (1 - ``q_weight``) x outcome +
    ``q_weight`` x root value (``train.value_target_q``; the outcome alone where there is no
    root value), and NaN (no target) at the positions of capped games unless
    ``capped_games`` (``train.value_capped_games``)."""
    z = np.asarray(outcome, np.float32)
    if q_weight > 0:  # float32 arithmetic with the Python float weight, as the targets had
        # when they were mixed per game: the same runs repeat bit for bit
        root = np.asarray(root_value, np.float32)
        z = np.where(np.isnan(root), z, (1 - q_weight) * z + q_weight * root)
    if not capped_games:
        z = np.where(capped, np.float32(np.nan), z)
    return z.astype(np.float32)


class ReplayBuffer:
    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int,
                 priors: bool = False, action_priors: bool = False) -> None:
        """Hold ``capacity`` positions; with ``priors`` also each one's value prior, with
        ``action_priors`` its legal actions' action prior."""
        self.capacity = capacity
        self.obs_shape = tuple(obs_shape)
        self.num_actions = num_actions
        self.obs = np.zeros((capacity, *obs_shape), dtype=np.float16)
        #: Outcome for the player to act (of a buffer saved before root values were kept:
        #: the value target it had then, NaN for none).
        self.outcome = np.zeros(capacity, dtype=np.float32)
        #: The root search's value for the player to act, NaN where there is none.
        self.root_value = np.full(capacity, np.nan, dtype=np.float32)
        #: Whether the position's game was stopped at the move cap.
        self.capped = np.zeros(capacity, dtype=bool)
        #: Static-evaluation prior per position (``model.value_prior``), else None.
        self.prior = np.zeros(capacity, dtype=np.float32) if priors else None
        self.actions: list[np.ndarray] = [np.zeros(0, np.int32)] * capacity
        self.probs: list[np.ndarray] = [np.zeros(0, np.float32)] * capacity
        #: Action prior of each position's legal actions (``model.policy_prior``), else None.
        self.aprior: list[np.ndarray] | None = (
            [np.zeros(0, np.float32)] * capacity if action_priors else None)
        self.ptr = 0
        self.size = 0
        self.added = 0

    def __len__(self) -> int:
        return self.size

    def add_game(self, rec: GameRecord) -> None:
        """Add every position of a self-play game with its outcome for the player to act,
        its root search value (a record without one per position: none) and the game's
        move-cap flag."""
        outcomes = rec.outcomes()
        roots = rec.root_values if len(rec.root_values) == len(outcomes) else None
        for k in range(len(rec.obs)):
            self.add(rec.obs[k], rec.actions[k], rec.probs[k], float(outcomes[k]),
                     rec.priors[k] if rec.priors else 0.0,
                     rec.action_priors[k] if rec.action_priors else None,
                     math.nan if roots is None else roots[k], rec.capped)

    def add(self, obs: np.ndarray, actions: np.ndarray, probs: np.ndarray, outcome: float,
            prior: float = 0.0, action_prior: np.ndarray | None = None,
            root_value: float = math.nan, capped: bool = False) -> None:
        """Add one position: observation, legal actions, their target probabilities, outcome
        for the player to act (and the value prior, the legal actions' action prior where the
        buffer keeps them; the root search value, NaN for none; whether the game was capped)."""
        i = self.ptr
        self.obs[i] = obs
        self.outcome[i] = outcome
        self.root_value[i] = root_value
        self.capped[i] = capped
        if self.prior is not None:
            self.prior[i] = prior
        self.actions[i] = actions
        self.probs[i] = probs
        if self.aprior is not None:
            self.aprior[i] = (np.zeros(len(actions), np.float32) if action_prior is None
                              else np.asarray(action_prior, dtype=np.float32))
        self.ptr = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        self.added += 1

    def sample(self, batch: int, rng: np.random.Generator, syms: list[Symmetry] | None = None,
               value_target_q: float = 0.0, value_capped_games: bool = True,
               ) -> dict[str, torch.Tensor]:
        """Return a batch: obs (B, H, W, C), policy (B, A), mask (B, A) bool, value (B,)
        (and prior (B,), action_prior (B, A) when the buffer keeps them); the value targets
        are mixed now by ``value_target_q`` and ``value_capped_games`` (:func:`value_targets`)."""
        idx = rng.integers(0, self.size, size=batch)
        obs = self.obs[idx].astype(np.float32)
        policy = np.zeros((batch, self.num_actions), dtype=np.float32)
        mask = np.zeros((batch, self.num_actions), dtype=bool)
        aprior = (np.zeros((batch, self.num_actions), dtype=np.float32)
                  if self.aprior is not None else None)
        which = rng.integers(0, len(syms), size=batch) if syms and len(syms) > 1 else None
        for b, i in enumerate(idx):
            a = self.actions[i]
            if which is not None:
                sym = syms[which[b]]
                a = sym.action_perm[a]
                obs[b] = sym.obs(obs[b])
            policy[b, a] = self.probs[i]
            mask[b, a] = True
            if aprior is not None:
                aprior[b, a] = self.aprior[i]
        out = {"obs": torch.from_numpy(obs), "policy": torch.from_numpy(policy),
               "mask": torch.from_numpy(mask), "value": torch.from_numpy(value_targets(
                   self.outcome[idx], self.root_value[idx], self.capped[idx], value_target_q,
                   value_capped_games))}
        if self.prior is not None:
            out["prior"] = torch.from_numpy(self.prior[idx].copy())
        if aprior is not None:
            out["action_prior"] = torch.from_numpy(aprior)
        return out

    # -- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Tensors and ints only (loadable with ``torch.load(weights_only=True)``)."""
        n = self.size
        lengths = np.array([len(a) for a in self.actions[:n]], dtype=np.int64)
        cat_a = np.concatenate(self.actions[:n]) if n else np.zeros(0, np.int32)
        cat_p = np.concatenate(self.probs[:n]) if n else np.zeros(0, np.float32)
        out = {
            "capacity": self.capacity, "ptr": self.ptr, "size": n, "added": self.added,
            **_pack_obs(self.obs[:n]),
            "outcome": torch.from_numpy(self.outcome[:n].copy()),
            "root_value": torch.from_numpy(self.root_value[:n].copy()),
            "capped": torch.from_numpy(self.capped[:n].copy()),
            "lengths": torch.from_numpy(lengths),
            "actions": torch.from_numpy(cat_a.astype(np.int32)),
            "probs": torch.from_numpy(cat_p.astype(np.float32)),
        }
        if self.prior is not None:
            out["prior"] = torch.from_numpy(self.prior[:n].copy())
        if self.aprior is not None:
            cat_b = np.concatenate(self.aprior[:n]) if n else np.zeros(0, np.float32)
            out["action_prior"] = torch.from_numpy(cat_b.astype(np.float32))
        return out

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; a buffer of another capacity keeps the newest
        positions that fit. A buffer saved before outcomes and root values were kept apart
        holds each position's value target as it was mixed then (``value``, NaN for none):
        it comes back as the outcome with no root value and not capped, so every setting
        draws exactly those targets for it."""
        n, capacity, ptr = int(d["size"]), int(d["capacity"]), int(d["ptr"])
        if capacity == self.capacity and n <= self.capacity:
            order = np.arange(n)
        else:  # a resumed run with a different buffer_size keeps the newest positions that fit
            order = np.array([(ptr - n + k) % max(capacity, 1) for k in range(n)],
                             dtype=np.int64)[-self.capacity:]
            ptr = len(order) % self.capacity
        obs = _unpack_obs(d, n, self.obs_shape)
        old = "outcome" not in d
        outcome = (d["value"] if old else d["outcome"]).numpy()
        root = np.full(n, np.nan, np.float32) if old else d["root_value"].numpy()
        capped = np.zeros(n, bool) if old else d["capped"].numpy()
        prior = d["prior"].numpy() if "prior" in d else np.zeros(n, np.float32)
        offsets = np.concatenate([[0], np.cumsum(d["lengths"].numpy())])
        acts, probs = d["actions"].numpy(), d["probs"].numpy()
        aprior = d["action_prior"].numpy() if "action_prior" in d else np.zeros_like(probs)
        m = len(order)
        self.obs[:m], self.outcome[:m] = obs[order], outcome[order]
        self.root_value[:m], self.capped[:m] = root[order], capped[order]
        if self.prior is not None:
            self.prior[:m] = prior[order]
        for i, k in enumerate(order):
            self.actions[i] = acts[offsets[k]:offsets[k + 1]].copy()
            self.probs[i] = probs[offsets[k]:offsets[k + 1]].copy()
            if self.aprior is not None:
                self.aprior[i] = aprior[offsets[k]:offsets[k + 1]].copy()
        self.ptr, self.size, self.added = ptr, m, int(d["added"])
