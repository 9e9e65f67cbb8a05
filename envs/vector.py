"""A Gymnasium vector env over a batched engine: ``num_envs`` games stepped as one.

Each sub-env is one game seen by whoever is to move, like the AEC env's
``observe(agent_selection)``: the observation is ``{"observation": planes,
"action_mask": int8 mask}`` (the AEC env's spaces) and an action is the AEC
env's action number. Both players act through the same sub-env in turn, so the
reward of a step goes to the player who just moved (+1 win, -1 loss, 0 draw or
not over); ``infos["to_move"]`` says who acts next and, for games that ended,
``infos["returns"]`` holds both players' outcomes (``infos["_returns"]`` marks
them).

Autoreset is ``AutoresetMode.SAME_STEP``: a game that ends is replaced by a new
one within the same ``step``; that step reports ``terminations[i] = True`` and the
reward of the finished game, while the returned observation is the new game's
first. The finished game's last observation is ``infos["final_obs"][i]`` (an
object array, ``None`` elsewhere, marked by ``infos["_final_obs"]``), and its info
``infos["final_info"]`` (``returns``/``_returns``: both players' results; ``length``:
the game's actions; ``truncated``; marked by ``infos["_final_info"]``). Games end by
their rules (draw caps included); with ``max_moves`` a game that reaches that many
whole turns is also cut off: ``truncations[i] = True``, reward 0, both players'
returns 0, and it is replaced by a new game within the same step, as a finished one is.

Episode statistics for two players: rewards go to the player who just moved, so
Gymnasium's ``RecordEpisodeStatistics`` sums, per sub-env, the result of the player
who made each game's last move (+1 for a win, 0 for a draw; a loss is never the
mover's). The results of both players are ``final_info["returns"]`` (``(N, 2)``,
rows marked by ``final_info["_returns"]``), the length ``final_info["length"]``.

Outputs are numpy arrays by default; ``torch_output=True`` gives torch tensors on
the engine's device instead (no copies to the host).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .core.batched import BatchedEnv, BatchedGame
from .core.threads import scoped_threads


class BoardzooVectorEnv(VectorEnv):
    """``num_envs`` games of a boardzoo batched engine behind the Gymnasium vector API."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game: str | BatchedGame, num_envs: int, device: str | None = None,
                 torch_output: bool = False, check_actions: bool = True,
                 max_moves: int | None = None, threads: int | None = 1) -> None:
        """Create the games (on ``device``, as :class:`BatchedEnv`); ``check_actions`` rejects
        illegal actions with MoveError; ``max_moves`` truncates a game after that many whole
        turns (None: only the rules end games); ``threads``: torch threads for each call,
        the caller's count restored after it (None: the caller's setting)."""
        if max_moves is not None and max_moves < 1:
            raise ValueError(f"max_moves must be at least 1 (or None), got {max_moves}")
        self.max_moves = max_moves
        self.env = BatchedEnv(game, num_envs, device=device, auto_reset=True,
                              check_actions=check_actions, threads=threads)
        self.threads = threads
        self.game = self.env.game
        self.num_envs = num_envs
        self.torch_output = torch_output
        n = self.game.num_actions
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, shape=self.game.observation_shape,
                                      dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
        })
        self.single_action_space = spaces.Discrete(n)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        #: Actions and whole turns played in each current game.
        self._length = torch.zeros(num_envs, dtype=torch.int64, device=self.env.device)
        self._turns = torch.zeros_like(self._length)

    @scoped_threads
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start every game afresh; ``seed`` seeds ``np_random``, the action space and
        :meth:`random_actions`. No options are defined."""
        if options:
            raise ValueError(f"BoardzooVectorEnv.reset takes no options, got {sorted(options)}")
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
            self.action_space.seed(seed)
        obs, mask = self.env.reset(seed=seed)
        self._length.zero_()
        self._turns.zero_()
        return self._obs(obs, mask), {"to_move": self._out(self.env.to_move())}

    @scoped_threads
    def step(self, actions: Any) -> tuple[dict[str, Any], Any, Any, Any, dict[str, Any]]:
        """Play one action per game (see the module docstring for rewards and autoreset)."""
        mover = self.env.to_move().clone()
        obs, returns, ended = self.env.step(actions)
        reward = returns.gather(1, mover[:, None])[:, 0]
        self._length += 1
        self._turns += (self.env.to_move() != mover) & ~ended
        truncated = torch.zeros_like(ended)
        final_obs = None
        if self.max_moves is not None:
            truncated = (self._turns >= self.max_moves) & ~ended
            if bool(truncated.any()):  # cut off: final observation, then a new game
                final_obs = self._final_obs(truncated, self.env.batch)
                obs = self.env.restart(truncated)
        done = ended | truncated
        infos: dict[str, Any] = {"to_move": self._out(self.env.to_move())}
        if bool(ended.any()):
            infos["returns"], infos["_returns"] = self._out(returns), self._out(ended)
        if bool(done.any()):
            if bool(ended.any()):
                last = self._final_obs(ended, self.env.final_batch)
                if final_obs is None:
                    final_obs = last
                else:
                    for i in ended.nonzero()[:, 0].tolist():
                        final_obs[i] = last[i]
            infos["final_obs"], infos["_final_obs"] = final_obs, self._out(done)
            infos["final_info"] = {"returns": self._out(returns), "_returns": self._out(done),
                                   "length": self._out(self._length * done),
                                   "truncated": self._out(truncated)}
            infos["_final_info"] = self._out(done)
        self._length[done] = 0
        self._turns[done] = 0
        return (self._obs(obs, self.env.legal_mask()), self._out(reward), self._out(ended),
                self._out(truncated), infos)

    @scoped_threads
    def random_actions(self) -> Any:
        """Return one uniformly random legal action per game (seeded by ``reset``)."""
        return self._out(self.env.random_actions())

    def close(self, **kwargs: Any) -> None:
        """Release nothing: the games live in tensors."""
        self.closed = True

    # -- helpers ------------------------------------------------------------------------
    def _out(self, x: torch.Tensor) -> Any:
        return x if self.torch_output else x.cpu().numpy()

    def _obs(self, planes: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
        return {"observation": self._out(planes), "action_mask": self._out(mask.to(torch.int8))}

    def _final_obs(self, ended: torch.Tensor, batch: Any) -> np.ndarray:
        """Return an object array with the last observation (from ``batch``) of each game
        marked in ``ended``; ``None`` elsewhere."""
        rows = ended.nonzero()[:, 0]
        final = batch.index(rows)
        planes = self.game.observation(final)
        mask = torch.zeros(len(rows), self.game.num_actions, dtype=torch.bool, device=rows.device)
        out = np.full(self.num_envs, None, dtype=object)
        for k, i in enumerate(rows.tolist()):
            out[i] = self._obs(planes[k], mask[k])
        return out
