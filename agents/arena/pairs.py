"""Statistics of one match (agent A against agent B): trinomial over games, pentanomial over
game pairs, and the generalized SPRT on them, as fishtest computes them.

A game pair is the two games played from one opening, colours swapped; its result for A
is 0, 0.5, 1, 1.5 or 2 points. Pair results are less noisy than single games when the
opening favours one side (the two games of a pair are correlated), so the pentanomial
interval is the honest one for paired games; the trinomial one treats games as
independent. Both are reported.

Formulas (Michel Van den Bergh's, as in fishtest's ``server/fishtest/stats/LLRcalc.py``
and ``stat_util.py``; https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf):

- results are counts ``n_0..n_{m-1}`` of the scores ``a_i = i / (m - 1)`` (m = 3: loss,
  draw, win; m = 5: pair points 0..2 halved); a zero count is replaced by 1e-3
  (``regularize``), N = sum of counts, ``p_i = n_i / N``;
- score ``mu = sum p_i a_i``, per-result variance ``var = sum p_i (a_i - mu)^2``; the 95%
  interval of the score is ``mu +- 1.96 sqrt(var / N)``; logistic Elo
  ``-400 log10(1 / mu - 1)``, its interval the same transform of the score's ends;
- GSPRT: for ``s0 = L(elo0)``, ``s1 = L(elo1)`` with ``L(x) = 1 / (1 + 10^(-x/400))``,
  ``LLR = N sum_i p_i log(q1_i / q0_i)`` where ``q_s`` is the maximum-likelihood
  distribution with expectation ``s``: ``q_i = p_i / (1 + x (a_i - s))``, x the root of
  the secular equation ``sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0`` (Proposition 1.1);
- Wald's bounds: accept H0 at ``LLR <= log(beta / (1 - alpha))``, H1 at
  ``LLR >= log((1 - beta) / alpha)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from boardzoo.envs.core.game import BoardzooError

Z95 = 1.959963984540054
REGULARIZE = 1e-3  # fishtest's regularize(): a count of 0 becomes this


class SprtError(BoardzooError):
    """An --sprt spec that cannot be used."""


def logistic(elo: float) -> float:
    """Return the expected score of an Elo difference (``L`` above)."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of(score: float) -> float | None:
    """Return the logistic Elo difference of a score (None at 0 or 1: unbounded)."""
    if not 0 < score < 1:
        return None
    return -400 * math.log10(1 / score - 1)


