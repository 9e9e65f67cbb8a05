"""CPU cost of the network's inference in self-play, by batch size, trunk chunking and option.

Usage: python bench/net_inference.py --game whistling [--config FILE] [--batches 8,16,32]
       [--chunks 4,8,16] [--rounds 30] [--threads 1] [--options no_grad,fold,channels_last,bf16]
       [--compile]

The network is the config's (``configs/<game>.yaml`` by default), seeded, with every
weight and batch-norm statistic moved off its fresh value (a fresh network with priors
is exactly its priors: its heads read nothing of the trunk), evaluated as self-play's
:class:`~boardzoo.training.selfplay.NetEvaluator` calls it (``forward_at`` on the legal
actions, inference mode, the priors the network takes) on positions of random games.
For each batch size the variants take turns for ``--rounds`` rounds, and each one's
median CPU time per call is printed, with whether its logits and values are bit for bit
those of ``whole`` and the largest difference. Variants:

* ``whole``: the batch through the trunk in one call (the reference);
* ``default``: as the network runs it (chunks of at most ``trunk_rows`` rows,
  :data:`~boardzoo.training.network.TRUNK_CHUNK_BYTES`);
* ``chunks:N``: near-equal chunks of at most N rows (``--chunks``);
* ``no_grad``: ``torch.no_grad`` instead of ``torch.inference_mode``;
* ``fold``: batch norm folded into the convolutions
  (:func:`fold_batchnorm`);
* ``channels_last``: weights in channels-last memory format;
* ``bf16``: CPU autocast to bfloat16;
* ``compile``: ``torch.compile`` of the default network (``--compile``; its first
  call's compile time is printed too).

The last line printed is one JSON object (per batch size and variant: ms per call,
us per position, bit-identical, max difference).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

from boardzoo.envs.core.registry import action_game
from boardzoo.training.config import load_config
from boardzoo.training.knowledge import Knowledge
from boardzoo.training.network import PolicyValueNet, ResBlock, build_net

REPO = Path(__file__).resolve().parent.parent

Outputs = tuple[torch.Tensor, torch.Tensor]


def fold_batchnorm(net: PolicyValueNet) -> PolicyValueNet:
    """Return an eval-mode copy of ``net`` whose batch norms are folded into the
    convolutions before them (their running statistics and affine weights scale each
    output channel and give it a bias), for inference only. Its outputs equal ``net``'s
    in eval mode up to float32 rounding, not bit for bit (``bench/net_inference.py``)."""
    folded = copy.deepcopy(net).eval()
    for module in list(folded.modules()):
        if isinstance(module, nn.Sequential):
            for i in range(len(module) - 1):
                if isinstance(module[i], nn.Conv2d) and isinstance(module[i + 1],
                                                                   nn.BatchNorm2d):
                    module[i] = fuse_conv_bn_eval(module[i], module[i + 1])
                    module[i + 1] = nn.Identity()
        elif isinstance(module, ResBlock):
            module.conv1 = fuse_conv_bn_eval(module.conv1, module.bn1)
            module.conv2 = fuse_conv_bn_eval(module.conv2, module.bn2)
            module.bn1, module.bn2 = nn.Identity(), nn.Identity()
    return folded


def perturbed_net(cfg, game) -> PolicyValueNet:
    """Return the config's network, seeded, every parameter and statistic moved."""
    torch.manual_seed(cfg.seed)
    net = build_net(cfg, game)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.1)
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return net.eval()


def random_states(game, count: int, seed: int) -> list:
    """Return ``count`` positions of random games (restarted when one ends)."""
    rng = np.random.default_rng(seed)
    states, s = [], game.initial_state()
    while len(states) < count:
        if game.is_terminal(s):
            s = game.initial_state()
        states.append(s)
        s, _ = game.apply_action(s, int(rng.choice(game.legal_actions(s))))
    return states


def call_of(net: torch.nn.Module, game, states: list, knowledge: Knowledge,
            ) -> Callable[[torch.nn.Module, Callable], Outputs]:
    """Return ``run(net, mode)``: the evaluator's call on ``states`` under ``mode``."""
    legal = [np.asarray(game.legal_actions(s), np.int64) for s in states]
    rows = torch.from_numpy(np.repeat(np.arange(len(states)), [len(a) for a in legal]))
    actions = torch.from_numpy(np.concatenate(legal))
    obs = torch.from_numpy(np.stack([game.observation(s, game.to_move(s)) for s in states]))
    priors = Knowledge.inputs(*knowledge.reference(states))

    def run(model: torch.nn.Module, mode: Callable) -> Outputs:
        with mode():
            logits, values = model.forward_at(obs, rows, actions, **priors)
        return logits.float(), values.float()
    return run


