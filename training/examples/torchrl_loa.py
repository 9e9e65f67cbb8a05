"""Masked PPO in TorchRL on boardzoo's Lines of Action AEC env, against a random player.

    python -m boardzoo.training.examples.torchrl_loa --iterations 40 --games-per-iter 8

TorchRL's ``PettingZooWrapper`` wraps the PettingZoo AEC env (``use_mask=True``,
which turn-based envs need) with both players in one group ``players``: every
step carries both rows, ``("players", "mask")`` says which one acts and
``("players", "action_mask")`` holds its legal moves. One row is the learner (a
small conv net sampling a :class:`~torchrl.modules.MaskedCategorical`), the other
plays uniformly among its legal moves; colours alternate per game. Each
iteration plays whole games, turns the learner's moves into transitions (reward:
the final result on its last move), computes ``GAE`` advantages and takes
``ClipPPOLoss`` steps. It prints one line per
iteration (the learner's mean return in those games and the losses) and the
greedy policy's score against random at the end. Needs the ``torchrl`` extra.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import TensorDictModule, TensorDictModuleBase
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from boardzoo.envs import loa_v0

GROUP = "players"
OBS = (GROUP, "observation", "observation")  # the AEC obs dict minus its action_mask
MASK = (GROUP, "action_mask")
ACTING = (GROUP, "mask")
ACTION = (GROUP, "action")
NUM_ACTIONS = 513
MAX_STEPS = 450  # LOA's move cap (400 plies) always ends a game first


def make_env(seed: int, max_moves: int | None = None) -> PettingZooWrapper:
    """Return the LOA AEC env (truncated after ``max_moves`` turns) wrapped for TorchRL,
    both players in group ``players``."""
    with warnings.catch_warnings():
        # TorchRL warns on any PettingZoo but the one it tests (1.24.3); 1.27 is verified here.
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(loa_v0.env(max_moves=max_moves), use_mask=True,
                                 categorical_actions=True, seed=seed,
                                 group_map={GROUP: ["player_0", "player_1"]})


def conv_net(out: int, channels: int = 32) -> nn.Module:
    """Return a small conv net from (..., 8, 8, 5) planes to ``out`` numbers."""
    return nn.Sequential(
        ChannelsFirst(), nn.Conv2d(5, channels, 3, padding=1), nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
        nn.Flatten(), nn.Linear(channels * 64, 128), nn.ReLU(), nn.Linear(128, out),
    )


class ChannelsFirst(nn.Module):
    """(..., H, W, C) -> (N, C, H, W) for Conv2d (the env's planes are channels-last)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1, *x.shape[-3:]).permute(0, 3, 1, 2)


class VersusRandom(TensorDictModuleBase):
    """Acts for both rows of the group: the learner's row from the policy net, the other
    row uniformly among its legal moves (greedy=True: the learner takes its best move)."""

    in_keys = [OBS, MASK]
    out_keys = [ACTION]

    def __init__(self, policy_net: nn.Module, learner: int = 0, greedy: bool = False) -> None:
        super().__init__()
        self.policy_net, self.learner, self.greedy = policy_net, learner, greedy

    @torch.no_grad()
    def forward(self, td: TensorDictBase) -> TensorDictBase:
        mask = td.get(MASK)
        logits = self.policy_net(td.get(OBS)).reshape(mask.shape)
        logits[..., 1 - self.learner, :] = 0.0  # uniform over the opponent's legal moves
        dist = MaskedCategorical(logits=logits, mask=mask)
        action = dist.sample()
        if self.greedy:
            best = logits[..., self.learner, :].masked_fill(~mask[..., self.learner, :], -1e9)
            action[..., self.learner] = best.argmax(-1)
        td.set(ACTION, action)
        return td


def play_games(env: PettingZooWrapper, policy_net: nn.Module, games: int,
               greedy: bool = False, first: int = 0) -> tuple[TensorDict, list[float]]:
    """Play ``games`` games (learner side alternating from ``first``); return the learner's
    moves as one flat batch of transitions (``next`` = the learner's next turn, the final
    result as the reward of its last move) and the learner's result per game."""
    parts, results = [], []
    for g in range(games):
        learner = (first + g) % 2
        traj = env.rollout(MAX_STEPS, VersusRandom(policy_net, learner, greedy),
                           break_when_any_done=True)
        finished = bool(traj["next", "done"][-1])
        result = float(traj["next", GROUP, "reward"][-1, learner, 0]) if finished else 0.0
        results.append(result)
        mine = traj[ACTING][:, learner]
        k = int(mine.sum())
        obs = traj[OBS][mine, learner]
        reward = torch.zeros(k, 1)
        reward[-1] = result
        done = torch.zeros(k, 1, dtype=torch.bool)
        done[-1] = True  # a truncated game also ends the learner's trajectory
        terminated = done.clone() if finished else torch.zeros(k, 1, dtype=torch.bool)
        parts.append(TensorDict({
            "observation": obs, "action_mask": traj[MASK][mine, learner],
            "action": traj[ACTION][mine, learner],
            "next": {"observation": torch.cat([obs[1:], obs[-1:]]), "reward": reward,
                     "done": done, "terminated": terminated},
        }, batch_size=[k]))
    return torch.cat(parts), results


def build_loss(policy_net: nn.Module, value_net: nn.Module,
               gamma: float, lmbda: float) -> tuple[ClipPPOLoss, GAE]:
    """Return ClipPPOLoss over a masked categorical actor and a state-value critic, and GAE."""
    actor = ProbabilisticActor(
        TensorDictModule(policy_net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedCategorical, return_log_prob=True,
    )
    critic = ValueOperator(value_net, in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5,
                       normalize_advantage=True)
    loss.set_keys(sample_log_prob="sample_log_prob")
    return loss, GAE(gamma=gamma, lmbda=lmbda, value_network=critic)


def ppo_update(loss: ClipPPOLoss, gae: GAE, optim: torch.optim.Optimizer, batch: TensorDict,
               epochs: int, minibatch: int, generator: torch.Generator) -> dict[str, float]:
    """Add old log-probs and GAE advantages to ``batch``, then take PPO steps; return the
    mean losses."""
    with torch.no_grad():
        batch["sample_log_prob"] = loss.actor_network.get_dist(batch).log_prob(batch["action"])
        gae(batch)  # the done flags keep games apart in the flat batch
    sums: dict[str, float] = {}
    steps = 0
    for _ in range(epochs):
        for idx in torch.randperm(len(batch), generator=generator).split(minibatch):
            out = loss(batch[idx])
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optim.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
            optim.step()
            for key in ("loss_objective", "loss_critic", "loss_entropy"):
                sums[key] = sums.get(key, 0.0) + float(out[key].detach())
            steps += 1
    return {k: round(v / steps, 4) for k, v in sums.items()}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--games-per-iter", type=int, default=8)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99, help="discount per learner move")
    p.add_argument("--lmbda", type=float, default=0.95, help="GAE lambda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-games", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-moves", type=int, default=None, help="truncate games (whole turns)")
    p.add_argument("--out", default="runs/torchrl_loa.pt", help="where to save the nets")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, save and evaluate; print one line per iteration and a JSON summary last."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    env = make_env(args.seed, args.max_moves)
    policy_net, value_net = conv_net(NUM_ACTIONS), conv_net(1)
    loss, gae = build_loss(policy_net, value_net, args.gamma, args.lmbda)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(args.seed)
    history, t0 = [], time.perf_counter()
    for it in range(1, args.iterations + 1):
        batch, results = play_games(env, policy_net, args.games_per_iter,
                                    first=it * args.games_per_iter)
        losses = ppo_update(loss, gae, optim, batch, args.epochs, args.minibatch, generator)
        row = {"iteration": it, "learner_moves": len(batch),
               "mean_return": round(sum(results) / len(results), 3), **losses}
        history.append(row)
        print(json.dumps(row), flush=True)
    train_seconds = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"policy": policy_net.state_dict(), "value": value_net.state_dict()}, out)
    _, results = play_games(env, policy_net, args.eval_games, greedy=True)
    wins = sum(r > 0 for r in results)
    summary = {"iterations": args.iterations, "seed": args.seed,
               "learner_moves": sum(r["learner_moves"] for r in history),
               "train_seconds": round(train_seconds, 1), "model": str(out),
               "eval_games": len(results), "eval_wins": wins,
               "eval_losses": sum(r < 0 for r in results),
               "win_rate": wins / len(results) if results else 0.0,
               "first_return": history[0]["mean_return"] if history else None,
               "last_return": history[-1]["mean_return"] if history else None, "history": history}
    print(json.dumps({k: v for k, v in summary.items() if k != "history"}))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