def pdf_of(counts: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    """Return N and the distribution [(a_i, p_i)] of trinomial or pentanomial counts."""
    if len(counts) not in (3, 5):
        raise ValueError("counts are 3 (L, D, W) or 5 (pair points 0, 1/2, 1, 3/2, 2)")
    counts = [c if c > 0 else REGULARIZE for c in counts]
    n = sum(counts)
    return n, [(i / (len(counts) - 1), c / n) for i, c in enumerate(counts)]


def _mean_var(pdf: Sequence[tuple[float, float]]) -> tuple[float, float]:
    mu = sum(p * a for a, p in pdf)
    return mu, sum(p * (a - mu) ** 2 for a, p in pdf)


def score_stats(counts: Sequence[int]) -> dict:
    """Return the score, logistic Elo and their 95% intervals of results ``counts`` (the
    raw counts, unregularized: a match without losses has score 1 and no finite Elo)."""
    n = sum(counts)
    if n == 0:
        return {"n": 0, "score": None, "score_ci95": None, "elo": None, "elo_ci95": None}
    values = [i / (len(counts) - 1) for i in range(len(counts))]
    mu = sum(c * a for c, a in zip(counts, values, strict=True)) / n
    var = sum(c * (a - mu) ** 2 for c, a in zip(counts, values, strict=True)) / n
    half = Z95 * math.sqrt(var / n)
    lo, hi = elo_of(mu - half), elo_of(mu + half)
    return {"n": n, "score": mu, "score_ci95": half, "elo": elo_of(mu),
            "elo_ci95": [lo, hi]}


def _secular(pdf: Sequence[tuple[float, float]]) -> float:
    """Return x with ``sum p_i a_i / (1 + x a_i) = 0`` (the a_i straddle 0); the sum falls
    as x grows between the poles ``-1 / max a`` and ``-1 / min a``, so bisection finds it."""
    low = -1 / max(a for a, _ in pdf)
    high = -1 / min(a for a, _ in pdf)
    eps = 1e-12 * (high - low)
    low, high = low + eps, high - eps
    for _ in range(200):
        mid = (low + high) / 2
        if sum(p * a / (1 + mid * a) for a, p in pdf) > 0:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def mle_expected(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """Return the probabilities of the maximum-likelihood distribution on the same values
    with expectation ``s`` (``MLE_expected`` in fishtest's LLRcalc.py)."""
    x = _secular([(a - s, p) for a, p in pdf])
    return [p / (1 + x * (a - s)) for a, p in pdf]


def llr_logistic(elo0: float, elo1: float, counts: Sequence[int]) -> float:
    """Return the generalized log-likelihood ratio of H1 (Elo ``elo1``) against H0
    (``elo0``), logistic Elo, on trinomial or pentanomial ``counts`` (fishtest's
    ``LLR_logistic``)."""
    n, pdf = pdf_of(counts)
    q0, q1 = (mle_expected(pdf, logistic(e)) for e in (elo0, elo1))
    return n * sum(p * (math.log(b) - math.log(a))
                   for (_, p), a, b in zip(pdf, q0, q1, strict=True))


@dataclass(frozen=True)
class Sprt:
    """A sequential test of H0: Elo = elo0 against H1: Elo = elo1, error rates alpha, beta."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def bounds(self) -> tuple[float, float]:
        """Return Wald's (lower, upper) LLR bounds."""
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, counts: Sequence[int]) -> float:
        """Return the LLR of ``counts`` (0 before any result)."""
        return llr_logistic(self.elo0, self.elo1, counts) if sum(counts) else 0.0

    def verdict(self, llr: float) -> str | None:
        """Return "H0" or "H1" once ``llr`` crossed a bound, else None."""
        lower, upper = self.bounds
        return "H0" if llr <= lower else "H1" if llr >= upper else None

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """Parse ``elo0=0,elo1=10,alpha=0.05,beta=0.05`` (any subset; the rest default)."""
        values: dict[str, float] = {}
        for piece in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = piece.partition("=")
            key = key.strip().lower()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise SprtError(f"--sprt: {piece!r} is not elo0=, elo1=, alpha= or beta=")
            try:
                values[key] = float(value)
            except ValueError:
                raise SprtError(f"--sprt: {key} must be a number, got {value!r}") from None
            if not math.isfinite(values[key]):
                raise SprtError(f"--sprt: {key} must be finite, got {value!r}")
        test = cls(**values)
        if not (0 < test.alpha < 0.5 and 0 < test.beta < 0.5):
            raise SprtError("--sprt: alpha and beta must be between 0 and 0.5")
        if test.elo1 <= test.elo0:
            raise SprtError(f"--sprt: elo1 ({test.elo1:g}) must be above elo0 ({test.elo0:g})")
        return test


# -- from game records ----------------------------------------------------------------------
def trinomial(records: Sequence[dict], a: str, b: str) -> list[int]:
    """Return [losses, draws, wins] of ``a`` in its games against ``b``."""
    counts = [0, 0, 0]
    for rec in records:
        if set(rec["players"]) == {a, b} and a != b:
            score = rec["scores"][rec["players"].index(a)]
            counts[round(2 * score)] += 1
    return counts


def pentanomial(records: Sequence[dict], a: str, b: str) -> list[int]:
    """Return the counts of ``a``'s game-pair points (0, 0.5, 1, 1.5, 2) against ``b``: the
    two games of one ``pair`` index, one with each colour; games without their pair partner
    (or recorded without a ``pair``) are left out."""
    halves: dict[int, dict[int, float]] = {}
    for rec in records:
        if set(rec["players"]) != {a, b} or a == b or not isinstance(rec.get("pair"), int):
            continue
        seat = rec["players"].index(a)
        halves.setdefault(rec["pair"], {})[seat] = rec["scores"][seat]
    counts = [0] * 5
    for both in halves.values():
        if len(both) == 2:
            counts[round(2 * (both[0] + both[1]))] += 1
    return counts


def match_stats(records: Sequence[dict], a: str, b: str) -> dict:
    """Return ``a``'s results against ``b``: the trinomial and pentanomial figures."""
    tri, penta = trinomial(records, a, b), pentanomial(records, a, b)
    return {"agents": [a, b],
            "trinomial": {"counts": tri, **_rounded(score_stats(tri))},
            "pentanomial": {"counts": penta, **_rounded(score_stats(penta))}}


def _rounded(stats: dict) -> dict:
    def r(v: float | None, k: int) -> float | None:
        return None if v is None else round(v, k)
    return {"n": stats["n"], "score": r(stats["score"], 4),
            "score_ci95": r(stats["score_ci95"], 4), "elo": r(stats["elo"], 1),
            "elo_ci95": None if stats["elo_ci95"] is None
            else [r(v, 1) for v in stats["elo_ci95"]]}