def variants(net: PolicyValueNet, batch: int, chunks: list[int], options: list[str],
             compiled: torch.nn.Module | None) -> dict[str, tuple[torch.nn.Module, Callable]]:
    """Return the variants measured at ``batch``: name -> (network, mode)."""
    def rows(n: int) -> PolicyValueNet:
        v = copy.deepcopy(net)
        v.trunk_rows = n
        return v
    out = {"whole": (rows(batch), torch.inference_mode),
           "default": (net, torch.inference_mode)}
    out.update({f"chunks:{n}": (rows(n), torch.inference_mode) for n in chunks if n < batch})
    if "no_grad" in options:
        out["no_grad"] = (net, torch.no_grad)
    if "fold" in options:
        out["fold"] = (fold_batchnorm(net), torch.inference_mode)
    if "channels_last" in options:
        out["channels_last"] = (copy.deepcopy(net).to(memory_format=torch.channels_last),
                                torch.inference_mode)
    if "bf16" in options:
        out["bf16"] = (net, lambda: _bf16())
    if compiled is not None:
        out["compile"] = (compiled, torch.inference_mode)
    return out


@contextlib.contextmanager
def _bf16():
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        yield


def measure(run, table: dict[str, tuple[torch.nn.Module, Callable]], rounds: int,
            ) -> dict[str, list[float]]:
    """Return each variant's CPU seconds per call over ``rounds`` rounds (taking turns)."""
    times: dict[str, list[float]] = {k: [] for k in table}
    for _ in range(rounds):
        for name, (model, mode) in table.items():
            c = time.process_time()
            run(model, mode)
            times[name].append(time.process_time() - c)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="ultima")
    parser.add_argument("--config", default=None)
    parser.add_argument("--batches", default="8,16,32")
    parser.add_argument("--chunks", default="")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--options", default="no_grad,fold,channels_last,bf16")
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = load_config(args.config or REPO / "configs" / f"{args.game}.yaml", [])
    game = action_game(cfg.game)
    net = perturbed_net(cfg, game)
    knowledge = Knowledge.for_net(net)
    batches = [int(b) for b in args.batches.split(",")]
    chunks = [int(n) for n in args.chunks.split(",") if n]
    options = [o for o in args.options.split(",") if o]
    states = random_states(game, max(batches), cfg.seed)
    compiled, compile_s = None, None
    if args.compile:
        # forward_at is what self-play calls; shapes vary with the legal actions' count
        compiled = copy.copy(net)
        compiled.forward_at = torch.compile(net.forward_at, dynamic=True)
        c = time.process_time()
        call_of(net, game, states[:batches[0]], knowledge)(compiled, torch.inference_mode)
        compile_s = round(time.process_time() - c, 1)  # (CPU of this process only)
        print(f"torch.compile: first call {compile_s} CPU s", flush=True)
    result: dict[str, dict] = {}
    for batch in batches:
        run = call_of(net, game, states[:batch], knowledge)
        table = variants(net, batch, chunks, options, compiled)
        ref = run(table["whole"][0], torch.inference_mode)
        times = measure(run, table, args.rounds)
        result[str(batch)] = {}
        for name, (model, mode) in table.items():
            out = run(model, mode)
            same = all(torch.equal(a, b) for a, b in zip(ref, out, strict=True))
            diff = max(float((a - b).abs().max()) for a, b in zip(ref, out, strict=True))
            ms = statistics.median(times[name]) * 1e3
            result[str(batch)][name] = {"ms": round(ms, 3), "us_per_position":
                                        round(ms * 1e3 / batch, 1), "identical": same,
                                        "max_diff": diff}
            print(f"batch {batch:4d} {name:14s} {ms:8.3f} ms/call {ms * 1e3 / batch:8.1f} "
                  f"us/position  identical={same} max_diff={diff:.2e}", flush=True)
    print(json.dumps({"game": cfg.game, "threads": args.threads, "rounds": args.rounds,
                      "trunk_rows": net.trunk_rows, "compile_cpu_s": compile_s,
                      "batches": result}))


if __name__ == "__main__":
    main()
