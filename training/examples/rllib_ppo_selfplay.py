"""RLlib PPO learns a boardzoo game by self-play, with action masking (Ray's new API stack).

    python -m boardzoo.training.examples.rllib_ppo_selfplay --iterations 30 --eval-games 40
    python -m boardzoo.training.examples.rllib_ppo_selfplay --vs-random 0.5 --out runs/rllib_loa

One module (``main``, :class:`~boardzoo.agents.rllib_support.MaskedPlanesModule`)
plays both seats of RLlib's ``PettingZooEnv`` around the AEC env; with
``--vs-random F`` a share F of the episodes puts a non-learning masked-random
module in one seat instead. Every training action is checked against the mask it
was chosen under (the ``illegal_actions`` column must stay 0). After training the
module is saved and played through the arena (``training.evaluate.match``: colours
alternate, two random opening moves per pair) against ``--eval-opponents``.
Needs the ``rllib`` extra: ``pip install 'boardzoo[rllib]'``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from boardzoo.agents.agent_spec import spec_list
from boardzoo.agents.rllib_support import (
    MAIN,
    RANDOM,
    MaskCheckCallback,
    MaskedPlanesModule,
    MaskedRandomModule,
    RLlibAgent,
    SeatMapping,
    register_env,
)
from boardzoo.training.evaluate import match, spec_factory


def build_config(args: argparse.Namespace) -> PPOConfig:
    """Return the PPO config: one learning module in both seats, all in this process."""
    return (
        PPOConfig()
        # The default since Ray 2.10; spelt out because the example is about this stack.
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        # RLlib's env checker steps with unmasked random actions, which PettingZoo's wrapper
        # answers with an "Illegal move" warning and a lost game: nothing to learn from it.
        .environment(register_env(args.game, args.max_moves), disable_env_checking=True)
        # No remote env runners or learners: sampling and learning share this process
        # (why: on a small machine the extra processes cost more than they give).
        .env_runners(num_env_runners=0, num_envs_per_env_runner=args.envs)
        .learners(num_learners=0)
        .multi_agent(
            policies={MAIN, RANDOM},
            policy_mapping_fn=SeatMapping(args.vs_random, RANDOM),
            policies_to_train=[MAIN],  # the random opponent never learns
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MAIN: RLModuleSpec(module_class=MaskedPlanesModule,
                               model_config={"channels": args.channels, "hidden": args.hidden}),
            RANDOM: RLModuleSpec(module_class=MaskedRandomModule),
        }))
        .training(train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=args.lr, gamma=0.99, lambda_=0.95,
                  entropy_coeff=args.entropy, vf_loss_coeff=0.5)
        .callbacks(MaskCheckCallback)
        .debugging(seed=args.seed)
    )


def evaluate(module: Any, game: str, opponent: str, games: int, seed: int) -> dict[str, Any]:
    """Play ``games`` arena games of the module's most likely legal moves against
    ``opponent`` (colours alternating); return wins, draws, losses and score."""
    result = match(game, lambda s: RLlibAgent(module, game, seed=s), spec_factory(opponent, game),
                   games, seed, names=("rllib", opponent))
    return {k: result[k] for k in ("games", "wins", "draws", "losses", "score")}


def iteration_row(i: int, result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Pick one training iteration's figures out of RLlib's result dict."""
    runs = result.get("env_runners", {})
    learner = result.get("learners", {}).get(MAIN, {})
    row = {"iteration": i, "env_steps": int(result.get("num_env_steps_sampled_lifetime", 0)),
           "episodes": int(runs.get("num_episodes_lifetime", runs.get("num_episodes", 0))),
           "episode_len": round(float(runs.get("episode_len_mean", 0.0)), 1),
           "actions_checked": int(runs.get("actions_checked", 0)),
           "illegal_actions": int(runs.get("illegal_actions", 0)),
           "policy_loss": round(float(learner.get("policy_loss", 0.0)), 4),
           "vf_loss": round(float(learner.get("vf_loss", 0.0)), 4),
           "entropy": round(float(learner.get("entropy", 0.0)), 3),
           "seconds": round(seconds, 1)}
    if f"score_vs_{RANDOM}" in runs:
        row[f"score_vs_{RANDOM}"] = round(float(runs[f"score_vs_{RANDOM}"]), 3)
    return row


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line (every option has a default that runs the benchmark)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="loa", choices=["loa", "ultima", "whistling"])
    p.add_argument("--iterations", type=int, default=30, help="PPO training iterations")
    p.add_argument("--batch", type=int, default=4000, help="env steps (both seats) per iteration")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy", type=float, default=0.01)
    p.add_argument("--envs", type=int, default=8, help="envs stepped together in this process")
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--vs-random", type=float, default=0.0,
                   help="share of training episodes against the masked-random module")
    p.add_argument("--max-moves", type=int, default=None, help="truncate training games")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-games", type=int, default=40)
    p.add_argument("--eval-opponents", default="random", help="comma-separated agent specs")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--out", default="runs/rllib_ppo", help="folder for the trained module")
    p.add_argument("--quiet", action="store_true", help="no per-iteration lines")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, save the module, evaluate in the arena; print and return a summary dict."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    started = not ray.is_initialized()
    if started:  # a small local Ray (the algorithm needs one); no dashboard
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    t0, c0 = time.perf_counter(), time.process_time()
    algo = build_config(args).build_algo()
    history = []
    try:
        for i in range(1, args.iterations + 1):
            row = iteration_row(i, algo.train(), time.perf_counter() - t0)
            history.append(row)
            if not args.quiet:
                print(json.dumps(row), flush=True)
        train_seconds, train_cpu = time.perf_counter() - t0, time.process_time() - c0
        module = algo.get_module(MAIN)
        out = Path(args.out) / MAIN
        module.save_to_path(str(out.resolve()))
    finally:
        algo.stop()
        if started:
            ray.shutdown()
    module.eval()
    evals = {spec: evaluate(module, args.game, spec.strip(), args.eval_games,
                            seed=10_000 + args.seed)
             for spec in spec_list(args.eval_opponents)}
    summary = {"game": args.game, "iterations": args.iterations, "seed": args.seed,
               "vs_random": args.vs_random,
               "env_steps": history[-1]["env_steps"] if history else 0,
               # both are running totals: the last row covers the whole run
               "illegal_actions": history[-1]["illegal_actions"] if history else 0,
               "actions_checked": history[-1]["actions_checked"] if history else 0,
               "train_seconds": round(train_seconds, 1), "train_cpu_seconds": round(train_cpu, 1),
               "module": str(out), "eval": evals, "history": history}
    print(json.dumps({k: v for k, v in summary.items() if k != "history"}))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
