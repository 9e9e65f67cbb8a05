"""Bitboard helpers and square tables of the batched Ultima engine (:mod:`.batched`).

A bitboard is an int64 with bit ``s`` for square ``s`` (a1 = 0, h8 = 63, as in
:mod:`boardzoo.envs.core.board8`); h8 is the sign bit, so right shifts are arithmetic
and ``MASK`` clears what they shift in. Directions are board8's 0..7 = N, NE, E, SE, S,
SW, W, NW. :class:`Tables` holds every precomputed table as tensors on one device.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.board8 import OPPOSITE, ORTHOGONAL, RAYS

#: Square offset of one step in each direction.
OFFSET = (8, 9, 1, -7, -8, -9, -1, 7)
#: Directions whose rays go to higher square numbers (the nearest piece is the lowest bit).
UP = (0, 1, 2, 7)
DOWN = (3, 4, 5, 6)
#: (neighbour direction, ray direction) of the pawn paths to a king: six rays up, six down.
PAWN_RAYS = tuple(sorted(((d, d2) for d in ORTHOGONAL for d2 in ORTHOGONAL
                          if d2 != OPPOSITE[d]), key=lambda p: p[1] not in UP))


def s64(value: int) -> int:
    """Return the signed int64 with the same 64 low bits as ``value``."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def bits_of(squares) -> int:
    """Return the signed bitboard of an iterable of squares."""
    out = 0
    for s in squares:
        out |= 1 << s
    return s64(out)


ALL = -1
FILE_A = bits_of(range(0, 64, 8))
FILE_H = bits_of(range(7, 64, 8))
NOT_A, NOT_H = ~FILE_A, ~FILE_H
#: LOW[n]: the bits a logical right shift by n keeps.
LOW = tuple(ALL if n == 0 else s64((1 << (64 - n)) - 1) for n in range(64))
#: Mask a one-step shift in each direction ends in (no wrap over the a/h files).
WRAP = (ALL, NOT_A, NOT_A, NOT_A, ALL, NOT_H, NOT_H, NOT_H)


#: MASK[d]: where a step in direction d may land; going down also not in the top bits an
#: arithmetic right shift fills (no such square is a destination of that step), so with
#: propagators inside MASK[d] no bit shifted in from the sign survives (see :func:`fill`).
MASK = tuple(WRAP[d] & (LOW[-OFFSET[d]] if OFFSET[d] < 0 else ALL) for d in range(8))


def _shift(x: torch.Tensor, n: int) -> torch.Tensor:
    """Return ``x`` shifted left by ``n`` (arithmetically right for negative ``n``)."""
    return x << n if n > 0 else x >> -n


def step(x: torch.Tensor, d: int) -> torch.Tensor:
    """Return the squares one step from ``x`` in direction ``d``."""
    y = _shift(x, OFFSET[d])
    return y if MASK[d] == ALL else y & MASK[d]


def fill(gen: torch.Tensor, pro: torch.Tensor, d: int) -> torch.Tensor:
    """Return ``gen`` plus every square reached from it in direction ``d`` through squares
    of ``pro``, which must lie inside ``MASK[d]`` (Kogge-Stone occluded fill).

    Unmasked arithmetic shifts are safe: bits shifted in from the sign land in the top
    ``n`` bits, where ``pro`` (and so every later propagator) is empty.
    """
    o = OFFSET[d]
    gen = gen | (pro & _shift(gen, o))
    pro = pro & _shift(pro, o)
    gen = gen | (pro & _shift(gen, 2 * o))
    pro = pro & _shift(pro, 2 * o)
    return gen | (pro & _shift(gen, 4 * o))


def slide(gen: torch.Tensor, empty: torch.Tensor, d: int) -> torch.Tensor:
    """Return the empty squares a slider on ``gen`` reaches in direction ``d``."""
    pro = empty if MASK[d] == ALL else empty & MASK[d]
    return _shift(fill(gen, pro, d), OFFSET[d]) & pro


def spread(x: torch.Tensor) -> torch.Tensor:
    """Return the squares adjacent to any square of ``x``."""
    ew = step(x, 2) | step(x, 6)
    row = x | ew
    return ew | step(row, 0) | step(row, 4)


