"""The game's priors in torch (envs/<game>/batched_eval.py, training/knowledge.py) against the
reference definitions (the descriptor's ``evaluate`` / ``action_prior`` through
training/prior.py), and self-play with priors on both engines giving the same targets."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.buffer import value_targets
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.knowledge import Knowledge
from boardzoo.training.network import build_net
from boardzoo.training.selfplay import NetEvaluator, play_games

from conftest import defined_priors

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent
PRIORS = {"ultima": (True, 2.0), "whistling": (True, 0.0)}  # (value_prior, policy_prior)


def played_positions(name: str, n: int, seed: int, every: float = 0.25) -> list:
    """About ``n`` action states of whole seeded random games: a share ``every`` of the
    positions on the way and every game's final (terminal) position."""
    game, rng = action_game(name), random.Random(seed)
    out: list = []
    while len(out) < n:
        s = game.initial_state()
        while not game.is_terminal(s):
            if rng.random() < every:
                out.append(s)
            s = game.apply_action(s, rng.choice(game.legal_actions(s)))[0]
        out.append(s)
    return out


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_batched_priors_equal_the_reference_priors(name):
    value_prior, policy_prior = PRIORS[name]
    states = played_positions(name, 300, seed=21, every=0.1 if name == "ultima" else 0.3)
    game, engine = action_game(name), batched_game(name)
    knowledge = Knowledge(name, value_prior, policy_prior)
    value, prior = knowledge.batched(engine, engine.from_states(states))
    want, dense = defined_priors(name, states)
    terminal = np.array([game.is_terminal(s) for s in states])
    assert terminal.sum() >= 2 and (want != 0).sum() > len(states) // 2
    assert value.dtype == torch.float32 and value.shape == (len(states),)
    assert np.allclose(value.numpy(), want, atol=1e-6, rtol=0)
    assert np.all(value.numpy()[terminal] == 0)
    ref_value, ref_prior = knowledge.reference(states)
    assert np.array_equal(ref_value, want)
    if policy_prior:
        assert (dense > 0).sum() > 100  # many positions with captures
        assert torch.equal(prior, torch.from_numpy(dense))
        assert np.array_equal(ref_prior, dense)
    else:
        assert prior is None and ref_prior is None


def test_whistling_priors_mid_chain_score_the_turn_start():
    """Mid-chain action states are scored as the position before the turn (the reference's
    ``game_state``): the sampled positions must include such states."""
    states = [s for s in played_positions("whistling", 400, seed=5, every=0.5) if s.done]
    assert len(states) >= 10
    engine = batched_game("whistling")
    value, _ = Knowledge("whistling", True).batched(engine, engine.from_states(states))
    assert np.allclose(value.numpy(), defined_priors("whistling", states)[0], atol=1e-6, rtol=0)


def test_reference_root_priors_are_remembered_not_recomputed(monkeypatch):
    knowledge = Knowledge("ultima", True, 2.0)
    states = played_positions("ultima", 6, seed=2)
    value, dense = knowledge.reference(states)
    calls = []
    monkeypatch.setattr(knowledge, "_evaluate", lambda g: calls.append(g) or 0.0)
    game = action_game("ultima")
    for i, s in enumerate(states):
        actions = np.asarray(game.legal_actions(s), dtype=np.int64)
        v, a = knowledge.root(s, actions)
        assert v == value[i] and np.array_equal(a, dense[i, actions])
    assert not calls
    knowledge.root(played_positions("ultima", 1, seed=3)[0], np.zeros(0, np.int64))
    assert len(calls) == 1  # a position never evaluated is computed


def test_a_network_without_priors_gets_none():
    assert not Knowledge.for_net(torch.nn.Linear(1, 1)).active
    assert Knowledge("loa").batched(None, None) == (None, None)


