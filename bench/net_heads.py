"""Policy heads and trunk grids on the same data: held-out losses and CPU cost per evaluation.

Usage: python bench/net_heads.py --game ultima [--variants conv,bilinear] [--positions 3000]
       [--heldout 500] [--steps 400] [--batch 64] [--keep 1] [--seed 0] [--cache DATA.npz]
Variants: ``conv`` (the game's shipped config: conv policy head), ``bilinear``
(``model.policy_head=bilinear``), each optionally ``/axial`` (Whistling:
``model.internal_grid=true``). The data are teacher positions of
:mod:`boardzoo.training.distill` (one-ply static-evaluation scores; policy
target softmax(score / 0.25), value target tanh(eval / scale), each position
kept with probability ``--keep``): ``--positions`` for training from seed
``--seed`` and ``--heldout`` from other games (seed ``--seed + 1``), cached in
``--cache`` so several invocations share them (``--variants none``: only make
the data). Every variant starts from ``torch.manual_seed(0)`` and takes
``--steps`` AdamW steps of the trainer's loss (the config's lr, augmentation)
on batches of ``--batch``. Measured without augmentation: held-out policy loss,
value loss and top-1 agreement (the net's most likely legal action is one of
the teacher's best) every ``--eval-every`` steps and at the end, the same on as
many training positions at the end (overfitting?), and each variant's CPU time
per forward pass of a batch of 32 (one torch thread, median of 40 rounds in
which the variants take turns). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from boardzoo.envs.core.registry import action_game
from boardzoo.training.config import Config, load_config
from boardzoo.training.distill import TeacherData, distill, teacher_positions
from boardzoo.training.network import build_net
from boardzoo.training.trainer import compute_loss

REPO = Path(__file__).resolve().parent.parent


def variant_config(game: str, variant: str) -> Config:
    """Return the shipped config of ``game`` changed as ``variant`` names."""
    head, *rest = variant.split("/")
    sets = [f"model.policy_head={head}"]
    if "axial" in rest:
        sets.append("model.internal_grid=true")
    return load_config(REPO / "configs" / f"{game}.yaml", sets)


def save_data(path: Path, parts: dict[str, TeacherData]) -> None:
    """Write teacher data sets to one npz file."""
    arrays = {}
    for name, d in parts.items():
        arrays[f"{name}_obs"] = np.stack(d.obs).astype(np.float16)
        arrays[f"{name}_len"] = np.array([len(a) for a in d.actions])
        arrays[f"{name}_actions"] = np.concatenate(d.actions)
        arrays[f"{name}_probs"] = np.concatenate(d.probs)
        arrays[f"{name}_values"] = np.array(d.values, np.float32)
        arrays[f"{name}_priors"] = np.array(d.priors, np.float32)
        arrays[f"{name}_games"] = np.array(d.games)
    np.savez_compressed(path, **arrays)


def load_data(path: Path, name: str) -> TeacherData:
    """Read one teacher data set written by :func:`save_data`."""
    z = np.load(path)
    offsets = np.concatenate([[0], np.cumsum(z[f"{name}_len"])])
    actions, probs = z[f"{name}_actions"], z[f"{name}_probs"]
    d = TeacherData(obs=list(z[f"{name}_obs"].astype(np.float32)),
                    actions=[actions[a:b] for a, b in zip(offsets, offsets[1:], strict=False)],
                    probs=[probs[a:b] for a, b in zip(offsets, offsets[1:], strict=False)],
                    values=z[f"{name}_values"].tolist(), priors=z[f"{name}_priors"].tolist(),
                    games=int(z[f"{name}_games"]))
    return d


def batch_of(game, data: TeacherData, idx: np.ndarray) -> dict[str, torch.Tensor]:
    """Return the trainer's batch dict for positions ``idx`` (no augmentation)."""
    n = game.num_actions
    policy = np.zeros((len(idx), n), np.float32)
    mask = np.zeros((len(idx), n), bool)
    for b, i in enumerate(idx):
        policy[b, data.actions[i]] = data.probs[i]
        mask[b, data.actions[i]] = True
    return {"obs": torch.from_numpy(np.stack([data.obs[i] for i in idx])),
            "policy": torch.from_numpy(policy), "mask": torch.from_numpy(mask),
            "value": torch.tensor([data.values[i] for i in idx])}


def heldout_losses(net: torch.nn.Module, game, data: TeacherData) -> tuple[float, float, float]:
    """Return ``net``'s mean policy loss, value loss and top-1 agreement (its most likely legal
    action is one of the teacher's best) over all of ``data``."""
    net.eval()
    total = np.zeros(3)
    with torch.no_grad():
        for start in range(0, len(data), 64):
            idx = np.arange(start, min(start + 64, len(data)))
            batch = batch_of(game, data, idx)
            _, pl, vl = compute_loss(net, batch)
            logits, _ = net(batch["obs"])
            pick = logits.masked_fill(~batch["mask"], float("-inf")).argmax(1)
            target = batch["policy"]
            hit = target.gather(1, pick[:, None])[:, 0] >= target.max(1).values - 1e-6
            total += np.array([pl.item() * len(idx), vl.item() * len(idx), hit.sum().item()])
    return tuple(float(x / len(data)) for x in total)  # type: ignore[return-value]


