"""Whistling's evaluation on the batched engine's tensors, all games at once.

The torch twin of :func:`.evaluation.whistling_eval` (the descriptor's ``evaluate``) for a
:class:`.batched.WhistlingBatch`. Like the reference (through ``ActionGame.game_state``) it
scores the position at the start of the turn in progress: mid-chain, the moving stone goes
back to where the turn started and the stones it took so far come back. The maximum
captures of both sides come from the engine's batched chain search
(:func:`.batched_search.chain_values`); a game whose search outgrows the engine's
``node_limit`` asks the compiled kernel (through ``State``), as the engine's masks do.
"""

from __future__ import annotations

import torch

from .batched import BatchedWhistling, WhistlingBatch
from .batched_search import chain_values, context, hop_nodes, root_hops, roots, stone_list, to_ints
from .kernel import W_EXPOSED, W_NOW
from .rules import State


def max_captures(engine: BatchedWhistling, own: torch.Tensor,
                 enemy: torch.Tensor) -> torch.Tensor:
    """Return (N,) int64: the stones the best turn of ``own`` (N, 331) bool against
    ``enemy`` captures (``State.max_capture`` with a quiet counter of 0)."""
    tb, n, dev = engine.tb, own.shape[0], own.device
    ctx = context(tb, own, enemy)
    cells = stone_list(own)
    _, crush, valid, _ = root_hops(tb, own, enemy, cells, ctx.mx)
    g, s, d, k = valid.nonzero(as_tuple=True)
    first = hop_nodes(tb, roots(ctx, g, cells[g, s], torch.full_like(g, -1)),
                      torch.arange(g.numel(), device=dev), d, k)
    values, too_big = chain_values(tb, ctx, first, engine.node_limit)
    most = torch.zeros(n, dtype=torch.int64, device=dev).scatter_reduce_(0, g, values, "amax")
    most = torch.maximum(most, crush.flatten(1).any(1).long())  # a crush takes one stone
    big = too_big.nonzero().squeeze(1)
    if big.numel():
        mine, theirs = to_ints(own[big]), to_ints(enemy[big])
        most[big] = torch.tensor([State(a, b).max_capture() for a, b in zip(mine, theirs,
                                                                             strict=True)],
                                 dtype=torch.int64, device=dev)
    return most


def turn_start(batch: WhistlingBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the (own, enemy) boards of each game at the start of the turn in progress."""
    own, enemy = batch.own, batch.opp | batch.taken
    mid = (batch.mover >= 0).nonzero().squeeze(1)
    if mid.numel():
        own = own.clone()
        own[mid, batch.mover[mid]] = False
        own[mid, batch.start[mid]] = True
    return own, enemy


def priors(engine: BatchedWhistling, batch: WhistlingBatch, value: bool = True,
           actions: bool = False) -> tuple[torch.Tensor | None, None]:
    """Return ((N,) float64 :func:`.evaluation.whistling_eval` of each game's turn-start
    position for its side to move, if ``value``; a finished game gets the formula's value,
    which callers ignore), None): Whistling has no action prior."""
    if actions:
        raise ValueError("whistling has no action prior")
    if not value:
        return None, None
    own, enemy = turn_start(batch)
    material = own.sum(1) - enemy.sum(1)
    now, exposed = max_captures(engine, own, enemy), max_captures(engine, enemy, own)
    return material.double() + W_NOW * now.double() - W_EXPOSED * exposed.double(), None
