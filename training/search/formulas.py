"""The search's formulas, written once for both tree backends (numpy arrays, torch tensors).

Every function works along the last axis. Edge arrays are ``(..., K)``: a numpy
node's edges ``(K,)``, or one node of each of B games ``(B, K)`` in the batched
backend. Per-node values (the node's network value, its visit count, the largest
visit count) come with a trailing axis of 1 (``(B, 1)``) or as scalars, so they
broadcast over the edges. ``valid`` marks real edges; None means every edge is real
(a numpy node has no padding). Array functions come from the Array API
(``array_api_compat``), so numpy and torch run the same expressions in the same
order and each backend's numbers are what they were before the two were merged.

The one step the backends do differently is the prior-weighted mean of the visited
edges' values in :func:`completed_q`: the numpy backend sums only the visited edges
(a BLAS dot), the batched one sums padded rows. Each passes its own ``prior_sums``;
where a node has no visited edge its sums may be anything (the node's value is used).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from array_api_compat import array_namespace

#: ``prior_sums(prior, q, visited)`` -> (sum of prior * q, sum of prior) over the visited
#: edges of each node, each with a trailing axis of 1 or as a scalar.
PriorSums = Callable[[Any, Any, Any], tuple[Any, Any]]


def masked(score: Any, valid: Any | None) -> Any:
    """Return ``score`` with padded edges at -inf (they never win an argmax)."""
    if valid is None:
        return score
    return array_namespace(score).where(valid, score, -math.inf)


def edge_q(n: Any, w: Any, unvisited: Any) -> Any:
    """Mean value W / N of each edge, ``unvisited`` where N is 0."""
    xp = array_namespace(n)
    return xp.where(n > 0, w / xp.clip(n, min=1), unvisited)


def puct_scores(n: Any, w: Any, prior: Any, value: Any, visits: Any, c_puct: float,
                fpu_reduction: float) -> Any:
    """AlphaZero's PUCT score: Q (first-play urgency: the node's value less
    ``fpu_reduction`` for unvisited edges) + c_puct * P * sqrt(visits) / (1 + N)."""
    xp = array_namespace(n)
    q = edge_q(n, w, value - fpu_reduction)
    return q + (c_puct * prior) * (xp.sqrt(xp.clip(visits, min=1)) / (1 + n))


def completed_q(n: Any, w: Any, prior: Any, value: Any, prior_sums: PriorSums) -> Any:
    """Edge values with unvisited edges set to the mixed value v_mix (Gumbel MuZero,
    appendix D): the node's value blended with its visited edges' prior-weighted mean."""
    xp = array_namespace(n)
    visited = n > 0
    q = edge_q(n, w, 0.0)
    total = xp.sum(n, axis=-1, keepdims=True)
    any_visited = xp.any(visited, axis=-1, keepdims=True)
    pq, p = prior_sums(prior, q, visited)
    mixed = (value + total * pq / p) / (1 + total)  # NaN where nothing was visited: not used
    v_mix = xp.where(any_visited, mixed, value)
    return xp.where(visited, q, v_mix)


def sigma(q: Any, max_n: Any, c_visit: float, c_scale: float) -> Any:
    """Gumbel MuZero's monotone transform of values in [-1, 1] (rescaled to [0, 1]) into
    logit units: (c_visit + max N) * c_scale * (q + 1) / 2."""
    return ((c_visit + max_n) * c_scale) * ((q + 1) / 2)


def softmax(z: Any) -> Any:
    """Softmax along the last axis (padded entries at -inf get 0)."""
    xp = array_namespace(z)
    p = xp.exp(z - xp.max(z, axis=-1, keepdims=True))
    return p / xp.sum(p, axis=-1, keepdims=True)


def improved_policy(n: Any, w: Any, prior: Any, logits: Any, value: Any, c_visit: float,
                    c_scale: float, prior_sums: PriorSums) -> Any:
    """Gumbel MuZero's improved policy softmax(logits + sigma(completed q))."""
    q = completed_q(n, w, prior, value, prior_sums)
    return softmax(logits + sigma(q, max_n(n), c_visit, c_scale))


def max_n(n: Any) -> Any:
    """Largest visit count of each node's edges (0 for a node without edges)."""
    xp = array_namespace(n)
    if n.shape[-1] == 0:
        return xp.zeros((*n.shape[:-1], 1), dtype=n.dtype)
    return xp.max(n, axis=-1, keepdims=True)


def gumbel_inner_scores(pi: Any, n: Any) -> Any:
    """Gumbel MuZero's deterministic inner-node selection: the edge whose share of visits
    lags most behind the improved policy ``pi``."""
    xp = array_namespace(n)
    return pi - n / (1 + xp.sum(n, axis=-1, keepdims=True))


def bit_length(x: Any) -> Any:
    """Number of bits of each non-negative integer (ceil(log2(m)) is bit_length(m - 1))."""
    xp = array_namespace(x)
    bits = xp.zeros_like(x)
    rest = x
    while bool(xp.any(rest > 0)):
        bits = bits + xp.astype(rest > 0, x.dtype)
        rest = rest // 2
    return bits