def reference_losses(data: TeacherData) -> dict[str, float]:
    """Return the floor (target entropy), uniform-policy and zero-value losses, and the top-1
    agreement of a uniformly random legal action."""
    entropy = np.mean([-(p[p > 0] * np.log(p[p > 0])).sum() for p in data.probs])
    uniform = np.mean([np.log(len(p)) for p in data.probs])
    top1 = np.mean([np.mean(p >= p.max() - 1e-6) for p in data.probs])
    return {"policy_entropy_floor": round(float(entropy), 4),
            "policy_uniform": round(float(uniform), 4), "top1_random": round(float(top1), 4),
            "value_zero": round(float(np.mean(np.square(data.values))), 4)}


def cpu_ms_per_batch(nets: dict[str, torch.nn.Module], data: TeacherData,
                     rounds: int = 40) -> dict[str, float]:
    """Return each network's median CPU milliseconds per forward pass on 32 held-out
    positions, the networks taking turns every round (so load changes hit them alike)."""
    obs = torch.from_numpy(np.stack(data.obs[:32]))
    times: dict[str, list[float]] = {name: [] for name in nets}
    with torch.inference_mode():
        for net in nets.values():
            net.eval()
            net(obs)
        for _ in range(rounds):
            for name, net in nets.items():
                t = time.process_time()
                net(obs)
                times[name].append(time.process_time() - t)
    return {name: round(float(np.median(v) * 1000), 2) for name, v in times.items()}


def main() -> None:
    """Run the comparison and print the JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", required=True, choices=("ultima", "whistling"))
    ap.add_argument("--variants", default="conv,bilinear")
    ap.add_argument("--positions", type=int, default=3000)
    ap.add_argument("--heldout", type=int, default=500)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--keep", type=float, default=1.0)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="", help="npz file of the data (made if missing)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    game = action_game(args.game)
    base = load_config(REPO / "configs" / f"{args.game}.yaml")
    cache = Path(args.cache) if args.cache else None
    t0 = time.process_time()
    if cache is not None and cache.exists():
        train, held = load_data(cache, "train"), load_data(cache, "held")
        if len(train) != args.positions or len(held) != args.heldout:
            raise SystemExit(f"{cache} holds {len(train)} + {len(held)} positions, not "
                             f"{args.positions} + {args.heldout}")
    else:
        train = teacher_positions(base, args.positions, args.seed, keep=args.keep)
        held = teacher_positions(base, args.heldout, args.seed + 1, keep=args.keep)
        if cache is not None:
            save_data(cache, {"train": train, "held": held})
    data_s = time.process_time() - t0
    print(f"data: {len(train)} + {len(held)} positions ({train.games} + {held.games} games), "
          f"{data_s:.0f} CPU s", flush=True)
    results = {}
    nets = {}
    k = min(len(train), len(held))  # the same measure on training positions: overfitting?
    seen = TeacherData(train.obs[:k], train.actions[:k], train.probs[:k], train.values[:k],
                       train.priors[:k])
    for variant in [v for v in args.variants.split(",") if v != "none"]:
        cfg = variant_config(args.game, variant)
        cfg.train.batch_size = args.batch
        torch.manual_seed(0)
        net = build_net(cfg, game)
        curve: list[list[float]] = []
        paused = [0.0]  # CPU seconds spent measuring in the middle of training

        def report(step: int, net: torch.nn.Module, curve=curve, paused=paused) -> None:
            t = time.process_time()
            curve.append([step, *(round(x, 4) for x in heldout_losses(net, game, held))])
            paused[0] += time.process_time() - t

        t = time.process_time()
        net, _ = distill(cfg, train, args.steps, seed=args.seed, net=net,
                         every=args.eval_every, report=report)
        train_s = time.process_time() - t - paused[0]
        pl, vl, top1 = heldout_losses(net, game, held)
        curve.append([args.steps, round(pl, 4), round(vl, 4), round(top1, 4)])
        row = {"heldout_policy_loss": round(pl, 4), "heldout_value_loss": round(vl, 5),
               "heldout_top1": round(top1, 4),
               "heldout_curve": curve,
               "train_subset_losses": [round(x, 4) for x in heldout_losses(net, game, seen)],
               "train_cpu_s": round(train_s, 1),
               "parameters": sum(p.numel() for p in net.parameters())}
        results[variant] = row
        nets[variant] = net
        print(variant, row, flush=True)
    for variant, ms in cpu_ms_per_batch(nets, held).items():
        results[variant]["cpu_ms_per_eval_batch32"] = ms
    print(json.dumps({"game": args.game, "positions": len(train), "heldout": len(held),
                      "games": [train.games, held.games], "steps": args.steps,
                      "batch": args.batch, "keep": args.keep, "seed": args.seed,
                      "data_cpu_s": round(data_s, 1), "reference": reference_losses(held),
                      "variants": results}))


if __name__ == "__main__":
    main()