def or_cols(x: torch.Tensor) -> torch.Tensor:
    """Return the bitwise OR of the columns of an (M, k) tensor."""
    out = x[:, 0]
    for i in range(1, x.shape[1]):
        out = out | x[:, i]
    return out


def square_of(x: torch.Tensor) -> torch.Tensor:
    """Return the square (int64) of each one-bit bitboard of ``x``."""
    # a power of two is exact as a double; the sign bit (h8) is negative
    low = torch.log2(x.clamp(min=1).double()).round().long()
    return torch.where(x < 0, 63, low)


def _line(a: int, b: int) -> tuple[int, ...] | None:
    """Return the squares strictly between a and b when they share a line, else None."""
    for d in range(8):
        ray = RAYS[a][d]
        if b in ray:
            return ray[: ray.index(b)]
    return None


def _tables() -> dict[str, np.ndarray]:
    """Return the square tables as int64 numpy arrays (see :class:`Tables`)."""
    bit = [s64(1 << s) for s in range(64)]
    t: dict[str, np.ndarray] = {}
    t["bit"] = np.array(bit, dtype=np.int64)
    t["ray"] = np.array([[bits_of(RAYS[s][d]) for d in range(8)] for s in range(64)], np.int64)
    t["nb1"] = np.array([[bit[RAYS[s][d][0]] if RAYS[s][d] else 0 for d in range(8)]
                         for s in range(64)], np.int64)
    t["nb2"] = np.array([[bit[RAYS[s][d][1]] if len(RAYS[s][d]) > 1 else 0 for d in range(8)]
                         for s in range(64)], np.int64)
    t["back"] = t["nb1"][:, list(OPPOSITE)]
    t["adj"] = t["nb1"].sum(1)  # the 8 neighbours are distinct bits: the sum is their OR
    t["queen"] = t["ray"].sum(1)
    rank = [bits_of(range(s & 56, (s & 56) + 8)) for s in range(64)]
    file = [bits_of(range(s & 7, 64, 8)) for s in range(64)]
    # squares on the ranks and files through the king's orthogonal neighbours: where
    # a pawn that pincers the king can stand
    t["pawn_zone"] = np.array([
        bits_of(q for n in (RAYS[k][d][0] for d in ORTHOGONAL if RAYS[k][d])
                for q in range(64) if (q & 56) == (n & 56) or (q & 7) == (n & 7))
        for k in range(64)], np.int64)
    t["rank"] = np.array(rank, np.int64)
    t["file"] = np.array(file, np.int64)
    # pincer paths to the king k: column c is ray PAWN_RAYS[c] = (d, d2) from the
    # neighbour n = k + d along d2 (not back at k); upward rays first (see Tables)
    t["pawn_rays"] = np.array([[bits_of(RAYS[RAYS[k][d][0]][d2]) if RAYS[k][d] else 0
                                for d, d2 in PAWN_RAYS] for k in range(64)], np.int64)
    t["pawn_ray_n"] = np.array([[bit[RAYS[k][d][0]] if RAYS[k][d] else 0 for d, _ in PAWN_RAYS]
                                for k in range(64)], np.int64)
    t["pawn_ray_partner"] = np.array([[bit[RAYS[k][OPPOSITE[d]][0]]
                                       if RAYS[k][OPPOSITE[d]] else 0 for d, _ in PAWN_RAYS]
                                      for k in range(64)], np.int64)
    line = np.zeros(4096, np.int64)  # [e*64+k]: where a coordinator captures k, king on e
    corner = np.zeros(4096, np.int64)  # [t*64+k]: coordinator corners of t with king k
    between = np.zeros(4096, np.int64)  # [f*64+t]: squares strictly between f and t
    behind = np.zeros(4096, np.int64)  # [f*64+t]: the square a withdrawer f->t leaves
    orth = np.zeros(4096, bool)  # [f*64+t]: f and t share a rank or a file
    for a in range(64):
        for b in range(64):
            if a != b and (a ^ b) & 56 == 0:
                line[a * 64 + b] = file[b]
            elif a != b and (a ^ b) & 7 == 0:
                line[a * 64 + b] = rank[b]
            corner[a * 64 + b] = s64((1 << ((b & 56) | (a & 7))) | (1 << ((a & 56) | (b & 7))))
            sq = _line(a, b)
            if sq is not None:
                between[a * 64 + b] = bits_of(sq)
                d = next(d for d in range(8) if b in RAYS[a][d])
                behind[a * 64 + b] = t["back"][a, d]
                orth[a * 64 + b] = d in ORTHOGONAL
    t.update(line=line, corner=corner, between=between, behind=behind, orth=orth)
    rng = np.random.default_rng(0x5EED_0017)  # fixed: hashes must not depend on the run
    zob = rng.integers(-(2**63), 2**63 - 1, size=(16, 64), dtype=np.int64)
    zob[0] = 0
    zob[8] = 0
    t["zobrist"] = zob.reshape(-1)
    t["zside"] = rng.integers(-(2**63), 2**63 - 1, size=1, dtype=np.int64)
    # byte -> its 8 bits as 8 bool bytes, packed in one int64 (fast 1-d index_select)
    t["byte_bits"] = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.uint8).view(
        np.int64).reshape(256)
    return t


