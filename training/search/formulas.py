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
(a BLAS dot), the batched one sums padded rows. Each passes its own ``prior_sums``,
which gives (0, 1) for a node without visits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: ``prior_sums(prior, q, visited)`` -> (sum of prior * q, sum of prior) over the visited
#: edges of each node, each with a trailing axis of 1 or as a scalar.
PriorSums = Callable[[Any, Any, Any], tuple[Any, Any]]


def _rows(x: Any) -> bool:
    """Whether ``x`` holds rows (one node per game): reductions then keep their axis to
    broadcast; one numpy node's reduce to scalars, as cheap as plain floats."""
    return x.ndim > 1


def _max(xp: Any, x: Any, keep: bool) -> Any:
    """Largest entry along the last axis (numpy's method: a third of ``np.max``'s cost)."""
    if isinstance(x, np.ndarray):
        return x.max(axis=-1, keepdims=keep)
    return xp.max(x, axis=-1, keepdims=keep)


def masked(xp: Any, score: Any, valid: Any | None) -> Any:
    """Return ``score`` with padded edges at -inf (they never win an argmax)."""
    if valid is None:
        return score
    return xp.where(valid, score, -math.inf)


def edge_q(xp: Any, n: Any, w: Any, unvisited: Any) -> Any:
    """Mean value W / N of each edge, ``unvisited`` where N is 0."""
    return xp.where(n > 0, w / xp.maximum(n, 1), unvisited)


def puct_scores(xp: Any, n: Any, w: Any, prior: Any, value: Any, visits: Any, c_puct: float,
                fpu_reduction: float) -> Any:
    """AlphaZero's PUCT score: Q (first-play urgency: the node's value less
    ``fpu_reduction`` for unvisited edges) + c_puct * P * sqrt(visits) / (1 + N)."""
    q = edge_q(xp, n, w, value - fpu_reduction)
    return q + (c_puct * prior) * (xp.sqrt(xp.maximum(visits, 1)) / (1 + n))


def completed_q(xp: Any, n: Any, w: Any, prior: Any, value: Any, prior_sums: PriorSums) -> Any:
    """Edge values with unvisited edges set to the mixed value v_mix (Gumbel MuZero,
    appendix D): the node's value blended with its visited edges' prior-weighted mean."""
    visited = n > 0
    q = edge_q(xp, n, w, 0.0)
    total = n.sum(axis=-1, keepdims=_rows(n))  # (a method: numpy's and torch's take these names)
    pq, p = prior_sums(prior, q, visited)  # (0, 1) without visits: v_mix is then the value
    return xp.where(visited, q, (value + total * pq / p) / (1 + total))


def sigma(q: Any, max_n: Any, c_visit: float, c_scale: float) -> Any:
    """Gumbel MuZero's monotone transform of values in [-1, 1] (rescaled to [0, 1]) into
    logit units: (c_visit + max N) * c_scale * (q + 1) / 2."""
    return ((c_visit + max_n) * c_scale) * ((q + 1) / 2)


def softmax(xp: Any, z: Any) -> Any:
    """Softmax along the last axis (padded entries at -inf get 0)."""
    keep = _rows(z)
    p = xp.exp(z - _max(xp, z, keep))
    return p / p.sum(axis=-1, keepdims=keep)


def improved_policy(xp: Any, n: Any, w: Any, prior: Any, logits: Any, value: Any, c_visit: float,
                    c_scale: float, prior_sums: PriorSums) -> Any:
    """Gumbel MuZero's improved policy softmax(logits + sigma(completed q))."""
    q = completed_q(xp, n, w, prior, value, prior_sums)
    return softmax(xp, logits + sigma(q, max_n(xp, n), c_visit, c_scale))


def max_n(xp: Any, n: Any) -> Any:
    """Largest visit count of each node's edges (0 for a node without edges)."""
    if n.shape[-1] == 0:
        return xp.zeros((*n.shape[:-1], 1), dtype=n.dtype)
    return _max(xp, n, _rows(n))


def gumbel_inner_scores(xp: Any, pi: Any, n: Any) -> Any:
    """Gumbel MuZero's deterministic inner-node selection: the edge whose share of visits
    lags most behind the improved policy ``pi``."""
    return pi - n / (1 + n.sum(axis=-1, keepdims=_rows(n)))


def take(xp: Any, x: Any, index: Any) -> Any:
    """Entry ``index`` of ``x`` along the last axis: one tree's (a 0-d index), or each
    row's own (a gather, ``index`` of shape ``(B,)``)."""
    if index.ndim == 0:
        return x[index]
    return xp.take_along_axis(x, index[..., None], axis=-1)[..., 0]


def gather(xp: Any, x: Any, index: Any) -> Any:
    """Entries ``index`` of ``x`` along the last axis, each row its own (one tree: plain
    indexing, a sixth of ``take_along_axis``'s cost)."""
    if x.ndim == 1:
        return x[index]
    return xp.take_along_axis(x, index, axis=-1)


def any_true(x: Any) -> bool:
    """Whether any entry of the boolean ``x`` (a 0-d one included) is true."""
    return bool(x) if x.ndim == 0 else bool(x.any())


def bit_length(xp: Any, x: Any) -> Any:
    """Number of bits of each non-negative integer (ceil(log2(m)) is bit_length(m - 1))."""
    bits = xp.zeros_like(x)
    rest = x
    while bool((rest > 0).any()):
        bits = bits + xp.astype(rest > 0, x.dtype)
        rest = rest // 2
    return bits
