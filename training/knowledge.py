"""The game's knowledge a network with priors adds to its outputs, for both self-play engines.

A network with ``model.value_prior`` takes the game's static evaluation of each position
(the descriptor's ``evaluate`` / ``eval_scale``, from the view of the player to act; 0 for
a finished game) and one with ``model.policy_prior`` the game's action prior (the
descriptor's ``action_prior`` as a dense ``(B, num_actions)`` row per position).

A ``value_prior`` network outputs ``tanh(prior + residual)``: ``prior`` is the evaluation /
scale, the same squashing MCTS playout cut-offs and self-play adjudication use, computed from
action states (for Whistling the position before the turn in progress, whose side to move is the
player acting). A ``policy_prior`` network adds ``policy_prior`` x the action prior (e.g. the
material an Ultima capture takes) to its policy logits. :class:`Knowledge` computes both, for
the positions a search evaluates and for distillation's positions:

* :meth:`Knowledge.reference` on action states (the reference engine), one position at a
  time in Python; it remembers the latest positions' results so that a self-play record
  (:meth:`Knowledge.root`) does not compute its root's priors a second time;
* :meth:`Knowledge.batched` on a batched engine's states, all positions at once in torch
  (the descriptor's ``batched_eval_module``: ``envs/<game>/batched_eval.py``).

:meth:`Knowledge.inputs` turns either result into the keyword arguments of
:meth:`.network.PolicyValueNet.forward`.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from boardzoo.envs.core.game import BoardzooError
from boardzoo.envs.core.registry import get_spec

from .config import Config

#: Positions whose priors :meth:`Knowledge.reference` remembers (self-play records look up
#: their roots, evaluated at most a few thousand evaluations earlier).
MEMO_SIZE = 1 << 14


class Knowledge:
    """The static value prior and action prior of one game, as a network's config asks."""

    def __init__(self, game_name: str, value_prior: bool = False,
                 policy_prior: float = 0.0) -> None:
        """Serve the value prior if ``value_prior``, the action prior if ``policy_prior``."""
        self.game_name = game_name
        self.value = bool(value_prior)
        self.actions = float(policy_prior) > 0
        self._memo: OrderedDict[int, tuple[Any, float, np.ndarray, np.ndarray]] = OrderedDict()
        self._batched: Any = None
        if not self.active:
            return
        spec = get_spec(game_name)
        if self.actions and spec.action_prior is None:
            raise BoardzooError(f"{game_name} has no action prior (GameSpec.action_prior)")
        self.game = spec.actions
        self.num_actions = spec.actions.num_actions
        self._evaluate, self._scale, self._prior = spec.evaluate, spec.eval_scale, spec.action_prior
        self._batched_module = spec.batched_eval_module

    @classmethod
    def for_config(cls, cfg: Config) -> Knowledge:
        """Return the knowledge the model of ``cfg`` takes."""
        return cls(cfg.game, cfg.model.value_prior, cfg.model.policy_prior)

    @classmethod
    def for_net(cls, net: torch.nn.Module) -> Knowledge:
        """Return the knowledge ``net`` takes (none for a network without priors)."""
        return cls(getattr(net, "game_name", ""), getattr(net, "value_prior", False),
                   getattr(net, "policy_prior", 0.0))

    @property
    def active(self) -> bool:
        """True when the network takes any prior."""
        return self.value or self.actions

    # -- the reference engine -----------------------------------------------------------------
    def _one(self, state: Any) -> tuple[float, np.ndarray, np.ndarray]:
        """Return (value prior, scored actions, their scores) of one action state."""
        hit = self._memo.get(id(state))
        if hit is not None and hit[0] is state:
            return hit[1:]
        value = 0.0
        if self.value:
            g = self.game.game_state(state)
            if not g.is_terminal():
                v = self._evaluate(g) / self._scale
                # float32, as the network and the replay buffer take it
                value = float(np.float32(v if g.to_move == self.game.to_move(state) else -v))
        scored, scores = self._prior(state) if self.actions else (_NONE, _NONE_F)
        # the memo holds the state, so its id is not reused while the entry lives
        self._memo[id(state)] = (state, value, scored, scores)
        if len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)
        return value, scored, scores

    def reference(self, states: Sequence[Any]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Return the value priors (B,) and dense action priors (B, num_actions), float32,
        of action states (None for a prior the network does not take)."""
        if not self.active:
            return None, None
        value = np.zeros(len(states), dtype=np.float32)
        dense = np.zeros((len(states), self.num_actions), dtype=np.float32) if self.actions \
            else None
        for i, s in enumerate(states):
            value[i], scored, scores = self._one(s)
            if dense is not None:
                dense[i, scored] = scores
        return (value if self.value else None), dense

    def root(self, state: Any, actions: np.ndarray) -> tuple[float | None, np.ndarray | None]:
        """Return a searched position's value prior and the action prior of its legal
        ``actions`` (float32), as a self-play record keeps them (remembered if evaluated)."""
        if not self.active:
            return None, None
        value, scored, scores = self._one(state)
        prior = None
        if self.actions:
            dense = np.zeros(self.num_actions, dtype=np.float32)
            dense[scored] = scores
            prior = dense[np.asarray(actions, dtype=np.int64)]
        return (value if self.value else None), prior

    # -- the batched engine ---------------------------------------------------------------------
    def batched(self, engine: Any, batch: Any) -> tuple[torch.Tensor | None,
                                                        torch.Tensor | None]:
        """Return the value priors (B,) and dense action priors (B, num_actions), float32 on
        the engine's device, of a batched engine's states (None where not taken)."""
        if not self.active:
            return None, None
        if self._batched is None:
            if self._batched_module is None:
                raise BoardzooError(f"{self.game_name} has no batched evaluation "
                                    "(GameSpec.batched_eval_module): its priors need "
                                    "selfplay.engine reference")
            self._batched = importlib.import_module(self._batched_module).priors
        evaluation, prior = self._batched(engine, batch, self.value, self.actions)
        value = None
        if self.value:
            # the engine's player to act is the evaluation's side to move (no flip)
            value = torch.where(engine.terminated(batch), 0.0, evaluation / self._scale).float()
        return value, prior

    @staticmethod
    def inputs(value: Any, prior: Any) -> dict[str, torch.Tensor]:
        """Return the priors as keyword arguments of ``PolicyValueNet.forward``."""
        out = {}
        if value is not None:
            out["prior"] = torch.as_tensor(value)
        if prior is not None:
            out["action_prior"] = torch.as_tensor(prior)
        return out


_NONE = np.zeros(0, dtype=np.int64)
_NONE_F = np.zeros(0, dtype=np.float32)
