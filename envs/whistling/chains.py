"""The maximum-capture search of one Whistling position (spec section 8), without the turn list.

A position where some stone can whistle-capture may have a very large number of maximal
chains (316,132 whole turns for one X stone among 20 O stones, see docs/whistling.md),
but far fewer chain *nodes*: a node is (cell, direction of the last hop or -1, enemy
stones left), and its best number of further captures does not depend on how the chain
got there. :class:`Chains` memoises, per capturing stone, every node's best count and
capturing hops, once per position; first hops, continuations, the number of maximal
turns (a counting pass over the same memo) and membership then cost memo look-ups, and
the turns themselves are only ever produced lazily (:meth:`Chains.turns`).

Past ``SWITCH_NODES`` memo nodes (a stone among many scattered enemy stones: millions of
nodes) the position is searched again by :class:`.chain_layers.LayeredSearch`, which keeps
no Python object per node; ``hops`` then reads its hops of maximal chains instead.

Bounds: memory is the search, one node per (cell, last hop, enemy stones left) reachable
from a capturer by capturing hops (memo: each entry holds at most 6 x 20 hops; layered:
4 bytes a node kept, up to ``MAX_BYTES`` in all). The turn generators keep one path per
level on a stack.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..core.game import PositionError
from .chain_layers import MAX_STONES, LayeredSearch
from .hexgrid import BIT, CELL_NAMES, cells_of
from .movegen import Turn, _new, capture_hops
from .notation import CRUSH, WHISTLE, turn_to_str

#: Chain nodes the per-node memo may hold before the layered search (:mod:`.chain_layers`)
#: takes over: the memo is the faster one for the small searches of ordinary play (40 random
#: games needed at most 202 nodes), the layered one (about 10 times less CPU and 25 times
#: less memory per node) for a stone among many scattered enemy stones.
SWITCH_NODES = 2_000
#: Most bytes one position's layered search may hold (its kept layers, the layer it expands
#: and the children waiting to be merged): past it the position is refused with
#: :class:`ChainLimitError`. Why a limit: the nodes can grow exponentially with the enemy
#: stones, and exact maximum capture needs every one of them; this bound keeps a search,
#: answered or refused, under about 500 MB of peak memory (measured, bench/whistling_chains.py).
MAX_BYTES = 280 * 2**20
#: The memo's own bound where the layered search cannot number the enemy stones (more than
#: ``chain_layers.MAX_STONES``; no game reaches it, each side has 21 stones).
MEMO_NODES = 200_000

Hop = tuple[int, int, int]  # (direction, destination cell, bitmask of the stones captured)
Memo = dict[tuple[int, int, int], tuple[int, list[Hop]]]  # node -> (best count, its hops)


class ChainLimitError(PositionError):
    """A position whose maximum-capture search needs more than ``MAX_BYTES`` of memory."""


class _Full(Exception):
    """The memo search went past its node budget."""


def _memo_search(own: int, enemy: int, capturers: list[int], mx: list[int], limit: int,
                 last: int) -> tuple[dict[int, int], dict[int, Memo]]:
    """Return (best count, memo) per capturer (whose last hop went ``last``) from the
    per-node memo search; raise _Full past ``limit`` nodes in all."""
    extremes: dict[int, list[int]] = {enemy: mx}
    memos: dict[int, Memo] = {}
    best_of: dict[int, int] = {}
    budget = [limit]  # shared by all capturers' searches
    for s in capturers:
        rest = own ^ BIT[s]  # the moving stone's start cell is empty for the whole turn
        memo: Memo = {}
        memos[s] = memo

        def best(cell: int, last: int, left: int, rest: int = rest, memo: Memo = memo) -> int:
            key = (cell, last, left)
            got = memo.get(key)
            if got is not None:
                return got[0]
            hops = capture_hops(cell, last, rest | left, left, extremes) if left else []
            b = 0
            for d, dest, c in hops:
                v = c.bit_count() + best(dest, d, left & ~c)
                if v > b:
                    b = v
            memo[key] = (b, hops)
            budget[0] -= 1
            if budget[0] < 0:
                raise _Full
            return b

        best_of[s] = best(s, last, enemy)
    return best_of, memos


def _refusal(limit: str) -> str:
    """Return the refusal message for a search past ``limit`` (nodes or megabytes)."""
    return (f"the maximum-capture search of this position needs more than {limit} "
            "(stones that can chain-capture among many scattered enemy stones); "
            "boardzoo refuses it to bound memory")


def _size(nbytes: int) -> str:
    """Return a memory size for a message: ``360 MB``, or ``1,000 bytes`` below 1 MB."""
    return f"{nbytes / 2**20:,.0f} MB" if nbytes >= 2**20 else f"{nbytes:,} bytes"


class Chains:
    """The maximum-capture search of one position: N, the maximal first hops, continuations,
    the number of maximal turns and the turns themselves (lazily)."""

    __slots__ = ("enemy", "n", "starts", "memos", "layered", "crushes", "_counts")

    def __init__(self, own: int, enemy: int, capturers: list[int], crushes: list[Turn],
                 mx: list[int], last: int = -1) -> None:
        """Search every capturer of ``own`` against ``enemy`` (``mx``: the closer-rule maxima;
        ``last``: the direction of a hop already made, mid-chain, else -1)."""
        numbered = enemy.bit_count() <= MAX_STONES
        limit = SWITCH_NODES if numbered else MEMO_NODES
        layered: dict[int, LayeredSearch] = {}
        try:
            best_of, memos = _memo_search(own, enemy, capturers, mx, limit, last)
        except _Full:
            if not numbered:
                raise ChainLimitError(_refusal(f"{limit:,} chain nodes")) from None
            memos, budget = {}, MAX_BYTES
            for s in capturers:
                try:
                    layered[s] = LayeredSearch(own, enemy, s, budget, last)
                except OverflowError:
                    raise ChainLimitError(_refusal(_size(MAX_BYTES))) from None
                budget -= layered[s].nbytes()
            best_of = {s: search.best for s, search in layered.items()}
        n = max(best_of.values())
        self.enemy = enemy
        #: N: the stones every legal turn captures.
        self.n = n
        #: The capturers whose best chain takes N stones, in board order.
        self.starts = tuple(s for s in capturers if best_of[s] == n)
        # the other capturers' searches are never read again: drop them (memory)
        self.memos = {s: memos[s] for s in self.starts if s in memos}
        self.layered = {s: layered[s] for s in self.starts if s in layered}
        #: Crushes take one stone, so they are legal only when N is 1.
        self.crushes = crushes if n == 1 else []
        self._counts: dict[int, dict[tuple[int, int, int], int]] = {}

    def hops(self, start: int, cell: int, last: int, left: int, need: int) -> list[Hop]:
        """Return the hops from a node of ``start``'s chains that still capture ``need`` stones
        in all (``need`` is the node's best count on a maximal chain)."""
        if self.layered:  # why not .get first: ordinary play never has a layered search
            try:
                return self.layered[start].kids(cell, last, left)
            except OverflowError:
                raise ChainLimitError(
                    f"listing the turns of this position needs more than {_size(MAX_BYTES)} "
                    f"(its {self.count():,} turns of {self.n} captures are counted: "
                    "boardzoo perft whistling 1); boardzoo refuses it to bound memory") from None
        memo = self.memos[start]
        out = []
        for d, dest, c in memo[cell, last, left][1]:
            k = c.bit_count()
            if k <= need and k + memo[dest, d, left & ~c][0] == need:
                out.append((d, dest, c))
        return out

    def first_hops(self) -> list[tuple[int, Hop]]:
        """Return (start, hop) of every first hop of a maximal whistling capture, in the order
        of the turns (crushes not included)."""
        n, enemy = self.n, self.enemy
        return [(s, h) for s in self.starts for h in self.hops(s, s, -1, enemy, n)]

    def turns(self) -> Iterator[Turn]:
        """Yield every legal turn, in the order of ``State.legal_moves()``."""
        for s in self.starts:
            yield from self.turns_from((s,), (), -1, self.enemy, self.n)
        yield from self.crushes

    def turns_from(self, path: tuple[int, ...], caps: tuple[int, ...], last: int, left: int,
                   need: int) -> Iterator[Turn]:
        """Yield every maximal turn that begins with the hops ``path``/``caps`` (the node
        reached has ``left`` enemy stones, the last hop went ``last``, ``need`` to take)."""
        stack = [(path, caps, last, left, need)]
        pop, hops, start = stack.pop, self.hops, path[0]
        while stack:
            path, caps, last, left, need = pop()
            if need == 0:
                yield _new(Turn, (path, caps, WHISTLE))
                continue
            kids = [(path + (dest,), caps + (c,), d, left & ~c, need - c.bit_count())
                    for d, dest, c in hops(start, path[-1], last, left, need)]
            stack.extend(reversed(kids))  # depth first, hops in memo order (as legal_moves)

    def count(self) -> int:
        """Return the number of legal turns, by counting over the memo (nothing enumerated)."""
        return len(self.crushes) + sum(
            self.layered[s].count if s in self.layered else self.count_from(s, s, -1, self.enemy)
            for s in self.starts)

    def count_from(self, start: int, cell: int, last: int, left: int) -> int:
        """Return the number of maximal continuations from a node of ``start``'s chains."""
        memo = self.memos[start]
        counts = self._counts.setdefault(start, {})

        def rec(cell: int, last: int, left: int) -> int:
            key = (cell, last, left)
            got = counts.get(key)
            if got is None:
                b, hops = memo[key]
                got = 0 if b else 1  # a node with nothing left to capture ends one turn
                for d, dest, c in hops:
                    rest = left & ~c
                    if c.bit_count() + memo[dest, d, rest][0] == b:
                        got += rec(dest, d, rest)
                counts[key] = got
            return got

        return rec(cell, last, left)

    def contains(self, turn: object) -> bool:
        """Return True when ``turn`` is one of the legal turns (followed through the memo)."""
        if not isinstance(turn, tuple) or len(turn) != 3:
            return False
        path, caps, kind = turn
        if kind == CRUSH:
            return turn in self.crushes
        if (kind != WHISTLE or type(path) is not tuple or type(caps) is not tuple
                or len(path) != len(caps) + 1 or path[0] not in self.starts):
            return False
        cell, last, left, need = path[0], -1, self.enemy, self.n
        for dest, c in zip(path[1:], caps, strict=True):
            hop = next((h for h in self.hops(path[0], cell, last, left, need) if h[1] == dest),
                       None)
            if hop is None or hop[2] != c:
                return False
            cell, last, left, need = dest, hop[0], left & ~c, need - c.bit_count()
        return need == 0

    def strs(self) -> Iterator[str]:
        """Yield the canonical notation of every legal turn in ASCII order, lazily.

        Why this is sorted: two first hops' texts ``S-D:CAPS`` (or crushes ``S:T``) differ
        before either ends, and so do two sibling hops' ``-D:CAPS`` (a hop's destination
        fixes its captures), so sorting the first hops and then each node's hops orders
        the whole texts.
        """
        enemy, n = self.enemy, self.n
        tops: list[tuple[str, int, Hop | None]] = [(turn_to_str(t), -1, None)
                                                  for t in self.crushes]
        for s, hop in self.first_hops():
            tops.append((_segment(s, hop[1], hop[2]), s, hop))
        tops.sort()
        for text, s, hop in tops:
            if hop is None:
                yield text
                continue
            d, dest, c = hop
            stack = [(text, dest, d, enemy & ~c, n - c.bit_count())]
            while stack:
                text, cell, last, left, need = stack.pop()
                if need == 0:
                    yield text
                    continue
                kids = [(text + _segment(-1, dest, c), dest, d, left & ~c, need - c.bit_count())
                        for d, dest, c in self.hops(s, cell, last, left, need)]
                kids.sort(reverse=True)  # popped smallest first
                stack.extend(kids)

    def size(self) -> int:
        """Return the number of memoised chain nodes (the search's memory)."""
        return (sum(map(len, self.memos.values()))
                + sum(search.size() for search in self.layered.values()))


def _segment(start: int, dest: int, caps: int) -> str:
    """Return the notation of one capturing hop: ``S-D:CAPS`` (``-D:CAPS`` when start < 0)."""
    head = CELL_NAMES[start] if start >= 0 else ""
    return f"{head}-{CELL_NAMES[dest]}:" + "".join(CELL_NAMES[i] for i in cells_of(caps))
