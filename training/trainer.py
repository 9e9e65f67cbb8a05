"""The training loop: self-play, replay, gradient steps, evaluation, checkpoints, metrics.

One iteration:

1. self-play ``selfplay.games_per_iteration`` games with the latest network
   (seeds derived from ``seed`` and the iteration number);
2. add their positions to the replay buffer;
3. ``train.steps_per_iteration`` AdamW steps on symmetry-augmented batches, or
   with ``train.replay_ratio`` as many as the new positions call for (at most
   ``steps_per_iteration``; see :func:`train_step_count`) (the loss of
   :func:`compute_loss`: the policy's cross-entropy against the search policy,
   the value's MSE against the game outcome, the pull toward the action prior);
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
import time
from pathlib import Path
from typing import Any

import torch

from boardzoo.envs.core.registry import get_spec

from .backends import make_backend
from .checkpoint import (
    FORMAT,
    CheckpointError,
    load,
    load_initial_weights,
    model_file,
    save_atomic,
)
from .config import Config, ConfigError, from_saved, model_differences
from .evaluate import Evaluator
from .learner import Learner, compute_loss, train_step_count
from .rundir import EVAL_GAMES, METRICS_FIELDS, RunDir, RunDirError, TensorBoardLog
from .selfplay import selfplay_seed

__all__ = ["EVAL_GAMES", "RunDirError", "Trainer", "compute_loss", "config_changes",
           "train_step_count"]


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


class Trainer:
    """Runs the loop of the module docstring over a run folder: a :class:`Learner`, a
    self-play backend, an :class:`Evaluator` and the :class:`RunDir` logs.

    The trainer sets no process-wide state: the command that owns the process sets torch's
    threads (``threads`` in the config, applied by ``boardzoo train``).
    """

    def __init__(self, cfg: Config, out_dir: str | Path, resume: bool = False,
                 progress: bool = True, echo: bool = True, config_source: str = "",
                 init_from: str | Path | None = None) -> None:
        """Open the run in ``out_dir``: a new one (``init_from``: a model file whose weights
        start it) or, with ``resume``, the one there."""
        self.cfg = cfg
        self.run_dir = RunDir(out_dir)
        self.out = self.run_dir.out
        if progress:
            try:
                import tqdm  # noqa: F401  (the progress bar is optional)
            except ImportError:
                progress = False
        self.progress = progress
        self.echo = echo
        self.spec = get_spec(cfg.game)
        self.game = self.spec.actions
        #: The batched engine (selfplay.engine: batched), or None for the reference path.
        self.engine = self.spec.batched_engine() if cfg.selfplay.engine == "batched" else None
        self.learner = Learner(cfg, self.game,
                               self.spec.all_symmetries() if cfg.train.augment else None)
        self.evaluator = Evaluator(cfg, self.game, self.run_dir)
        self.iteration = 0
        self.elapsed = 0.0
        #: CPU seconds spent on self-play and training (evaluation excluded), over all sessions.
        self.cpu = 0.0
        self.best_state = copy.deepcopy(self.net.state_dict())
        self.best_iteration = 0
        #: The metrics of an iteration trained but not yet evaluated (in the checkpoint while
        #: its evaluation runs), else None.
        self.pending: dict[str, Any] | None = None
        #: What a resumed run's config changed from the run's own ("key a -> b"), else [].
        self.resume_changes: list[str] = []
        self.ckpt_path = self.run_dir.checkpoint
        if resume:
            self._resume()
        else:
            if init_from:  # a warm start (boardzoo.training.distill), fresh runs only
                load_initial_weights(self.net, cfg, init_from)
                self.best_state = copy.deepcopy(self.net.state_dict())
            self.run_dir.create(cfg, config_source)
        self.tb = TensorBoardLog(self.run_dir, cfg.tensorboard, self.iteration)

    @property
    def net(self) -> torch.nn.Module:
        """The network being trained."""
        return self.learner.net

    @property
    def buffer(self) -> Any:
        """The replay buffer."""
        return self.learner.buffer

    @property
    def last_steps(self) -> int:
        """Gradient steps of the last iteration."""
        return self.learner.last_steps

    def train_steps(self, iteration: int, new_positions: int | None = None) -> dict[str, float]:
        """Train on the buffer (see :meth:`Learner.train_steps`)."""
        return self.learner.train_steps(iteration, new_positions)

    def evaluate(self, iteration: int, bar: Any = None) -> tuple[list[dict[str, Any]], bool]:
        """Evaluate the latest network; return the rows and whether it is promoted (the
        progress bar, if any, counts its games)."""
        latest = copy.deepcopy(self.net.state_dict())
        progress = None
        if bar is not None:
            def progress(done: int, total: int) -> None:
                bar.set_postfix_str(f"iter {iteration}: evaluating, game {done}/{total}")
        return self.evaluator.evaluate(iteration, latest, self.best_state, self.best_iteration,
                                       progress)

    # -- resume ------------------------------------------------------------------------------
    def _load_checkpoint(self) -> Config:
        """Return the config of the checkpoint to resume; CheckpointError if it cannot be."""
        if not self.ckpt_path.exists():
            raise RunDirError(f"nothing to resume: {str(self.ckpt_path)!r} does not exist")
        data = load(self.ckpt_path, (FORMAT,))
        try:
            saved = from_saved(data["config"])
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
        self._restore(data)
        return saved

    def _restore(self, data: dict[str, Any]) -> None:
        """Load the learner, counters and RNG state of a training checkpoint."""
        try:
            self.net.load_state_dict(data["model"])
            self.learner.opt.load_state_dict(data["optimizer"])
            self.buffer.load_state_dict(data["buffer"])
            self.best_state = data["best_model"]
            self.iteration = int(data["iteration"])
            self.elapsed = float(data["elapsed_s"])
            self.cpu = float(data.get("cpu_s", 0.0))
            self.best_iteration = int(data["best_iteration"])
            self.pending = data.get("pending")
            torch.set_rng_state(data["rng"]["torch"])
        except (KeyError, RuntimeError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else repr(exc)
            raise CheckpointError(f"{str(self.ckpt_path)!r} is damaged or does not match this "
                                  f"game ({first})") from None

    def _resume(self) -> None:
        saved = self._load_checkpoint()
        self.learner.set_hyperparameters()  # a resumed run may change the learning rate
        self.run_dir.forget_after(self.iteration)
        changes = self.resume_changes = config_changes(saved, self.cfg)
        if changes:
            self._say("resuming with config changes: " + ", ".join(changes))
            # the run's config.yaml follows, so a later plain --resume keeps the changes
            self.run_dir.write_config(self.cfg, f"resumed after iteration {self.iteration} "
                                                f"with: {', '.join(changes)}")

    # -- output -----------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        if not self.echo:
            return
        if self.progress:
            from tqdm import tqdm

            tqdm.write(text)
        else:
            print(text, flush=True)

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run the remaining iterations (or until the time limit); return :meth:`summary`."""
        cfg = self.cfg
        if self.iteration >= cfg.iterations and self.pending is None:
            self._say(f"run already complete: {self.iteration}/{cfg.iterations} iterations")
            return self.summary()
        backend = make_backend(cfg, self.game, self.engine)
        bar = self._progress_bar()
        self._session = (time.perf_counter(), self.elapsed)
        try:
            over_time = False
            if self.pending is not None:  # killed during its evaluation: finish that first
                self._say(f"iteration {self.iteration}: its self-play and training are in the "
                          f"checkpoint; playing its evaluation again")
                over_time = self._finish(self.iteration, self.pending, bar)
            while self.iteration < cfg.iterations and not over_time:
                over_time = self._finish(self.iteration + 1,
                                         self._play_and_train(self.iteration + 1, backend, bar),
                                         bar)
            if over_time and self.iteration < cfg.iterations:
                self._say(f"time limit of {cfg.time_limit_minutes:g} min reached after "
                          f"iteration {self.iteration}")
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
                bar = None
            state = " (trained; its evaluation is played again)" if self.pending else ""
            self._say(f"interrupted; the last checkpoint is iteration {self.iteration}{state} "
                      f"in {str(self.ckpt_path)!r}: continue with --resume")
            raise
        finally:
            if bar is not None:
                bar.close()
            backend.close()
            self.tb.close()
        return self.summary()

    def _progress_bar(self) -> Any:
        if not self.progress:
            return None
        from tqdm import tqdm

        bar = tqdm(total=self.cfg.iterations, initial=self.iteration,
                   desc=f"train {self.cfg.game}", unit="iter", dynamic_ncols=True)
        if self.iteration:  # a resumed run: estimate from its own past, not from nothing
            bar.set_postfix_str(self._estimate())
        return bar

    def _estimate(self) -> str:
        """The run's pace so far and the time its remaining iterations should take."""
        per = self.elapsed / max(self.iteration, 1)
        left = per * (self.cfg.iterations - self.iteration) / 60
        return f"{per / 60:.1f} min/iter, about {left:.0f} min left"

    def _clock(self) -> float:
        """Elapsed seconds of the whole run (all sessions) now."""
        start, before = self._session
        return before + (time.perf_counter() - start)

    def _status(self, bar: Any, text: str) -> None:
        if bar is not None:
            bar.set_postfix_str(text)

    def _play_and_train(self, it: int, backend: Any, bar: Any) -> dict[str, Any]:
        """Self-play and training of iteration ``it``; return what its metrics need (the
        time and CPU they took are counted)."""
        cfg = self.cfg
        t0 = time.perf_counter()
        c0 = cpu_seconds() + backend.cpu
        seeds = [selfplay_seed(cfg.seed, it, g) for g in range(cfg.selfplay.games_per_iteration)]
        self._status(bar, f"iter {it}: self-play {len(seeds)} games")
        records = backend.play(self.net, seeds)
        t1 = time.perf_counter()
        for rec in records:
            self.buffer.add_game(rec)
        positions = sum(len(r.obs) for r in records)
        self._status(bar, f"iter {it}: training")
        losses = self.train_steps(it, positions)
        t2 = time.perf_counter()
        self.cpu += cpu_seconds() + backend.cpu - c0
        self.elapsed = self._clock()
        metrics = iteration_metrics(records, positions, (t0, t1, t2), losses)
        metrics["forced"] = sum(r.forced for r in records)
        metrics["fast"] = sum(r.fast for r in records)
        return metrics

    def _finish(self, it: int, metrics: dict[str, Any], bar: Any) -> bool:
        """Evaluate iteration ``it`` if it is due, log it and save the checkpoint; return
        whether the time limit is reached. Before an evaluation the trained network is
        saved (``pending``), so a run killed during it plays only the evaluation again."""
        cfg = self.cfg
        over_time = (cfg.time_limit_minutes > 0 and self.elapsed >= cfg.time_limit_minutes * 60)
        rows: list[dict[str, Any]] = []
        promoted = not cfg.eval.vs_best
        t2 = time.perf_counter()
        if (cfg.eval.every > 0 and it % cfg.eval.every == 0) or it == cfg.iterations or over_time:
            if self.pending is None:
                self.iteration, self.pending = it, metrics
                self.save_checkpoint()
            self._status(bar, f"iter {it}: evaluating")
            rows, promoted = self.evaluate(it, bar)
        self.pending = None
        metrics = {**metrics, "eval_s": time.perf_counter() - t2}
        if promoted:
            self.best_state = copy.deepcopy(self.net.state_dict())
            self.best_iteration = it
        self.iteration = it
        self.elapsed = self._clock()
        forced, fast = metrics.pop("forced"), metrics.pop("fast")
        metrics.update(iteration=it, elapsed_s=self.elapsed, cpu_s=self.cpu,
                       buffer=len(self.buffer))
        self.run_dir.append("metrics.csv", METRICS_FIELDS, metrics)
        self.run_dir.append_eval(it, self.elapsed, self.cpu, rows, promoted)
        self.tb.log(metrics, rows)
        self.save()
        self._report(metrics, rows, promoted, forced, fast)
        if bar is not None:
            bar.update(1)
            self._status(bar, f"loss {metrics['loss']:.3f}, {metrics['games_per_hour']:.0f} "
                              f"games/h, {self._estimate()}")
        return over_time

    def _report(self, m: dict[str, Any], rows: list[dict[str, Any]], promoted: bool,
                forced: int = 0, fast: int = 0) -> None:
        extra = (f", {forced} forced" if forced else "") + (f", {fast} fast" if fast else "")
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

    # -- checkpoints ------------------------------------------------------------------------
    def save_checkpoint(self) -> None:
        """Write checkpoint.pt atomically: everything --resume needs (with ``pending``: an
        iteration trained but not yet evaluated and logged)."""
        data = {
            "format": FORMAT, "game": self.cfg.game, "config": self.cfg.to_dict(),
            "iteration": self.iteration, "elapsed_s": self.elapsed, "cpu_s": self.cpu,
            "model": self.net.state_dict(), "optimizer": self.learner.opt.state_dict(),
            "best_model": self.best_state, "best_iteration": self.best_iteration,
            "buffer": self.buffer.state_dict(),
            "rng": {"torch": torch.get_rng_state()},
        }
        if self.pending is not None:
            data["pending"] = dict(self.pending)
        save_atomic(data, self.ckpt_path)

    def save(self) -> None:
        """Write checkpoint.pt, model.pt and best.pt atomically."""
        self.save_checkpoint()
        cfg_dict = self.cfg.to_dict()
        shape, n = self.game.observation_shape, self.game.num_actions
        note = f"{self.cfg.game} run {self.out.name}"
        save_atomic(model_file(self.cfg.game, cfg_dict, shape, n, self.net.state_dict(),
                               f"{note}, iteration {self.iteration}"), self.out / "model.pt")
        save_atomic(model_file(self.cfg.game, cfg_dict, shape, n, self.best_state,
                               f"{note}, best = iteration {self.best_iteration}"),
                    self.out / "best.pt")
        for hours in self.cfg.snapshot_cpu_hours:
            path = self.out / "snapshots" / f"cpu_{hours:g}h.pt"
            if self.cpu >= hours * 3600 and not path.exists():  # the first save past the mark
                path.parent.mkdir(exist_ok=True)
                save_atomic(model_file(self.cfg.game, cfg_dict, shape, n, self.net.state_dict(),
                                       f"{note}, iteration {self.iteration}, "
                                       f"{self.cpu / 3600:.2f} CPU-hours"), path)

    def summary(self) -> dict[str, Any]:
        """The run's iteration, elapsed seconds, best iteration, buffer size and folder."""
        return {"iteration": self.iteration, "elapsed_s": self.elapsed,
                "best_iteration": self.best_iteration, "buffer": len(self.buffer),
                "out": str(self.out)}


def iteration_metrics(records: list[Any], positions: int, times: tuple[float, ...],
                      losses: dict[str, float]) -> dict[str, Any]:
    """Return an iteration's metrics.csv fields from its games, self-play and training times
    and losses (the evaluation's time and the counters are added when it is logged)."""
    t0, t1, t2 = times
    actions = sum(r.length for r in records)
    wins0 = sum(1 for r in records if r.outcome > 0 and not r.capped)
    wins1 = sum(1 for r in records if r.outcome < 0 and not r.capped)
    sp = max(t1 - t0, 1e-9)
    return {"selfplay_s": t1 - t0, "train_s": t2 - t1, "games": len(records),
            "positions": positions, "games_per_hour": len(records) / sp * 3600,
            "positions_per_s": positions / sp, "avg_length": actions / max(len(records), 1),
            "first_player_wins": wins0, "second_player_wins": wins1,
            "draws": len(records) - wins0 - wins1, **losses}
