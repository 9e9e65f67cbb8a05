"""Hop generation and the maximum-capture chain search of the batched Whistling engine.

A *node* is a stone about to hop in a game of the batch: its cell, the direction of the
hop that brought it there (-1 before the first hop; chain hops must turn) and two padded
boards: ``occ``, every stone that blocks it (the moving stone itself never does: spec 4
makes its start cell empty for the whole turn), and ``left``, the enemy stones still on
the board (captured stones leave both).

:func:`root_hops` gives the first hops of every stone of every game at once (free ray
length, closer-rule bound, whistle-zone captures as cumulative sums over the cells each
longer hop adds, crushes); :func:`expand` does the same for a batch of chain nodes;
:func:`chain_values` runs the maximum-capture search level by level over all games together
(one node per capturing hop, no Python loop over games); :func:`per_game_actions` is the
per-game alternative on the compiled kernel (:mod:`.kernel`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from . import kernel
from .batched_tables import NEG, SENT
from .hexgrid import MAX_DISTANCE, NUM_CELLS

RAY = 6 * (MAX_DISTANCE + 1)  # ray table entries per cell
ZONE = 6 * MAX_DISTANCE * 2  # zone table entries per cell


class Context(NamedTuple):
    """Per-game data of the side to move that every node of the game shares."""

    occ: torch.Tensor  # (M, 332) bool: all stones, True on SENT (so rays stop there)
    enemy: torch.Tensor  # (M, 332) bool: the enemy stones, False on SENT
    cells: torch.Tensor  # (M, K) int64: the enemy stones' cells, SENT-padded
    proj: torch.Tensor  # (M, K, 6) int32: their closer-rule projections (NEG: padding)
    mx: torch.Tensor  # (M, 6) int32: max projection over all enemy stones


class Nodes(NamedTuple):
    """A batch of nodes (see the module docstring) and the hop that led to each."""

    game: torch.Tensor  # (F,) game of the batch
    cell: torch.Tensor  # (F,) where the moving stone stands
    last: torch.Tensor  # (F,) direction of its last hop, -1 before the first
    occ: torch.Tensor  # (F, 332) bool: blocking stones
    left: torch.Tensor  # (F, 332) bool: enemy stones left
    count: torch.Tensor  # (F,) stones taken by the hop into this node


def stone_list(board: torch.Tensor) -> torch.Tensor:
    """Return (M, K) cells of each row's stones in board order, SENT-padded (K >= 1)."""
    m = board.shape[0]
    k = max(1, int(board.sum(1).max())) if m else 1
    pos = torch.where(board, board.cumsum(1) - 1, k)  # column k collects the empty cells
    cells = torch.arange(NUM_CELLS, device=board.device).expand(m, -1)
    out = torch.full((m, k + 1), SENT, dtype=torch.int64, device=board.device)
    out.scatter_(1, pos, cells)
    return out[:, :k].contiguous()


def context(tb: dict[str, torch.Tensor], own: torch.Tensor, enemy: torch.Tensor) -> Context:
    """Return the context of ``own`` (M, 331) bool to move against ``enemy``."""
    m = own.shape[0]
    pad = torch.ones((m, 1), dtype=torch.bool, device=own.device)
    cells = stone_list(enemy)
    k = cells.shape[1]
    proj = tb["proj"].index_select(0, cells.view(-1)).view(m, k, 6)
    proj = torch.where((cells != SENT).unsqueeze(-1), proj, NEG)
    return Context(torch.cat([own | enemy, pad], 1), torch.cat([enemy, ~pad], 1), cells, proj,
                   proj.amax(1))


def roots(ctx: Context, game: torch.Tensor, cell: torch.Tensor, last: torch.Tensor) -> Nodes:
    """Return the nodes of the stones on ``cell`` of games ``game`` before they move."""
    occ = ctx.occ.index_select(0, game)
    occ.scatter_(1, cell.unsqueeze(1), False)  # the moving stone never blocks itself
    return Nodes(game, cell, last, occ, ctx.enemy.index_select(0, game), torch.zeros_like(game))


