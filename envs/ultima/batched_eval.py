"""Ultima's evaluation and capture prior on the batched engine's tensors, all games at once.

The torch twins of :func:`.evaluation.ultima_eval` and :func:`.evaluation.capture_values`
(the descriptor's ``evaluate`` and ``action_prior``) for an :class:`.batched.UltimaBatch`:
material with frozen pieces discounted, pseudo-legal mobility of both sides and the best
capture of the side to move, from :func:`.batched_rules.pseudo_moves` and
:func:`.batched_rules.captures` over every pseudo-legal move of the batch. Both sides'
moves are generated in one call (the batch stacked on itself, colours swapped): on a CPU
the cost is mostly per torch operation, not per game.
"""

from __future__ import annotations

import torch

from .batched import BatchedUltima, UltimaBatch
from .batched_rules import Army, C, I, K, armies, captures, pseudo_moves
from .batched_tables import popcount, spread, square_of, take
from .evaluation import FROZEN_FACTOR, VALUES, W_MOBILITY, W_THREAT

#: Piece value of each piece code (colour bit 8 ignored).
_CODE_VALUE = torch.tensor([VALUES[c & 7] for c in range(16)], dtype=torch.float64)


def _frozen(us: Army, them: Army) -> torch.Tensor:
    """Return (N,) bitboards of every frozen piece of both sides (``State.frozen``)."""
    return ((us[0] & spread(them[I])) | (us[I] & spread(them[C]))
            | (them[0] & spread(us[I])) | (them[I] & spread(us[C])))


def priors(engine: BatchedUltima, batch: UltimaBatch, value: bool = True,
           actions: bool = True) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Return (N,) float64 :func:`.evaluation.ultima_eval` of each game for its side to
    move (if ``value``; a finished game gets the formula's value, which callers ignore) and
    (N, 4096) float32 :func:`.evaluation.capture_values` as a dense row per game (if
    ``actions``: the material each legal capture takes, 0 elsewhere and once a game is
    over)."""
    tb, n = engine.tables, batch.size
    us, them = armies(batch.bb, batch.side)
    sides = 2 if value else 1  # rows n.. : the same games with the other side to move
    mover = [torch.cat([a, b]) for a, b in zip(us, them, strict=True)] if value else us
    other = [torch.cat([b, a]) for a, b in zip(us, them, strict=True)] if value else them
    codes = batch.codes.repeat(sides, 1)
    g, f, kind, dest = pseudo_moves(tb, codes, mover, other)
    count = torch.zeros(n * sides, dtype=torch.int64, device=g.device).index_add_(
        0, g, popcount(dest))
    # every pseudo-legal move of the side to move (rows < n) and what it captures
    on = (g < n).nonzero().squeeze(1)
    g, f, kind, dest = take(g, on), take(f, on), take(kind, on), take(dest, on)
    row, t = tb.expand(dest).nonzero(as_tuple=True)
    g, f, kind = take(g, row), take(f, row), take(kind, row)
    caps = captures(tb, kind, f, t, take(us[0] | them[0], g), take(us[0], g),
                    [take(a, g) for a in them], take(square_of(us[K]), g))
    # most moves take nothing: value only the captures
    hit = (caps != 0).nonzero().squeeze(1)
    g, f, t, caps = take(g, hit), take(f, hit), take(t, hit), take(caps, hit)
    square_value = _CODE_VALUE.to(g.device).index_select(0, batch.codes.view(-1).long() & 15)
    taken = (tb.expand(caps) * take(square_value.view(n, 64), g)).sum(1)
    evaluation = prior = None
    if value:
        best = torch.zeros(n, dtype=torch.float64, device=g.device)
        best.scatter_reduce_(0, g, taken, "amax")
        frozen = tb.expand(_frozen(us, them))
        weight = torch.where(frozen, FROZEN_FACTOR, 1.0) * square_value.view(n, 64)
        own = tb.expand(us[0])
        material = (weight * own).sum(1) - (weight * tb.expand(them[0])).sum(1)
        evaluation = (material + W_MOBILITY * (count[:n] - count[n:]).double()
                      + W_THREAT * best)
    if actions:
        # legal: the origin's destination bitboard has the bit, and the game is not over
        legal = (take(batch.legal.view(-1), g * 64 + f) >> t) & 1
        hit = (taken > 0) & (legal != 0) & ~take(batch.over, g)
        flat = torch.zeros(n * 4096, dtype=torch.float32, device=g.device)
        flat.index_put_((g[hit] * 4096 + f[hit] * 64 + t[hit],), taken[hit].float())
        prior = flat.view(n, 4096)
    return evaluation, prior
