"""The maximum-capture search of one capturing stone, layer by layer in NumPy (for positions
whose chain nodes are too many for :mod:`.chains`' per-node memo; docs/whistling.md).

A chain node is (cell, axis of the last hop, enemy stones left): the two directions of one
axis ban the same next hops (spec 6), so they share a node. Every hop captures, so a node's
children have fewer stones left: the nodes fall into layers by the number of stones left,
and one pass from the full layer down finds every node, N (the stones taken on the way to
the lowest layer reached: every node on the way is a place a chain may pass) and, adding
each node's number of paths into its children, the number of maximal turns. A child with
no enemy stone left in reach of any hop (``reach``) is a dead end: it is left out unless it
lies in the lowest layer reached so far. Nothing per node is a Python object: a node is
one integer key ``left << 11 | cell << 2 | axis`` (enemy stones numbered 0..m-1; int32 up to
20 enemy stones, int64 past), a layer a sorted array of keys, expanded in chunks by two
threads, each chunk's children sorted and their counts summed there. Memory is 4 bytes per
node kept (the keys, for the hops below; 8 past 20 enemy stones) plus one layer's counts and
the children waiting for their layers, all held under a bound in bytes.

The hops of maximal chains (``kids``: first hops, the env's continuations, the turn
generators) need to know which children still reach the lowest layer: a second pass, from
the lowest layer up, finds those "good" nodes and keeps the hops between them (only these),
sorted as :func:`.movegen.capture_hops` orders them (direction, then distance).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .hexgrid import BIT, NUM_CELLS, PROJ, RAYS, ZONES, cells_of

#: Most enemy stones a layered search numbers (the key keeps 52 bits for them).
MAX_STONES = 52
_K = 21  # hop distances 0..20 per (cell, direction)
_FLAT = NUM_CELLS * 6 * _K
_CHUNK = 1 << 16  # nodes expanded at once (bounds the temporary arrays)
_PACKED_STONES = 20  # most enemy stones whose keys (below 2**31) pack with a count
_LOW = (1 << 32) - 1
_FAR = 99  # "no such stone" in the per-byte distance tables (hops are at most 20 cells)
_COUNT_LIMIT = 1 << 32  # a count this large unpacks the search (tests lower it)
_SLAB = 48 << 20  # waiting children gathered into arrays of this many bytes
_CACHE = 1 << 18  # most nodes whose hops ``kids`` keeps
_POP8 = np.array([bin(i).count("1") for i in range(256)], np.int64)
_EMPTY = np.zeros(0, np.int64)
_TABLES: dict[str, np.ndarray] = {}
#: Children waiting for their layer: packed int64 (key << 32 | count) or (keys, counts).
_Part = np.ndarray | tuple[np.ndarray, np.ndarray]
#: Chunks of a layer expanded at once, each by its own thread (two: the merges between
#: layers run on one, so more threads would gain little).
_THREADS = 2
_POOL: dict[int, ThreadPoolExecutor] = {}


def _pool() -> ThreadPoolExecutor:
    """Return this process's threads that expand chunks (started on first use; why per
    process: a forked worker inherits the pool but not its threads)."""
    pid = os.getpid()
    if pid not in _POOL:
        _POOL.clear()
        _POOL[pid] = ThreadPoolExecutor(_THREADS, thread_name_prefix="chains")
    return _POOL[pid]


def _in_rounds(fn, jobs: Iterable[tuple]) -> Iterator:
    """Yield ``fn(*job)`` for each of ``jobs`` in order, ``_THREADS`` at a time on this
    process's threads (a round of one: on this thread). A round's jobs are taken from
    ``jobs`` when it starts, after the caller has had every result of the round before
    (why rounds: only ``_THREADS`` chunks' results are held at once)."""
    jobs = iter(jobs)
    while jobs_now := list(itertools.islice(jobs, _THREADS)):
        if len(jobs_now) == 1:
            yield fn(*jobs_now[0])
        else:
            yield from _pool().map(lambda job: fn(*job), jobs_now)


def _static() -> dict[str, np.ndarray]:
    """Return the position-independent tables, built on first use (why: most processes
    never meet a position that needs this search)."""
    if _TABLES:
        return _TABLES
    ray_cell = np.full(_FLAT, NUM_CELLS, np.int64)  # cell at distance k (NUM_CELLS: off board)
    zones = []
    for c in range(NUM_CELLS):
        for d in range(6):
            ray, z = RAYS[c][d], ZONES[c][d]
            base = (c * 6 + d) * _K
            ray_cell[base + 1:base + len(ray) + 1] = ray
            zones.extend((z[k] if k < len(z) else 0).to_bytes(42, "little") for k in range(_K))
    dense = np.unpackbits(np.frombuffer(b"".join(zones), np.uint8).reshape(_FLAT, 42),
                          axis=1, bitorder="little")[:, :NUM_CELLS]
    flat, cell = np.nonzero(dense)  # (hop, enemy cell in its whistle zone) pairs
    order = np.argsort(cell, kind="stable")
    _TABLES["zone_hops"] = flat[order].astype(np.int32)
    _TABLES["zone_split"] = np.searchsorted(cell[order], np.arange(NUM_CELLS + 1))
    _TABLES["ray_cell"] = ray_cell
    # hop_node[hop]: the low bits of the node a hop lands on, destination << 2 | axis
    _TABLES["hop_node"] = (ray_cell << 2) | (np.arange(_FLAT) // _K % 6 % 3)
    _TABLES["proj"] = np.array(PROJ, np.int64)
    _TABLES["proj_flat"] = _TABLES["proj"].T.reshape(-1)  # [cell * 6 + direction]
    return _TABLES


def _byte_min(vals: np.ndarray) -> np.ndarray:
    """Return ``out[b, row << 8 | v]``: the least of ``vals[row, 8 * b + t]`` over the bits t
    set in v (``_FAR`` for none), from ``vals`` (rows x stones, int8)."""
    rows, m = vals.shape
    nb = (m + 7) // 8 or 1
    vals = np.concatenate([vals, np.full((rows, 8 * nb - m), _FAR, np.int8)], axis=1)
    out = np.full((nb, 256, rows), _FAR, np.int8)
    for b in range(nb):
        for v in range(1, 256):
            low = 8 * b + (v & -v).bit_length() - 1
            np.minimum(out[b, v & (v - 1)], vals[:, low], out=out[b, v])
    return out.transpose(0, 2, 1).reshape(nb, -1)


def _repeat_index(ends: np.ndarray) -> np.ndarray:
    """Return ``np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0))`` for increasing
    ``ends`` (every repeat at least one). Why not ``np.repeat``: it holds the GIL, so the
    threads that expand chunks would wait for each other (measured: no gain from two)."""
    mark = np.zeros(int(ends[-1]), np.intp)
    mark[ends[:-1]] = 1
    return np.cumsum(mark, out=mark)


def _popcount(a: np.ndarray) -> np.ndarray:
    """Return the number of set bits of each non-negative integer, as int8 (NumPy 1.x has no
    ``bitwise_count``: int64 there)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(a).view(np.int8)  # at most 63: no copy needed
    out = np.zeros(a.shape, np.int64)
    for shift in range(0, 56, 8):
        out += _POP8[(a >> shift) & 255]
    return out


class LayeredSearch:
    """Every chain node of one capturing stone, its best capture (``best``), the number of
    maximal chains (``count``) and, on demand, their hops (``kids``)."""

    def __init__(self, own: int, enemy: int, start: int, max_bytes: int,
                 last: int = -1) -> None:
        """Search the chains of the stone on ``start`` (own stones ``own``; ``last``: the
        direction of a hop already made, else -1) against ``enemy``; raise OverflowError
        past ``max_bytes`` bytes held."""
        t = _static()
        self.cells = cells_of(enemy)
        m = len(self.cells)
        if m > MAX_STONES:
            raise OverflowError("too many enemy stones to number")
        self.start, self.rest, self.enemy, self.m = start, own ^ BIT[start], enemy, m
        #: The integer type of keys and per-hop arrays: int32 while keys are below 2**31 (up
        #: to 20 enemy stones; why: half the memory traffic, about 1.4x faster per NumPy pass)
        self.narrow = m <= _PACKED_STONES
        dt = self.dt = np.int32 if self.narrow else np.int64
        self.local = {c: 1 << j for j, c in enumerate(self.cells)}
        zone = np.zeros(_FLAT, np.int64)
        split = t["zone_split"]
        for j, c in enumerate(self.cells):
            zone[t["zone_hops"][split[c]:split[c + 1]]] |= 1 << j
        wall = np.zeros(NUM_CELLS + 1, bool)  # own stones and the edge (enemy stones: ``hit``)
        wall[cells_of(self.rest)] = True
        wall[NUM_CELLS] = True
        on_ray = wall[t["ray_cell"]].reshape(-1, _K)
        on_ray[:, 0] = False
        #: free0[(c, d)]: the cells free of own stones and the edge along the ray
        self.free0 = ((~np.logical_or.accumulate(on_ray, axis=1)).sum(1) - 1).astype(dt)
        self.zone = zone.astype(dt)
        self.hop_node = t["hop_node"].astype(dt)
        self.proj_flat = t["proj_flat"].astype(dt)
        # reach[cell << 2 | axis]: every enemy stone some hop from the node could capture
        # (own stones and the edge block; enemy stones and the closer rule ignored), so a
        # node whose stones left miss it has no capturing hop: a dead end (_children)
        within = np.bitwise_or.accumulate(zone.reshape(-1, _K), axis=1)
        by_dir = within[np.arange(len(self.free0)), np.maximum(self.free0, 0)].reshape(-1, 6)
        reach = np.zeros((NUM_CELLS, 4), np.int64)
        for a in range(4):
            for d in range(6):
                if d % 3 != a:  # axis 3: the first hop of a turn, every direction
                    reach[:, a] |= by_dir[:, d]
        self.reach = reach.reshape(-1).astype(dt)
        #: ray_reach[c * 6 + d]: every enemy stone some hop from c in direction d could take
        self.ray_reach = by_dir.reshape(-1).astype(dt)
        self._lowest = m  # the lowest layer reached so far
        proj = t["proj"][:, self.cells]  # (6, m)
        nbytes = (m + 7) // 8
        # top[d, b, v]: the largest proj[d] among the stones whose bits are v in byte b
        top = np.full((6, max(nbytes, 1), 256), -(1 << 20), np.int64)  # below any proj
        for j in range(m):
            b, bit = divmod(j, 8)
            has = (np.arange(256) >> bit) & 1 == 1
            top[:, b, has] = np.maximum(top[:, b, has], proj[:, j:j + 1])
        self.top = top.astype(dt)
        # enter[b, (c, d) << 8 | v]: the shortest hop from c in direction d whose whistle zone
        # holds one of the stones whose bits are v in byte b (zones only grow with the
        # distance); hit[...]: the distance of the nearest of them on the ray itself
        ray = t["ray_cell"].reshape(-1, _K)
        zone2 = zone.reshape(-1, _K)
        enter = np.full((len(ray), m), _FAR, np.int8)
        hit = np.full((len(ray), m), _FAR, np.int8)
        for j, c in enumerate(self.cells):
            on = (zone2 >> j) & 1 == 1
            enter[:, j] = np.where(on.any(1), on.argmax(1), _FAR)
            at = ray == c
            hit[:, j] = np.where(at.any(1), at.argmax(1), _FAR)
        # both in one table, an (enter, hit) pair of int8 per int16 (why: one lookup and one
        # minimum per byte of stones left instead of two of each)
        self.enter_hit = np.stack([_byte_min(enter), _byte_min(hit)], axis=-1) \
            .view(np.int16)[..., 0]
        self.root = (((1 << m) - 1) << 11) | (start << 2) | (3 if last < 0 else last % 3)
        self.layers: dict[int, np.ndarray] = {}
        #: Whether the layers were kept, so that the hops of maximal chains can be listed
        #: (``kids``); past the memory bound they are dropped and only N and the count remain.
        self.listable = True
        self.max_bytes = max_bytes
        #: The number of chain nodes found.
        self.nodes = 0
        self._good: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._kids: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
        self._forward()

    def _hops(self, keys: np.ndarray) -> Iterator[tuple[np.ndarray, ...]]:
        """Yield, per direction with hops, (parent index, hop, enemy stones captured, enemy
        stones left) of every capturing hop from the nodes ``keys`` (sorted); a hop is
        ``(cell * 6 + direction) * _K + distance``, so its direction is ``hop // _K % 6``
        and its distance ``hop % _K``.

        Per (node, direction): the longest hop (own stones, the edge, the closer rule and
        the nearest enemy stone on the ray) and the shortest one that captures (zones only
        grow with the distance), from per-byte tables of the enemy stones left; every
        distance between them is one hop.
        """
        proj, dt = self.proj_flat, self.dt
        left = keys >> 11
        cell6 = ((keys >> 2) & 511) * 6
        axis = keys & 3
        new = np.r_[True, left[1:] != left[:-1]]
        first, which = np.flatnonzero(new), np.cumsum(new) - 1
        tops = self.top[:, 0, left[first] & 255]  # the closer rule's maxima per distinct left
        for b in range(1, self.top.shape[1]):
            tops = np.maximum(tops, self.top[:, b, (left[first] >> (8 * b)) & 255])
        for a in range(3):
            turn = np.flatnonzero(axis != a)  # a chain hop changes axis (spec 6)
            for d in (a, a + 3):
                c = cell6[turn] + d
                free = self.free0[c]
                room = np.flatnonzero(free >= 3)
                i, c, free = turn[room], c[room], free[room]
                lft = left[i]
                # first the cheapest test: a stone left some hop along the ray could take
                # (about a third of the (node, direction) pairs pass)
                ok = np.flatnonzero(self.ray_reach[c] & lft)
                i, c, free, lft = i[ok], c[ok], free[ok], lft[ok]
                at = c << 8
                pair = self.enter_hit[0][at | (lft & 255)]
                both = pair.view(np.int8)
                for b in range(1, len(self.enter_hit)):
                    more = self.enter_hit[b][at | ((lft >> (8 * b)) & 255)]
                    np.minimum(both, more.view(np.int8), out=both)
                lo = both[0::2]  # the shortest hop that captures
                # the longest hop: own stones and the edge, enemy stones (short of the nearest
                # on the ray), then, for the pairs still with a hop, the closer rule
                k = np.minimum(free, both[1::2] - 1)
                ok = np.flatnonzero(lo <= k)
                i, c, lft, lo = i[ok], c[ok], lft[ok], lo[ok]
                k = np.minimum(k[ok], (tops[d][which[i]] - proj[c] - 1) >> 1)
                ok = np.flatnonzero(lo <= k)
                if not len(ok):
                    continue
                i, lft, lo = i[ok], lft[ok], lo[ok].astype(dt) - 1
                reps = k[ok] - lo
                ends = np.cumsum(reps, dtype=dt)
                src = _repeat_index(ends)
                # f: the hop of each distance lo + 1 .. k, as an index of the hop tables
                f = np.arange(len(src), dtype=dt) + (c[ok] * _K + lo + 1 - ends + reps)[src]
                lp = lft[src]
                cap = self.zone[f] & lp
                yield i[src], f, cap, np.bitwise_xor(lp, cap, out=lp)

    def _expand(self, keys: np.ndarray) -> tuple[np.ndarray, ...]:
        """Return (parent index, child key, stones captured, hop) of every capturing hop
        from the nodes ``keys`` (:meth:`_hops`, all directions)."""
        node = self.hop_node
        got = [(par, (after << 11) | node[f], cap, f) for par, f, cap, after in self._hops(keys)]
        if not got:
            return _EMPTY, _EMPTY, _EMPTY, _EMPTY
        return tuple(np.concatenate(x) for x in zip(*got, strict=True))

    def _forward(self) -> None:
        """Find every node layer by layer, N and the number of maximal chains."""
        max_bytes = self.max_bytes
        waiting = _Waiting(packed=self.narrow)
        root = np.array([self.root], self.dt)
        waiting.add(self.m, (root, np.ones(1, np.int64)))
        floor, keys, counts, total = self.m, root, np.ones(1, np.int64), 0
        for p in range(self.m, -1, -1):
            if p not in waiting.buckets:
                continue
            del keys, counts  # the layer above: freed before this one is merged
            keys, counts = waiting.pop(p)
            keys = keys.astype(self.dt, copy=False)
            self.nodes += len(keys)
            if self.listable:
                self.layers[p] = keys
            floor = p
            # exact counts: a count is at most the counts of all layers so far times the hops
            # per node (< 128), so int64 holds every count while that total is below 2**55
            total += int(counts.sum())
            if counts.dtype != object and total >= 1 << 55:
                counts = counts.astype(object)
                waiting.to_object()
            for groups in self._layer_children(keys, counts, p, waiting.packed):
                for q, part in groups:
                    waiting.add(q, part)
                if self._held(keys) + waiting.need() > max_bytes:
                    # over the bound: merge the waiting children (duplicates go); then drop
                    # the kept layers (they serve only to list the turns: N and the count go
                    # on); refuse only if that is not enough
                    waiting.shrink()
                    if self._held(keys) + waiting.need() > max_bytes and self.listable:
                        self.listable = False
                        self.layers.clear()
                    if self._held(keys) + waiting.need() > max_bytes:
                        raise OverflowError(self._held(keys) + waiting.need())
        self.floor = floor
        #: The most stones this stone's chains capture.
        self.best = self.m - floor
        #: The number of chains that capture ``best`` stones.
        self.count = int(counts.sum()) if floor < self.m else 0

    def _layer_children(self, keys: np.ndarray, counts: np.ndarray, p: int,
                        summed: bool) -> Iterator[list[tuple[int, _Part]]]:
        """Yield the children of layer ``p`` per chunk (:meth:`_children`), expanded by
        ``_THREADS`` threads at once (why threads: NumPy lets go of the GIL in its loops, and
        a search this large is seconds of work; each round of chunks starts from the same
        lowest layer, so the nodes kept do not depend on the threads' timing)."""
        # a generator: each chunk's lowest layer is read when its round starts
        jobs = ((keys[lo:lo + _CHUNK], counts[lo:lo + _CHUNK], p, self._lowest, summed)
                for lo in range(0, len(keys), _CHUNK))
        for groups, low in _in_rounds(self._children, jobs):
            self._lowest = min(self._lowest, low)
            yield groups

    def _children(self, keys: np.ndarray, counts: np.ndarray, p: int, lowest: int,
                  summed: bool) -> tuple[list[tuple[int, _Part]], int]:
        """Return the children of the nodes ``keys`` of layer ``p`` with their parents'
        counts, as (layer, children) groups, and the lowest layer reached (``lowest`` before
        them). The children are a (keys, counts) pair, or with ``summed`` packed (key << 32 |
        count) with the keys sorted and distinct and their counts summed (why: about half
        the children of a chunk are reached more than once within it, from nodes that differ
        only in the axis or in the cell along one line; summed here, on the expanding
        threads, they are neither held nor merged again).

        Dead ends (children without a capturing hop, known from ``reach``) are left out
        unless they lie in the lowest layer reached so far (why: only the lowest layer's
        nodes end maximal chains, and a dead end in a higher layer is on none; about 40% of
        the nodes of 20 scattered stones are such dead ends). They are found before their
        keys are built (why: most of the work is per hop)."""
        node_of = self.hop_node
        got = []
        for par, f, cap, after in self._hops(keys):
            taken = _popcount(cap)
            lowest = min(lowest, p - int(taken.max()))
            node = node_of[f]
            live = (self.reach[node] & after != 0) | (taken == p - lowest)
            sel = np.flatnonzero(live)
            got.append(((after[sel] << 11) | node[sel], counts[par[sel]], taken[sel]))
        if not got:
            return [], lowest
        child, c, taken = (np.concatenate(x) for x in zip(*got, strict=True))
        del got
        multi = np.flatnonzero(taken > 1)  # most hops take one stone: none to split off
        groups = [(p - 1, child, c)]
        if len(multi):
            one = np.flatnonzero(taken == 1)
            groups = [(p - 1, child[one], c[one])]
            child, c, q = child[multi], c[multi], p - taken[multi]
            groups += [(qq, child[q == qq], c[q == qq]) for qq in sorted(set(q.tolist()))]
        if summed:
            return [(q, _sum_duplicates(k, n)) for q, k, n in groups if len(k)], lowest
        return [(q, (k, n)) for q, k, n in groups if len(k)], lowest

    def _held(self, keys: np.ndarray) -> int:
        """Return the bytes the search holds while it expands the layer ``keys``: the kept
        layers (``keys`` among them while listable, else apart) and the layer's counts."""
        return self.nbytes() + (0 if self.listable else keys.nbytes) + 8 * len(keys)

    def nbytes(self) -> int:
        """Return the bytes the kept layers hold."""
        return sum(keys.nbytes for keys in self.layers.values())

    def size(self) -> int:
        """Return the number of chain nodes found."""
        return self.nodes

    def _good_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the hops between good nodes as sorted (parent key, child key, direction);
        raise OverflowError when the layers were dropped or the hops need more than the
        search's memory bound."""
        if not self.listable:
            raise OverflowError("the layers were dropped to bound memory")
        if self._good is None:
            good = {self.floor: self.layers[self.floor]}
            edges, held, budget = [], 0, self.max_bytes - self.nbytes()
            for p in sorted(self.layers):
                if p <= self.floor:
                    continue
                keys, found = self.layers[p], []
                jobs = ((keys[lo:lo + _CHUNK], p, good) for lo in range(0, len(keys), _CHUNK))
                for hop in _in_rounds(self._good_hops, jobs):  # as _layer_children
                    edges.append(hop)
                    found.append(hop[0])
                    # 26 bytes an edge while found, about twice that while sorted (measured)
                    held += 26 * len(hop[0])
                    if 2 * held > budget:
                        raise OverflowError("listing the hops needs more memory")
                good[p] = _distinct(np.sort(np.concatenate(found))) if found else _EMPTY
            if edges:
                parent, child, d, k = (np.concatenate(x) for x in zip(*edges, strict=True))
                order = np.lexsort((k, d, parent))
                self._good = parent[order], child[order], d[order]
            else:
                empty = np.zeros(0, np.int64)
                self._good = empty, empty, empty
        return self._good

    def _good_hops(self, keys: np.ndarray, p: int,
                   good: dict[int, np.ndarray]) -> tuple[np.ndarray, ...]:
        """Return (parent key, child key, direction, distance) of the hops from the nodes
        ``keys`` of layer ``p`` into good nodes (``good``: per lower layer, its good nodes'
        sorted keys)."""
        par, child, cap, f = self._expand(keys)
        q = p - _popcount(cap)
        ok = np.zeros(len(child), bool)
        for qq in set(q.tolist()):
            g = good.get(qq)
            if g is None or not len(g):
                continue
            sel = np.flatnonzero(q == qq)
            at = np.minimum(np.searchsorted(g, child[sel]), len(g) - 1)
            ok[sel] = g[at] == child[sel]
        return (keys[par[ok]], child[ok], (f[ok] // _K % 6).astype(np.int8),
                (f[ok] % _K).astype(np.int8))

    def kids(self, cell: int, last: int, left: int) -> list[tuple[int, int, int]]:
        """Return (direction, destination, captured cells) of each hop from the node that
        lies on a maximal chain, in :func:`.movegen.capture_hops` order; raise OverflowError
        when the layers were dropped (``listable`` false) or the hops need more memory than
        the bound."""
        axis = 3 if last < 0 else last % 3
        got = self._kids.get((cell, axis, left))
        if got is not None:
            return got
        parent, child, d = self._good_edges()
        local = 0
        for c in cells_of(left & self.enemy):
            local |= self.local[c]
        key = (local << 11) | (cell << 2) | axis
        lo, hi = np.searchsorted(parent, [key, key + 1]).tolist()
        got = []
        for ck, dd in zip(child[lo:hi].tolist(), d[lo:hi].tolist(), strict=True):
            cap = local & ~(ck >> 11)
            cells = 0
            while cap:
                low = cap & -cap
                cells |= BIT[self.cells[low.bit_length() - 1]]
                cap ^= low
            got.append((dd, (ck >> 2) & 511, cells))
        if len(self._kids) >= _CACHE:  # why a bound: the good nodes can be millions
            self._kids.clear()
        self._kids[cell, axis, left] = got
        return got


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Return the distinct values of a sorted array (why not np.unique: NumPy 2 may hash)."""
    return keys[np.r_[True, keys[1:] != keys[:-1]]] if len(keys) else keys


class _Bucket:
    """The children waiting to be merged into one layer: packed int64 arrays (key << 32 |
    count) or (keys, counts) pairs, all of one kind."""

    __slots__ = ("parts", "nbytes", "small", "fresh")

    def __init__(self) -> None:
        """Start empty."""
        self.parts: list = []
        self.nbytes = 0  # the bytes the parts hold (an object count as 8)
        self.small = 0  # the bytes of the small packed parts at the end
        self.fresh = 0  # the bytes added since the last merge

    def add(self, part: _Part) -> None:
        """Add one part (waiting children); gather the small packed parts into one slab past
        ``_SLAB`` bytes (why: an array that large is its own memory mapping, given back to
        the system when freed; small ones stay in the heap)."""
        self.parts.append(part)
        self.nbytes += _nbytes(part)
        self.fresh += _nbytes(part)
        if isinstance(part, np.ndarray) and part.nbytes < _SLAB:
            self.small += part.nbytes
            if self.small >= _SLAB:
                k = len(self.parts) - 1
                while k > 0 and isinstance(self.parts[k - 1], np.ndarray) \
                        and self.parts[k - 1].nbytes < _SLAB:
                    k -= 1
                self.parts[k:] = [np.concatenate(self.parts[k:])]
                self.small = 0

    def merge(self, packed: bool) -> tuple[np.ndarray, np.ndarray]:
        """Return the sorted distinct keys and their summed counts (the bucket is emptied)."""
        parts, self.parts, self.nbytes, self.small, self.fresh = self.parts, [], 0, 0, 0
        return _merge_packed(parts) if packed else _merge(parts)

    def compact(self, packed: bool) -> bool:
        """Merge the parts into one when at least half the bytes are new since the last
        merge (why: a key reached from many parents is then held once, and no child is
        sorted more than about twice); return True when a count reached 2**32 (the caller
        unpacks every bucket)."""
        if len(self.parts) < 2 or 2 * self.fresh < self.nbytes:
            return False
        keys, counts = self.merge(packed)
        big = packed and int(counts.max()) >= _COUNT_LIMIT
        self.add(_pack(keys, counts) if packed and not big else (keys, counts))
        self.fresh = 0
        return big

    def unpack(self) -> None:
        """Turn packed parts into (keys, counts) pairs."""
        self.parts = [(p >> 32, p & _LOW) if isinstance(p, np.ndarray) else p
                      for p in self.parts]
        self.nbytes = sum(map(_nbytes, self.parts))

    def to_object(self) -> None:
        """Hold the counts as Python integers (exact past 2**63)."""
        self.parts = [(k, c.astype(object)) for k, c in self.parts]


class _Waiting:
    """The children waiting to be merged into their layers, one bucket per layer.

    Packed while a key and a count share one int64 (key << 32 | count): the keys of up to
    20 enemy stones are below 2**31, and counts stay below 2**32 until a search has
    billions of chains; then (key, count) pairs, with Python integers past 2**55.
    """

    def __init__(self, packed: bool) -> None:
        """Start with no children."""
        self.buckets: dict[int, _Bucket] = {}
        self.packed = packed

    def add(self, layer: int, part: _Part) -> None:
        """Add children of ``layer``: packed (key << 32 | count) or a (keys, counts) pair."""
        if isinstance(part, tuple):
            if self.packed and len(part[1]) and int(part[1].max()) >= _COUNT_LIMIT:
                self.unpack()  # a sum of counts (``LayeredSearch._children``)
            if self.packed:
                part = _pack(*part)
        elif not self.packed:
            part = (part >> 32, part & _LOW)
        self.buckets.setdefault(layer, _Bucket()).add(part)

    def pop(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the sorted distinct keys of ``layer`` and their counts (merged, dropped)."""
        keys, counts = self.buckets.pop(layer).merge(self.packed)
        if self.packed and int(counts.max()) >= _COUNT_LIMIT:
            self.unpack()
        return keys, counts

    def unpack(self) -> None:
        """Hold every waiting child as a (key, count) pair from now on."""
        self.packed = False
        for bucket in self.buckets.values():
            bucket.unpack()

    def to_object(self) -> None:
        """Hold every count as a Python integer from now on."""
        self.unpack()
        for bucket in self.buckets.values():
            bucket.to_object()

    def shrink(self) -> None:
        """Merge each bucket's parts into one (duplicates held once)."""
        for bucket in self.buckets.values():
            if bucket.compact(self.packed):
                self.unpack()

    def need(self) -> int:
        """Return the bytes the waiting children hold, plus what merging the largest
        bucket needs besides (a sorted copy, then its distinct keys and counts; measured)."""
        sizes = [b.nbytes for b in self.buckets.values()]
        return sum(sizes) + 2 * max(sizes, default=0)


def _sum_duplicates(keys: np.ndarray, counts: np.ndarray) -> _Part:
    """Return the sorted distinct ``keys`` (below 2**31) with their ``counts`` (below 2**32)
    summed: packed (key << 32 | count) while every sum is below ``_COUNT_LIMIT``, else as a
    (keys, counts) pair."""
    packed = _pack(keys, counts)
    packed.sort()
    first = _run_starts(packed)
    out = packed[first]
    out &= ~_LOW
    sums = _run_sums(packed, first, np.empty(len(first), np.int64))
    if len(sums) and int(sums.max()) >= _COUNT_LIMIT:
        return out >> 32, sums
    return np.bitwise_or(out, sums, out=out)


def _run_sums(packed: np.ndarray, first: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Return ``out`` filled with the sum of the counts (the low 32 bits) of each run of one
    key in sorted ``packed`` values (``first``: the runs' first indices); ``packed`` is
    overwritten with running totals.

    A run's sum is the difference of the running totals at its last element and at the
    element before it (why not np.add.reduceat: 1.5x slower on runs this short)."""
    np.bitwise_and(packed, _LOW, out=packed)
    np.cumsum(packed, out=packed)  # below 2**63: fewer than 2**31 counts, each below 2**32
    for j in range(0, len(first), _CHUNK):  # in chunks: no temporaries of the runs' size
        last = np.append(first[j + 1:j + _CHUNK + 1], len(packed))[:_CHUNK] - 1
        # mode "clip" (the indices are in range): with "raise" ``out`` is buffered, 2x slower
        got = np.take(packed, last, out=out[j:j + len(last)], mode="clip")
        got[1:] -= packed[last[:-1]]
        if j:
            got[0] -= packed[first[j] - 1]
    return out


def _pack(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Return ``key << 32 | count`` of keys below 2**31 and counts below 2**32 as int64."""
    out = keys.astype(np.int64)
    np.left_shift(out, 32, out=out)
    return np.bitwise_or(out, counts, out=out)


def _nbytes(part: _Part) -> int:
    """Return the bytes one waiting part holds."""
    return part.nbytes if isinstance(part, np.ndarray) else 8 * len(part[0]) + 8 * len(part[1])


def _merge_packed(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Return the sorted distinct keys (int32) of packed ``parts`` (emptied: each is freed
    once copied) with their counts summed."""
    n = sum(map(len, parts))
    packed, at = np.empty(n, np.int64), 0
    parts.reverse()
    while parts:
        part = parts.pop()
        packed[at:at + len(part)] = part
        at += len(part)
        del part
    if not n:
        return _EMPTY, _EMPTY
    # the parts are sorted (``LayeredSearch._children`` sums each chunk's children), so a
    # stable sort (timsort) only merges their runs: 3x faster than a quicksort (measured)
    packed.sort(kind="stable")
    halves = [packed]
    if _THREADS > 1 and n >= 4 * _CHUNK:  # each thread sums the runs of half the keys
        cut = int(np.searchsorted(packed, ((int(packed[n // 2 - 1]) >> 32) + 1) << 32))
        halves = [h for h in (packed[:cut], packed[cut:]) if len(h)]
    firsts = list(_in_rounds(_run_starts, [(h,) for h in halves]))
    # the keys and counts are written in place (why: no second copy of the largest layer)
    at = np.cumsum([0] + [len(f) for f in firsts])
    keys, counts = np.empty(int(at[-1]), np.int32), np.empty(int(at[-1]), np.int64)

    def fill(h: np.ndarray, first: np.ndarray, lo: int) -> None:
        mine = keys[lo:lo + len(first)]
        for j in range(0, len(first), _CHUNK):  # in chunks: no temporary of the keys' size
            np.right_shift(h[first[j:j + _CHUNK]], 32, out=mine[j:j + _CHUNK],
                           casting="unsafe")
        _run_sums(h, first, counts[lo:lo + len(first)])

    list(_in_rounds(fill, zip(halves, firsts, at[:-1].tolist(), strict=True)))
    return keys, counts


def _run_starts(packed: np.ndarray) -> np.ndarray:
    """Return the index of the first of each run of one key in sorted packed values."""
    starts = [np.zeros(1, np.int64)]
    for lo in range(1, len(packed), _CHUNK):  # why in chunks: no temporaries that large
        hi = min(lo + _CHUNK, len(packed))
        new = (packed[lo:hi] >> 32) != (packed[lo - 1:hi - 1] >> 32)
        starts.append(np.flatnonzero(new) + lo)
    return np.concatenate(starts)


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Return the sorted distinct keys of ``parts`` (emptied) with their counts summed."""
    n = sum(len(k) for k, _ in parts)
    spare = 63 - max(int(k.max()) for k, _ in parts if len(k)).bit_length()
    counts = np.concatenate([c for _, c in parts])
    if n < 1 << spare:  # why: a plain sort of (key, index) is 5x faster than argsort
        packed, at = np.empty(n, np.int64), 0
        for k, _ in parts:
            np.left_shift(k.astype(np.int64, copy=False), spare, out=packed[at:at + len(k)])
            at += len(k)
        parts.clear()  # the parts are copied: free them before the sort's temporaries
        packed |= np.arange(n)
        packed.sort()
        order = packed & ((1 << spare) - 1)
        keys = np.right_shift(packed, spare, out=packed)
    else:
        keys = np.concatenate([k for k, _ in parts])
        parts.clear()
        order = np.argsort(keys)
        keys = keys[order]
    counts = counts[order]
    del order
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.add.reduceat(counts, starts)
