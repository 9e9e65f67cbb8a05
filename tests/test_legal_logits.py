"""Logits of the legal actions only (``PolicyValueNet.forward_at``, the evaluators'
``evaluate_at``): the dense head's logits at those actions, and the same searches and
self-play targets on both engines as with the dense logits."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game, batched_game
from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.config import load_config
from boardzoo.training.knowledge import Knowledge
from boardzoo.training.network import build_net
from boardzoo.training.search.batched import NetBatchEvaluator, run_batched_search
from boardzoo.training.selfplay import NetEvaluator, play_games

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent


def small_config(name: str, *sets: str):
    """The shipped config with a small trunk (Gumbel root without noise)."""
    return load_config(REPO / "configs" / f"{name}.yaml", [
        "model.channels=8", "model.blocks=1", "mcts.simulations=8", "mcts.gumbel_m=4",
        "selfplay.parallel_games=3", *sets])


def random_net(cfg, game) -> torch.nn.Module:
    """A network whose policy head is not zero (as a fresh one's is): every logit differs."""
    torch.manual_seed(5)
    net = build_net(cfg, game).eval()
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() >= 1 and float(p.abs().sum()) == 0:
                p.normal_(0.0, 0.5)
    return net


def positions(name: str, n: int, seed: int) -> list:
    """Unfinished states of seeded random games (a share of the positions on the way)."""
    game, rng = action_game(name), random.Random(seed)
    out, s = [], game.initial_state()
    while len(out) < n:
        actions = game.legal_actions(s)
        if game.is_terminal(s) or not actions:
            s = game.initial_state()
            continue
        s = game.apply_action(s, rng.choice(actions))[0]
        if not game.is_terminal(s) and rng.random() < 0.3:
            out.append(s)
    return out


@pytest.mark.parametrize("name", ["loa", "ultima", "whistling"])
def test_forward_at_gives_the_dense_logits_of_the_asked_actions(name):
    cfg, game = small_config(name), action_game(name)
    net = random_net(cfg, game)
    states = positions(name, 12, seed=3)
    obs = torch.from_numpy(np.stack([game.observation(s, game.to_move(s)) for s in states]))
    priors = Knowledge.inputs(*Knowledge.for_net(net).reference(states))
    # every legal action, and random ones (Whistling: hops off the board, which score 0)
    rng = np.random.default_rng(0)
    legal = [np.asarray(game.legal_actions(s)) for s in states]
    extra = [rng.integers(0, game.num_actions, 50) for _ in states]
    asked = [np.concatenate([a, b]) for a, b in zip(legal, extra, strict=True)]
    rows = torch.from_numpy(np.repeat(np.arange(len(states)), [len(a) for a in asked]))
    actions = torch.from_numpy(np.concatenate(asked))
    with torch.inference_mode():
        dense, values = net(obs, **priors)
        sparse, values_at = net.forward_at(obs, rows, actions, **priors)
    want = dense[rows, actions]
    assert float(want.std()) > 0.1  # the logits are not all alike
    assert torch.allclose(sparse, want, atol=1e-5, rtol=1e-5)
    assert torch.equal(values_at, values)


def dense_only(evaluate):
    """The evaluator without its ``evaluate_at``: the searches take the dense logits."""
    return lambda batch: evaluate(batch)


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_batched_search_on_legal_logits_equals_the_dense_search(name):
    cfg, engine = small_config(name), batched_game(name)
    net = random_net(cfg, engine.action_game)
    roots = engine.from_states(positions(name, 6, seed=4))
    evaluate = NetBatchEvaluator(net, engine)
    runs = [run_batched_search(engine, e, roots, cfg.mcts, torch.Generator().manual_seed(0),
                               simulations=16) for e in (evaluate, dense_only(evaluate))]
    legal, dense = runs
    assert torch.equal(legal.tree.actions[:, 0], dense.tree.actions[:, 0])
    assert torch.equal(legal.tree.N[:, 0], dense.tree.N[:, 0])
    assert torch.allclose(legal.tree.logits[:, 0], dense.tree.logits[:, 0], atol=1e-5)
    assert torch.allclose(legal.policy_target()[1], dense.policy_target()[1], atol=1e-5)


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_selfplay_on_legal_logits_gives_the_dense_targets(name):
    # Gumbel self-play with its noise, on each engine against itself with dense logits
    cfg = small_config(name, "selfplay.max_moves=8")
    game, engine = action_game(name), batched_game(name)
    net = random_net(cfg, game)
    seeds = [1, 2, 3]
    knowledge = Knowledge.for_config(cfg)
    pairs = [(play_games(net, game, cfg, seeds),
              play_games(None, game, cfg, seeds,
                         evaluate=dense_only(NetEvaluator(net, game, knowledge=knowledge)))),
             (play_games_batched(net, engine, cfg, seeds),
              play_games_batched(None, engine, cfg, seeds,
                                 evaluate=dense_only(NetBatchEvaluator(net, engine))))]
    for legal, dense in pairs:
        for r, d in zip(legal, dense, strict=True):
            assert (r.length, r.forced) == (d.length, d.forced) and len(r.obs) > 0
            assert all(np.array_equal(x, y) for x, y in zip(r.actions, d.actions, strict=True))
            assert all(np.allclose(x, y, atol=1e-5) for x, y in
                       zip(r.probs, d.probs, strict=True))
            assert np.allclose(r.root_values, d.root_values, atol=1e-5)


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_training_loss_on_legal_logits_equals_the_dense_loss(name):
    from boardzoo.training.learner import _dense_policy_losses, _legal_policy_losses

    cfg, game = small_config(name), action_game(name)
    net = random_net(cfg, game).train()
    states = positions(name, 10, seed=6)
    rng = np.random.default_rng(1)
    mask = np.zeros((len(states), game.num_actions), dtype=bool)
    policy = np.zeros(mask.shape, dtype=np.float32)
    for i, s in enumerate(states):
        legal = game.legal_actions(s)
        mask[i, legal] = True
        policy[i, legal] = rng.dirichlet(np.ones(len(legal)))
    value, action_prior = Knowledge.for_net(net).reference(states)
    batch = {"obs": torch.from_numpy(np.stack([game.observation(s, game.to_move(s))
                                               for s in states])),
             "mask": torch.from_numpy(mask), "policy": torch.from_numpy(policy)}
    batch.update({k: v for k, v in (("prior", value), ("action_prior", action_prior))
                  if v is not None})
    batch = {k: torch.as_tensor(v) for k, v in batch.items()}
    results = []
    for losses in (_dense_policy_losses, _legal_policy_losses):
        net.zero_grad()
        value, policy_loss, kl = losses(net, batch, bool(net.policy_prior))
        total = policy_loss + (kl if kl is not None else 0) + value.sum()
        total.backward()
        grads = [p.grad.clone() for p in net.parameters() if p.grad is not None]
        kl = None if kl is None else kl.detach()
        results.append((value.detach(), policy_loss.detach(), kl, grads))
    (v0, p0, k0, g0), (v1, p1, k1, g1) = results
    assert torch.equal(v0, v1) and float(p0) > 1.0
    assert torch.allclose(p0, p1, atol=1e-5, rtol=1e-5)
    assert (k0 is None) == (k1 is None) == (not net.policy_prior)
    if k0 is not None:
        assert float(k0) > 0.01 and torch.allclose(k0, k1, atol=1e-5, rtol=1e-5)
    assert len(g0) == len(g1) > 4
    assert all(torch.allclose(a, b, atol=1e-5, rtol=1e-4) for a, b in zip(g0, g1, strict=True))


def test_training_asks_the_bilinear_head_for_the_legal_logits_alone(monkeypatch):
    # compute_loss takes the legal-logits path for a head that says it is cheaper there
    from boardzoo.training import learner

    net = random_net(small_config("ultima"), action_game("ultima"))
    assert net.policy.cheaper_at_legal_actions
    taken = []
    monkeypatch.setattr(learner, "_legal_policy_losses", lambda *a: taken.append(1) or 1 / 0)
    with pytest.raises(ZeroDivisionError):
        learner.compute_loss(net, {})
    assert taken == [1]


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_a_played_search_on_legal_logits_equals_the_dense_search(name):
    from boardzoo.training.search.tree import run_search

    cfg, game = small_config(name), action_game(name)
    net = random_net(cfg, game)
    evaluate = NetEvaluator(net, game)
    for state in positions(name, 3, seed=8):
        legal, dense = (run_search(game, e, state, cfg.mcts, np.random.default_rng(0), 24)
                        for e in (evaluate, dense_only(evaluate)))
        assert legal.root.actions.tolist() == dense.root.actions.tolist()
        assert legal.root.N.tolist() == dense.root.N.tolist() and legal.root.N.sum() > 0
        assert np.allclose(legal.root.logits, dense.root.logits, atol=1e-5)