def first_one(bits: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Return the index of the first 1 along the last axis of a uint8 0/1 tensor (32 if
    none); ``weights`` is ``32 - arange(n)`` as uint8 (why: amax beats argmax on CPU)."""
    return 32 - (bits * weights).amax(-1).long()


def root_hops(tb: dict[str, torch.Tensor], own: torch.Tensor, opp: torch.Tensor,
              cells: torch.Tensor, mx: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Return (kmax, crush, valid, count) of the first hops of stones ``cells`` (N, K)
    (SENT: none) against ``opp``: per [game, stone, direction] the longest plain slide and
    whether the step is a crush, per [game, stone, direction, distance - 1] whether the hop
    captures by whistling and how many stones (uint8)."""
    n, k = cells.shape
    pad = torch.ones((n, 1), dtype=torch.bool, device=own.device)
    occ = torch.cat([own | opp, pad], 1).view(torch.uint8)
    enemy = torch.cat([opp, ~pad], 1).view(torch.uint8)
    flat = cells.view(-1)
    rays = tb["ray"].index_select(0, flat).view(n, k * RAY)
    free = first_one(occ.gather(1, rays).view(n, k, 6, RAY // 6), tb["w21"])
    step1 = tb["step1"].index_select(0, flat).view(n, k * 6)
    crush = (free == 0) & enemy.gather(1, step1).view(n, k, 6).bool()
    # spec 4 with D's metric: a slide of k steps along u ends closer to E iff 2k < <u, E - S>
    here = tb["proj"].index_select(0, flat).view(n, k, 6)
    closer = torch.div(mx.unsqueeze(1) - here - 1, 2, rounding_mode="floor")
    kmax = torch.minimum(free, closer).clamp_(min=0)
    zone = enemy.gather(1, tb["znew"].index_select(0, flat).view(n, k * ZONE))
    zone = zone.view(n, k, 6, MAX_DISTANCE, 2)
    # zones grow with the hop, so its captures are a cumulative sum over the cells it adds
    count = (zone[..., 0] + zone[..., 1]).cumsum(-1, dtype=torch.uint8)
    valid = (count > 0) & (tb["ks"] < kmax.unsqueeze(-1))
    return kmax, crush, valid, count


def expand(tb: dict[str, torch.Tensor], ctx: Context, nodes: Nodes) -> torch.Tensor:
    """Return (F, 6, 20) bool: the capturing hops (direction, distance - 1) of ``nodes``."""
    f = nodes.game.shape[0]
    rays = tb["ray"].index_select(0, nodes.cell).view(f, RAY)
    occ = nodes.occ.gather(1, rays).view(torch.uint8).view(f, 6, RAY // 6)
    free = first_one(occ, tb["w21"])
    cells = ctx.cells.index_select(0, nodes.game)
    present = nodes.left.gather(1, cells).unsqueeze(-1)
    mx = torch.where(present, ctx.proj.index_select(0, nodes.game), NEG).amax(1)
    here = tb["proj"].index_select(0, nodes.cell)
    closer = torch.div(mx - here - 1, 2, rounding_mode="floor")
    kmax = torch.minimum(free, closer).clamp_(min=0)
    last = nodes.last.view(f, 1)
    kmax.masked_fill_((tb["dirs"] == last) | (tb["opposite"] == last), 0)  # chain hops turn
    zone = tb["znew"].index_select(0, nodes.cell).view(f, ZONE)
    hit = nodes.left.gather(1, zone).view(torch.uint8).view(f, 6, MAX_DISTANCE, 2)
    count = (hit[..., 0] + hit[..., 1]).cumsum(-1, dtype=torch.uint8)
    return (count > 0) & (tb["ks"] < kmax.unsqueeze(-1))


def hop_nodes(tb: dict[str, torch.Tensor], nodes: Nodes, i: torch.Tensor, d: torch.Tensor,
              k: torch.Tensor) -> Nodes:
    """Return the nodes after the hops (direction d, distance k + 1) of ``nodes[i]``
    (the stones each hop captures are gone)."""
    f = i.shape[0]
    cell = nodes.cell[i]
    zone = tb["znew"][cell, d]  # (F, 20, 2)
    zone = torch.where(tb["ks"].view(1, -1, 1) <= k.view(f, 1, 1), zone, SENT).flatten(1)
    left = nodes.left.index_select(0, i)
    hit = left.gather(1, zone)
    left.scatter_(1, zone, False)
    occ = nodes.occ.index_select(0, i)
    occ.scatter_(1, zone, occ.gather(1, zone) & ~hit)
    return Nodes(nodes.game[i], tb["ray"][cell, d, k], d, occ, left, hit.sum(1))


def chain_values(tb: dict[str, torch.Tensor], ctx: Context, first: Nodes,
                 node_limit: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (stones each first hop's best chain captures, games to hand to the per-game
    search because one level of their search tree exceeded ``node_limit`` nodes)."""
    levels: list[tuple[torch.Tensor, torch.Tensor]] = []  # (parent, count) per deeper level
    too_big = torch.zeros(ctx.occ.shape[0], dtype=torch.bool, device=ctx.occ.device)
    nodes = first
    while nodes.game.numel():
        parent, d, k = expand(tb, ctx, nodes).nonzero(as_tuple=True)
        nodes = hop_nodes(tb, nodes, parent, d, k)
        if parent.numel() > node_limit:
            per_game = torch.bincount(nodes.game, minlength=too_big.shape[0])
            too_big |= per_game > node_limit
            keep = ~too_big[nodes.game]
            parent, nodes = parent[keep], Nodes(*(t[keep] for t in nodes))
        levels.append((parent, nodes.count))
    values = None
    for i in range(len(levels) - 1, -1, -1):
        parent, count = levels[i]
        vals = count if values is None else count + values
        n_up = levels[i - 1][0].numel() if i else first.game.numel()
        values = torch.zeros(n_up, dtype=torch.int64, device=count.device).scatter_reduce_(
            0, parent, vals, "amax")
    best = values if values is not None else torch.zeros_like(first.count)
    return first.count + best, too_big


def to_ints(board: torch.Tensor) -> list[int]:
    """Return each row of an (M, 331) bool board as a cell bitmask (bit i = cell i)."""
    packed = np.packbits(board.cpu().numpy(), axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def per_game_actions(own: int, enemy: int, mover: int, last: int) -> list[int]:
    """Return the legal actions of one game from the compiled kernel: the first hops of the
    legal turns, or mid-chain (``mover`` >= 0, the board as it stands) the hops from the
    moving stone that continue a maximum chain."""
    return kernel.hop_actions(own, enemy, 0, 0, mover, last)