_NUMPY = _tables()


class Tables:
    """All tables of :func:`_tables` as tensors on ``device`` (attribute per table), plus
    per-direction columns laid out for fast ``index_select``."""

    def __init__(self, device: torch.device) -> None:
        for name, arr in _NUMPY.items():
            setattr(self, name, torch.as_tensor(arr, device=device).contiguous())
        self.arange64 = torch.arange(64, device=device)
        self.zside_value = int(_NUMPY["zside"][0])
        cols = {name: [getattr(self, name)[:, d].contiguous() for d in range(8)]
                for name in ("nb1", "nb2", "back", "ray")}
        self.nb1_d, self.nb2_d = cols["nb1"], cols["nb2"]
        self.back_d, self.ray_d = cols["back"], cols["ray"]
        for name in ("ray", "back"):
            full = getattr(self, name)
            setattr(self, name + "_up", full[:, list(UP)].contiguous())
            setattr(self, name + "_down", full[:, list(DOWN)].contiguous())

    def expand(self, x: torch.Tensor) -> torch.Tensor:
        """Return (..., 64) bool: the bits of the bitboards ``x``."""
        # one 8-byte lookup per byte (little-endian: byte k holds squares 8k..8k+7), several
        # times cheaper on a CPU than shifting every bitboard 64 times
        byte = x.contiguous().view(torch.uint8).view(-1).int()
        return self.byte_bits.index_select(0, byte).view(torch.bool).view(*x.shape, 64)


_M1, _M2, _M4 = s64(0x5555555555555555), s64(0x3333333333333333), s64(0x0F0F0F0F0F0F0F0F)
BYTE_ONES = 0x0101010101010101


def popcount(x: torch.Tensor) -> torch.Tensor:
    """Return the number of set bits of each int64 (SWAR; the masks clear the sign fill)."""
    x = x - ((x >> 1) & _M1)
    x = (x & _M2) + ((x >> 2) & _M2)
    x = (x + (x >> 4)) & _M4
    return (x * BYTE_ONES) >> 56  # the top byte is at most 64: the sign bit stays clear


def smear_down(x: torch.Tensor) -> torch.Tensor:
    """Return ``x`` with every bit below its highest set bit set too."""
    for n in (1, 2, 4, 8, 16, 32):
        x = x | (x >> n)  # arithmetic shifts: a set sign bit smears all 64 bits, as wanted
    return x


def take(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Return ``table[idx]`` along dimension 0 (``index_select``: much faster on CPU)."""
    return table.index_select(0, idx)


def any_true(b: torch.Tensor) -> torch.Tensor:
    """Return (M,) bool: any True in each row of a contiguous (M, 4) or (M, 8) bool."""
    view = torch.int32 if b.shape[1] == 4 else torch.int64
    return b.contiguous().view(view).squeeze(1) != 0


def keep(cond: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Return ``x`` where ``cond`` else 0 (a bit mask: ``torch.where`` is slow on CPU)."""
    return x & -cond.to(torch.int64)
