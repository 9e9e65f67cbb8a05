"""Bradley-Terry ratings recover known ratings; intervals, anchors, draws and bad input."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from boardzoo.agents.arena.ratings import C, RatingError, Result, expected_score, fit
from boardzoo.agents.arena.report import build, markdown

TRUE = {"random": 0.0, "weak": -150.0, "good": 250.0, "best": 600.0}


def exact_results(n: int = 2000) -> list[Result]:
    """Per pair, n games whose win count is the expected one (rounded)."""
    out, names = [], list(TRUE)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            wins = round(n * expected_score(TRUE[a] - TRUE[b]))
            out += [Result(a, b, 1.0)] * wins + [Result(a, b, 0.0)] * (n - wins)
    return out


def test_recovers_known_ratings_from_expected_results():
    r = fit(exact_results(), prior=0)
    for name, true in TRUE.items():
        assert r.rating[r.index(name)] == pytest.approx(true, abs=2.0)
    assert r.ci[r.index("random")] == 0 and r.anchor == "random"


def test_sampled_results_fall_within_the_intervals():
    rng, names, results = random.Random(5), list(TRUE), []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = expected_score(TRUE[a] - TRUE[b])
            # Some games are draws (at most a third); the expected score stays p.
            d = min(1 / 3, 2 * min(p, 1 - p))
            q = (p - d / 2) / (1 - d)
            for _ in range(150):
                if rng.random() < d:
                    results.append(Result(a, b, 0.5))
                else:
                    results.append(Result(a, b, 1.0 if rng.random() < q else 0.0))
    r = fit(results, prior=0)
    for name, true in TRUE.items():
        i = r.index(name)
        assert abs(r.rating[i] - true) <= r.ci[i] + 1e-9, name
    assert 0 < r.ci[r.index("good")] < 80


def test_interval_matches_fisher_information_of_two_players():
    n = 400
    results = [Result("a", "random", 1.0), Result("a", "random", 0.0)] * (n // 2)
    r = fit(results, prior=0)
    assert r.rating[r.index("a")] == pytest.approx(0.0, abs=1e-6)
    # Var = 1 / (C^2 n p (1 - p)) with p = 1/2.
    assert r.ci[r.index("a")] == pytest.approx(1.96 / (C * math.sqrt(n / 4)), rel=1e-3)


def test_draws_count_half_and_anchor_moves():
    r = fit([Result("a", "b", 0.5)] * 10 + [Result("b", "c", 1.0), Result("b", "c", 0.0)] * 5,
            anchor="b", prior=0)
    assert np.allclose(r.rating, 0.0, atol=1e-6) and r.anchor == "b"
    assert r.draws[r.index("a"), r.index("b")] == 10


def test_perfect_scores_need_the_prior():
    results = [Result("mcts", "random", 1.0)] * 20
    assert 0 < fit(results).rating[0 if fit(results).players[0] == "mcts" else 1] < 2000
    with pytest.raises(RatingError, match="diverge"):
        fit(results, prior=0)


def test_bad_input_raises():
    with pytest.raises(RatingError, match="no games"):
        fit([])
    with pytest.raises(RatingError, match="not connected"):
        fit([Result("a", "b", 1.0), Result("c", "d", 0.0)])


def test_report_table_and_matrix():
    records = [{"game": "nim", "players": [a, b], "scores": [s, 1 - s], "plies": 5}
               for a, b, s in [("x", "random", 1.0), ("random", "x", 0.5), ("x", "y", 0.0)]]
    rep = build(records, ["random", "x", "y"])
    assert [row["agent"] for row in rep["ranking"]][0] == "y"
    assert rep["score_matrix"]["x"]["random"] == 0.75
    assert rep["games_matrix"]["random"]["x"] == 2 and rep["score_matrix"]["y"]["random"] is None
    text = markdown(rep)
    assert "| 1 | y |" in text and "75% (2)" in text
