"""``boardzoo fit-eval``: fit a learned evaluation for the compiled alpha-beta to a network.

::

    boardzoo fit-eval --checkpoint loa --out loa_eval.npz
    boardzoo play loa --agents alphabeta:t=0.3s,eval=loa_eval.npz alphabeta:t=0.3s

A trained network's value is the best judge of a position boardzoo has, and far too slow
for alpha-beta's leaves; the learned evaluation of :mod:`boardzoo.envs.core.learned_eval`
is fast enough. This fits one to the other:

1. **Positions** (:func:`positions`): games from the start position, the first 2 to 9
   moves at random, then each move at random with probability ``random_moves`` or else
   the compiled ``alphabeta:1`` move (the hand-made evaluation's choice). The random moves
   give the fit the odd positions a search looks at, as well as the sensible ones.
   Every unfinished position is kept.
2. **Targets**: the network's value of each position for its side to move.
3. **Fit** (:func:`fit`): one hidden layer of ``hidden`` ReLU units, ``tanh`` of its output
   against the target by mean squared error, each position in its symmetric images, Adam
   with a one-cycle schedule; 5% of the positions (all their images) held out.

The report gives the held-out error against two floors: always answering the mean, and the
hand-made evaluation (``tanh(eval / scale)``).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from boardzoo.agents.alphabeta import searcher
from boardzoo.agents.evaluation import get_evaluator
from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.core.registry import action_game, get_spec

from .agent import load_net, shipped_net
from .config import ConfigError
from .selfplay import NetEvaluator

#: The longest game the position generator plays (plies).
MAX_PLIES = 300
HELD_OUT = 0.05


#: below this mean squared error a network's value is a constant or the hand-made evaluation
DEGENERATE_MSE = 1e-4


@dataclass
class FitReport:
    """What a fit measured: held-out mean squared errors of the value, and its costs."""

    positions: int
    games: int
    held_out_mse: float
    mean_mse: float
    hand_mse: float
    seconds: dict[str, float]

    def notes(self) -> list[str]:
        """Warnings for a network whose value a learned evaluation cannot improve on: a constant
        (a fresh network without a value prior) or the hand-made evaluation itself (a fresh one
        with ``model.value: prior``)."""
        if self.mean_mse < DEGENERATE_MSE:
            return [f"the network's value barely varies over these positions (variance "
                    f"{self.mean_mse:.6f}): the fitted evaluation is almost a constant and a "
                    "search with it plays nearly blind (is the network untrained?)"]
        if self.hand_mse < DEGENERATE_MSE:
            return [f"the network's value is the hand-made evaluation (held-out MSE "
                    f"{self.hand_mse:.6f} against it): the fit copies it and only makes the "
                    "search slower (is the network untrained, with model.value: prior?)"]
        return []


@functools.cache
def _can_drop_history(state_type: type) -> bool:
    """Whether ``state_type.apply`` can leave the repetition history out (LOA's can)."""
    return "track_history" in inspect.signature(state_type.apply).parameters


def seeded_game(start: Any, rng: np.random.Generator, random_moves: float, guide: Any | None,
                winning: Callable[[Any], Any] | None = None,
                history: bool = True) -> tuple[list[Any], Any]:
    """Play one game from ``start`` and return its unfinished positions and its last position.

    The first 2 to 9 moves are random, then each move is random with probability
    ``random_moves`` or else ``guide``'s choice; without a guide every move is random, or
    ``winning``'s move where it finds one. A game still going after ``MAX_PLIES`` stops there.
    ``history=False`` drops the repetition history where the rules can (the positions then
    need none, but the game's result may miss a repetition).
    """
    # a long history makes each position cost memory in proportion to its ply
    bare = not history and _can_drop_history(type(start))
    seen: list[Any] = []
    state = start
    opening = int(rng.integers(2, 10))
    for ply in range(MAX_PLIES):
        if state.is_terminal():
            break
        seen.append(state)
        legal = state.legal_moves()
        if guide is None or ply < opening or rng.random() < random_moves:
            move = legal[int(rng.integers(len(legal)))]
            win = winning(state) if guide is None and winning is not None else None
            move = move if win is None else win
        else:
            move = guide.select_move(state)
        state = state.apply(move, track_history=False) if bare else state.apply(move)
    return seen, state


def positions(game: str, count: int, seed: int, random_moves: float) -> tuple[list[Any], int]:
    """Return ``count`` unfinished positions of seeded games (see the module) and the number
    of games played."""
    rng = np.random.default_rng(seed)
    guide = searcher(game, depth=1, seed=seed)
    out: list[Any] = []
    games = 0
    start = get_spec(game).start()
    while len(out) < count:
        games += 1
        out.extend(seeded_game(start, rng, random_moves, guide, history=False)[0])
    return out[:count], games


def network_values(net: torch.nn.Module, game: str, states: list[Any],
                   batch: int = 512) -> np.ndarray:
    """Return the network's value of each state for its side to move."""
    ag = action_game(game)
    evaluate = NetEvaluator(net, ag)
    values = np.empty(len(states), dtype=np.float32)
    for i in range(0, len(states), batch):
        _, v = evaluate([ag.from_game_state(s) for s in states[i:i + batch]])
        values[i:i + batch] = v.reshape(-1)
    return values


def fit(inputs: np.ndarray, targets: np.ndarray, images: int, hidden: int, epochs: int,
        seed: int, batch: int = 1024) -> tuple[torch.nn.Sequential, float]:
    """Fit the hidden layer to ``targets`` (one per position) on ``inputs`` (``images``
    blocks of rows, one per symmetric image); return the model and its held-out MSE."""
    torch.manual_seed(seed)
    n = len(targets)
    train = np.arange(n) < int(n * (1 - HELD_OUT))  # the held-out are the last positions
    rows = np.tile(train, images)
    y = np.tile(targets, images)
    x_train, y_train = torch.from_numpy(inputs[rows]), torch.from_numpy(y[rows])
    x_held, y_held = torch.from_numpy(inputs[~rows]), torch.from_numpy(y[~rows])
    model = torch.nn.Sequential(torch.nn.Linear(inputs.shape[1], hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 1))
    batch = min(batch, len(y_train))  # a small fit still takes whole batches
    steps = max(1, epochs * (len(y_train) // batch))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    schedule = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)
    done = 0
    gen = torch.Generator().manual_seed(seed)
    while done < steps:
        order = torch.randperm(len(y_train), generator=gen)
        for i in range(0, len(order) - batch + 1, batch):
            if done == steps:
                break
            b = order[i:i + batch]
            loss = ((torch.tanh(model(x_train[b]).squeeze(1)) - y_train[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            done += 1
    with torch.no_grad():
        held = float(((torch.tanh(model(x_held).squeeze(1)) - y_held) ** 2).mean())
    return model, held


def fit_eval(checkpoint: str, positions_count: int = 400_000, hidden: int = 64,
             epochs: int = 6, seed: int = 0, random_moves: float = 0.3,
             ) -> tuple[LearnedEval, FitReport]:
    """Fit a learned evaluation to the value of the network in ``checkpoint`` (a path, or a
    game's name for its shipped network); return it and the report."""
    path = shipped_net(checkpoint) if checkpoint in ("loa", "ultima", "whistling") else checkpoint
    net, cfg, _ = load_net(path)
    if cfg.model.value == "static":
        raise ConfigError(f"{path}: the network's value is the static evaluation "
                          "(model.value: static), which the alpha-beta has already; fit to "
                          "a network whose value learned (model.value: learned or prior)")
    game = cfg.game
    spec = get_spec(game)
    module = spec.learned_eval_inputs()
    seconds = {}
    t0 = time.perf_counter()
    states, games = positions(game, positions_count, seed, random_moves)
    t1 = time.perf_counter()
    targets = network_values(net, game, states)
    t2 = time.perf_counter()
    symmetric = module.inputs(states, symmetric=True)
    images = len(symmetric) // len(states)
    model, held = fit(symmetric, targets, images, hidden, epochs, seed)
    t3 = time.perf_counter()
    seconds = {"positions": t1 - t0, "network": t2 - t1, "fit": t3 - t2}
    held_targets = targets[int(len(targets) * (1 - HELD_OUT)):]
    evaluate = get_evaluator(game)
    hand = np.tanh(np.array([evaluate(s) for s in states[len(states) - len(held_targets):]])
                   / spec.eval_scale)
    report = FitReport(len(states), games, held, float(held_targets.var()),
                       float(((hand - held_targets) ** 2).mean()), seconds)
    first, last = model[0], model[2]
    about = (f"fitted to {path} on {len(states)} positions ({games} games, seed {seed}, "
             f"random moves {random_moves}), {hidden} hidden, {epochs} epochs; held-out MSE "
             f"{held:.4f} (mean {report.mean_mse:.4f}, hand-made {report.hand_mse:.4f})")
    learned = LearnedEval.pack(
        game, module.SPARSE, module.DENSE, first.weight.detach().numpy().T.astype(np.float64),
        first.bias.detach().numpy(), last.weight.detach().numpy()[0],
        float(last.bias.item()), about)
    return learned, report


def cmd_fit_eval(args: argparse.Namespace) -> int:
    """``boardzoo fit-eval`` (arguments: :func:`boardzoo.training.commands.register`)."""
    selfplay = args.selfplay is not None
    # An option of the other mode would be ignored without a word: refuse it instead.
    other = ("--positions", "--hidden", "--epochs") if selfplay else ("--game", "--games",
                                                                       "--per-game")
    given = [o for o in other if getattr(args, o[2:].replace("-", "_")) is not None]
    if given:
        mode = "--selfplay" if selfplay else "--checkpoint"
        need = "--checkpoint" if selfplay else "--selfplay"
        raise ConfigError(f"{', '.join(given)}: not an option of fit-eval {mode} (it goes "
                          f"with {need})")
    defaults = {"random_moves": 0.15 if selfplay else 0.3, "positions": 400_000, "hidden": 64,
                "epochs": 6, "games": 5000, "per_game": 20}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if selfplay:
        return _cmd_selfplay(args)
    if args.positions < 100:
        raise ConfigError(f"--positions must be >= 100, got {args.positions}")
    if not 1 <= args.hidden <= 1024:
        raise ConfigError(f"--hidden must be 1 to 1024, got {args.hidden}")
    if not 1 <= args.epochs <= 100:
        raise ConfigError(f"--epochs must be 1 to 100, got {args.epochs}")
    if not 0.0 <= args.random_moves <= 1.0:
        raise ConfigError(f"--random-moves must be 0 to 1, got {args.random_moves}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    learned, report = fit_eval(args.checkpoint, args.positions, args.hidden, args.epochs,
                               args.seed, args.random_moves)
    learned.save(args.out)
    for note in report.notes():
        print(f"note: {note}", flush=True)
    s = report.seconds
    print(f"{report.positions} positions from {report.games} games in {s['positions']:.0f} s, "
          f"network values in {s['network']:.0f} s, fit in {s['fit']:.0f} s; held-out MSE "
          f"{report.held_out_mse:.4f} (the mean alone {report.mean_mse:.4f}, the hand-made "
          f"evaluation {report.hand_mse:.4f}); wrote {args.out}")
    return 0


def _cmd_selfplay(args: argparse.Namespace) -> int:
    """``boardzoo fit-eval --selfplay N --game GAME``: :mod:`.eval_scratch`."""
    from .eval_scratch import Generation, fit_selfplay

    if args.game is None:
        raise ConfigError("--selfplay needs --game (ultima)")
    if not 1 <= args.selfplay <= 100:
        raise ConfigError(f"--selfplay must be 1 to 100 generations, got {args.selfplay}")
    if args.games < 10:
        raise ConfigError(f"--games must be >= 10, got {args.games}")
    if args.per_game < 1:
        raise ConfigError(f"--per-game must be >= 1, got {args.per_game}")
    if not 0.0 <= args.random_moves <= 1.0:
        raise ConfigError(f"--random-moves must be 0 to 1, got {args.random_moves}")
    get_spec(args.game)  # an unknown game: one clear line
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    def say(g: int, gen: Generation) -> None:
        weights = ", ".join(f"{k} {v:+.3f}" for k, v in gen.weights.items())
        print(f"generation {g}: {gen.games} games ({gen.decisive} decisive, "
              f"{gen.mean_plies:.0f} plies), {gen.positions} positions, held-out MSE "
              f"{gen.held_out_mse:.4f} (variance {gen.variance:.4f}), {gen.seconds:.0f} s; "
              f"{weights}", flush=True)

    learned, _ = fit_selfplay(args.game, args.selfplay, args.games, args.per_game,
                              args.random_moves, args.seed, say)
    learned.save(args.out)
    print(f"wrote {args.out}")
    return 0
