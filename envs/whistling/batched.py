"""Batched Monochromatic Whistling: N games as (N, 331) boards stepped one hop at a time.

The action level is exactly :class:`~.actions.WhistlingActions`: one action is one hop, the
same player keeps acting during a capture chain, and the mask holds the first hops of the
maximum-capture turns (or, mid-chain, the hops that continue one). Masks come from
:mod:`.batched_search`: every stone of every game is expanded at once (plain moves,
crushes, capturing hops), and games that can capture get the maximum-capture search
level by level over the whole batch (``chain="batched"``, the default) or from the rules
engine one game at a time (``chain="per_game"``; see docs/whistling.md for the measured
choice). A game whose search tree has more than ``node_limit`` nodes on one level takes
the per-game path in either mode.

``step`` plays the hop; the turn goes on while the moving stone has a capturing hop left
(a prefix of a maximum turn that can still capture has not reached the maximum), and when
it ends the side changes, the quiet counter counts or resets and the ply grows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import torch

from ..core.batched import BatchedGame, BatchState
from ..core.game import BoardzooError, PositionError
from .actions import NUM_ACTIONS, NUM_PLANES, HopState, WhistlingActions
from .batched_search import (
    Nodes,
    chain_values,
    context,
    expand,
    hop_nodes,
    per_game_actions,
    root_hops,
    roots,
    stone_list,
    to_ints,
)
from .batched_tables import PER_CELL, SENT, tables
from .hexgrid import BIT, MAX_DISTANCE, NUM_CELLS, NUM_COLUMNS, NUM_ROWS
from .rules import DRAW_QUIET, State

#: Stones a side may have: ``hops`` keeps a turn's actions, one per hop, and each hop
#: captures (the game starts with 21 stones a side and never adds any).
MAX_STONES = 64
_QUIET_PLANE = torch.tensor([min(q, DRAW_QUIET) / DRAW_QUIET for q in range(DRAW_QUIET + 1)],
                            dtype=torch.float32)


@dataclasses.dataclass(frozen=True)
class WhistlingBatch(BatchState):
    """N Whistling games as they stand, mid-chain included (board after the hops so far)."""

    own: torch.Tensor  # (N, 331) bool: stones of the side to move
    opp: torch.Tensor  # (N, 331) bool: the other side's stones
    side: torch.Tensor  # (N,) int64: the side to move (0 = X)
    quiet: torch.Tensor  # (N,) int64: the quiet counter at the start of the turn
    ply: torch.Tensor  # (N,) int64: whole turns played (the rules State's ply)
    mover: torch.Tensor  # (N,) int64: the chain's moving stone, -1 at the start of a turn
    last: torch.Tensor  # (N,) int64: direction of its last hop, -1 at the start of a turn
    start: torch.Tensor  # (N,) int64: the cell the turn started from, -1 at a turn's start
    taken: torch.Tensor  # (N, 331) bool: stones captured by earlier hops of this turn
    hops: torch.Tensor  # (N, MAX_STONES) int32: actions played this turn, then -1


def _bits(mask: int) -> np.ndarray:
    """Return a cell bitmask as a (331,) bool array."""
    raw = np.frombuffer(mask.to_bytes(42, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:NUM_CELLS].astype(bool)


class BatchedWhistling(BatchedGame):
    """Whistling's hop-level game (masks, steps, results, observations) on N games at once."""

    name = "whistling"
    action_game = WhistlingActions()

    def __init__(self, device: torch.device | str = "cpu", chain: str = "batched",
                 node_limit: int = 20_000) -> None:
        """``chain``: "batched" or "per_game" maximum-capture search (see module docstring)."""
        super().__init__(device)
        if chain not in ("batched", "per_game"):
            raise BoardzooError(f"chain must be 'batched' or 'per_game', got {chain!r}")
        self.chain = chain
        self.node_limit = node_limit
        self.tb = tables(self.device)
        self.quiet_plane = _QUIET_PLANE.to(self.device)
        #: Positions whose mask the last ``legal_mask`` call took from the per-game path.
        self.last_per_game = 0
        self._start = self.from_states([self.action_game.initial_state()])

    # -- conversion ---------------------------------------------------------------------
    def initial(self, n: int) -> WhistlingBatch:
        return self._start.index(torch.zeros(n, dtype=torch.int64, device=self.device))

    def reset_where(self, batch: WhistlingBatch, done: torch.Tensor) -> WhistlingBatch:
        return batch.where(done, self._start)  # one start game, broadcast over the batch

    def from_states(self, states: Sequence[HopState]) -> WhistlingBatch:
        rows = []
        for s in states:
            if not isinstance(s, HopState):
                raise BoardzooError(f"expected a whistling HopState, got {type(s).__name__}")
            if max(m.bit_count() for m in s.game.stones) > MAX_STONES:
                raise PositionError(f"the batched engine holds at most {MAX_STONES} stones a "
                                    f"side: {s.game.to_text()!r}")
            x, o, cell, d = self.action_game.board(s)
            side = s.game.side
            own, opp = (x, o) if side == 0 else (o, x)
            n = len(s.done)
            taken = 0
            for c in s.caps:
                taken |= c
            hops = list(s.done) + [-1] * (MAX_STONES - n)
            rows.append((own, opp, side, s.game.quiet, s.game.ply, cell, d,
                         s.path[0] if n else -1, taken, hops))
        if not rows:
            return self._start.index(torch.zeros(0, dtype=torch.int64, device=self.device))
        cols = list(zip(*rows, strict=True))
        dev = self.device

        def board(i: int) -> torch.Tensor:
            return torch.from_numpy(np.stack([_bits(m) for m in cols[i]])).to(dev)

        def ints(i: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.tensor(cols[i], dtype=dtype, device=dev)

        return WhistlingBatch(board(0), board(1), ints(2), ints(3), ints(4), ints(5), ints(6),
                              ints(7), board(8), ints(9, torch.int32))

    def to_states(self, batch: WhistlingBatch) -> list[HopState]:
        own, opp, taken = (to_ints(t) for t in (batch.own, batch.opp, batch.taken))
        side, quiet, ply, mover, start = (t.tolist() for t in (
            batch.side, batch.quiet, batch.ply, batch.mover, batch.start))
        hops = batch.hops.tolist()
        out = []
        for i in range(batch.size):
            mine, theirs = own[i], opp[i]
            if mover[i] >= 0:  # back to the start of the turn, then replay its hops
                mine = mine ^ BIT[mover[i]] | BIT[start[i]]
                theirs |= taken[i]
            x, o = (mine, theirs) if side[i] == 0 else (theirs, mine)
            state = HopState(State(x, o, side[i], quiet[i], ply[i]))
            for a in hops[i]:
                if a < 0:
                    break
                state, _ = self.action_game.apply_action(state, a)
            out.append(state)
        return out

    # -- results ------------------------------------------------------------------------
    def to_move(self, batch: WhistlingBatch) -> torch.Tensor:
        return batch.side

    def terminated(self, batch: WhistlingBatch) -> torch.Tensor:
        # rules.State: no own stones, the draw counter, or no legal turn (only when the
        # enemy has no stones: spec 9.3's argument gives a turn otherwise)
        return ~batch.own.any(1) | (batch.quiet >= DRAW_QUIET) | ~batch.opp.any(1)

    def returns(self, batch: WhistlingBatch) -> torch.Tensor:
        lost = ~batch.own.any(1) | (~batch.opp.any(1) & (batch.quiet < DRAW_QUIET))
        out = torch.zeros((batch.size, 2), dtype=torch.float32, device=batch.own.device)
        sign = torch.where(lost, -1.0, 0.0)
        out.scatter_(1, batch.side.unsqueeze(1), sign.unsqueeze(1))
        out.scatter_(1, (1 - batch.side).unsqueeze(1), -sign.unsqueeze(1))
        return out

    def observation(self, batch: WhistlingBatch) -> torch.Tensor:
        n, dev = batch.size, batch.own.device
        # planes per cell (row SENT: the grid points that are no cell), then onto the grid
        cells = torch.zeros((n, NUM_CELLS + 1, NUM_PLANES), dtype=torch.float32, device=dev)
        cells[:, :NUM_CELLS, 0] = batch.own
        cells[:, :NUM_CELLS, 1] = batch.opp
        chain = (batch.mover >= 0).nonzero().squeeze(1)
        mover = batch.mover[chain]
        cells[chain, mover, 2] = 1.0
        cells[chain, mover, 3 + batch.last[chain]] = 1.0
        cells[:, :, 9] = self.quiet_plane[batch.quiet.clamp(max=DRAW_QUIET)].unsqueeze(1)
        cells[:, :NUM_CELLS, 10] = 1.0
        obs = cells.index_select(1, self.tb["grid_cell"])
        return obs.view(n, NUM_ROWS, NUM_COLUMNS, NUM_PLANES)

    # -- masks --------------------------------------------------------------------------
    def legal_mask(self, batch: WhistlingBatch) -> torch.Tensor:
        tb, n, dev = self.tb, batch.size, batch.own.device
        live = ~self.terminated(batch)
        ctx = context(tb, batch.own, batch.opp)
        # every stone of the games at the start of a turn: plain slides, crushes, first hops
        start = (live & (batch.mover < 0)).nonzero().squeeze(1)
        own = batch.own.index_select(0, start)
        cells = stone_list(own)
        kmax, crush, valid, _ = root_hops(tb, own, batch.opp.index_select(0, start), cells,
                                          ctx.mx.index_select(0, start))
        g, s, d, k = valid.nonzero(as_tuple=True)
        g, cell = start[g], cells[g, s]
        one = torch.arange(g.numel(), device=dev)
        first = [hop_nodes(tb, roots(ctx, g, cell, torch.full_like(g, -1)), one, d, k)]
        acts = [cell * PER_CELL + d * MAX_DISTANCE + k]
        # the moving stone of the games in the middle of a chain
        g = (live & (batch.mover >= 0)).nonzero().squeeze(1)
        mid = roots(ctx, g, batch.mover[g], batch.last[g])
        i, d, k = expand(tb, ctx, mid).nonzero(as_tuple=True)
        first.append(hop_nodes(tb, mid, i, d, k))
        acts.append(mid.cell[i] * PER_CELL + d * MAX_DISTANCE + k)
        first_hops = Nodes(*(torch.cat(t) for t in zip(*first, strict=True)))
        acts = torch.cat(acts)
        games = first_hops.game
        if self.chain == "batched":
            values, per_game = chain_values(tb, ctx, first_hops, self.node_limit)
        else:
            values = first_hops.count
            per_game = torch.zeros(n, dtype=torch.bool, device=dev)
            per_game[games] = True
        most = torch.zeros(n, dtype=torch.int64, device=dev).scatter_reduce_(
            0, games, values, "amax")
        # per stone and direction, how many distances are legal: the plain slides where
        # nothing can be captured, the crush step where the maximum capture is 1
        most_s = most.index_select(0, start).view(-1, 1, 1)
        plain = (most_s == 0) & ~crush.flatten(1).any(1).view(-1, 1, 1)
        reach = torch.where(plain, kmax, crush & (most_s <= 1))
        # one row of 20 distances per (stone, direction): a prefix of ``reach`` Trues; stone
        # padding (SENT) rewrites the game's first row with the same values (or cell 0, empty)
        pad = cells == SENT
        at = torch.where(pad, torch.where(pad[:, :1], 0, cells[:, :1]), cells)
        reach = torch.where(pad.unsqueeze(-1), reach[:, :1], reach)
        at = ((start * NUM_CELLS).unsqueeze(1) + at).unsqueeze(-1) * 6
        mask = torch.zeros((n * NUM_CELLS * 6, MAX_DISTANCE), dtype=torch.bool, device=dev)
        mask.index_copy_(0, (at + tb["dirs"]).view(-1),
                         tb["prefix"].index_select(0, reach.view(-1).long()))
        mask = mask.view(n, NUM_ACTIONS)
        best = values == most[games]  # the first hops of maximum captures
        mask.view(-1)[(games * NUM_ACTIONS + acts)[best]] = True
        self._per_game(batch, mask, per_game.nonzero().squeeze(1))
        return mask

    def _per_game(self, batch: WhistlingBatch, mask: torch.Tensor, games: torch.Tensor) -> None:
        """Overwrite the mask rows of ``games`` with the per-game search's actions."""
        self.last_per_game = games.numel()
        if not games.numel():
            return
        own, opp = to_ints(batch.own[games]), to_ints(batch.opp[games])
        mover, last = batch.mover[games].tolist(), batch.last[games].tolist()
        rows = torch.zeros((games.numel(), NUM_ACTIONS), dtype=torch.bool)
        for i in range(games.numel()):
            rows[i, per_game_actions(own[i], opp[i], mover[i], last[i])] = True
        mask[games] = rows.to(mask.device)

    # -- steps --------------------------------------------------------------------------
    def step(self, batch: WhistlingBatch, actions: torch.Tensor) -> WhistlingBatch:
        tb, n, dev = self.tb, batch.size, batch.own.device
        live = ~self.terminated(batch)
        a = torch.as_tensor(actions, device=dev).to(torch.int64).clamp(0, NUM_ACTIONS - 1)
        cell, d, k = a // PER_CELL, (a // MAX_DISTANCE) % 6, a % MAX_DISTANCE
        dest = tb["ray"][cell, d, k]  # SENT only for an off-board action of a finished game
        ks = tb["ks"]
        zone = torch.where(ks.view(1, -1, 1) <= k.view(-1, 1, 1), tb["znew"][cell, d], SENT)
        zone = torch.cat([zone.flatten(1), dest.unsqueeze(1)], 1)  # a crush takes ``dest``
        pad = torch.zeros((n, 1), dtype=torch.bool, device=dev)
        opp = torch.cat([batch.opp, pad], 1)
        new_opp = opp.scatter(1, zone, False)[:, :NUM_CELLS]
        new_own = (torch.cat([batch.own, pad], 1).scatter(1, cell.unsqueeze(1), False)
                   .scatter(1, dest.unsqueeze(1), True)[:, :NUM_CELLS])
        captured = batch.opp & ~new_opp
        count = captured.sum(1)
        crush = opp.gather(1, dest.unsqueeze(1)).squeeze(1)
        cont = self._continues(new_own, new_opp, live & (count > 0) & ~crush, dest, d)
        ends = live & ~cont
        took = (count > 0) | batch.taken.any(1)
        col = (batch.hops >= 0).sum(1, keepdim=True).clamp(max=MAX_STONES - 1)
        swap = ends.unsqueeze(1)
        new = WhistlingBatch(
            own=torch.where(swap, new_opp, new_own),
            opp=torch.where(swap, new_own, new_opp),
            side=torch.where(ends, 1 - batch.side, batch.side),
            quiet=torch.where(ends, torch.where(took, 0, batch.quiet + 1), batch.quiet),
            ply=batch.ply + ends.long(),
            mover=torch.where(cont, dest, -1),
            last=torch.where(cont, d, -1),
            start=torch.where(cont, torch.where(batch.mover < 0, cell, batch.start), -1),
            taken=(batch.taken | captured) & cont.unsqueeze(1),
            hops=torch.where(cont.unsqueeze(1),
                             batch.hops.scatter(1, col, a.unsqueeze(1).to(batch.hops.dtype)), -1),
        )
        return batch.where(live, new)

    def _continues(self, own: torch.Tensor, opp: torch.Tensor, whistled: torch.Tensor,
                   dest: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """Return (N,) bool: the game's hop captured by whistling and its stone, now on
        ``dest`` after moving along ``d``, has a capturing hop left (so the turn goes on)."""
        out = torch.zeros_like(whistled)
        games = whistled.nonzero().squeeze(1)
        if games.numel():
            ctx = context(self.tb, own[games], opp[games])
            idx = torch.arange(games.numel(), device=own.device)
            nodes = roots(ctx, idx, dest[games], d[games])
            out[games] = expand(self.tb, ctx, nodes).flatten(1).any(1)
        return out


Engine = BatchedWhistling

__all__ = ["MAX_STONES", "BatchedWhistling", "Engine", "WhistlingBatch"]
