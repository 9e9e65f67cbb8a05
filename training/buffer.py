"""Replay buffer of (observation, search policy, outcome) with symmetry-augmented sampling.

A ring of ``capacity`` positions: observations as float16 (the planes are 0/1
or small fractions), the policy target as the legal actions plus their
probabilities (sparse, so 4096-action games stay small), and the outcome
for the player to act. ``ptr`` is the next slot to write and ``added`` the
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


class ReplayBuffer:
    def __init__(self, capacity: int, obs_shape: tuple[int, ...], num_actions: int,
                 priors: bool = False, action_priors: bool = False) -> None:
        """Hold ``capacity`` positions; with ``priors`` also each one's value prior, with
        ``action_priors`` its legal actions' action prior."""
        self.capacity = capacity
        #: Weight of the root search value in the value targets of added games
        #: (``train.value_target_q``; see :meth:`GameRecord.values`).
        self.value_target_q = 0.0
        #: Whether games stopped at the move cap give value targets
        #: (``train.value_capped_games``); if not, their positions hold NaN, no target.
        self.value_capped_games = True
        self.obs_shape = tuple(obs_shape)
        self.num_actions = num_actions
        self.obs = np.zeros((capacity, *obs_shape), dtype=np.float16)
        self.value = np.zeros(capacity, dtype=np.float32)
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
        """Add every position of a self-play game with its outcome for the player to act."""
        values = rec.values(self.value_target_q, self.value_capped_games)
        for k in range(len(rec.obs)):
            self.add(rec.obs[k], rec.actions[k], rec.probs[k], float(values[k]),
                     rec.priors[k] if rec.priors else 0.0,
                     rec.action_priors[k] if rec.action_priors else None)

    def add(self, obs: np.ndarray, actions: np.ndarray, probs: np.ndarray, value: float,
            prior: float = 0.0, action_prior: np.ndarray | None = None) -> None:
        """Add one position: observation, legal actions, their target probabilities, value
        (and the value prior, the legal actions' action prior where the buffer keeps them)."""
        i = self.ptr
        self.obs[i] = obs
        self.value[i] = value
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

    def sample(self, batch: int, rng: np.random.Generator,
               syms: list[Symmetry] | None = None) -> dict[str, torch.Tensor]:
        """Return a batch: obs (B, H, W, C), policy (B, A), mask (B, A) bool, value (B,)
        (and prior (B,), action_prior (B, A) when the buffer keeps them)."""
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
               "mask": torch.from_numpy(mask), "value": torch.from_numpy(self.value[idx].copy())}
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
            "value": torch.from_numpy(self.value[:n].copy()),
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
        n = int(d["size"])
        if int(d["capacity"]) != self.capacity or n > self.capacity:
            # a resumed run with a different buffer_size keeps the newest positions that fit
            order = [(int(d["ptr"]) - n + k) % max(int(d["capacity"]), 1) for k in range(n)]
        else:
            order = None
        obs = _unpack_obs(d, n, self.obs_shape)
        value = d["value"].numpy()
        prior = d["prior"].numpy() if "prior" in d else np.zeros(len(value), np.float32)
        lengths = d["lengths"].numpy()
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        acts = d["actions"].numpy()
        probs = d["probs"].numpy()
        aprior = d["action_prior"].numpy() if "action_prior" in d else np.zeros_like(probs)
        if order is None:
            self.obs[:n] = obs
            self.value[:n] = value
            if self.prior is not None:
                self.prior[:n] = prior
            for k in range(n):
                self.actions[k] = acts[offsets[k]:offsets[k + 1]].copy()
                self.probs[k] = probs[offsets[k]:offsets[k + 1]].copy()
                if self.aprior is not None:
                    self.aprior[k] = aprior[offsets[k]:offsets[k + 1]].copy()
            self.ptr, self.size, self.added = int(d["ptr"]), n, int(d["added"])
            return
        self.ptr = self.size = 0
        for k in order[-self.capacity:]:
            i = self.ptr
            self.obs[i] = obs[k]
            self.value[i] = value[k]
            if self.prior is not None:
                self.prior[i] = prior[k]
            self.actions[i] = acts[offsets[k]:offsets[k + 1]].copy()
            self.probs[i] = probs[offsets[k]:offsets[k + 1]].copy()
            if self.aprior is not None:
                self.aprior[i] = aprior[offsets[k]:offsets[k + 1]].copy()
            self.ptr = (i + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)
        self.added = int(d["added"])
