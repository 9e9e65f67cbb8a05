"""Bitboards as Python ints: bit i set = cell i occupied. Shared by every game."""

from __future__ import annotations

from collections.abc import Iterable


def mask_of(cells: Iterable[int]) -> int:
    """Return the bitmask with the bits of ``cells`` set."""
    out = 0
    for i in cells:
        out |= 1 << i
    return out


def indices_of(mask: int) -> list[int]:
    """Return the set bits of ``mask`` in ascending order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
