"""The search's parts (training/search): formulas checked against hand-computed numbers,
the same on numpy and torch, and the root rules' declared keys behind the no-effect check."""

from __future__ import annotations

import array_api_compat.torch as xt
import numpy as np
import pytest
import torch

from boardzoo.training.config import Config, ConfigError, from_dict
from boardzoo.training.config_schema import MCTSConfig
from boardzoo.training.search import batched, formulas, tree
from boardzoo.training.search.roots import ROOT_RULES, Edges, GumbelRoot, PuctRoot


def test_puct_score_by_hand():
    # two edges: visited once with W=0.5, unvisited; node value 0.2, 4 visits, c_puct 2
    n, w, prior = np.array([1.0, 0.0]), np.array([0.5, 0.0]), np.array([0.25, 0.75])
    s = formulas.puct_scores(np, n, w, prior, 0.2, np.float64(4), 2.0, 0.1)
    # Q + c * P * sqrt(4) / (1 + N); the unvisited edge's Q is 0.2 - 0.1 (first-play urgency)
    assert s[0] == pytest.approx(0.5 + 2 * 0.25 * 2 / 2)
    assert s[1] == pytest.approx(0.1 + 2 * 0.75 * 2 / 1)


def test_completed_q_and_sigma_by_hand():
    n, w, prior = np.array([2.0, 0.0, 1.0]), np.array([1.0, 0.0, -1.0]), np.array([.5, .3, .2])
    q = formulas.completed_q(np, n, w, prior, 0.4, tree.prior_sums)
    # visited Q 0.5 and -1; v_mix = (0.4 + 3 * (0.5*0.5 + 0.2*-1) / 0.7) / 4
    v_mix = (0.4 + 3 * (0.25 - 0.2) / 0.7) / 4
    assert q.tolist() == pytest.approx([0.5, v_mix, -1.0])
    # nothing visited: every edge gets the node's value
    assert formulas.completed_q(np, np.zeros(3), np.zeros(3), prior, -0.3,
                                tree.prior_sums).tolist() == [-0.3] * 3
    # sigma = (c_visit + max N) * c_scale * (q + 1) / 2
    assert formulas.sigma(np.array([0.0, 1.0]), 3.0, 50.0, 0.5).tolist() == [13.25, 26.5]


def test_formulas_are_the_same_numbers_on_numpy_and_torch():
    rng = np.random.default_rng(1)
    for _ in range(50):
        k = int(rng.integers(2, 40))
        n = np.where(rng.random(k) < 0.5, rng.integers(1, 9, k), 0).astype(np.float64)
        w = rng.normal(size=k) * n
        logits = rng.normal(size=k)
        prior = np.exp(logits) / np.exp(logits).sum()
        value = float(rng.uniform(-1, 1))
        t = [torch.from_numpy(a)[None] for a in (n, w, prior, logits)]
        tv = torch.tensor([[value]], dtype=torch.float64)
        visits = np.float64(n.sum())
        # last bits only: torch's float64 sqrt is not correctly rounded on every CPU (on an
        # AVX-512 Xeon sqrt(19) is one ulp below numpy's, which is)
        np.testing.assert_allclose(
            formulas.puct_scores(np, n, w, prior, value, visits, 1.5, 0.0),
            formulas.puct_scores(xt, t[0], t[1], t[2], tv, torch.tensor([[visits]]), 1.5,
                                 0.0)[0].numpy(), rtol=1e-12, atol=1e-15)
        a = formulas.improved_policy(np, n, w, prior, logits, value, 50.0, 1.0, tree.prior_sums)
        b = formulas.improved_policy(xt, *t[:2], t[2], t[3], tv, 50.0, 1.0,
                                     batched.prior_sums)[0]
        # the backends sum the prior-weighted values in their own order: last bits only
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-15)


def _edges(n: list[float], logits: list[float]) -> Edges:
    lg = np.array(logits)
    prior = np.exp(lg) / np.exp(lg).sum()
    na = np.array(n)
    return Edges(na, np.zeros_like(na), prior, lg, 0.0, np.float64(na.sum()),
                 np.ones(len(na), bool), tree.prior_sums, np)


class _NoDraws:
    def gumbel(self, valid):
        raise AssertionError("no noise was asked for")

    dirichlet = sample = gumbel


def test_gumbel_root_plans_sequential_halving():
    # 4 candidates, 8 simulations, 2 phases: each candidate once per phase-1 round
    cfg = MCTSConfig(root="gumbel", simulations=8, gumbel_m=4)
    rule = GumbelRoot(cfg, 8, add_noise=False, draw=_NoDraws())
    root = _edges([0, 0, 0, 0, 0], [0.0, 3.0, 1.0, 2.0, -1.0])
    rule.start(root)
    assert rule.cands.tolist() == [1, 3, 2, 0]  # the top 4 logits, best first
    assert int(rule.phases) == 2
    picks = [int(rule.pick_root(root, done, True)) for done in range(1, 5)]
    # phase 1: 7 simulations left over 2 phases and 4 candidates: 7 // 8 -> 1 visit each
    assert picks == [1, 3, 2, 0]


def test_puct_choose_breaks_visit_ties_by_value():
    cfg = MCTSConfig(root="puct")
    rule = PuctRoot(cfg, 8, add_noise=False, draw=_NoDraws())
    root = _edges([3, 3, 1], [0.0, 0.0, 0.0])
    root.w = np.array([0.3, 1.5, 0.9])
    assert int(rule.choose(root, 0.0)) == 1
    # no visits at all: the best prior
    assert int(rule.choose(_edges([0, 0, 0], [0.1, 0.5, 0.2]), 0.0)) == 1


def _changed(value):
    """A value other than the default and inside the key's range, so the key counts."""
    if isinstance(value, bool):
        return not value
    if value == 0:
        return type(value)(1) if isinstance(value, int) else 0.1
    return max(1, value // 2) if isinstance(value, int) else value / 2


@pytest.mark.parametrize("name", sorted(ROOT_RULES))
def test_each_rules_keys_are_refused_where_it_is_not_used(name):
    other = next(n for n in ROOT_RULES if n != name)
    rule = ROOT_RULES[name]
    keys = rule.keys + rule.selfplay_keys + rule.play_keys
    assert keys
    for key in keys:
        section, field = key.split(".")
        changed = _changed(getattr(getattr(Config(), section), field))
        for root, refused in ((other, True), (name, False)):
            body = {"game": "loa", "mcts": {"root": root}}
            body.setdefault(section, {})[field] = changed
            if refused:  # neither self-play's nor play's root
                with pytest.raises(ConfigError, match=f"{key} has no effect"):
                    from_dict(body)
            else:  # the root of both
                assert getattr(getattr(from_dict(body), section), field) == changed