# -- self-play on both engines ------------------------------------------------------------------
def prior_config(name: str, *sets: str):
    """The shipped config with a small network whose heads start at zero (it outputs exactly
    its priors), deterministic PUCT self-play (no noise, no temperature)."""
    return load_config(REPO / "configs" / f"{name}.yaml", [
        "model.channels=8", "model.blocks=1", "mcts.root=puct",
        "mcts.dirichlet_alpha=0", "selfplay.temperature_moves=0", "selfplay.parallel_games=2",
        "mcts.simulations=6", *sets])


@pytest.mark.parametrize("name,moves,reuse", [("ultima", 24, "true"),
                                              ("whistling", 12, "false")])
def test_selfplay_paths_give_the_same_targets_with_priors(name, moves, reuse):
    cfg = prior_config(name, f"selfplay.max_moves={moves}", f"mcts.reuse_tree={reuse}")
    assert cfg.selfplay.adjudicate and cfg.model.value_prior
    torch.manual_seed(0)
    net = build_net(cfg, action_game(name)).eval()
    seeds = [3, 4, 5]  # (no noise, no temperature: the games are alike; 3 games on 2 slots)
    ref = play_games(net, action_game(name), cfg, seeds)
    bat = play_games_batched(net, batched_game(name), cfg, seeds)
    for r, b in zip(ref, bat, strict=True):
        assert (b.seed, b.length, b.capped, b.forced) == (r.seed, r.length, r.capped, r.forced)
        assert b.outcome == pytest.approx(r.outcome, abs=1e-9)
        assert b.players == r.players and len(b.obs) == len(r.obs) > 0
        assert all(np.array_equal(x, y) for x, y in zip(b.obs, r.obs, strict=True))
        assert all(np.array_equal(x, y) for x, y in zip(b.actions, r.actions, strict=True))
        assert all(np.allclose(x, y, atol=1e-6) for x, y in zip(b.probs, r.probs, strict=True))
        assert np.allclose(b.priors, r.priors, atol=1e-6) and len(b.priors) == len(b.obs)
        assert np.allclose(b.root_values, r.root_values, atol=1e-9)
        assert len(b.root_values) == len(b.obs)
        mixed = [value_targets(x.outcomes(), np.float32(x.root_values), np.zeros(len(x.obs), bool),
                               0.5) for x in (b, r)]  # train.value_target_q
        assert np.allclose(*mixed, atol=1e-6)
        assert len(b.action_priors) == (len(b.obs) if cfg.model.policy_prior else 0)
        assert all(np.array_equal(x, y) for x, y in
                   zip(b.action_priors, r.action_priors, strict=True))
    assert any(r.capped and r.outcome != 0 for r in ref)  # adjudicated by the evaluation
    if cfg.model.policy_prior:  # captures were scored along the way
        assert any(a.sum() > 0 for rec in bat for a in rec.action_priors)


def test_reference_evaluator_takes_its_priors_from_knowledge():
    cfg = prior_config("ultima")
    net = build_net(cfg, action_game("ultima")).eval()
    states = played_positions("ultima", 8, seed=9)
    logits, values = NetEvaluator(net, action_game("ultima"))(states)
    value, dense = Knowledge.for_config(cfg).reference(states)
    assert np.allclose(values, np.tanh(value), atol=1e-6)  # zero heads: exactly the priors
    assert np.allclose(logits, 2.0 * dense, atol=1e-6)


def test_priors_are_accepted_with_the_batched_engine_where_the_game_has_them():
    cfg = load_config(REPO / "configs" / "ultima.yaml", ["selfplay.engine=batched"])
    assert cfg.model.value_prior and cfg.model.policy_prior == 2.0
    assert load_config(REPO / "configs" / "whistling.yaml",
                       ["selfplay.engine=batched"]).model.value_prior
    with pytest.raises(ConfigError, match="loa has no batched evaluation"):
        load_config(REPO / "configs" / "loa.yaml",
                    ["selfplay.engine=batched", "model.value=prior"])
