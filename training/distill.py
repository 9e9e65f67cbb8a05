"""Distillation warm start: teach a fresh network the static evaluation's play before self-play.

::

    boardzoo distill --config configs/ultima.yaml --positions 2000 \
        --out runs/ultima_distill.pt
    boardzoo train --config configs/ultima.yaml --init-from runs/ultima_distill.pt

1. **Positions** (:func:`teacher_positions`): games of evaluation-guided play
   from the start position, one seeded generator per game. At every action state
   the teacher scores each legal action by one ply of look-ahead with the game's
   static evaluation (:mod:`boardzoo.agents.evaluation`, as ``greedy`` does): the
   position after the turn, from the acting player's view (a Whistling hop in
   the middle of a turn scores its best completion; a win scores
   :data:`WIN_SCORE`, a loss minus it). The first ``opening`` actions of a game
   are uniformly random, later ones are sampled from the teacher policy, or
   uniformly with probability ``epsilon`` (diversity); a game stops at its end
   or after ``selfplay.max_moves`` actions. Each position is kept with
   probability ``keep`` (below 1: more, less correlated games per position).
2. **Targets**: policy = softmax(score / ``temperature``) over the legal
   actions, or the starting network's own policy (``policy_net``: only the value
   changes); value = tanh(evaluation / scale) of the position for the player to
   act (``value_target="eval"``), tanh(alpha-beta value / scale) of a search
   ``search_depth`` turns deep with that evaluation (``"search"``: the value a
   deeper look gives, which a search over the network then gets at every leaf), or
   the game's result (``"outcome"``, a capped game scored by the evaluation as
   ``selfplay.adjudicate`` does).
3. **Training** (:func:`distill`): AdamW steps of the trainer's loss
   (:func:`boardzoo.training.trainer.compute_loss`) on the config's network,
   batch size, learning rate and symmetry augmentation.
4. **Output**: a model file (:func:`boardzoo.training.checkpoint.model_file`),
   which ``boardzoo train --init-from`` starts a run from and ``checkpoint:PATH`` plays.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardzoo.agents.alphabeta import searcher as alphabeta_searcher
from boardzoo.agents.evaluation import as_value, get_evaluator
from boardzoo.envs.core.registry import action_game, get_spec

from .buffer import ReplayBuffer
from .checkpoint import load_initial_weights, model_file, save_atomic
from .config import Config, ConfigError, load_config
from .knowledge import Knowledge
from .network import build_net
from .selfplay import NetEvaluator, adjudicate, selfplay_seed
from .trainer import compute_loss

#: Value targets: the evaluation, a search's value, the game's result.
VALUE_TARGETS = ("eval", "search", "outcome")
#: Teacher score of a won position (a lost one scores minus this), in evaluation units.
WIN_SCORE = 100.0


@dataclass
class TeacherData:
    """Positions of teacher games with their policy and value targets."""
    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    probs: list[np.ndarray] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    priors: list[float] = field(default_factory=list)
    #: Action prior of the legal actions (``model.policy_prior`` configs only, else empty).
    action_priors: list[np.ndarray] = field(default_factory=list)
    #: The positions' action states.
    states: list[Any] = field(default_factory=list)
    games: int = 0

    def __len__(self) -> int:
        """Return the number of positions."""
        return len(self.obs)


def _after_turn(game, state: Any, me: int, evaluate) -> float:
    """Return the teacher score of ``state`` for player ``me`` (best completion mid-turn)."""
    if game.is_terminal(state):
        return WIN_SCORE * float(game.returns(state)[me])
    g = game.game_state(state)
    v = float(evaluate(g))
    return v if g.to_move == me else -v


def action_scores(game, state: Any, evaluate) -> tuple[np.ndarray, np.ndarray]:
    """Return (legal actions, one-ply teacher score of each for the player to act)."""
    me = game.to_move(state)
    actions = np.asarray(game.legal_actions(state), dtype=np.int64)
    scores = np.empty(len(actions))
    for i, a in enumerate(actions):
        child, text = game.apply_action(state, int(a))
        if text is None and not game.is_terminal(child):  # the turn goes on: best completion
            scores[i] = action_scores(game, child, evaluate)[1].max()
        else:
            scores[i] = _after_turn(game, child, me, evaluate)
    return actions, np.clip(scores, -WIN_SCORE, WIN_SCORE)


def teacher_policy(scores: np.ndarray, temperature: float) -> np.ndarray:
    """Return softmax(scores / temperature) (argmax with ties shared for temperature 0)."""
    if temperature <= 0:
        p = (scores == scores.max()).astype(np.float64)
    else:
        z = (scores - scores.max()) / temperature
        p = np.exp(z)
    return p / p.sum()


def teacher_positions(cfg: Config, positions: int, seed: int = 0, temperature: float = 0.25,
                      epsilon: float = 0.1, opening: int = 4, value_target: str = "eval",
                      keep: float = 1.0, search_depth: int = 1,
                      policy_net: torch.nn.Module | None = None) -> TeacherData:
    """Play seeded teacher games of ``cfg.game`` until ``positions`` positions are collected."""

    if value_target not in VALUE_TARGETS:
        raise ValueError(f"value_target must be one of {', '.join(VALUE_TARGETS)}, got "
                         f"{value_target!r}")
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], got {keep!r}")
    game = action_game(cfg.game)
    evaluate = get_evaluator(cfg.game)
    scale = get_spec(cfg.game).eval_scale
    searcher = alphabeta_searcher(cfg.game, depth=search_depth, seed=seed)  # compiled: LOA, Ultima
    own = NetEvaluator(policy_net, game) if policy_net is not None else None
    # the value prior always: without the network's value prior it is the value target
    knowledge = Knowledge(cfg.game, value_prior=True, policy_prior=cfg.model.policy_prior)
    data = TeacherData()
    while len(data) < positions:
        rng = np.random.default_rng(selfplay_seed(seed, 0, data.games))
        data.games += 1
        state = game.initial_state()
        players: list[int] = []
        start = len(data)
        for move in range(cfg.selfplay.max_moves):
            if game.is_terminal(state) or len(data) >= positions:
                break
            actions, scores = action_scores(game, state, evaluate)
            policy = teacher_policy(scores, temperature)
            if keep >= 1 or rng.random() < keep:
                player = game.to_move(state)
                prior, action_prior = knowledge.root(state, actions)
                data.states.append(state)
                data.obs.append(game.observation(state, player))
                data.actions.append(actions.astype(np.int32))
                if own is not None:  # the network's own softmax over the legal actions
                    policy_target = teacher_policy(own([state])[0][0][actions].astype(np.float64),
                                                   1.0)
                else:
                    policy_target = policy
                data.probs.append(policy_target.astype(np.float32))
                if value_target == "search":
                    g = game.game_state(state)
                    v = searcher.search_value(g)
                    v = v if g.to_move == player else -v
                    data.values.append(as_value(max(-WIN_SCORE, min(WIN_SCORE, v)), scale))
                else:
                    data.values.append(math.tanh(prior))
                data.priors.append(prior)
                if cfg.model.policy_prior:
                    data.action_priors.append(action_prior)
                players.append(player)
            if move < opening or rng.random() < epsilon:
                i = int(rng.integers(len(actions)))
            else:
                i = int(rng.choice(len(actions), p=policy))
            state, _ = game.apply_action(state, int(actions[i]))
        if value_target == "outcome":
            if game.is_terminal(state):
                result = float(game.returns(state)[0])
            else:
                result = adjudicate(cfg.game, game.game_state(state))
            for k, p in enumerate(players):
                data.values[start + k] = result if p == 0 else -result
    return data


def distill(cfg: Config, data: TeacherData, steps: int, seed: int = 0,
            net: torch.nn.Module | None = None, every: int = 0,
            report: Callable[[int, torch.nn.Module], None] | None = None,
            ) -> tuple[torch.nn.Module, dict[str, float]]:
    """Train ``net`` (default: a fresh ``cfg`` network) on ``data``, calling ``report(step,
    net)`` every ``every`` steps; return the network and the last step's losses."""


    game = action_game(cfg.game)
    if net is None:
        torch.manual_seed(cfg.seed)
        net = build_net(cfg, game)
    buf = ReplayBuffer(max(len(data), 1), game.observation_shape, game.num_actions,
                       priors=cfg.model.value_prior, action_priors=cfg.model.policy_prior > 0)
    # each value target goes in as the outcome, with no root value and not capped: drawn
    # with the sampler's default settings, the targets are these values as they are
    for k in range(len(data)):
        buf.add(data.obs[k], data.actions[k], data.probs[k], data.values[k], data.priors[k],
                data.action_priors[k] if data.action_priors else None)
    syms = get_spec(cfg.game).all_symmetries() if cfg.train.augment else None
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.train.lr,
                            weight_decay=cfg.train.weight_decay)
    rng = np.random.default_rng([seed, 7])
    net.train()
    last = {"loss": math.nan, "policy_loss": math.nan, "value_loss": math.nan}
    for step in range(1, steps + 1):
        batch = buf.sample(cfg.train.batch_size, rng, syms)
        loss, pl, vl = compute_loss(net, batch, cfg.train.value_loss_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        last = {"loss": loss.item(), "policy_loss": pl.item(), "value_loss": vl.item()}
        if report is not None and every > 0 and step % every == 0 and step < steps:
            report(step, net)
            net.train()
    net.eval()
    return net, last


def start_net(cfg: Config, path: str | Path) -> torch.nn.Module:
    """Return ``cfg``'s network with the weights of model file ``path``, whose model may
    differ from ``cfg.model`` in ``value`` only (e.g. a ``static`` value, whose head was
    never trained, becoming a ``prior`` one that learns); CheckpointError otherwise."""
    net = build_net(cfg, action_game(cfg.game))
    load_initial_weights(net, cfg, path, any_value=True)
    net.eval()
    return net


def save_model(cfg: Config, net: torch.nn.Module, path: str | Path, note: str = "") -> None:
    """Write ``net`` as a model file that ``train --init-from`` and ``checkpoint:PATH`` load."""

    game = action_game(cfg.game)
    save_atomic(model_file(cfg.game, cfg.to_dict(), game.observation_shape, game.num_actions,
                           net.state_dict(), note), path)


def cmd_distill(args: argparse.Namespace) -> int:
    """``boardzoo distill``: teach a fresh (or ``--init-from``) network the static evaluation's
    play and write it as a model file (arguments: :func:`boardzoo.training.commands.register`)."""
    if not 1 <= args.depth <= 8:
        raise ConfigError(f"--depth must be 1 to 8, got {args.depth}")
    if args.keep_policy and not args.init_from:
        raise ConfigError("--keep-policy needs --init-from (the network whose policy is kept)")
    cfg = load_config(args.config, args.set)
    start = start_net(cfg, args.init_from) if args.init_from else None
    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    data = teacher_positions(cfg, args.positions, args.seed, args.temperature, args.epsilon,
                             args.opening, args.value, args.keep, args.depth,
                             start if args.keep_policy else None)
    t1 = time.perf_counter()
    net, losses = distill(cfg, data, args.steps, args.seed, net=start)
    save_model(cfg, net, args.out, f"distilled from {len(data)} teacher positions "
                                   f"({data.games} games, seed {args.seed}), {args.steps} steps")
    print(f"{len(data)} positions from {data.games} games in {t1 - t0:.0f} s, {args.steps} "
          f"steps in {time.perf_counter() - t1:.0f} s: policy loss "
          f"{losses['policy_loss']:.3f}, value loss {losses['value_loss']:.3f}; wrote {args.out}")
    return 0

