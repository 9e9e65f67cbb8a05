"""The training loop: self-play, replay, gradient steps, evaluation, checkpoints, metrics.

One iteration:

1. self-play ``selfplay.games_per_iteration`` games with the latest network
   (seeds derived from ``seed`` and the iteration number);
2. add their positions to the replay buffer;
3. ``train.steps_per_iteration`` AdamW steps on symmetry-augmented batches, or
   with ``train.replay_ratio`` as many as the new positions call for (at most
   ``steps_per_iteration``; see :func:`train_step_count`) (loss = cross-entropy
   of the masked policy against the search policy + ``value_loss_weight`` x MSE
   of the value against the game outcome);
4. every ``eval.every`` iterations (and at the last one): the raw policy plays
   ``random``, the network with search plays each baseline and the previous
   best network; the best is replaced when the new one scores at least
   ``promote_threshold`` against it;
5. append rows to ``metrics.csv`` / ``eval.csv`` (and TensorBoard), then save
   ``checkpoint.pt`` (everything needed to resume), ``model.pt`` (latest
   network) and ``best.pt`` (best network) atomically.

Randomness is derived from ``(seed, iteration)`` at each step, and the torch
RNG state is saved, so a run resumed from its checkpoint makes the same games
and the same weights as one that was never stopped (with the same config).
"""

from __future__ import annotations

import copy
import csv
import functools
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardzoo.agents.arena import append_game, read_games, write_games
from boardzoo.envs.core.registry import get_spec

from .agent import NetAgent
from .batched_selfplay import play_games_batched
from .buffer import ReplayBuffer
from .checkpoint import (
    FORMAT,
    CheckpointError,
    load,
    load_initial_weights,
    model_file,
    save_atomic,
)
from .config import Config, ConfigError, dump_config, from_dict, model_differences
from .evaluate import match, spec_factory
from .network import build_net, masked_log_softmax
from .selfplay import RaySelfPlayPool, SelfPlayPool, play_games, selfplay_seed

METRICS_FIELDS = ["iteration", "elapsed_s", "cpu_s", "selfplay_s", "train_s", "eval_s", "games",
                  "positions", "games_per_hour", "positions_per_s", "avg_length",
                  "first_player_wins", "second_player_wins", "draws", "buffer", "loss",
                  "policy_loss", "value_loss"]
#: Every evaluation game, one games.jsonl record per line (``boardzoo replay``, ``report --html``).
EVAL_GAMES = "eval_games.jsonl"
EVAL_FIELDS = ["iteration", "elapsed_s", "cpu_s", "opponent", "games", "wins", "draws", "losses",
               "score", "promoted"]


def cpu_seconds() -> float:
    """CPU time of this process (all threads), in seconds (workers report their own)."""
    return time.process_time()


def config_changes(old: Config, new: Config) -> list[str]:
    """Return ``key old -> new`` for every value that differs between two configs."""

    def flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k: v})
        return out

    a, b = flat(old.to_dict()), flat(new.to_dict())
    return [f"{k} {a[k]!r} -> {b[k]!r}" for k in a if a[k] != b[k]]


def train_step_count(train: Any, new_positions: int) -> int:
    """Gradient steps of an iteration that added ``new_positions`` examples: the fixed
    ``steps_per_iteration``, or with ``replay_ratio`` > 0 ceil(replay_ratio x new_positions /
    batch_size) capped at ``steps_per_iteration`` (each new example is drawn about
    ``replay_ratio`` times in its first iteration, whatever the games' length)."""
    if train.replay_ratio <= 0:
        return train.steps_per_iteration
    return min(train.steps_per_iteration,
               math.ceil(train.replay_ratio * new_positions / train.batch_size))


class RunDirError(ConfigError):
    """An output folder that already holds a run (without --resume), or none to resume."""


