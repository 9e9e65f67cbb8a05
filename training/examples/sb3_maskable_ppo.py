"""MaskablePPO (sb3-contrib) learns Lines of Action against a boardzoo agent.

    python -m boardzoo.training.examples.sb3_maskable_ppo --timesteps 80000 --eval-games 200
    python -m boardzoo.training.examples.sb3_maskable_ppo --opponent mcts:20 --out runs/ppo_loa.zip
    python -m boardzoo.training.examples.sb3_maskable_ppo --self-play --timesteps 120000

The learner is a :class:`~boardzoo.agents.single_agent.SingleAgentEnv` (colours
alternate per episode); the policy sees the 8x8x5 planes through a small conv
net (``--policy cnn``) or flattened (``--policy mlp``) and samples only legal
moves (``action_masks``). After training it saves the model and plays
``--eval-games`` games against ``--eval-opponent`` with the greedy policy.

``--self-play``: the opponent of all but ``--random-envs`` of the envs is a frozen copy of
the learner (sampling its moves), refreshed with the learner's weights every
``--refresh`` rollouts; the other envs keep ``--opponent`` as an anchor, so the learner
does not forget how to beat it while it chases its own past self.

Needs the ``sb3`` extra: ``pip install 'boardzoo[sb3]'``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv

from boardzoo.agents.policy import PolicyAgent
from boardzoo.agents.sb3_policy import PlanesCNN  # importable, so saved models load anywhere
from boardzoo.agents.single_agent import SingleAgentEnv


class FrozenOpponent:
    """The learner's past self as an opponent: a copy of its policy whose weights
    :meth:`refresh` replaces with the learner's current ones (every env shares this copy)."""

    def __init__(self) -> None:
        self.policy: Any = None  # set by attach(), once the learner exists
        self.refreshes = 0

    def attach(self, model: MaskablePPO) -> None:
        """Start as a copy of ``model``'s (untrained) policy."""
        self.policy = copy.deepcopy(model.policy)
        self.policy.set_training_mode(False)

    def refresh(self, model: MaskablePPO) -> None:
        """Copy ``model``'s current weights into the frozen policy."""
        self.policy.load_state_dict(model.policy.state_dict())
        self.refreshes += 1

    def predict(self, obs: Any, action_masks: Any = None, deterministic: bool = False) -> Any:
        """SB3's ``predict``, by the frozen policy (sampled: varied games)."""
        return self.policy.predict(obs, action_masks=action_masks, deterministic=deterministic)


class RefreshEvery(BaseCallback):
    """Refresh the frozen opponent with the learner's weights every ``rollouts`` rollouts."""

    def __init__(self, frozen: FrozenOpponent, rollouts: int) -> None:
        super().__init__()
        self.frozen, self.every, self.rollouts = frozen, rollouts, 0

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        if self.rollouts % self.every == 0:
            self.frozen.refresh(self.model)


def build_model(game: str, opponent: str, seed: int, n_envs: int, policy: str,
                max_moves: int | None = None,
                frozen: FrozenOpponent | None = None, random_envs: int = 0) -> MaskablePPO:
    """Return an untrained MaskablePPO on ``n_envs`` single-agent envs of ``game``; with
    ``frozen``, all but ``random_envs`` of them play it instead of ``opponent``."""
    if frozen is None:
        venv = make_vec_env(lambda: SingleAgentEnv(game, opponent, max_moves=max_moves),
                            n_envs=n_envs, seed=seed)
    else:
        def make(i: int) -> Any:
            return lambda: SingleAgentEnv(
                game, opponent if i < random_envs else PolicyAgent(frozen, game, False),
                max_moves=max_moves)
        venv = DummyVecEnv([make(i) for i in range(n_envs)])
        venv.seed(seed)
    kwargs: dict[str, Any] = {"net_arch": [128, 128]}
    if policy == "cnn":
        kwargs = {"features_extractor_class": PlanesCNN, "net_arch": [64]}
    elif policy != "mlp":
        raise ValueError(f"policy must be 'mlp' or 'cnn', got {policy!r}")
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=256, n_epochs=4,
                        learning_rate=3e-4, gamma=0.99, ent_coef=0.01, seed=seed,
                        policy_kwargs=kwargs, verbose=0, device="cpu")
    if frozen is not None:
        frozen.attach(model)
    return model


def evaluate(model: MaskablePPO, game: str, opponent: str, games: int, seed: int,
             max_moves: int | None = None) -> dict[str, Any]:
    """Play ``games`` games (colours alternating) with the model's most likely legal moves."""
    env = SingleAgentEnv(game, opponent, seed=seed, max_moves=max_moves)
    wins = draws = losses = 0
    for _ in range(games):
        obs, _info = env.reset()
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, reward, terminated, truncated, _info = env.step(int(action))
            done = terminated or truncated
        wins += reward > 0
        draws += reward == 0
        losses += reward < 0
    return {"games": games, "wins": wins, "draws": draws, "losses": losses,
            "win_rate": wins / games if games else 0.0}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="loa", choices=["loa", "ultima", "whistling"])
    p.add_argument("--opponent", default="random", help="boardzoo agent spec to train against")
    p.add_argument("--timesteps", type=int, default=80_000, help="learner steps to train")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--policy", default="cnn", choices=["cnn", "mlp"])
    p.add_argument("--max-moves", type=int, default=None, help="truncate games (whole turns)")
    p.add_argument("--eval-games", type=int, default=100)
    p.add_argument("--eval-opponent", default="random")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (1 is fastest for these small nets)")
    p.add_argument("--out", default="runs/sb3_maskable_ppo.zip", help="where to save the model")
    p.add_argument("--self-play", action="store_true",
                   help="play a frozen copy of the learner in all but --random-envs envs")
    p.add_argument("--refresh", type=int, default=4,
                   help="self-play: rollouts between refreshes of the frozen copy")
    p.add_argument("--random-envs", type=int, default=2,
                   help="self-play: envs that keep --opponent as the opponent")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, save, evaluate; print and return a summary dict."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    t0, c0 = time.perf_counter(), time.process_time()
    if args.self_play and not (args.refresh >= 1 and 0 <= args.random_envs <= args.n_envs):
        raise SystemExit("--refresh must be >= 1 and --random-envs between 0 and --n-envs")
    frozen = FrozenOpponent() if args.self_play else None
    model = build_model(args.game, args.opponent, args.seed, args.n_envs, args.policy,
                        args.max_moves, frozen, args.random_envs)
    model.learn(total_timesteps=args.timesteps,
                callback=RefreshEvery(frozen, args.refresh) if frozen else None)
    train_seconds, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    result = evaluate(model, args.game, args.eval_opponent, args.eval_games,
                      seed=10_000 + args.seed, max_moves=args.max_moves)
    summary = {"game": args.game, "opponent": args.opponent, "policy": args.policy,
               "timesteps": model.num_timesteps, "seed": args.seed,
               "train_seconds": round(train_seconds, 1),
               "train_cpu_seconds": round(train_cpu, 1), "model": str(out),
               "eval_opponent": args.eval_opponent, **result}
    if frozen is not None:
        summary["self_play"] = {"refreshes": frozen.refreshes, "refresh_every": args.refresh,
                                "random_envs": args.random_envs}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
