"""Bradley-Terry maximum-likelihood ratings on the Elo scale, with 95% confidence intervals.

The model: ``P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))``; a draw counts
as half a win and half a loss. Ratings maximise the likelihood by Newton's
method with one player (the anchor, normally ``random``) fixed at 0. Each pair
that met also gets ``prior`` virtual games drawn (default 1), so that an agent
that won every game gets a finite rating; ``prior=0`` gives the plain MLE.
Confidence intervals come from the inverse Fisher information (the curvature of
the log-likelihood at the maximum) and are relative to the anchor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from boardzoo.envs.core.game import BoardzooError

C = math.log(10) / 400  # Elo points -> natural-log odds
Z95 = 1.959963984540054
DIVERGE = "ratings diverge (some agents won or lost every game); rate with prior > 0"


class RatingError(BoardzooError):
    """Results that cannot be rated (no games, disconnected players, diverging ratings)."""


@dataclass(frozen=True)
class Result:
    """One game between ``a`` and ``b``: ``score_a`` is 1, 0.5 or 0 (``b`` gets the rest)."""

    a: str
    b: str
    score_a: float


@dataclass(frozen=True)
class Ratings:
    """Fitted ratings, their 95% interval half-widths and the aggregated counts."""

    players: list[str]
    rating: np.ndarray
    ci: np.ndarray  # 1.96 standard errors; 0 for the anchor
    games: np.ndarray  # games[i, j]: games between i and j
    score: np.ndarray  # score[i, j]: points i scored against j
    draws: np.ndarray  # draws[i, j]
    anchor: str

    def index(self, name: str) -> int:
        """Return the index of player ``name``."""
        return self.players.index(name)


def tally(results: Iterable[Result], players: Sequence[str] | None = None):
    """Return (players, games, score, draws) matrices from individual results."""
    results = list(results)
    names = list(players) if players else []
    for r in results:
        for p in (r.a, r.b):
            if p not in names:
                names.append(p)
    idx = {p: i for i, p in enumerate(names)}
    n = len(names)
    games, score, draws = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    for r in results:
        i, j = idx[r.a], idx[r.b]
        if i == j:
            raise RatingError(f"{r.a!r} cannot play itself in a rated game")
        games[i, j] += 1
        games[j, i] += 1
        score[i, j] += r.score_a
        score[j, i] += 1 - r.score_a
        if r.score_a == 0.5:
            draws[i, j] += 1
            draws[j, i] += 1
    return names, games, score, draws


def _check_connected(names: list[str], games: np.ndarray) -> None:
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.nonzero(games[i])[0]:
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    if len(seen) != len(names):
        missing = sorted(names[i] for i in range(len(names)) if i not in seen)
        raise RatingError(f"players {missing} are not connected by games to {names[0]!r}")


def _loglik(r: np.ndarray, n: np.ndarray, s: np.ndarray) -> float:
    d = C * (r[:, None] - r[None, :])
    # s[i, j] log p_ij over ordered pairs covers both wins and losses of every pair once.
    return float(np.sum(s * -np.logaddexp(0.0, -d)))


def fit(results: Iterable[Result], anchor: str | None = None, prior: float = 1.0,
        players: Sequence[str] | None = None, max_iter: int = 100) -> Ratings:
    """Fit Bradley-Terry ratings (Elo scale) anchored at ``anchor``; by default ``random``
    if it played, else the first player. An ``anchor`` that played no game is an error."""
    names, games, score, draws = tally(results, players)
    if not names or games.sum() == 0:
        raise RatingError("no games to rate")
    if anchor is None:
        anchor = "random" if "random" in names else names[0]
    elif anchor not in names:
        raise RatingError(f"--anchor {anchor!r} played none of these games; choose one of: "
                          f"{', '.join(names)}")
    _check_connected(names, games)
    met = games > 0
    n = games + prior * met
    s = score + 0.5 * prior * met
    k = names.index(anchor)
    free = [i for i in range(len(names)) if i != k]
    r = np.zeros(len(names))
    ll = _loglik(r, n, s)
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(-C * (r[:, None] - r[None, :])))
        grad = C * (s - n * p).sum(axis=1)
        w = C * C * n * p * (1 - p)
        info = np.diag(w.sum(axis=1)) - w  # Fisher information = minus the Hessian
        step = np.zeros_like(r)
        try:
            step[free] = np.linalg.solve(info[np.ix_(free, free)], grad[free])
        except np.linalg.LinAlgError:  # curvature vanished: some ratings run off to infinity
            raise RatingError(DIVERGE) from None
        t = 1.0
        while True:  # halve the step until the (concave) likelihood does not drop
            new_ll = _loglik(r + t * step, n, s)
            if new_ll >= ll - 1e-12 or t < 1e-6:
                break
            t /= 2
        r, ll = r + t * step, new_ll
        if np.max(np.abs(t * step)) < 1e-7:
            break
        if np.max(np.abs(r)) > 10_000:
            raise RatingError(DIVERGE)
    else:
        raise RatingError("rating fit did not converge")
    p = 1 / (1 + np.exp(-C * (r[:, None] - r[None, :])))
    w = C * C * n * p * (1 - p)
    info = np.diag(w.sum(axis=1)) - w
    try:
        cov = np.linalg.inv(info[np.ix_(free, free)])
    except np.linalg.LinAlgError:
        raise RatingError(DIVERGE) from None
    ci = np.zeros(len(names))
    ci[free] = Z95 * np.sqrt(np.diag(cov))
    return Ratings(names, r, ci, games, score, draws, anchor)


def expected_score(diff: float) -> float:
    """Return the expected score of a player rated ``diff`` Elo points above the opponent."""
    return 1 / (1 + 10 ** (-diff / 400))
