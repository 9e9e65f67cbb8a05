"""Self-play backends: where a trainer's self-play games are played, behind one interface.

:func:`make_backend` picks one from the config; each has ``play(net, seeds) -> records``
(the records in seed order, the same games for the same seeds on every backend that plays
the reference engine), ``cpu`` (CPU seconds spent outside this process) and ``close()``:

* :class:`InProcess`: the reference engine in this process (``selfplay.workers`` <= 1);
* :class:`SelfPlayPool`: ``selfplay.workers`` processes, the seeds split in chunks (each
  chunk on the reference engine, or with ``selfplay.engine: batched`` on the batched engine
  in one batch per worker);
* :class:`RaySelfPlayPool`: the same chunks as Ray tasks (``selfplay.backend: ray``);
* :class:`Batched`: the game's batched engine (``selfplay.engine: batched``).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from boardzoo.envs.core.registry import action_game, batched_game

from .batched_selfplay import play_games_batched
from .config import Config, from_saved
from .network import build_net
from .selfplay import GameRecord, play_games


class InProcess:
    """The reference engine in this process."""

    def __init__(self, cfg: Config, game: Any) -> None:
        self.cfg, self.game, self.cpu = cfg, game, 0.0

    def play(self, net: torch.nn.Module, seeds: list[int]) -> list[GameRecord]:
        """Play one game per seed with ``net``."""
        return play_games(net, self.game, self.cfg, seeds)

    def close(self) -> None:
        """Nothing to release."""


class Batched:
    """All games at once on the game's batched engine, in this process."""

    def __init__(self, cfg: Config, engine: Any) -> None:
        self.cfg, self.engine, self.cpu = cfg, engine, 0.0

    def play(self, net: torch.nn.Module, seeds: list[int]) -> list[GameRecord]:
        """Play one game per seed with ``net``."""
        return play_games_batched(net, self.engine, self.cfg, seeds)

    def close(self) -> None:
        """Nothing to release."""


def make_backend(cfg: Config, game: Any, engine: Any = None) -> Any:
    """Return the self-play backend the config asks for (``engine``: the batched engine of
    ``selfplay.engine: batched``, else None)."""
    if cfg.selfplay.backend == "ray":
        return RaySelfPlayPool(cfg)
    if cfg.selfplay.workers > 1:
        return SelfPlayPool(cfg)
    return InProcess(cfg, game) if engine is None else Batched(cfg, engine)


# -- worker processes ---------------------------------------------------------------------
def _worker_init() -> None:
    """Set up a self-play worker process: one torch thread (the pool owns the process and
    runs one worker per core)."""
    torch.set_num_threads(1)


def _worker_play(cfg_dict: dict[str, Any], state_dict: dict[str, torch.Tensor],
                 seeds: list[int]) -> tuple[list[GameRecord], float]:
    """Play ``seeds`` with the network ``state_dict`` of config ``cfg_dict``; return the
    records and the CPU seconds spent (a worker keeps no state between tasks)."""
    start = time.process_time()
    cfg = from_saved(cfg_dict)
    game = action_game(cfg.game)
    net = build_net(cfg, game)
    net.load_state_dict(state_dict)
    net.eval()
    if cfg.selfplay.engine == "batched":  # this worker's chunk of games in one batch
        records = play_games_batched(net, batched_game(cfg.game, "cpu"), cfg, seeds)
    else:
        records = play_games(net, game, cfg, seeds)
    return records, time.process_time() - start


def split_seeds(seeds: list[int], workers: int) -> list[list[int]]:
    """Split seeds into contiguous chunks, one per worker (the same for every backend)."""
    # the split depends only on len(seeds) and workers, so the games do too
    return [[int(s) for s in c] for c in np.array_split(np.asarray(seeds, dtype=np.int64),
                                                        max(workers, 1)) if len(c)]


class SelfPlayPool:
    """Self-play over ``workers`` processes (spawned once, reused every iteration)."""

    def __init__(self, cfg: Config) -> None:
        self.workers = cfg.selfplay.workers
        self.cfg_dict = cfg.to_dict()
        #: CPU seconds the workers spent playing (they outlive iterations, so rusage misses it).
        self.cpu = 0.0
        self.pool = cf.ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                           initializer=_worker_init)

    def play(self, net: torch.nn.Module, seeds: list[int],
             progress: Callable[[int], None] | None = None) -> list[GameRecord]:
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        chunks = split_seeds(seeds, self.workers)
        futures = [self.pool.submit(_worker_play, self.cfg_dict, state, c) for c in chunks]
        out: list[GameRecord] = []
        for f in futures:
            recs, cpu = f.result()
            self.cpu += cpu
            if progress is not None:
                progress(len(recs))
            out.extend(recs)
        return out

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


def _ray_worker_play(cfg_dict: dict[str, Any], state_dict: dict[str, torch.Tensor],
                     seeds: list[int]) -> tuple[list[GameRecord], float]:
    """Ray task: :func:`_worker_play` in a Ray worker with one torch thread."""
    _worker_init()
    return _worker_play(cfg_dict, state_dict, seeds)


class RaySelfPlayPool:
    """Self-play as Ray tasks (``selfplay.backend: ray``): the chunks of :class:`SelfPlayPool`.

    Each iteration puts the weights in the object store once and runs one task per chunk
    (``selfplay.workers`` chunks, split as the local pool splits them), so the games equal
    the local backend's; a task whose worker dies is re-run by Ray.
    """

    def __init__(self, cfg: Config) -> None:
        from boardzoo.agents.distributed import connect

        self.workers = max(cfg.selfplay.workers, 1)
        self.cfg_dict = cfg.to_dict()
        #: CPU seconds the Ray workers spent playing.
        self.cpu = 0.0
        self.conn = connect(cfg.selfplay.ray_address or None, num_cpus=self.workers)

    def play(self, net: torch.nn.Module, seeds: list[int],
             progress: Callable[[int], None] | None = None) -> list[GameRecord]:
        state = self.conn.ray.put({k: v.detach().clone() for k, v in net.state_dict().items()})
        chunks = split_seeds(seeds, self.workers)
        done: dict[int, list[GameRecord]] = {}
        for i, (recs, cpu) in self.conn.stream(
                _ray_worker_play, [(self.cfg_dict, state, c) for c in chunks],
                describe=lambda i: f"self-play chunk {i + 1}/{len(chunks)}"):
            done[i] = recs
            self.cpu += cpu
            if progress is not None:
                progress(len(recs))
        return [r for i in range(len(chunks)) for r in done[i]]

    def close(self) -> None:
        self.conn.close()
