"""``boardzoo fit-eval --selfplay N``: a learned evaluation from self-play alone.

::

    boardzoo fit-eval --selfplay 2 --game ultima --out ultima_scratch.npz
    boardzoo match alphabeta:2,eval=ultima_scratch.npz greedy --game ultima --games 40

No network and no hand-made value: the evaluation is linear in what a position counts, each
side's pieces of every kind and the game's count inputs (Ultima: each side's moves and frozen
pieces; ``COUNT_INPUTS`` of its inputs module), and every weight is learned from the results
of games it played against itself, generation by generation:

1. **Games**: generation 0 plays at random, taking a winning move where there is one (an
   evaluation of 0 searched one ply deep); each later generation plays the compiled
   ``alphabeta:1`` with the evaluation before it, the first 2 to 9 moves and then each move
   with probability ``random_moves`` at random (a game still going after ``MAX_PLIES``
   counts as a draw). ``per_game`` positions of each game are kept
   (many games and few positions from each, so that the results, the only teacher, are
   many and not the same one repeated).
2. **Fit**: ``tanh(w . counts + b)`` against the result for the side to move by mean
   squared error (a little L2), full-batch Adam; the last 10% of the games held out.

A piece kind's weight is the same on every square (the counts are sums of the sparse inputs),
which is what lets a few thousand results fix it; the result is packed as a learned
evaluation of two hidden units (``relu(a) - relu(-a) = a``), so ``alphabeta:...,eval=FILE``
plays it on the compiled search unchanged. It answers "what is each piece worth?" from
scratch; what a hand-made evaluation knows beyond counts (Ultima's best capture) it does not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import torch

from boardzoo.agents.alphabeta import searcher
from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.core.registry import get_spec

from .config import ConfigError
from .eval_fit import seeded_game

#: The share of each generation's games held out of its fit (its last games).
HELD_OUT_GAMES = 0.1


@dataclass
class Generation:
    """What one generation played and learned."""

    games: int
    decisive: int
    mean_plies: float
    positions: int
    held_out_mse: float
    variance: float
    weights: dict[str, float]
    seconds: float


def count_module(game: str) -> ModuleType:
    """Return ``game``'s learned-evaluation inputs module if it declares count inputs
    (``KIND_NAMES`` and ``COUNT_INPUTS``), else raise ConfigError."""
    module = get_spec(game).learned_eval_inputs()
    if not hasattr(module, "COUNT_INPUTS") or not hasattr(module, "KIND_NAMES"):
        raise ConfigError(f"fit-eval --selfplay: {game}'s learned-evaluation inputs declare no "
                          "counts to learn from (ultima does)")
    return module


def feature_names(module: ModuleType) -> list[str]:
    """Return the names of the linear evaluation's features, in order: the piece kinds
    (the mover's pieces of the kind minus the opponent's), then the count inputs."""
    return list(module.KIND_NAMES) + list(module.COUNT_INPUTS.values())


def counts(module: ModuleType, x: np.ndarray) -> np.ndarray:
    """Return the features of input rows ``x``: per kind, the mover's pieces minus the
    opponent's, then the count inputs."""
    kinds = len(module.KIND_NAMES)
    cells = module.SPARSE // (2 * kinds)
    own = x[:, :module.SPARSE // 2].reshape(len(x), kinds, cells).sum(2)
    theirs = x[:, module.SPARSE // 2:module.SPARSE].reshape(len(x), kinds, cells).sum(2)
    dense = x[:, [module.SPARSE + k for k in module.COUNT_INPUTS]]
    return np.hstack([own - theirs, dense]).astype(np.float32)


def linear_eval(game: str, module: ModuleType, weights: np.ndarray, bias: float,
                about: str = "") -> LearnedEval:
    """Return the learned evaluation whose ``z`` is ``weights . counts + bias`` exactly."""
    kinds = len(module.KIND_NAMES)
    cells = module.SPARSE // (2 * kinds)
    a = np.zeros(module.SPARSE + module.DENSE)
    for k in range(kinds):
        a[k * cells:(k + 1) * cells] = weights[k]
        a[module.SPARSE // 2 + k * cells:module.SPARSE // 2 + (k + 1) * cells] = -weights[k]
    for j, k in enumerate(module.COUNT_INPUTS):
        a[module.SPARSE + k] = weights[kinds + j]
    return LearnedEval.pack(game, module.SPARSE, module.DENSE, np.stack([a, -a], axis=1),
                            np.zeros(2), np.array([1.0, -1.0]), float(bias), about)


@dataclass
class Played:
    """The kept positions of a generation's games, in game order."""

    states: list[Any]
    #: The game's result for each position's side to move (1, 0 or -1).
    results: np.ndarray
    #: The index in ``states`` of each game's first kept position.
    starts: list[int]
    decisive: int
    mean_plies: float


def play_games(game: str, count: int, per_game: int, previous: LearnedEval | None,
               random_moves: float, seed: int) -> Played:
    """Play ``count`` seeded games (see the module) and return their kept positions."""
    spec = get_spec(game)
    rng = np.random.default_rng(seed)
    guide = None if previous is None else searcher(game, depth=1, seed=seed,
                                                   learned_eval=previous)
    winning: Callable[[Any], Any] | None = spec.winning_move
    states: list[Any] = []
    results: list[float] = []
    starts: list[int] = []
    decisive = plies = 0
    for _ in range(count):
        starts.append(len(states))
        seen, state = seeded_game(spec.start(), rng, random_moves, guide, winning)
        result = state.returns() if state.is_terminal() else (0.0, 0.0)
        decisive += result[0] != 0
        plies += len(seen)
        for i in sorted(rng.choice(len(seen), size=min(per_game, len(seen)), replace=False)):
            states.append(seen[i])
            results.append(float(result[seen[i].to_move]))
    return Played(states, np.array(results, dtype=np.float32), starts, decisive,
                  plies / max(count, 1))


def fit_linear(features: np.ndarray, targets: np.ndarray, held_from: int, l2: float = 1e-3,
               steps: int = 600) -> tuple[np.ndarray, float, float]:
    """Fit ``tanh(w . features + b)`` to ``targets`` on the rows before ``held_from``; return
    ``w``, ``b`` and the mean squared error on the rows from ``held_from``."""
    x, y = torch.from_numpy(features), torch.from_numpy(targets)
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((torch.tanh(x[:held_from] @ w + b) - y[:held_from]) ** 2).mean() \
            + l2 * (w ** 2).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        held = float(((torch.tanh(x[held_from:] @ w + b) - y[held_from:]) ** 2).mean())
    return w.detach().numpy().astype(np.float64), float(b.detach()), held


def fit_selfplay(game: str, generations: int = 2, games: int = 5000, per_game: int = 20,
                 random_moves: float = 0.15, seed: int = 0,
                 report: Callable[[int, Generation], None] | None = None,
                 ) -> tuple[LearnedEval, list[Generation]]:
    """Learn ``game``'s linear evaluation over ``generations`` of self-play (see the module);
    return the last generation's and what each generation did."""
    module = count_module(game)
    names = feature_names(module)
    learned: LearnedEval | None = None
    done: list[Generation] = []
    for g in range(generations):
        started = time.perf_counter()
        played = play_games(game, games, per_game, learned, random_moves, seed * 1000 + g)
        features = counts(module, module.inputs(played.states))
        held_from = played.starts[-max(1, int(games * HELD_OUT_GAMES))]
        w, b, held = fit_linear(features, played.results, held_from)
        weights = dict(zip(names, w.tolist(), strict=True)) | {"to move": b}
        about = (f"learned from self-play alone (fit-eval --selfplay): generation {g} of "
                 f"{generations}, {games} games, {per_game} positions a game, random moves "
                 f"{random_moves}, seed {seed}; weights " + ", ".join(
                     f"{k} {v:+.3f}" for k, v in weights.items()))
        learned = linear_eval(game, module, w, b, about)
        done.append(Generation(games, played.decisive, played.mean_plies, len(played.states),
                               held, float(played.results[held_from:].var()), weights,
                               time.perf_counter() - started))
        if report is not None:
            report(g, done[-1])
    assert learned is not None
    return learned, done