def compute_loss(net: torch.nn.Module, batch: dict[str, torch.Tensor],
                 value_weight: float = 1.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return (total, policy, value) losses of a batch (see module docstring)."""
    logits, value = net(batch["obs"], batch.get("prior"), batch.get("action_prior"))
    mask = batch["mask"]
    logp = masked_log_softmax(logits, mask).masked_fill(~mask, 0.0)
    policy_loss = -(batch["policy"] * logp).sum(-1).mean()
    value_loss = torch.mean((value - batch["value"]) ** 2)
    return policy_loss + value_weight * value_loss, policy_loss, value_loss


class Trainer:
    def __init__(self, cfg: Config, out_dir: str | Path, resume: bool = False,
                 progress: bool = True, echo: bool = True, config_source: str = "") -> None:
        self.cfg = cfg
        self.out = Path(out_dir)
        if progress:
            try:
                import tqdm  # noqa: F401  (the progress bar is optional)
            except ImportError:
                progress = False
        self.progress = progress
        self.echo = echo
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        self.spec = get_spec(cfg.game)
        self.game = self.spec.actions
        #: The batched engine (selfplay.engine: batched), or None for the reference path.
        self.engine = self.spec.batched_engine() if cfg.selfplay.engine == "batched" else None
        torch.manual_seed(cfg.seed)
        self.net = build_net(cfg, self.game)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=cfg.train.lr,
                                     weight_decay=cfg.train.weight_decay)
        self.buffer = ReplayBuffer(cfg.train.buffer_size, self.game.observation_shape,
                                   self.game.num_actions, priors=cfg.model.value_prior,
                                   action_priors=cfg.model.policy_prior > 0)
        self.buffer.value_target_q = cfg.train.value_target_q
        self.syms = self.spec.all_symmetries() if cfg.train.augment else None
        self.iteration = 0
        self.elapsed = 0.0
        #: CPU seconds spent on self-play and training (evaluation excluded), over all sessions.
        self.cpu = 0.0
        self.best_state = copy.deepcopy(self.net.state_dict())
        self.best_iteration = 0
        self.last_eval: dict[str, float] = {}
        #: Gradient steps of the last call of :meth:`train_steps`.
        self.last_steps = 0
        self.ckpt_path = self.out / "checkpoint.pt"
        if resume:
            self._resume()
        else:
            if cfg.model.init_from:  # a warm start (boardzoo.training.distill), fresh runs only
                load_initial_weights(self.net, cfg)
                self.best_state = copy.deepcopy(self.net.state_dict())
            if self.ckpt_path.exists():
                raise RunDirError(f"{str(self.out)!r} already holds a training run; continue it "
                                  f"with --resume or choose another folder with --out")
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "config.yaml").write_text(
                (f"# from {config_source}\n" if config_source else "") + dump_config(cfg))
            for name, fields in (("metrics.csv", METRICS_FIELDS), ("eval.csv", EVAL_FIELDS)):
                with open(self.out / name, "w", newline="") as f:
                    csv.writer(f).writerow(fields)
        self.tb = self._tensorboard()

    # -- resume ------------------------------------------------------------------------------
    def _resume(self) -> None:
        if not self.ckpt_path.exists():
            raise RunDirError(f"nothing to resume: {str(self.ckpt_path)!r} does not exist")
        data = load(self.ckpt_path, (FORMAT,))
        try:
            saved = from_dict(data["config"])
        except ConfigError as exc:
            raise CheckpointError(f"{str(self.ckpt_path)!r} has an invalid config: {exc}") \
                from None
        if saved.game != self.cfg.game:
            raise CheckpointError(f"{str(self.ckpt_path)!r} is a run of {saved.game}; the "
                                  f"config says game {self.cfg.game}")
        if saved.model != self.cfg.model:
            raise CheckpointError(f"{str(self.ckpt_path)!r} was trained with another model: "
                                  f"{model_differences(saved.model, self.cfg.model)} "
                                  f"(run -> config)")
        try:
            self.net.load_state_dict(data["model"])
            self.opt.load_state_dict(data["optimizer"])
            self.buffer.load_state_dict(data["buffer"])
            self.best_state = data["best_model"]
            self.iteration = int(data["iteration"])
            self.elapsed = float(data["elapsed_s"])
            self.cpu = float(data.get("cpu_s", 0.0))
            self.best_iteration = int(data["best_iteration"])
            torch.set_rng_state(data["rng"]["torch"])
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else repr(exc)
            raise CheckpointError(f"{str(self.ckpt_path)!r} is damaged or does not match this "
                                  f"game ({first})") from None
        for group in self.opt.param_groups:  # a resumed run may change the learning rate
            group["lr"] = self.cfg.train.lr
            group["weight_decay"] = self.cfg.train.weight_decay
        # forget log rows written after the checkpoint (a kill between log and save)
        for name in ("metrics.csv", "eval.csv"):
            path = self.out / name
            if path.exists():
                with open(path, newline="") as f:
                    rows = list(csv.reader(f))
                keep = rows[:1] + [r for r in rows[1:] if r and int(r[0]) <= self.iteration]
                with open(path, "w", newline="") as f:
                    csv.writer(f).writerows(keep)
        changes = config_changes(saved, self.cfg)
        if changes:
            self._say("resuming with config changes: " + ", ".join(changes))
            # the run's config.yaml follows, so a later plain --resume keeps the changes
            (self.out / "config.yaml").write_text(
                f"# resumed after iteration {self.iteration} with: {', '.join(changes)}\n"
                + dump_config(self.cfg))

    def _tensorboard(self) -> Any:
        if not self.cfg.tensorboard:
            return None
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard is optional
            return None
        return SummaryWriter(str(self.out / "tb"), purge_step=self.iteration + 1)

    # -- output -----------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        if not self.echo:
            return
        if self.progress:
            from tqdm import tqdm

            tqdm.write(text)
        else:
            print(text, flush=True)

    def _append(self, name: str, fields: list[str], row: dict[str, Any]) -> None:
        with open(self.out / name, "a", newline="") as f:
            csv.DictWriter(f, fields).writerow(
                {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})

    # -- phases -----------------------------------------------------------------------------
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
        self.net.train()
        totals = np.zeros(3)
        self.last_steps = steps
        for _ in range(steps):
            batch = self.buffer.sample(t.batch_size, rng, self.syms)
            loss, pl, vl = compute_loss(self.net, batch, t.value_loss_weight)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            totals += (loss.item(), pl.item(), vl.item())
        self.net.eval()
        mean = totals / steps
        return {"loss": mean[0], "policy_loss": mean[1], "value_loss": mean[2]}

    def _net_agent(self, state_dict: dict[str, torch.Tensor], sims: int, seed: int):
        net = build_net(self.cfg, self.game)
        net.load_state_dict(state_dict)
        net.eval()
        return NetAgent(self.cfg.game, net, self.cfg, sims, seed)

    def _drop_eval_games_from(self, iteration: int) -> None:
        """Remove the games of ``iteration`` and later from eval_games.jsonl (a run killed
        during an evaluation plays it again on resume: no game is kept twice)."""
        path = self.out / EVAL_GAMES
        games = read_games(path, repair=True)  # the arena's reader cuts off a torn last line
        keep = [g for g in games if g.get("iteration", 0) < iteration]
        if len(keep) != len(games):
            write_games(path, keep)

    def _keep_eval_game(self, iteration: int, record: dict[str, Any]) -> None:
        """Append one evaluation game to the run's eval_games.jsonl (ids unique per run)."""
        record = {**record, "id": f"it{iteration}:{record['id']}", "iteration": iteration}
        append_game(self.out / EVAL_GAMES, record)

    def evaluate(self, iteration: int) -> tuple[list[dict[str, Any]], bool]:
        e, game = self.cfg.eval, self.cfg.game
        cap = (self.cfg.selfplay.max_moves if e.max_moves < 0
               else e.max_moves if e.max_moves > 0 else None)
        om = e.opening_moves
        latest = copy.deepcopy(self.net.state_dict())
        rows: list[dict[str, Any]] = []
        seed = self.cfg.seed * 100003 + iteration
        if e.games == 0:
            return rows, True  # nothing to gate on: the latest network counts as the best
        net = f"net@{iteration}"
        self._drop_eval_games_from(iteration)
        # every evaluation game goes to eval_games.jsonl (boardzoo replay / report --html)
        keep = functools.partial(self._keep_eval_game, iteration)
        if e.raw_vs_random:
            r = match(game, lambda s: self._net_agent(latest, 0, s), spec_factory("random", game),
                      e.games, seed, cap, om, (f"{net},sims=0", "random"), keep)
            rows.append({"opponent": "raw_policy_vs_random", **r})
        for spec in e.baselines:
            r = match(game, lambda s: self._net_agent(latest, e.simulations, s),
                      spec_factory(spec, game), e.games, seed, cap, om, (net, spec), keep)
            rows.append({"opponent": spec, **r})
        promoted = not e.vs_best  # without a gate the latest network is the best
        if e.vs_best:
            r = match(game, lambda s: self._net_agent(latest, e.simulations, s),
                      lambda s: self._net_agent(self.best_state, e.simulations, s),
                      e.games, seed, cap, om, (net, f"net@{self.best_iteration} (best)"), keep)
            promoted = r["score"] >= e.promote_threshold
            rows.append({"opponent": f"best(iter {self.best_iteration})", **r})
        return rows, promoted

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        if self.iteration >= cfg.iterations:
            self._say(f"run already complete: {self.iteration}/{cfg.iterations} iterations")
            return self.summary()
        pool = (RaySelfPlayPool(cfg) if cfg.selfplay.backend == "ray"
                else SelfPlayPool(cfg) if cfg.selfplay.workers > 1 else None)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=cfg.iterations, initial=self.iteration, desc=f"train {cfg.game}",
                       unit="iter", dynamic_ncols=True)
        session_start = time.perf_counter()
        elapsed_before = self.elapsed
        try:
            while self.iteration < cfg.iterations:
                it = self.iteration + 1
                t0 = time.perf_counter()
                c0 = cpu_seconds() + (pool.cpu if pool is not None else 0.0)
                seeds = [selfplay_seed(cfg.seed, it, g)
                         for g in range(cfg.selfplay.games_per_iteration)]
                if bar is not None:
                    bar.set_postfix_str(f"iter {it}: self-play {len(seeds)} games")
                records = (pool.play(self.net, seeds) if pool is not None
                           else play_games(self.net, self.game, cfg, seeds)
                           if self.engine is None
                           else play_games_batched(self.net, self.engine, cfg, seeds))
                t1 = time.perf_counter()
                for rec in records:
                    self.buffer.add_game(rec)
                positions = sum(len(r.obs) for r in records)
                if bar is not None:
                    bar.set_postfix_str(f"iter {it}: training")
                losses = self.train_steps(it, positions)
                t2 = time.perf_counter()
                self.cpu += cpu_seconds() + (pool.cpu if pool is not None else 0.0) - c0
                self.elapsed = elapsed_before + (t2 - session_start)
                over_time = (cfg.time_limit_minutes > 0
                             and self.elapsed >= cfg.time_limit_minutes * 60)
                last = it == cfg.iterations or over_time
                rows: list[dict[str, Any]] = []
                promoted = not cfg.eval.vs_best
                if (cfg.eval.every > 0 and it % cfg.eval.every == 0) or last:
                    if bar is not None:
                        bar.set_postfix_str(f"iter {it}: evaluating")
                    rows, promoted = self.evaluate(it)
                t3 = time.perf_counter()
                if promoted:
                    self.best_state = copy.deepcopy(self.net.state_dict())
                    self.best_iteration = it
                self.iteration = it
                self.elapsed = elapsed_before + (t3 - session_start)
                actions = sum(r.length for r in records)
                wins0 = sum(1 for r in records if r.outcome > 0 and not r.capped)
                wins1 = sum(1 for r in records if r.outcome < 0 and not r.capped)
                sp = max(t1 - t0, 1e-9)
                metrics = {"iteration": it, "elapsed_s": self.elapsed, "cpu_s": self.cpu,
                           "selfplay_s": t1 - t0,
                           "train_s": t2 - t1, "eval_s": t3 - t2, "games": len(records),
                           "positions": positions, "games_per_hour": len(records) / sp * 3600,
                           "positions_per_s": positions / sp,
                           "avg_length": actions / max(len(records), 1),
                           "first_player_wins": wins0, "second_player_wins": wins1,
                           "draws": len(records) - wins0 - wins1, "buffer": len(self.buffer),
                           **losses}
                self._append("metrics.csv", METRICS_FIELDS, metrics)
                for r in rows:
                    self._append("eval.csv", EVAL_FIELDS,
                                 {"iteration": it, "elapsed_s": self.elapsed, "cpu_s": self.cpu,
                                  "opponent":
                                  r["opponent"], "games": r["games"], "wins": r["wins"],
                                  "draws": r["draws"], "losses": r["losses"],
                                  "score": r["score"],
                                  "promoted": int(promoted) if r["opponent"].startswith("best")
                                  else ""})
                self._log_tb(metrics, rows)
                self.save()
                self._report(metrics, rows, promoted, actions - positions)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix_str(f"loss {losses['loss']:.3f}, "
                                        f"{metrics['games_per_hour']:.0f} games/h")
                if over_time and it < cfg.iterations:
                    self._say(f"time limit of {cfg.time_limit_minutes:g} min reached after "
                              f"iteration {it}")
                    break
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
                bar = None
            self._say(f"interrupted; the last checkpoint is iteration {self.iteration} in "
                      f"{str(self.ckpt_path)!r}: continue with --resume")
            raise
        finally:
            if bar is not None:
                bar.close()
            if pool is not None:
                pool.close()
            if self.tb is not None:
                self.tb.close()
        return self.summary()

    def _report(self, m: dict[str, Any], rows: list[dict[str, Any]], promoted: bool,
                forced: int = 0) -> None:
        extra = f", {forced} forced" if forced else ""
        steps = f", {self.last_steps} steps" if self.cfg.train.replay_ratio > 0 else ""
        text = (f"iter {m['iteration']}/{self.cfg.iterations}: {m['games']} games "
                f"(avg {m['avg_length']:.0f} actions{extra}, {m['games_per_hour']:.0f} games/h), "
                f"loss {m['loss']:.3f} (policy {m['policy_loss']:.3f}, "
                f"value {m['value_loss']:.3f}){steps}, {m['elapsed_s'] / 60:.1f} min")
        if rows:
            parts = [f"{r['opponent']} {r['wins']}-{r['draws']}-{r['losses']}" for r in rows]
            text += "\n  eval (W-D-L): " + ", ".join(parts)
            if self.cfg.eval.vs_best:
                text += " -> new best" if promoted else " -> best kept"
        self._say(text)

    def _log_tb(self, m: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        if self.tb is None:
            return
        it = m["iteration"]
        for k in ("loss", "policy_loss", "value_loss", "games_per_hour", "avg_length"):
            if isinstance(m[k], float) and not math.isnan(m[k]):
                self.tb.add_scalar(f"train/{k}", m[k], it)
        for r in rows:
            self.tb.add_scalar(f"eval/{r['opponent']}", r["score"], it)
        self.tb.flush()

    # -- checkpoints ------------------------------------------------------------------------
    def save(self) -> None:
        cfg_dict = self.cfg.to_dict()
        save_atomic({
            "format": FORMAT, "game": self.cfg.game, "config": cfg_dict,
            "iteration": self.iteration, "elapsed_s": self.elapsed, "cpu_s": self.cpu,
            "model": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "best_model": self.best_state, "best_iteration": self.best_iteration,
            "buffer": self.buffer.state_dict(),
            "rng": {"torch": torch.get_rng_state()},
        }, self.ckpt_path)
        shape, n = self.game.observation_shape, self.game.num_actions
        note = f"{self.cfg.game} run {self.out.name}"
        save_atomic(model_file(self.cfg.game, cfg_dict, shape, n, self.net.state_dict(),
                               f"{note}, iteration {self.iteration}"), self.out / "model.pt")
        save_atomic(model_file(self.cfg.game, cfg_dict, shape, n, self.best_state,
                               f"{note}, best = iteration {self.best_iteration}"),
                    self.out / "best.pt")

    def summary(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "elapsed_s": self.elapsed,
                "best_iteration": self.best_iteration, "buffer": len(self.buffer),
                "out": str(self.out)}
