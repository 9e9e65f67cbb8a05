"""Batched Ultima: N games as torch tensors, stepped together (issue 7).

Same actions (``64 * origin + destination``), masks and observation planes as
:class:`~boardzoo.envs.ultima.actions.UltimaActions`, same rules as the reference
:class:`~boardzoo.envs.ultima.rules.State` (spec: shared/rules/ultima.md), draw rules
included. Each game is held as 64 piece codes plus one int64 bitboard per piece code;
the legal moves of the position are computed once, when it is reached, and kept as
one destination bitboard per origin square (:mod:`.batched_rules` has the move
generation and the check test). Repetition uses 64-bit Zobrist-style hashes (a sum of
random numbers per piece and square, plus one for Black to move) of the positions
since the last capture; the quiet moves between them are kept so that
:meth:`BatchedUltima.to_states` can rebuild the reference history exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import torch

from ..core.batched import BatchedGame, BatchState
from ..core.game import PositionError
from .actions import NUM_PLANES, UltimaActions
from .batched_rules import C, I, K, armies, attacked, captures, legal_moves
from .batched_tables import Tables, keep, popcount, spread, square_of, take
from .board import BLACK, CODE_OF, LETTERS, WHITE
from .rules import NO_CAPTURE_LIMIT, PLY_CAP, REPETITIONS, State

#: History entries kept per game: a running game has at most 100 plies since a capture.
HISTORY = NO_CAPTURE_LIMIT + 1


@dataclasses.dataclass(frozen=True)
class UltimaBatch(BatchState):
    """N Ultima games (see the module docstring); finished games keep their last position."""

    codes: torch.Tensor  # (N, 64) int8 piece codes of .board (colour | kind)
    bb: torch.Tensor  # (N, 16) int64 bitboard per piece code (columns 0 and 8 stay 0)
    side: torch.Tensor  # (N,) int64 player to move (0 White)
    halfmove: torch.Tensor  # (N,) int64 plies since the last capture
    fullmove: torch.Tensor  # (N,) int64
    history: torch.Tensor  # (N, HISTORY) int64 hashes since the last capture, current last
    moves: torch.Tensor  # (N, HISTORY - 1) int16 move from history entry i to i + 1
    length: torch.Tensor  # (N,) int64 history entries in use
    legal: torch.Tensor  # (N, 64) int64 destinations per origin: the moves spec 7 allows
    over: torch.Tensor  # (N,) bool game finished
    winner: torch.Tensor  # (N,) int64 winner, -1 for a draw or a running game
    seen: torch.Tensor  # (N,) int64 occurrences of the current position in the history


def _piece_table(player: int) -> np.ndarray:
    """Return the (16, NUM_PLANES) rows of the observation per piece code from ``player``'s
    view: a one on the piece's plane (0-6 own kinds, 7-13 the opponent's) and on plane 21."""
    table = np.zeros((16, NUM_PLANES), dtype=np.float32)
    table[:, 21] = 1.0
    for letter, code in CODE_OF.items():
        own = (code & 8) == (BLACK if player else WHITE)
        table[code, LETTERS.index(letter.upper()) + (0 if own else 7)] = 1.0
    return table


PIECE_TABLE = (_piece_table(0), _piece_table(1))


class BatchedUltima(BatchedGame):
    """Ultima for N games at once on one torch device (exact reference rules)."""

    name = "ultima"
    action_game = UltimaActions()

    def __init__(self, device: torch.device | str = "cpu") -> None:
        super().__init__(device)
        self.tables = Tables(self.device)
        table = np.stack([PIECE_TABLE[0], PIECE_TABLE[1]])  # [player, code, plane]
        table = np.repeat(table[:, :, None], 2, axis=2)  # [player, code, frozen, plane]
        for player in (0, 1):
            for code in range(1, 16):
                own = (code >> 3) == player
                table[player, code, 1, 14 if own else 15] = 1.0
        table[:, :, :, 16] = 1.0  # the observer is the player to move
        table[0, :, :, 17] = 1.0  # ... and plays White
        self._obs_table = torch.as_tensor(table.reshape(64, -1), device=self.device)
        self._start = self.from_states([State.start()])

    # -- conversion ---------------------------------------------------------------------
    def initial(self, n: int) -> UltimaBatch:
        """Return ``n`` games at the start position."""
        return self._start.index(torch.zeros(n, dtype=torch.int64, device=self.device))

    def from_states(self, states: Sequence[State]) -> UltimaBatch:
        """Return the batch holding the reference states ``states`` (history included)."""
        if not states:
            raise PositionError("from_states needs at least one state")
        zob = self.tables.zobrist.cpu().numpy().reshape(16, 64)
        zside = self.tables.zside_value
        codes, hist, moves, length, scalars = [], [], [], [], []
        for s in states:
            if not isinstance(s, State):
                raise PositionError(f"expected an ultima State, got {type(s).__name__}")
            keys = s.history
            if len(keys) > min(s.halfmove, NO_CAPTURE_LIMIT) + 1:
                raise PositionError(f"{len(keys)} history entries but the no-capture clock "
                                    f"is {s.halfmove}: not a position of a played game")
            boards = np.frombuffer(b"".join(k[:64] for k in keys), np.uint8).reshape(-1, 64)
            black = np.array([k[64:] == b"b" for k in keys])
            h = np.zeros(HISTORY, np.int64)
            h[: len(keys)] = zob[boards, np.arange(64)].sum(1) + black * zside
            mv = np.zeros(HISTORY - 1, np.int16)
            for i in range(len(keys) - 1):
                mv[i] = _quiet_move(boards[i], boards[i + 1])
            codes.append(np.frombuffer(s.board, np.uint8))
            hist.append(h)
            moves.append(mv)
            length.append(len(keys))
            scalars.append((s.side, s.halfmove, s.fullmove))
        dev = self.device
        codes_t = torch.as_tensor(np.stack(codes).astype(np.int8), device=dev)
        side, hm, fm = torch.as_tensor(np.array(scalars, np.int64), device=dev).unbind(1)
        onehot = codes_t.long().unsqueeze(1) == torch.arange(16, device=dev).view(1, 16, 1)
        bb = torch.where(onehot, self.tables.bit, 0).sum(2)
        bb[:, 0] = 0
        bb[:, 8] = 0
        return self._judge(codes_t, bb, side, hm, fm,
                           torch.as_tensor(np.stack(hist), device=dev),
                           torch.as_tensor(np.stack(moves), device=dev),
                           torch.as_tensor(length, device=dev))

    def to_states(self, batch: UltimaBatch) -> list[State]:
        """Return the reference state of each game, history included."""
        codes = batch.codes.cpu().numpy().astype(np.uint8)
        moves = batch.moves.cpu().numpy().astype(np.int64)
        side, hm, fm, length = (x.cpu().tolist() for x in
                                (batch.side, batch.halfmove, batch.fullmove, batch.length))
        out = []
        for i in range(codes.shape[0]):
            board = codes[i].copy()
            keys = []
            for j in range(length[i] - 2, -1, -1):  # undo the quiet moves, newest first
                f, t = moves[i, j] >> 6, moves[i, j] & 63
                board[f], board[t] = board[t], 0
                black = side[i] ^ ((length[i] - 1 - j) & 1)
                keys.append(board.tobytes() + (b"b" if black else b"w"))
            out.append(State(codes[i].tobytes(), side[i], hm[i], fm[i], tuple(reversed(keys))))
        return out

    # -- rules ----------------------------------------------------------------------------
    def _judge(self, codes: torch.Tensor, bb: torch.Tensor, side: torch.Tensor,
               hm: torch.Tensor, fm: torch.Tensor, hist: torch.Tensor, moves: torch.Tensor,
               length: torch.Tensor) -> UltimaBatch:
        """Return the batch of these positions with legal moves and outcome (spec 9)."""
        legal, has_move = legal_moves(self.tables, codes, bb, side)
        occ = bb.sum(1)  # piece codes are disjoint: the sum is the union
        two = occ & (occ - 1)
        bare = (two & (two - 1)) == 0  # at most two pieces: the kings
        current = hist.gather(1, (length - 1).unsqueeze(1))
        live = torch.arange(HISTORY, device=self.device) < length.unsqueeze(1)
        seen = ((hist == current) & live).sum(1)
        ply = 2 * (fm - 1) + side
        draw = (bare | (hm >= NO_CAPTURE_LIMIT) | (seen >= REPETITIONS) | (ply >= PLY_CAP))
        winner = torch.where(has_move, -1, 1 - side)
        return UltimaBatch(codes, bb, side, hm, fm, hist, moves, length, legal,
                           ~has_move | draw, winner, seen)

    def step(self, batch: UltimaBatch, actions: torch.Tensor) -> UltimaBatch:
        """Return the games after each plays its action (finished games unchanged)."""
        return self._step(batch, actions, inplace=False)

    def step_inplace(self, batch: UltimaBatch, actions: torch.Tensor) -> UltimaBatch:
        """Like :meth:`step`, but writes the history into ``batch``'s tensors (no copies)."""
        return self._step(batch, actions, inplace=True)

    def reset_where(self, batch: UltimaBatch, done: torch.Tensor) -> UltimaBatch:
        """Return ``batch`` with the games where ``done`` is True back at the start."""
        idx = done.nonzero().squeeze(1)
        if not idx.numel():
            return batch
        fresh = self._start.index(torch.zeros_like(idx))
        out = {}
        for name, mine in batch.tensors().items():
            mine = mine.clone()
            mine[idx] = getattr(fresh, name)
            out[name] = mine
        return UltimaBatch(**out)

    def _step(self, batch: UltimaBatch, actions: torch.Tensor, inplace: bool) -> UltimaBatch:
        tb = self.tables
        a = actions.to(device=self.device, dtype=torch.int64)
        f, t = a >> 6, a & 63
        n = a.shape[0]
        rows = torch.arange(n, device=self.device)
        code = take(batch.codes.reshape(-1), rows * 64 + f).long()
        us, them = armies(batch.bb, batch.side)
        caps = captures(tb, code & 7, f, t, us[0] | them[0], us[0], them, square_of(us[K]))
        bb = batch.bb & ~caps.unsqueeze(1)  # captured squares hold only enemy pieces
        flat = bb.view(-1)
        at = rows * 16 + code
        flat.index_copy_(0, at, take(flat, at) ^ (take(tb.bit, f) | take(tb.bit, t)))
        codes = batch.codes.clone()
        took = caps != 0
        cap_rows = took.nonzero().squeeze(1)
        if cap_rows.numel():  # empty the captured squares first: a king lands on one
            gone = tb.expand(take(caps, cap_rows)).to(torch.int8)
            codes.index_copy_(0, cap_rows, take(codes, cap_rows) & (gone - 1))
        flat = codes.view(-1)
        flat.index_fill_(0, rows * 64 + f, 0)
        flat.index_copy_(0, rows * 64 + t, code.to(torch.int8))
        side = 1 - batch.side
        hm = torch.where(took, 0, batch.halfmove + 1)
        fm = batch.fullmove + batch.side
        # hash of the new placement from the previous one; after a capture the history
        # restarts, so the captured pieces need not be taken out of it
        hist_flat = batch.history.reshape(-1)
        prev = take(hist_flat, rows * HISTORY + batch.length - 1)
        z = code * 64
        h = (prev - take(tb.zobrist, z + f) + take(tb.zobrist, z + t)
             + (2 * side - 1) * tb.zside_value)
        # finished games keep everything: their history slots are rewritten unchanged
        over = batch.over
        pos = torch.where(took, 0, batch.length.clamp(max=HISTORY - 1))
        hist = batch.history if inplace else batch.history.clone()
        at = rows * HISTORY + pos
        old = take(hist.view(-1), at)
        hist.view(-1).index_copy_(0, at, old ^ keep(~over, old ^ h))
        moves = batch.moves if inplace else batch.moves.clone()
        at = rows * (HISTORY - 1) + (batch.length - 1).clamp(0, HISTORY - 2)
        old = take(moves.view(-1), at)
        moves.view(-1).index_copy_(0, at, torch.where(over, old, a.to(torch.int16)))
        new = self._judge(codes, bb, side, hm, fm, hist, moves, pos + 1)
        if not bool(over.any()):
            return new
        rest = {k: v for k, v in batch.tensors().items() if k not in ("history", "moves")}
        return UltimaBatch(history=hist, moves=moves, **{
            k: torch.where(over.view(-1, *([1] * (v.dim() - 1))), v, getattr(new, k))
            for k, v in rest.items()})

    # -- queries --------------------------------------------------------------------------
    def rule_mask(self, batch: UltimaBatch) -> torch.Tensor:
        """Return (N, 4096) bool of the moves the pieces have (spec 7), even where a draw
        rule ended the game and none of them is legal (the shared vectors' ``piece_moves``
        of a drawn position); :meth:`legal_mask` is this without the finished games."""
        return self._expand(batch.legal)

    def legal_mask(self, batch: UltimaBatch) -> torch.Tensor:
        """Return (N, 4096) bool, True exactly on the legal actions (none once over)."""
        return self._expand(batch.legal & (batch.over.to(torch.int64) - 1).unsqueeze(1))

    def _expand(self, legal: torch.Tensor) -> torch.Tensor:
        """Return (N, 4096) bool from (N, 64) destination bitboards per origin."""
        byte = legal.contiguous().view(torch.uint8).view(-1).int()  # little-endian bytes
        return self.tables.byte_bits.index_select(0, byte).view(torch.bool).view(-1, 4096)

    def in_check(self, batch: UltimaBatch) -> torch.Tensor:
        """Return (N,) bool: is the king of the player to move capturable (spec 8)?"""
        us, them = armies(batch.bb, batch.side)
        return attacked(self.tables, square_of(us[K]), square_of(them[K]), us[0] | them[0],
                        them, ~spread(us[I]))

    def to_move(self, batch: UltimaBatch) -> torch.Tensor:
        """Return the (N,) player to move."""
        return batch.side

    def terminated(self, batch: UltimaBatch) -> torch.Tensor:
        """Return the (N,) bool of finished games."""
        return batch.over

    def returns(self, batch: UltimaBatch) -> torch.Tensor:
        """Return (N, 2) float32: +1 winner, -1 loser, 0 for draws and running games."""
        won = batch.winner.unsqueeze(1) == torch.arange(2, device=self.device)
        lost = (batch.winner.unsqueeze(1) >= 0) & ~won
        return won.float() - lost.float()

    def observation(self, batch: UltimaBatch) -> torch.Tensor:
        """Return (N, 8, 8, 22) float32 planes from the view of each game's player to move."""
        tb = self.tables
        n = batch.side.shape[0]
        us, them = armies(batch.bb, batch.side)
        frozen = ((us[0] & spread(them[I])) | (us[I] & spread(them[C]))
                  | (them[0] & spread(us[I])) | (them[I] & spread(us[C])))
        # one table row per (player to move, piece code, frozen): planes 0-17 and 21
        idx = (batch.side.unsqueeze(1) * 32 + batch.codes.long() * 2
               + (frozen.unsqueeze(1) >> tb.arange64 & 1))
        obs = take(self._obs_table, idx.view(-1)).view(n, 64, -1)
        ply = 2 * (batch.fullmove - 1) + batch.side
        consts = torch.stack([
            batch.halfmove.clamp(max=NO_CAPTURE_LIMIT).double() / NO_CAPTURE_LIMIT,
            ply.clamp(max=PLY_CAP).double() / PLY_CAP,
            (batch.seen - 1).clamp(max=REPETITIONS - 1).double() / (REPETITIONS - 1),
        ], 1).float()
        obs[:, :, 18:21] = consts.unsqueeze(1)
        return obs.view(n, 8, 8, -1)

    def random_actions(self, batch: UltimaBatch,
                       generator: torch.Generator | None = None) -> torch.Tensor:
        """Return a uniformly drawn legal action per game (0 for a finished game), straight
        from the destination bitboards (no (N, 4096) mask)."""
        tb = self.tables
        n = batch.side.shape[0]
        legal = batch.legal & (batch.over.to(torch.int64) - 1).unsqueeze(1)
        count = popcount(legal)
        upto = count.cumsum(1)
        total = upto[:, -1]
        r = torch.rand(n, generator=generator, dtype=torch.float64, device=self.device)
        k = (r * total).long()  # uniform in [0, total)
        origin = (upto <= k.unsqueeze(1)).sum(1).clamp(max=63)
        at = torch.arange(n, device=self.device) * 64 + origin
        k = k - take(upto.view(-1), at) + take(count.view(-1), at)  # k-th move of origin
        bits = tb.expand(take(legal.view(-1), at)).to(torch.int64).cumsum(1)
        dest = (bits <= k.unsqueeze(1)).sum(1)
        return keep(total > 0, origin * 64 + dest)


def _quiet_move(before: np.ndarray, after: np.ndarray) -> int:
    """Return the move ``64 * origin + destination`` that turns ``before`` into ``after``
    without a capture; PositionError if there is none (a history not from play)."""
    diff = np.flatnonzero(before != after)
    if len(diff) == 2:
        for f, t in (diff, diff[::-1]):
            if before[t] == 0 and after[f] == 0 and before[f] == after[t] != 0:
                return int(f) * 64 + int(t)
    raise PositionError("consecutive history entries are not one quiet move apart")


Engine = BatchedUltima
