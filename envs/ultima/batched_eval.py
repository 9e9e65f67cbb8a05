"""Ultima's evaluation and capture prior on the batched engine's tensors, all games at once.

The torch twins of :func:`.evaluation.ultima_eval` and :func:`.evaluation.capture_values`
(the descriptor's ``evaluate`` and ``action_prior``) for an :class:`.batched.UltimaBatch`:
material with frozen pieces discounted, pseudo-legal mobility of both sides and the best
capture of the side to move, from :func:`.batched_rules.pseudo_moves` and
:func:`.batched_rules.captures` over every pseudo-legal move of the batch.
"""

from __future__ import annotations

import torch

from .batched import BatchedUltima, UltimaBatch
from .batched_rules import Army, C, I, K, armies, captures, pseudo_moves
from .batched_tables import popcount, spread, square_of, take
from .evaluation import FROZEN_FACTOR, VALUES, W_MOBILITY, W_THREAT


def _material(army: Army, frozen: torch.Tensor) -> torch.Tensor:
    """Return (N,) float64: the army's piece values, frozen pieces at ``FROZEN_FACTOR``."""
    out = torch.zeros(army[0].shape, dtype=torch.float64, device=frozen.device)
    for kind in range(1, 8):
        if VALUES[kind]:
            live = popcount(army[kind] & ~frozen).double()
            out += VALUES[kind] * (live + FROZEN_FACTOR * popcount(army[kind] & frozen))
    return out


def _capture_values(army: Army, caps: torch.Tensor) -> torch.Tensor:
    """Return (M,) float64: the piece values of ``army`` (rows aligned with ``caps``) on the
    captured squares ``caps``."""
    out = torch.zeros(caps.shape, dtype=torch.float64, device=caps.device)
    for kind in range(1, 8):
        if VALUES[kind]:
            out += VALUES[kind] * popcount(caps & army[kind]).double()
    return out


def _moves(engine: BatchedUltima, batch: UltimaBatch, us: Army, them: Army,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the pseudo-legal moves of ``us`` (to move) as (game, origin, destination,
    value of what each captures), and the (N,) count of moves per game."""
    tb = engine.tables
    g, f, kind, dest = pseudo_moves(tb, batch.codes, us, them)
    count = torch.zeros_like(us[0]).index_add_(0, g, popcount(dest))
    row, t = tb.expand(dest).nonzero(as_tuple=True)
    g, f, kind = take(g, row), take(f, row), take(kind, row)
    occ = us[0] | them[0]
    caps = captures(tb, kind, f, t, take(occ, g), take(us[0], g), [take(a, g) for a in them],
                    take(square_of(us[K]), g))
    return g, f * 64 + t, _capture_values([take(a, g) for a in them], caps), count


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
    over); the side to move's moves are generated once for both."""
    us, them = armies(batch.bb, batch.side)
    g, action, taken, n1 = _moves(engine, batch, us, them)
    evaluation = prior = None
    if value:
        best = torch.zeros(batch.size, dtype=torch.float64, device=taken.device)
        best.scatter_reduce_(0, g, taken, "amax")
        g2, _, _, dest2 = pseudo_moves(engine.tables, batch.codes, them, us)
        n2 = torch.zeros_like(n1).index_add_(0, g2, popcount(dest2))
        frozen = _frozen(us, them)
        evaluation = (_material(us, frozen) - _material(them, frozen)
                      + W_MOBILITY * (n1 - n2).double() + W_THREAT * best)
    if actions:
        flat = torch.zeros(batch.size * 4096, dtype=torch.float32, device=taken.device)
        at = g * 4096 + action
        # legal: the origin's destination bitboard has the bit, and the game is not over
        legal = (take(batch.legal.view(-1), g * 64 + (action >> 6)) >> (action & 63)) & 1
        hit = (taken > 0) & (legal != 0) & ~take(batch.over, g)
        flat.index_put_((at[hit],), taken[hit].float())
        prior = flat.view(batch.size, 4096)
    return evaluation, prior
