"""Monochromatic Whistling's rules engine for the CPU (spec: shared/rules/whistling.md),
compiled with numba: move generation (spec 4-7), compulsory maximum capture (spec 8), the
env's hops one at a time, whole turns, results (spec 9), the static evaluation, perft and the
env's observation planes. :mod:`.rules` (``State``), :mod:`.actions` (the env's hop actions)
and :mod:`.evaluation` ask it; the torch batched engine (:mod:`.batched`) is the other engine.

Representation, and why. A position is two stone bitmasks (bit ``i`` = cell ``i`` in board
order), split into six ``uint64`` words each (331 cells need 384 bits): ``State`` keeps them as
Python ints, and converting one is one ``to_bytes``. Inside a call the mover's stones and the
enemy's are laid out once on a cell array ``sq`` (int16 per cell: ``EMPTY``, ``OWN``, or the
enemy stone's number ``j``, 0..m-1 in board order), because everything the rules ask is a walk
along a ray of at most 20 cells (the first blocker, the whistle zone growing with the hop) and
a multi-word bitboard would need a word loop for every bit scan. In a chain the enemy stones
left are one ``uint64`` ``left`` over those numbers (bit ``j`` = enemy stone ``j``), so a chain
node (cell, axis of the last hop, stones left) is one 64-bit key,
``left << 11 | cell << 2 | axis`` (axis 3: the first hop of a turn, which may go anywhere;
the two directions of an axis ban the same next hops, spec 7).

Tables (numpy, built at import from :mod:`.hexgrid`): ``RAY[cell, d, k - 1]`` the cell ``k``
steps away, ``GAIN[cell, d, k]`` the at most two cells the whistle zone gains when the hop
grows from ``k - 1`` to ``k`` cells (zones only grow with the distance; checked here at
import), ``PROJ[d, cell]`` the closer rule's projections (docs/whistling.md, "Rules engine").

The maximum-capture search (spec 8) memoises per chain node, in one open-addressing hash
table per capturing stone: a depth-first pass finds every node's best capture (``best``), a
second one counts the maximal turns over it (``count``), and the hops of maximal chains
(first hops, continuations, whole turns) are the hops whose child's best completes the
node's. Nothing lists the turns unless asked: counts and hops walk the memo. Past
``COUNT_MEMO_NODES`` nodes (a stone among many scattered enemy stones) a count is answered
by the layered pass of :func:`_layered_count` (nodes in layers by the stones left, counts
pushed down layer by layer, each layer freed once expanded); a list of hops or turns keeps
its memo packed (the best alone) up to ``MEMO_BYTES`` and is refused past it (``TOO_BIG``),
and so is a position with more than ``MAX_STONES`` enemy stones: the Python API at the end
raises :class:`ChainLimitError` for those. The search's leaves ask for N alone
(:func:`judge`, :func:`evaluate_in`): a pruned search on a workspace kept between calls.

Every function is ``@njit(cache=True)``: the first call in a fresh environment compiles it
(bench/whistling_kernel_speed.py states how long), later processes load the machine code
from numba's cache. tests/test_whistling_kernel.py checks it against the shared vectors and
the facts the Python rules engine recorded before this kernel replaced it.
"""

from __future__ import annotations

import threading

import numpy as np

from ..core.game import PositionError
from ..core.jit import njit
from ..core.jit_bits import lowest_square, popcount
from .hexgrid import CELLS, NUM_CELLS, RAYS, ZONES, cells_of
from .hexgrid import PROJ as _PROJ

NC = NUM_CELLS
WORDS = 6  # uint64 words of a 331-cell bitmask
MAX_DISTANCE = 20
#: Most enemy stones a chain search numbers: a node key keeps 11 bits for cell and axis.
MAX_STONES = 52
#: Bytes the memo of a search that lists hops or turns may hold (packed: 8 bytes a slot, at
#: most half full, so 2**24 nodes; 16 bytes a slot past PACKED_STONES enemy stones): past it
#: a list is refused. The doubling before the last holds both tables a moment (1.5 times).
MEMO_BYTES = 256 << 20
#: Most turns one position's list may hold (the rows take about 200 bytes a turn, the
#: Python turns as much again): past it a list is refused, a count still answered.
LIST_TURNS = 1 << 20
#: Memo nodes a count searches before it goes to the layered pass (why: past the caches a
#: memo look-up misses at every hop; the layered pass inserts in order).
COUNT_MEMO_NODES = 1 << 15
#: Bytes the layered pass's tables may hold at once (its waiting children and their sorted
#: copy add about a third more), its bound in memory.
LAYERED_BYTES = 320 << 20

EMPTY, OWN = -1, -2  # ``sq`` values besides an enemy stone's number
PLAIN, WHISTLE, CRUSH = 0, 1, 2  # Turn.kind, as in .notation
#: Status codes of the chain functions: answered, a count past 2**64, too big to list.
OK, OVERFLOW, TOO_BIG = 0, 1, 2
#: Results of :func:`result`: the game goes on, X won, O won, drawn (spec 9).
ONGOING, X_WINS, O_WINS, DRAW = 0, 1, 2, 3

DRAW_QUIET = 40  # spec section 9: 20 non-capturing turns by each player end in a draw
# The static evaluation (:func:`evaluate`): material, plus these shares of the captures ready.
W_NOW = 0.8  # the side to move must capture its best capture now: most of it is banked
W_EXPOSED = 0.4  # stones the opponent could take if it were to move: at risk, not yet lost

# Why typed constants: numba types a bare int literal as int64, and uint64 (op) int64 is
# float64, which would silently round a bitmask.
ONE = np.uint64(1)
ZERO = np.uint64(0)
EMPTY_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no node key is all ones (left < 2**52)
HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
HASH_SHIFT = np.uint64(29)


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (RAY, RAY_LEN, GAIN) from hexgrid's rays and zones; assert that a zone only
    grows with the hop length, by at most two cells a step (what GAIN relies on)."""
    ray = np.full((NC, 6, MAX_DISTANCE), -1, np.int16)
    ray_len = np.zeros((NC, 6), np.int64)
    gain = np.full((NC, 6, MAX_DISTANCE + 1, 2), -1, np.int16)
    for c in range(NC):
        for d in range(6):
            cells = RAYS[c][d]
            ray_len[c, d] = len(cells)
            ray[c, d, :len(cells)] = cells
            zones = ZONES[c][d]
            for k in range(1, len(cells) + 1):
                new = zones[k] & ~zones[k - 1]
                assert zones[k - 1] & ~zones[k] == 0, "a zone shrank with a longer hop"
                got = cells_of(new)
                assert len(got) <= 2, "a zone gained more than two cells in one step"
                gain[c, d, k, :len(got)] = got
    return ray, ray_len, gain


RAY, RAY_LEN, GAIN = _tables()
#: [cell, d]: the whistle zone of the longest hop from ``cell`` along ``d`` (it holds every
#: shorter hop's) as six words: a stone with no enemy stone there whistles nothing that way.
STRIP = np.array([[np.frombuffer(ZONES[c][d][RAY_LEN[c, d]].to_bytes(8 * WORDS, "little"),
                                 np.uint64) for d in range(6)] for c in range(NC)])
PROJ = np.array(_PROJ, np.int64)  # [d, cell]: <u_d, cell>, spec 1's metric


@njit(cache=True)
def _bit(j: int) -> np.uint64:
    """Return the uint64 with bit ``j`` set."""
    return ONE << np.uint64(j)


@njit(cache=True)
def _has(mask: np.uint64, j: int) -> bool:
    """Return True when bit ``j`` of ``mask`` is set."""
    return (mask >> np.uint64(j)) & ONE != ZERO


# -- the board of one call ------------------------------------------------------------------


@njit(cache=True)
def _cells_of(words: np.ndarray, out: np.ndarray) -> int:
    """Write the cells of a 6-word bitmask into ``out`` in board order; return how many."""
    n = 0
    for w in range(WORDS):
        x = words[w]
        while x != ZERO:
            out[n] = 64 * w + lowest_square(x)
            n += 1
            x &= x - ONE
    return n


@njit(cache=True)
def _setup(own: np.ndarray, enemy: np.ndarray, sq: np.ndarray, own_cells: np.ndarray,
           ecell: np.ndarray) -> tuple[int, int]:
    """Lay the mover's stones ``own`` and the enemy's out on ``sq`` (enemy stones numbered
    0..m-1 in board order, ``ecell[j]`` the cell of number j); return (own count, m)."""
    sq[:] = EMPTY
    n_own = _cells_of(own, own_cells)
    for i in range(n_own):
        sq[own_cells[i]] = OWN
    m = _cells_of(enemy, ecell)
    for j in range(m):
        sq[ecell[j]] = j
    return n_own, m


@njit(cache=True)
def _extremes(ecell: np.ndarray, m: int, mx: np.ndarray) -> None:
    """Write max over the enemy stones of PROJ[d] for each direction d (closer-rule bound)."""
    for d in range(6):
        mx[d] = -(1 << 20)
    for j in range(m):
        e = ecell[j]
        for d in range(6):
            if PROJ[d, e] > mx[d]:
                mx[d] = PROJ[d, e]


@njit(cache=True)
def _extremes_left(ecell: np.ndarray, left: np.uint64, mx: np.ndarray) -> None:
    """Write max over the enemy stones ``left`` of PROJ[d] for each direction d."""
    for d in range(6):
        mx[d] = -(1 << 20)
    rest = left
    while rest != ZERO:
        e = ecell[lowest_square(rest)]
        rest &= rest - ONE
        for d in range(6):
            if PROJ[d, e] > mx[d]:
                mx[d] = PROJ[d, e]


# -- spec 4-6: plain slides, capturers and crushes --------------------------------------------


@njit(cache=True)
def _slide(sq: np.ndarray, s: int, d: int, mx: np.ndarray) -> tuple[int, int]:
    """Return (longest allowed slide, cell of the first stone on the ray or -1) from ``s``
    along ``d``: the free run, cut by the closer rule (``2k < <u, E - S>`` for some E)."""
    n = RAY_LEN[s, d]
    free, first = n, -1
    for k in range(n):
        c = RAY[s, d, k]
        if sq[c] != EMPTY:
            free, first = k, c
            break
    closer = (mx[d] - PROJ[d, s] - 1) >> 1  # the largest k with 2k < <u, E - S>
    return min(free, closer), first


@njit(cache=True)
def _zone_captures(sq: np.ndarray, s: int, d: int, k_max: int) -> bool:
    """Return True when the zone of the hop of ``k_max`` cells (it holds every shorter hop's
    zone) holds an enemy stone, i.e. some hop of at most ``k_max`` cells whistle-captures."""
    for k in range(3, k_max + 1):
        for t in range(2):
            g = GAIN[s, d, k, t]
            if g >= 0 and sq[g] >= 0:
                return True
    return False


@njit(cache=True)
def _scan(sq: np.ndarray, own_cells: np.ndarray, n_own: int, mx: np.ndarray,
          plain: np.ndarray, capturers: np.ndarray, crushes: np.ndarray) -> tuple[int, int, int]:
    """Fill (plain slides as rows (cell, direction, longest k), stones with a capturing hop,
    crushes as rows (cell, direction)) for the side whose stones are ``own_cells``; return
    how many of each (why one pass: every stone's six rays are walked once)."""
    n_plain = n_cap = n_crush = 0
    for i in range(n_own):
        s = own_cells[i]
        captures = False
        for d in range(6):
            if RAY_LEN[s, d] == 0:
                continue
            k_max, first = _slide(sq, s, d, mx)
            if first >= 0 and first == RAY[s, d, 0]:  # no free cell: maybe a crush
                if sq[first] >= 0:
                    crushes[n_crush, 0] = s
                    crushes[n_crush, 1] = d
                    n_crush += 1
                continue
            if k_max <= 0:
                continue
            plain[n_plain, 0] = s
            plain[n_plain, 1] = d
            plain[n_plain, 2] = k_max
            n_plain += 1
            if not captures and k_max >= 3:
                captures = _zone_captures(sq, s, d, k_max)
        if captures:
            capturers[n_cap] = s
            n_cap += 1
    return n_plain, n_cap, n_crush


# -- spec 5-7: one chain node's capturing hops ---------------------------------------------


# Per-ray facts of one stone's search, filled per cell on first use (:func:`_ray_info`), in
# two arrays (why not a tuple of arrays: unpacking one in every call costs reference counts).
# ``zt[cell * 6 + d]``: the free run, the union of its zones and of its enemy stones, then per
# hop length k the enemy stones in the whistle zone (ZC + k) and the one on the k-th ray cell
# (ZH + k). ``reach[cell]``: per axis every stone a next hop could take, then the search
# that filled the cell's facts: they are known when it equals ``reach[NC, R_DONE]``, the
# current search's stamp (why a stamp: a new search forgets every cell by one increment, and
# the arrays can be kept from call to call without clearing them).
Z_FREE, Z_REACH, Z_HIT, ZC, ZH = 0, 1, 2, 3, 3 + MAX_DISTANCE + 1
Z_WIDTH = ZH + MAX_DISTANCE + 1
R_DONE = 4


@njit(cache=True)
def _geometry() -> tuple[np.ndarray, np.ndarray]:
    """Return the per-ray facts (``zt``, ``reach``) of a search, none known yet."""
    reach = np.zeros((NC + 1, 5), np.uint64)
    reach[NC, R_DONE] = ONE
    return np.empty((NC * 6, Z_WIDTH), np.uint64), reach


@njit(cache=True)
def _ray_info(sq: np.ndarray, cell: int, zt: np.ndarray, reach: np.ndarray) -> None:
    """Fill the facts of the six rays from ``cell`` for the stone being searched: the cells
    before an own stone or the edge; per hop of k cells the enemy stones in its whistle zone
    and the one on the k-th ray cell (bits of enemy numbers, whichever are left); their
    unions along the free run; per axis every stone a next hop could take. Why: a hop is
    then one AND with ``left``, and a direction, or a child node, that reaches no stone left
    is ruled out by one AND (most chain nodes are dead ends)."""
    for d in range(6):
        i = cell * 6 + d
        n = RAY_LEN[cell, d]
        cum = hits = ZERO
        f = n
        for k in range(1, n + 1):
            j = sq[RAY[cell, d, k - 1]]
            if j == OWN:
                f = k - 1
                break
            hit = _bit(j) if j >= 0 else ZERO
            for t in range(2):
                g = GAIN[cell, d, k, t]
                if g >= 0 and sq[g] >= 0:
                    cum |= _bit(sq[g])
            zt[i, ZC + k], zt[i, ZH + k] = cum, hit
            hits |= hit
        zt[i, Z_FREE], zt[i, Z_REACH], zt[i, Z_HIT] = f, cum, hits
    for a in range(4):
        r = ZERO
        for d in range(6):
            if d % 3 != a:  # a chain hop changes axis (spec 6); axis 3: any direction
                r |= zt[cell * 6 + d, Z_REACH]
        reach[cell, a] = r
    reach[cell, R_DONE] = reach[NC, R_DONE]


# Why the lazy fill is written out at each hot call site (``if reach[cell, R_DONE] != stamp:
# _ray_info(...)``) rather than in a helper: measured, a helper that may call another function
# costs about 20 ns a call (numba does not inline it), a hop's whole work.


@njit(cache=True)
def _capture_hops(sq: np.ndarray, ecell: np.ndarray, cell: int, axis: int, left: np.uint64,
                  zt: np.ndarray, reach: np.ndarray, mx: np.ndarray, hops: np.ndarray,
                  caps: np.ndarray, at: int) -> int:
    """Write the capturing hops from node (``cell``, ``axis``, ``left``) at row ``at`` of
    ``hops`` (direction, destination, distance) and ``caps`` (stones taken, bits of
    ``left``), by direction, then distance; return how many."""
    if reach[cell, R_DONE] != reach[NC, R_DONE]:
        _ray_info(sq, cell, zt, reach)
    if reach[cell, axis] & left == ZERO:
        return 0
    _extremes_left(ecell, left, mx)  # the closer rule's maxima over the stones left
    n = at
    for d in range(6):
        i = cell * 6 + d
        if d % 3 == axis or zt[i, Z_REACH] & left == ZERO:
            continue
        k_max = min(np.int64(zt[i, Z_FREE]), (mx[d] - PROJ[d, cell] - 1) >> 1)  # 2k < <u, E-S>
        if zt[i, Z_HIT] & left != ZERO:  # an enemy stone still on the ray blocks
            for k in range(1, k_max + 1):
                if zt[i, ZH + k] & left != ZERO:
                    k_max = k - 1
                    break
        for k in range(3, k_max + 1):  # zones only grow: every k from the first capture
            cap = zt[i, ZC + k] & left
            if cap != ZERO:
                hops[n, 0], hops[n, 1], hops[n, 2] = d, RAY[cell, d, k - 1], k
                caps[n] = cap
                n += 1
    return n - at


@njit(cache=True)
def _key(cell: int, axis: int, left: np.uint64) -> np.uint64:
    """Return a chain node's key: ``left << 11 | cell << 2 | axis``."""
    return (left << np.uint64(11)) | np.uint64(cell << 2 | axis)


# -- spec 8: the per-node memo ---------------------------------------------------------------
# One open-addressing table per search, of (key, value) pairs side by side (why: a look-up is
# one cache line), value = best capture | number of maximal continuations << 8 (0: not
# counted yet). Listing needs the best alone: its memo is packed, ``key << 8 | best`` in one
# word (keys below 2**56, up to ``PACKED_STONES`` enemy stones), half the memory.

PACKED_STONES = 45
BEST_BITS = np.uint64(8)
BEST_MASK = np.uint64(255)


@njit(cache=True)
def _new_memo(slots: int, packed: bool) -> np.ndarray:
    """Return an empty memo of ``slots`` (a power of two) slots."""
    if packed:
        return np.full(slots, EMPTY_KEY, np.uint64)
    t = np.zeros(2 * slots, np.uint64)
    t[0::2] = EMPTY_KEY
    return t


@njit(cache=True)
def _slots(t: np.ndarray, packed: bool) -> int:
    """Return the number of slots of a memo."""
    return t.size if packed else t.size // 2


@njit(cache=True)
def _find(t: np.ndarray, key: np.uint64, packed: bool) -> int:
    """Return the slot of ``key`` in a memo, or the empty slot it would take."""
    mask = _slots(t, packed) - 1
    i = np.int64((key * HASH_MUL) >> HASH_SHIFT) & mask
    if packed:
        while t[i] != EMPTY_KEY and t[i] >> BEST_BITS != key:
            i = (i + 1) & mask
        return i
    while t[2 * i] != key and t[2 * i] != EMPTY_KEY:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _taken(t: np.ndarray, j: int, packed: bool) -> bool:
    """Return True when slot ``j`` of a memo holds a node."""
    return (t[j] if packed else t[2 * j]) != EMPTY_KEY


@njit(cache=True)
def _put(t: np.ndarray, j: int, key: np.uint64, best: int, packed: bool) -> None:
    """Write node ``key`` with its best capture into slot ``j`` (not counted yet)."""
    if packed:
        t[j] = (key << BEST_BITS) | np.uint64(best)
    else:
        t[2 * j], t[2 * j + 1] = key, np.uint64(best)


@njit(cache=True)
def _best_at(t: np.ndarray, j: int, packed: bool) -> int:
    """Return the best capture kept in slot ``j``."""
    return np.int64((t[j] if packed else t[2 * j + 1]) & BEST_MASK)


@njit(cache=True)
def _grow(t: np.ndarray, packed: bool) -> np.ndarray:
    """Return the memo rehashed into twice the slots."""
    slots = _slots(t, packed)
    bigger = _new_memo(2 * slots, packed)
    for i in range(slots):
        if _taken(t, i, packed):
            key = t[i] >> BEST_BITS if packed else t[2 * i]
            j = _find(bigger, key, packed)
            if packed:
                bigger[j] = t[i]
            else:
                bigger[2 * j], bigger[2 * j + 1] = t[2 * i], t[2 * i + 1]
    return bigger


@njit(cache=True)
def _child_best(memo: np.ndarray, cell: int, axis: int, left: np.uint64, reach: np.ndarray,
                packed: bool) -> tuple[int, int]:
    """Return (best capture, memo slot or -1) of a node already searched, whose cell's ray
    facts are known (best 0 and no slot for one with no stone left or none in reach: such
    dead ends are never stored)."""
    if left == ZERO or reach[cell, axis] & left == ZERO:
        return 0, -1
    j = _find(memo, _key(cell, axis, left), packed)
    return _best_at(memo, j, packed), j


# Columns of a search frame (one per node on the depth-first stack).
F_CELL, F_AXIS, F_NEXT, F_END, F_VALUE = 0, 1, 2, 3, 4


@njit(cache=True)
def _workspace(m: int) -> tuple:
    """Return the scratch arrays of one position's chain searches: the closer-rule maxima,
    the hop stack (rows (direction, destination, distance) and their captures) and the
    frames with their stones left and counts (a chain is at most m hops deep)."""
    rows = (m + 2) * 6 * MAX_DISTANCE
    return (np.empty(6, np.int64), np.empty((rows, 3), np.int64), np.empty(rows, np.uint64),
            np.empty((m + 2, 5), np.int64), np.empty(m + 2, np.uint64),
            np.empty(m + 2, np.uint64))


@njit(cache=True)
def _push(sq: np.ndarray, ecell: np.ndarray, zt: np.ndarray, reach: np.ndarray, ws: tuple,
          f: int, cell: int, axis: int, left: np.uint64, at: int, value: int) -> None:
    """Fill frame ``f`` with node (``cell``, ``axis``, ``left``) and its capturing hops,
    written at row ``at`` of the hop stack; ``value``: its best so far or the stones it must
    still take."""
    fr = ws[3]
    fr[f, F_CELL], fr[f, F_AXIS], fr[f, F_NEXT], fr[f, F_VALUE] = cell, axis, at, value
    fr[f, F_END] = at + _capture_hops(sq, ecell, cell, axis, left, zt, reach, ws[0], ws[1],
                                      ws[2], at)
    ws[4][f] = left
    ws[5][f] = ZERO


@njit(cache=True)
def _all(m: int) -> np.uint64:
    """Return ``left`` with every one of the ``m`` enemy stones."""
    return (ONE << np.uint64(m)) - ONE


@njit(cache=True)
def _memo_best(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, axis0: int,
               zt: np.ndarray, reach: np.ndarray, ws: tuple, limit: int, memo: np.ndarray,
               packed: bool, prune: bool) -> tuple[int, np.ndarray]:
    """Search the chain nodes of the stone on ``start`` (its first hop's axis ``axis0``)
    against all ``m`` enemy stones, depth first, into ``memo``; return (its best capture, the
    memo, grown as needed), or best -1 past ``limit`` nodes. Dead ends (no stone left in
    reach) are never stored. Every node is searched, as counts and lists need, unless
    ``prune``: then a node stops trying hops once it takes every stone left (the most any
    chain can; N alone needs no more)."""
    mx, hops, caps, fr, lefts, accs = ws
    used, zero = 0, np.int64(0)
    _push(sq, ecell, zt, reach, ws, zero, start, axis0, _all(m), zero, zero)
    top = 1
    while True:
        f = top - 1
        h = fr[f, F_NEXT]
        if h < fr[f, F_END] and not (prune and fr[f, F_VALUE] == popcount(lefts[f])):
            fr[f, F_NEXT] = h + 1
            cap = caps[h]
            left = lefts[f] & ~cap
            cell, axis = hops[h, 1], hops[h, 0] % 3
            v = popcount(cap)
            if reach[cell, R_DONE] != reach[NC, R_DONE]:
                _ray_info(sq, cell, zt, reach)
            if left != ZERO and reach[cell, axis] & left != ZERO:
                j = _find(memo, _key(cell, axis, left), packed)
                if not _taken(memo, j, packed):  # a new node: search it first
                    _push(sq, ecell, zt, reach, ws, top, cell, axis, left, fr[f, F_END], zero)
                    top += 1
                    continue
                v += _best_at(memo, j, packed)
            fr[f, F_VALUE] = max(fr[f, F_VALUE], v)
            continue
        # every hop of node f is searched: keep its best, hand it to its parent
        if 2 * (used + 1) > _slots(memo, packed):
            memo = _grow(memo, packed)
        key = _key(fr[f, F_CELL], fr[f, F_AXIS], lefts[f])
        j = _find(memo, key, packed)
        _put(memo, j, key, fr[f, F_VALUE], packed)
        used += 1
        if used > limit:
            return -1, memo
        top -= 1
        if top == 0:
            return fr[0, F_VALUE], memo
        p = top - 1
        fr[p, F_VALUE] = max(fr[p, F_VALUE], popcount(caps[fr[p, F_NEXT] - 1]) + fr[f, F_VALUE])


@njit(cache=True)
def _list_memo(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, axis0: int,
               zt: np.ndarray, reach: np.ndarray, ws: tuple) -> tuple[int, np.ndarray, bool]:
    """Return (best capture or -1 past the bound, memo, packed) of the search that lists the
    hops or turns of the stone on ``start``: every node kept, packed when the keys allow,
    in at most ``MEMO_BYTES`` (the doubling before the last holds both tables a moment)."""
    packed = m <= PACKED_STONES
    limit = MEMO_BYTES // (8 if packed else 16) // 2 - 1  # slots at most half full
    b, memo = _memo_best(sq, ecell, m, start, axis0, zt, reach, ws, limit,
                         _new_memo(np.int64(256), packed), packed, False)
    return b, memo, packed


@njit(cache=True)
def _add(a: np.uint64, b: np.uint64, status: int) -> tuple[np.uint64, int]:
    """Return (a + b, status), the status OVERFLOW when the sum passes 2**64."""
    s = a + b
    return s, (OVERFLOW if s < b else status)


COUNT_LIMIT = np.uint64(1 << 56)  # counts kept in a memo value's high 56 bits


@njit(cache=True)
def _memo_count(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, axis0: int,
                root_best: int, memo: np.ndarray, zt: np.ndarray, reach: np.ndarray,
                ws: tuple) -> tuple[np.uint64, int]:
    """Return (the number of maximal chains of the stone on ``start``, status), counted over
    the memo of :func:`_memo_best` (each node's number of maximal
    continuations, memoised beside its best)."""
    mx, hops, caps, fr, lefts, accs = ws
    status = OK
    _push(sq, ecell, zt, reach, ws, 0, start, axis0, _all(m), 0, root_best)
    top = 1
    while True:
        f = top - 1
        h = fr[f, F_NEXT]
        if h < fr[f, F_END]:
            fr[f, F_NEXT] = h + 1
            cap = caps[h]
            left = lefts[f] & ~cap
            cell, axis = hops[h, 1], hops[h, 0] % 3
            if reach[cell, R_DONE] != reach[NC, R_DONE]:
                _ray_info(sq, cell, zt, reach)
            cb, j = _child_best(memo, cell, axis, left, reach, False)
            if popcount(cap) + cb != fr[f, F_VALUE]:
                continue  # not on a maximal chain
            got = ONE  # a node with nothing left to capture ends one turn
            if cb > 0:
                got = memo[2 * j + 1] >> np.uint64(8)
                if got == ZERO:  # not counted yet
                    _push(sq, ecell, zt, reach, ws, top, cell, axis, left, fr[f, F_END], cb)
                    top += 1
                    continue
            accs[f], status = _add(accs[f], got, status)
            continue
        top -= 1
        if top == 0:
            return accs[0], status
        if accs[f] >= COUNT_LIMIT:
            status = OVERFLOW  # refused by the Python API
        j = _find(memo, _key(fr[f, F_CELL], fr[f, F_AXIS], lefts[f]), False)
        memo[2 * j + 1] |= accs[f] << np.uint64(8)
        accs[top - 1], status = _add(accs[top - 1], accs[f], status)


@njit(cache=True)
def _action(cell: int, d: int, k: int) -> int:
    """Return the action of the hop of ``k`` cells from ``cell`` along ``d`` (actions.py)."""
    return (6 * cell + d) * MAX_DISTANCE + k - 1


@njit(cache=True)
def _good_hops(sq: np.ndarray, ecell: np.ndarray, cell: int, axis: int, left: np.uint64,
               need: int, memo: np.ndarray, packed: bool, zt: np.ndarray, reach: np.ndarray,
               ws: tuple, out: np.ndarray, n: int) -> int:
    """Append to ``out`` the actions of the hops from a node that continue a chain taking
    ``need`` more stones; return the new length."""
    mx, hops, caps, fr, lefts, accs = ws
    k = _capture_hops(sq, ecell, cell, axis, left, zt, reach, mx, hops, caps, 0)
    for h in range(k):
        if reach[hops[h, 1], R_DONE] != reach[NC, R_DONE]:
            _ray_info(sq, hops[h, 1], zt, reach)
        cb, _ = _child_best(memo, hops[h, 1], hops[h, 0] % 3, left & ~caps[h], reach, packed)
        if popcount(caps[h]) + cb == need:
            out[n] = _action(cell, hops[h, 0], hops[h, 2])
            n += 1
    return n


# -- whole turns (spec 6, 8) -----------------------------------------------------------------


@njit(cache=True)
def _turns_from(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, need: int,
                memo: np.ndarray, packed: bool, zt: np.ndarray, reach: np.ndarray, ws: tuple,
                kind: np.ndarray, path: np.ndarray, caps: np.ndarray, lens: np.ndarray,
                n: int) -> int:
    """Write every maximal turn of the stone on ``start`` (taking ``need`` stones) from row
    ``n`` of (kind, path, each hop's captures, path length), depth first with hops in order
    (depth first, hops in memo order); return the rows written so far."""
    hops, hcaps, fr = ws[1], ws[2], ws[3]
    cells = np.empty(m + 2, np.int64)
    taken = np.empty(m + 2, np.uint64)
    cells[0] = start
    _push(sq, ecell, zt, reach, ws, 0, start, 3, _all(m), 0, need)
    top = 1
    while top > 0:
        f = top - 1
        h = fr[f, F_NEXT]
        if h >= fr[f, F_END]:
            top -= 1
            continue
        fr[f, F_NEXT] = h + 1
        cap = hcaps[h]
        left = ws[4][f] & ~cap
        cell, axis = hops[h, 1], hops[h, 0] % 3
        if reach[cell, R_DONE] != reach[NC, R_DONE]:
            _ray_info(sq, cell, zt, reach)
        cb, _ = _child_best(memo, cell, axis, left, reach, packed)
        if popcount(cap) + cb != fr[f, F_VALUE]:
            continue
        cells[top], taken[f] = cell, cap
        if cb == 0:  # the maximum is reached: one whole turn
            kind[n] = WHISTLE
            for i in range(top + 1):
                path[n, i] = cells[i]
            for i in range(top):
                caps[n, i] = taken[i]
            lens[n] = top + 1
            n += 1
            continue
        _push(sq, ecell, zt, reach, ws, top, cell, axis, left, fr[f, F_END], cb)
        top += 1
    return n


# -- spec 8: the layered count, for searches past the memo's bound -----------------------------
# Per layer (stones left) an open-addressing table of nodes and their counts of chains, the
# home slot of a key the top bits of its hash. Packed (up to 20 enemy stones: a key is below
# 2**31) a slot is one uint64 ``key << 32 | count``; else two (key, count): why, half the
# memory where it matters. A count reaching 2**32 starts the
# pass again unpacked (WIDE). Children wait in flat arrays and go in at once, sorted by layer
# and by the top bits of their hash (a counting sort): a child is a random slot of a table far
# larger than the caches, and in that order the inserts walk each table region by region.

BUCKET_BITS = 13  # a table region of 2**13 slots takes one bucket's inserts
WIDE = 3  # status: a packed count reached 2**32
LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def _home(key: np.uint64, bits: int) -> int:
    """Return the home slot of ``key`` in a table of ``2**bits`` slots (its hash's top bits)."""
    return np.int64((key * HASH_MUL) >> np.uint64(64 - bits))


@njit(cache=True)
def _new_table(bits: int, packed: bool) -> np.ndarray:
    """Return an empty layer table of ``2**bits`` slots."""
    return np.full((1 if packed else 2) << bits, EMPTY_KEY, np.uint64)


@njit(cache=True)
def _entry(t: np.ndarray, i: int, packed: bool) -> tuple[np.uint64, np.uint64]:
    """Return (key, count) of slot ``i`` (key EMPTY_KEY for an empty slot)."""
    if packed:
        v = t[i]
        return (EMPTY_KEY, ZERO) if v == EMPTY_KEY else (v >> np.uint64(32), v & LOW32)
    return t[2 * i], t[2 * i + 1]


@njit(cache=True)
def _insert(t: np.ndarray, bits: int, key: np.uint64, c: np.uint64, packed: bool,
            status: int) -> tuple[int, int]:
    """Add ``c`` chains into node ``key`` of a layer table; return (1 if the node is new,
    status: WIDE when a packed count reaches 2**32)."""
    mask = (1 << bits) - 1
    i = _home(key, bits)
    if packed:
        while True:
            v = t[i]
            if v == EMPTY_KEY or v >> np.uint64(32) == key:
                total = c + (ZERO if v == EMPTY_KEY else v & LOW32)
                t[i] = (key << np.uint64(32)) | (total & LOW32)
                return int(v == EMPTY_KEY), (WIDE if total > LOW32 else status)
            i = (i + 1) & mask
    while True:
        k = t[2 * i]
        if k == key:
            t[2 * i + 1], status = _add(t[2 * i + 1], c, status)
            return 0, status
        if k == EMPTY_KEY:
            t[2 * i], t[2 * i + 1] = key, c
            return 1, status
        i = (i + 1) & mask


@njit(cache=True)
def _resize(t: np.ndarray, bits: int, new_bits: int, packed: bool) -> np.ndarray:
    """Return a layer table moved into ``2**new_bits`` slots (read in slot order, so its
    inserts go in hash order too)."""
    bigger = _new_table(new_bits, packed)
    for i in range(1 << bits):
        key, c = _entry(t, i, packed)
        if key != EMPTY_KEY:
            _insert(bigger, new_bits, key, c, packed, OK)
    return bigger


@njit(cache=True)
def _flush(wk: np.ndarray, wc: np.ndarray, wq: np.ndarray, n: int, tabs: list,
           meta: np.ndarray, packed: bool, status: int) -> int:
    """Insert the ``n`` waiting children (key, count, layer) into their layers' tables: each
    table first grown to hold all of its children under 70% full (why first: inserts sorted
    by hash fill one region at a time, and a region filled past its share before the table
    grows makes linear probing walk ever longer runs; measured, 50 times slower), then the
    children sorted by layer and hash region in one counting sort, and inserted in order."""
    layers = meta.shape[0]
    per = np.zeros(layers, np.int64)
    for i in range(n):
        per[wq[i]] += 1
    base = np.zeros(layers + 1, np.int64)  # first bucket of each layer
    for q in range(layers):
        bits = max(meta[q, 0], 10)
        while 10 * (meta[q, 1] + per[q]) > 7 * (1 << bits):
            bits += 1
        if per[q] and (tabs[q].size == 0 or bits > meta[q, 0]):
            tabs[q] = (_new_table(bits, packed) if tabs[q].size == 0
                       else _resize(tabs[q], meta[q, 0], bits, packed))
            meta[q, 0] = bits
        base[q + 1] = base[q] + (1 << max(0, meta[q, 0] - BUCKET_BITS))
    start = np.zeros(base[layers] + 1, np.int64)
    for i in range(n):
        q = wq[i]
        start[base[q] + (_home(wk[i], meta[q, 0]) >> BUCKET_BITS) + 1] += 1
    for b in range(base[layers]):
        start[b + 1] += start[b]
    sk, sc = np.empty(n, np.uint64), np.empty(n, np.uint64)
    for i in range(n):
        q = wq[i]
        b = base[q] + (_home(wk[i], meta[q, 0]) >> BUCKET_BITS)
        sk[start[b]], sc[start[b]] = wk[i], wc[i]
        start[b] += 1
    i = 0
    for q in range(layers):  # the children are now in layer order, each layer's by region
        if per[q]:
            t, bits, used = tabs[q], meta[q, 0], meta[q, 1]
            for j in range(i, i + per[q]):
                new, status = _insert(t, bits, sk[j], sc[j], packed, status)
                used += new
            meta[q, 1] = used
            i += per[q]
    return status


@njit(cache=True)
def _held(tabs: list) -> int:
    """Return the bytes the layered pass's tables hold."""
    return sum([t.nbytes for t in tabs])


@njit(cache=True)
def _expand_layer(sq: np.ndarray, ecell: np.ndarray, p: int, tabs: list, meta: np.ndarray,
                  lowest: int, zt: np.ndarray, reach: np.ndarray, ws: tuple, packed: bool,
                  status: int) -> tuple[int, int]:
    """Push the chains of every node of layer ``p`` to their children; return (the lowest
    layer reached, status). A child with no stone left in reach is a dead end: left out
    unless it lies in the lowest layer reached so far (only that layer's nodes end maximal
    chains). Children wait in flat arrays (why: no list access per child), up to an eighth
    of the tables' slots, then go in at once (:func:`_flush`)."""
    mx, hops, caps = ws[0], ws[1], ws[2]
    t = tabs[p]
    size = max(1 << 16, _held(tabs) // (64 if packed else 128))
    wk, wc, wq = np.empty(size, np.uint64), np.empty(size, np.uint64), np.empty(size, np.int8)
    n = 0
    for i in range(1 << meta[p, 0]):
        key, c = _entry(t, i, packed)
        if key == EMPTY_KEY:
            continue
        left = key >> np.uint64(11)
        cell = np.int64((key >> np.uint64(2)) & np.uint64(511))
        k = _capture_hops(sq, ecell, cell, np.int64(key & np.uint64(3)), left, zt, reach, mx,
                          hops, caps, 0)
        for h in range(k):
            rest = left & ~caps[h]
            q = p - popcount(caps[h])
            lowest = min(lowest, q)
            dest, ax = hops[h, 1], hops[h, 0] % 3
            if reach[dest, R_DONE] != reach[NC, R_DONE]:
                _ray_info(sq, dest, zt, reach)
            if q > lowest and reach[dest, ax] & rest == ZERO:
                continue
            if n == size:
                status = _flush(wk, wc, wq, n, tabs, meta, packed, status)
                n = 0
            wk[n], wc[n], wq[n] = _key(dest, ax, rest), c, q
            n += 1
    return lowest, _flush(wk, wc, wq, n, tabs, meta, packed, status)


@njit(cache=True)
def _layers(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, axis0: int,
            zt: np.ndarray, reach: np.ndarray, ws: tuple,
            packed: bool) -> tuple[int, np.uint64, int]:
    """Return (best capture, number of maximal chains, status) of :func:`_layered_count`
    with packed or unpacked tables."""
    empty = np.empty(0, np.uint64)
    tabs = [empty for _ in range(m + 1)]
    meta = np.zeros((m + 1, 2), np.int64)  # per layer: table bits, nodes
    tabs[m] = _new_table(10, packed)
    meta[m, 0] = 10
    meta[m, 1], status = _insert(tabs[m], 10, _key(start, axis0, _all(m)), ONE, packed, OK)
    lowest, total = m, ZERO
    for p in range(m, -1, -1):
        if meta[p, 1] == 0:
            continue
        lowest, status = _expand_layer(sq, ecell, p, tabs, meta, lowest, zt, reach, ws,
                                       packed, status)
        if status == WIDE:
            return -1, ZERO, WIDE
        if _held(tabs) > LAYERED_BYTES:
            return -1, ZERO, TOO_BIG
        if lowest == p and p < m:  # nothing below: this layer's nodes end the maximal chains
            for i in range(1 << meta[p, 0]):
                key, c = _entry(tabs[p], i, packed)
                if key != EMPTY_KEY:
                    total, status = _add(total, c, status)
        tabs[p] = empty
    return m - lowest, total, status


@njit(cache=True)
def _layered_count(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, axis0: int,
                   zt: np.ndarray, reach: np.ndarray, ws: tuple) -> tuple[int, np.uint64, int]:
    """Return (best capture, number of maximal chains, status) of the stone on ``start``
    layer by layer: every hop captures, so a
    node's children lie in lower layers (fewer stones left); a layer's counts are final once
    the layers above are expanded, and it is freed once expanded itself. Packed tables up to
    20 enemy stones (again unpacked if a count passes 2**32); TOO_BIG past ``LAYERED_BYTES``
    held."""
    if m <= 20:
        b, c, status = _layers(sq, ecell, m, start, axis0, zt, reach, ws, True)
        if status != WIDE:
            return b, c, status
    return _layers(sq, ecell, m, start, axis0, zt, reach, ws, False)


# -- one position: the scan, then the chains (spec 4-8) ---------------------------------------


@njit(cache=True)
def _position(own: np.ndarray, enemy: np.ndarray) -> tuple:
    """Return (sq, enemy cells, m, plain rows, their number, capturers, their number, crush
    rows, their number) of the mover ``own`` against ``enemy`` (spec 4-6)."""
    sq = np.empty(NC, np.int16)
    own_cells = np.empty(NC, np.int64)
    ecell = np.empty(NC, np.int64)
    n_own, m = _setup(own, enemy, sq, own_cells, ecell)
    mx = np.empty(6, np.int64)
    _extremes(ecell, m, mx)
    plain = np.empty((6 * n_own, 3), np.int64)
    capturers = np.empty(n_own, np.int64)
    crushes = np.empty((6 * n_own, 2), np.int64)
    n_plain, n_cap, n_crush = _scan(sq, own_cells, n_own, mx, plain, capturers, crushes)
    return sq, ecell, m, plain, n_plain, capturers, n_cap, crushes, n_crush


@njit(cache=True)
def _any(words: np.ndarray) -> bool:
    """Return True when a 6-word bitmask has a set bit (why not ``sum``: words wrap)."""
    acc = ZERO
    for w in range(WORDS):
        acc |= words[w]
    return acc != ZERO


@njit(cache=True)
def _over(own: np.ndarray, enemy: np.ndarray, quiet: int) -> bool:
    """Return True when the mover has no turn by spec 9: a side without stones, or the quiet
    counter at DRAW_QUIET (spec 9)."""
    return not _any(own) or not _any(enemy) or quiet >= DRAW_QUIET


@njit(cache=True)
def _search_start(sq: np.ndarray, s: int, reach: np.ndarray) -> None:
    """Prepare the search of the stone on ``s``: its start cell is empty for the whole turn,
    so the per-ray facts of another stone's search no longer hold (a new stamp)."""
    sq[s] = EMPTY
    reach[NC, R_DONE] += ONE


@njit(cache=True)
def _chain_count(sq: np.ndarray, ecell: np.ndarray, m: int, capturers: np.ndarray, n_cap: int,
                 memo_nodes: int) -> tuple[int, np.uint64, int]:
    """Return (N, the number of maximal whistling captures, status) over every capturer
    (spec 8: N is the best of any stone; only stones reaching it count); past
    ``memo_nodes`` a stone's chains are counted layer by layer (N alone: :func:`_best_of`)."""
    (zt, reach), ws = _geometry(), _workspace(m)
    n_best, total, status = 0, ZERO, OK
    for i in range(n_cap):
        s = capturers[i]
        _search_start(sq, s, reach)
        b, memo = _memo_best(sq, ecell, m, s, 3, zt, reach, ws, memo_nodes,
                             _new_memo(np.int64(256), False), False, False)
        c, st = ZERO, OK
        if b < 0:  # too many nodes to memoise: count layer by layer
            b, c, st = _layered_count(sq, ecell, m, s, 3, zt, reach, ws)
        elif b >= n_best:
            c, st = _memo_count(sq, ecell, m, s, 3, b, memo, zt, reach, ws)
        sq[s] = OWN
        if st == TOO_BIG:
            return -1, ZERO, TOO_BIG
        if b > n_best:
            n_best, total, status = b, ZERO, OK
        if b == n_best:
            total, status = _add(total, c, max(status, st))
    return n_best, total, status


@njit(cache=True)
def _count(own: np.ndarray, enemy: np.ndarray, quiet: int,
           memo_nodes: int) -> tuple[int, np.uint64, int]:
    """Return (N, number of legal turns, status) (rules.count_turns and State.max_capture)."""
    if _over(own, enemy, quiet):
        return 0, ZERO, OK
    sq, ecell, m, plain, n_plain, capturers, n_cap, crushes, n_crush = _position(own, enemy)
    return _tally(sq, ecell, m, plain, n_plain, capturers, n_cap, n_crush, memo_nodes)


@njit(cache=True)
def _tally(sq: np.ndarray, ecell: np.ndarray, m: int, plain: np.ndarray, n_plain: int,
           capturers: np.ndarray, n_cap: int, n_crush: int,
           memo_nodes: int) -> tuple[int, np.uint64, int]:
    """Return (N, number of legal turns, status) of a position scanned by :func:`_position`
    (its board ``sq`` as it was)."""
    if n_cap:
        if m > MAX_STONES:
            return -1, ZERO, TOO_BIG
        n, c, status = _chain_count(sq, ecell, m, capturers, n_cap, memo_nodes)
        if n == 1:  # crushes take one stone, so they are legal only when N is 1
            c += np.uint64(n_crush)
        return n, c, status
    if n_crush:
        return 1, np.uint64(n_crush), OK
    return 0, np.uint64(plain[:n_plain, 2].sum()), OK


@njit(cache=True)
def _mover(x: np.ndarray, o: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (the mover's stones, the other side's) of a position."""
    return (x, o) if side == 0 else (o, x)


@njit(cache=True)
def legal_count(x: np.ndarray, o: np.ndarray, side: int, quiet: int, best_only: bool,
                memo_nodes: int) -> tuple[int, np.uint64, int]:
    """Return (N of spec 8, the number of legal turns, status): rules.State.max_capture and
    legal_count (with ``best_only`` the chains are not counted: N alone). A stone whose chain
    nodes pass ``memo_nodes`` (COUNT_MEMO_NODES; tests lower it) is counted layer by layer."""
    own, enemy = _mover(x, o, side)
    if best_only:
        n, status = _best_of(own, enemy, quiet, leaf_workspace())
        return n, ZERO, status
    return _count(own, enemy, quiet, memo_nodes)


# -- the env's hops (actions.WhistlingActions) ------------------------------------------------


@njit(cache=True)
def _chain_actions(sq: np.ndarray, ecell: np.ndarray, m: int, capturers: np.ndarray,
                   n_cap: int, out: np.ndarray) -> tuple[int, int, int]:
    """Write the first hops of the maximal whistling captures into ``out``; return (N, how
    many, status), TOO_BIG when a search passes ``MEMO_BYTES``."""
    (zt, reach), ws = _geometry(), _workspace(m)
    n_best, n = 0, 0
    for i in range(n_cap):
        s = capturers[i]
        _search_start(sq, s, reach)
        b, memo, packed = _list_memo(sq, ecell, m, s, 3, zt, reach, ws)
        if b < 0:
            return -1, 0, TOO_BIG
        if b > n_best:
            n_best, n = b, 0
        if b == n_best:
            n = _good_hops(sq, ecell, s, 3, _all(m), b, memo, packed, zt, reach, ws, out, n)
        sq[s] = OWN
    return n_best, n, OK


@njit(cache=True)
def _continuations(own: np.ndarray, enemy: np.ndarray, mover: int, last: int,
                   out: np.ndarray) -> tuple[int, int]:
    """Write the hops that continue a maximal chain from the moving stone on ``mover`` (its
    last hop went ``last``) into ``out``; return (how many, status). The board is as it
    stands mid-chain, so the stones left and the empty start cell are all that the chain so
    far leaves behind, and the node's best capture is the stones still to take."""
    sq = np.empty(NC, np.int16)
    ecell = np.empty(NC, np.int64)
    _, m = _setup(own, enemy, sq, np.empty(NC, np.int64), ecell)
    if m > MAX_STONES:
        return 0, TOO_BIG
    (zt, reach), ws = _geometry(), _workspace(m)
    _search_start(sq, mover, reach)
    b, memo, packed = _list_memo(sq, ecell, m, mover, last % 3, zt, reach, ws)
    if b < 0:
        return 0, TOO_BIG
    return _good_hops(sq, ecell, mover, last % 3, _all(m), b, memo, packed, zt, reach, ws, out,
                      0), OK


@njit(cache=True)
def _first_actions(own: np.ndarray, enemy: np.ndarray, out: np.ndarray) -> tuple[int, int]:
    """Write the first hop of every legal turn into ``out``; return (how many, status)."""
    sq, ecell, m, plain, n_plain, capturers, n_cap, crushes, n_crush = _position(own, enemy)
    n, status, n_best = 0, OK, 1
    if n_cap:
        if m > MAX_STONES:
            return 0, TOO_BIG
        n_best, n, status = _chain_actions(sq, ecell, m, capturers, n_cap, out)
    if n_best == 1:  # crushes are legal when N is 1 (or no stone can whistle-capture)
        for i in range(n_crush):
            out[n] = _action(crushes[i, 0], crushes[i, 1], 1)
            n += 1
    if not n_cap and not n_crush:
        for i in range(n_plain):
            for k in range(1, plain[i, 2] + 1):
                out[n] = _action(plain[i, 0], plain[i, 1], k)
                n += 1
    return n, status


@njit(cache=True)
def legal_actions(x: np.ndarray, o: np.ndarray, side: int, quiet: int, mover: int, last: int,
                  out: np.ndarray) -> tuple[int, int]:
    """Write the legal hop actions, ascending, into ``out`` (room for 39,720); return (how
    many, status). At a turn's start (``mover`` -1) the first hops of the legal turns, mid-chain
    the hops of the stone on ``mover`` (last hop along ``last``) that continue a maximal chain;
    ``x``/``o`` as on the board mid-chain (WhistlingActions.legal_actions)."""
    own, enemy = _mover(x, o, side)
    if _over(own, enemy, quiet):
        return 0, OK
    if mover >= 0:
        n, status = _continuations(own, enemy, mover, last, out)
    else:
        n, status = _first_actions(own, enemy, out)
    out[:n].sort()
    return n, status


@njit(cache=True)
def _zone(enemy: np.ndarray, cell: int, d: int, k: int) -> np.ndarray:
    """Return the enemy stones in the whistle zone of the hop of ``k`` cells, as words."""
    caught = np.zeros(WORDS, np.uint64)
    for kk in range(3, k + 1):
        for t in range(2):
            g = GAIN[cell, d, kk, t]
            if g >= 0 and _has(enemy[g >> 6], g & 63):
                caught[g >> 6] |= _bit(g & 63)
    return caught


@njit(cache=True)
def _can_go_on(own: np.ndarray, enemy: np.ndarray, cell: int, axis: int) -> bool:
    """Return True when the stone on ``cell`` (its last hop on ``axis``) has a capturing hop:
    after a hop of a maximal chain that is exactly when the turn goes on (a chain below the
    maximum can always go on, one at it never can)."""
    sq = np.empty(NC, np.int16)
    ecell = np.empty(NC, np.int64)
    _, m = _setup(own, enemy, sq, np.empty(NC, np.int64), ecell)
    sq[cell] = EMPTY
    mx = np.empty(6, np.int64)
    _extremes(ecell, m, mx)
    for d in range(6):
        if d % 3 == axis or RAY_LEN[cell, d] == 0:
            continue
        k_max, _ = _slide(sq, cell, d, mx)
        if k_max >= 3 and _zone_captures(sq, cell, d, k_max):
            return True
    return False


@njit(cache=True)
def _move_stone(own: np.ndarray, a: int, b: int) -> None:
    """Move the stone on ``a`` to ``b`` in a 6-word bitmask."""
    own[a >> 6] &= ~_bit(a & 63)
    own[b >> 6] |= _bit(b & 63)


@njit(cache=True)
def _sides(own: np.ndarray, enemy: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (X's stones, O's stones) from the mover's and the other side's."""
    return (own, enemy) if side == 0 else (enemy, own)


@njit(cache=True)
def apply_hop(x: np.ndarray, o: np.ndarray, side: int, quiet: int, mover: int, last: int,
              action: int) -> tuple[np.ndarray, np.ndarray, int, int, int, int]:
    """Return (x, o, side, quiet, mover, last) after a legal hop ``action`` (not re-checked):
    the board as it stands after the hop, and the moving stone and its hop's direction while
    the turn goes on (-1, -1 once it is complete: the other side to move)."""
    own, enemy = _mover(x, o, side)
    own, enemy = own.copy(), enemy.copy()
    cell, d, k = action // (6 * MAX_DISTANCE), action // MAX_DISTANCE % 6, action % MAX_DISTANCE + 1
    dest = RAY[cell, d, k - 1]
    _move_stone(own, cell, dest)
    if mover < 0 and k == 1 and _has(enemy[dest >> 6], dest & 63):  # a crush
        enemy[dest >> 6] &= ~_bit(dest & 63)
        a, b = _sides(own, enemy, side)
        return a, b, 1 - side, 0, -1, -1
    caught = _zone(enemy, cell, d, k)
    for w in range(WORDS):
        enemy[w] &= ~caught[w]
    a, b = _sides(own, enemy, side)
    if not _any(caught):  # a plain move
        return a, b, 1 - side, quiet + 1, -1, -1
    if _can_go_on(own, enemy, dest, d % 3):
        return a, b, side, quiet, dest, d
    return a, b, 1 - side, 0, -1, -1


# -- whole turns, results, evaluation, perft ----------------------------------------------------


@njit(cache=True)
def _chain_turns(sq: np.ndarray, ecell: np.ndarray, m: int, capturers: np.ndarray, n_cap: int,
                 n_best: int, kind: np.ndarray, path: np.ndarray, caps: np.ndarray,
                 lens: np.ndarray) -> tuple[int, int]:
    """Write every maximal whistling capture (taking ``n_best`` stones) into the turn rows,
    stones in board order; return (how many, status)."""
    (zt, reach), ws = _geometry(), _workspace(m)
    n = 0
    for i in range(n_cap):
        s = capturers[i]
        _search_start(sq, s, reach)
        b, memo, packed = _list_memo(sq, ecell, m, s, 3, zt, reach, ws)
        if b < 0:
            return 0, TOO_BIG
        if b == n_best:
            n = _turns_from(sq, ecell, m, s, b, memo, packed, zt, reach, ws, kind, path, caps,
                            lens, n)
        sq[s] = OWN
    return n, OK


@njit(cache=True)
def _turns(own: np.ndarray, enemy: np.ndarray, quiet: int) -> tuple:
    """Return (kinds, paths, each hop's captures as enemy stone numbers, path lengths, enemy
    cells, how many, status) of every legal turn in rules.State.legal_moves' order (rows
    sized by a count first: why, no growing arrays; a row's captures are set for its hops
    only, 0 for a plain move's and a crush's)."""
    sq, ecell, m, plain, n_plain, capturers, n_cap, crushes, n_crush = _position(own, enemy)
    n_best, count, status = 0, ZERO, OK
    if not _over(own, enemy, quiet):
        n_best, count, status = _tally(sq, ecell, m, plain, n_plain, capturers, n_cap,
                                       n_crush, np.int64(COUNT_MEMO_NODES))
    if status != OK or count > np.uint64(LIST_TURNS):
        status = TOO_BIG
        count = ZERO
    rows = np.int64(count)
    kind, lens = np.empty(rows, np.int8), np.empty(rows, np.int64)
    path = np.empty((rows, max(m + 2, 2)), np.int16)
    caps = np.empty((rows, max(m + 2, 2)), np.uint64)
    n = 0
    if rows and n_cap:
        n, status = _chain_turns(sq, ecell, m, capturers, n_cap, n_best, kind, path, caps,
                                 lens)
    if rows and n_best == 1:  # crushes are legal when N is 1 (or no stone can whistle)
        for i in range(n_crush):
            kind[n], lens[n], caps[n, 0] = CRUSH, 2, ZERO  # its capture: its destination
            path[n, 0], path[n, 1] = crushes[i, 0], RAY[crushes[i, 0], crushes[i, 1], 0]
            n += 1
    if rows and n_best == 0:
        for i in range(n_plain):
            for k in range(plain[i, 2]):
                kind[n], lens[n], caps[n, 0] = PLAIN, 2, ZERO
                path[n, 0], path[n, 1] = plain[i, 0], RAY[plain[i, 0], plain[i, 1], k]
                n += 1
    return kind, path, caps, lens, ecell[:m].copy(), n, status


@njit(cache=True)
def legal_turns(x: np.ndarray, o: np.ndarray, side: int, quiet: int) -> tuple:
    """Return every legal turn (rules.State.legal_moves, same order) as (kinds, paths, each
    hop's captures as bits over the enemy cells, path lengths, enemy cells, how many,
    status); a crush's capture is its destination. TOO_BIG (nothing listed) past 2**26
    turns or a search past the memo's bound."""
    own, enemy = _mover(x, o, side)
    return _turns(own, enemy, quiet)


@njit(cache=True)
def result(x: np.ndarray, o: np.ndarray, side: int, quiet: int) -> int:
    """Return ONGOING, X_WINS, O_WINS or DRAW (rules.State.winner/is_terminal, spec 9): a
    mover without stones loses, the quiet counter at DRAW_QUIET draws, no legal turn loses."""
    own, enemy = _mover(x, o, side)
    other = O_WINS if side == 0 else X_WINS
    if not _any(own):
        return other
    if quiet >= DRAW_QUIET:
        return DRAW
    if not _any(enemy):
        return other  # no legal turn (unreachable: the game ended when it lost its last stone)
    sq, ecell, own_cells, mx = (np.empty(NC, np.int16), np.empty(NC, np.int64),
                                np.empty(NC, np.int64), np.empty(6, np.int64))
    n_own, m = _setup(own, enemy, sq, own_cells, ecell)
    _extremes(ecell, m, mx)
    return ONGOING if _has_turn(sq, own_cells, n_own, mx) else other


@njit(cache=True)
def _stones(words: np.ndarray) -> int:
    """Return the number of stones of a 6-word bitmask."""
    n = 0
    for w in range(WORDS):
        n += popcount(words[w])
    return n


@njit(cache=True)
def evaluate(x: np.ndarray, o: np.ndarray, side: int, quiet: int) -> tuple[float, int]:
    """Return (the static evaluation for the side to move, status): material, plus the
    capture it must make now, minus the capture the opponent would have if it were to move
    (:func:`evaluate_in` with a new workspace)."""
    return evaluate_in(x, o, side, quiet, leaf_workspace())


@njit(cache=True)
def _child(own: np.ndarray, enemy: np.ndarray, quiet: int, kind: int, path: np.ndarray,
           caps: np.ndarray, n: int, ecell: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Return (the mover's stones, the other side's, quiet counter) after one listed turn."""
    a, b = np.empty(WORDS, np.uint64), np.empty(WORDS, np.uint64)
    return a, b, child_into(own, enemy, quiet, kind, path, caps, n, ecell, a, b)


@njit(cache=True)
def child_into(own: np.ndarray, enemy: np.ndarray, quiet: int, kind: int, path: np.ndarray,
               caps: np.ndarray, n: int, ecell: np.ndarray, own_after: np.ndarray,
               enemy_after: np.ndarray) -> int:
    """Write the mover's stones and the other side's after one listed turn into
    ``own_after`` and ``enemy_after`` (the search's next ply: no arrays made); return the
    quiet counter."""
    for w in range(WORDS):
        own_after[w], enemy_after[w] = own[w], enemy[w]
    _move_stone(own_after, path[0], path[n - 1])
    if kind == PLAIN:
        return quiet + 1
    if kind == CRUSH:
        c = path[1]
        enemy_after[c >> 6] &= ~_bit(c & 63)
        return 0
    for i in range(n - 1):
        rest = caps[i]
        while rest != ZERO:
            c = ecell[lowest_square(rest)]
            rest &= rest - ONE
            enemy_after[c >> 6] &= ~_bit(c & 63)
    return 0


@njit(cache=True)
def _perft(own: np.ndarray, enemy: np.ndarray, quiet: int, depth: int) -> tuple[np.uint64, int]:
    """Count the turn sequences of ``depth`` plies from the mover ``own`` (rules.State.perft:
    the last ply counted, not listed)."""
    if depth <= 0:
        return ONE, OK
    if depth == 1:
        _, c, status = _count(own, enemy, quiet, np.int64(COUNT_MEMO_NODES))
        return c, status
    kind, path, caps, lens, ecell, n, status = _turns(own, enemy, quiet)
    total = ZERO
    for i in range(n):
        a, b, q = _child(own, enemy, quiet, kind[i], path[i], caps[i], lens[i], ecell)
        c, st = _perft(b, a, q, depth - 1)  # the other side moves next
        total, status = _add(total, c, max(status, st))
    return total, status


@njit(cache=True)
def perft_words(x: np.ndarray, o: np.ndarray, side: int, quiet: int,
                depth: int) -> tuple[np.uint64, int]:
    """Return (the number of turn sequences of ``depth`` plies, status)."""
    own, enemy = _mover(x, o, side)
    return _perft(own, enemy, quiet, depth)


# -- the env's observation (actions.py) ---------------------------------------------------------

#: Grid row (0-20) and column (0-40) of each cell: where the observation shows it.
GRID_ROW = np.array([r - 1 for _, r in CELLS], np.int64)
GRID_COL = np.array([c for c, _ in CELLS], np.int64)


@njit(cache=True)
def planes(own: np.ndarray, enemy: np.ndarray, cell: int, d: int, quiet: int,
           out: np.ndarray) -> None:
    """Write the observer's stones (plane 0), the opponent's (1), the stone that must go on
    (2) and its last hop's direction (3 + d) mid-chain, quiet / DRAW_QUIET capped at 1 (9)
    and the board's cells (10) into ``out`` (21, 41, 11), zero everywhere else (why not a
    copy of the constant plane: a zeroed array costs a third of a copy)."""
    for i in range(NC):
        w, b = i >> 6, i & 63
        out[GRID_ROW[i], GRID_COL[i], 10] = 1.0
        if _has(own[w], b):
            out[GRID_ROW[i], GRID_COL[i], 0] = 1.0
        elif _has(enemy[w], b):
            out[GRID_ROW[i], GRID_COL[i], 1] = 1.0
    if cell >= 0:
        out[GRID_ROW[cell], GRID_COL[cell], 2] = 1.0
        out[GRID_ROW[cell], GRID_COL[cell], 3 + d] = 1.0
    out[:, :, 9] = min(quiet, DRAW_QUIET) / DRAW_QUIET  # float64, rounded to float32 once


# -- the evaluation and the search's leaves: N alone, on a kept workspace ---------------------
# The alpha-beta search asks every node for its result and every leaf for its evaluation, two
# values of N (spec 8): a few microseconds of work each, so what a count needs and N does not
# (plain slides listed, chain counts, a memo and the chain geometry allocated per call) was
# most of a leaf. Here the scan stops at what N needs, the chain search stops a node once it
# takes every stone left (no hop can take more), and the arrays are the caller's, kept.

#: Slots of the kept memo of a leaf's chain search, and the nodes it holds (a quarter full)
#: before the search goes the count's way (:func:`_memo_best`, then layers): games from the
#: start need at most a few hundred nodes (docs/whistling.md, "Worst cases").
LEAF_MEMO_SLOTS = 1 << 10
LEAF_MEMO_NODES = LEAF_MEMO_SLOTS >> 2


@njit(cache=True)
def leaf_workspace() -> tuple:
    """Return the scratch arrays that :func:`judge` and :func:`evaluate_in` reuse from call
    to call: the board of one call (``sq``, the mover's cells, the enemy's), the capturers,
    the chain geometry (``zt``, ``reach``: stamped, so nothing is cleared), the kept memo
    (empty between calls) with the slots a search filled, the stones left per chain frame as
    cell words, and the chain search's stack for ``MAX_STONES`` enemy stones."""
    zt, reach = _geometry()
    return (np.empty(NC, np.int16), np.empty(NC, np.int64), np.empty(NC, np.int64),
            np.empty(NC, np.int64), zt, reach, _new_memo(np.int64(LEAF_MEMO_SLOTS), False),
            np.empty(LEAF_MEMO_NODES, np.int64), np.empty((MAX_STONES + 2, WORDS), np.uint64),
            _workspace(np.int64(MAX_STONES)))


@njit(cache=True)
def _has_turn(sq: np.ndarray, own_cells: np.ndarray, n_own: int, mx: np.ndarray) -> bool:
    """Return True when the side of ``own_cells`` has a legal turn: a crush or a slide of one
    cell allowed by the closer rule (every capturing hop starts with such a cell), found by
    the first stone that has one (what :func:`_scan` lists in full)."""
    for i in range(n_own):
        s = own_cells[i]
        for d in range(6):
            if RAY_LEN[s, d] == 0:
                continue
            first = sq[RAY[s, d, 0]]
            if first >= 0 or (first == EMPTY and mx[d] - PROJ[d, s] - 1 >= 2):  # closer: k=1
                return True
    return False


@njit(cache=True)
def _whistles_along(sq: np.ndarray, s: int, d: int, k_cap: int) -> bool:
    """Return True when a hop of at most ``k_cap`` cells from ``s`` along ``d`` over empty
    cells whistle-captures: walked cell by cell, stopping at the first stone on the ray or
    the first enemy stone its zone gains (zones only grow)."""
    for k in range(1, k_cap + 1):
        if sq[RAY[s, d, k - 1]] != EMPTY:
            return False
        if k >= 3:
            for t in range(2):
                g = GAIN[s, d, k, t]
                if g >= 0 and sq[g] >= 0:
                    return True
    return False


@njit(cache=True)
def _in_strip(enemy: np.ndarray, s: int, d: int) -> bool:
    """Return True when an ``enemy`` stone lies in ``STRIP[s, d]``."""
    acc = ZERO
    for w in range(WORDS):
        acc |= STRIP[s, d, w] & enemy[w]
    return acc != ZERO


@njit(cache=True)
def _capturers(sq: np.ndarray, own_cells: np.ndarray, n_own: int, mx: np.ndarray,
               enemy: np.ndarray, capturers: np.ndarray) -> tuple[int, bool]:
    """Write the stones with a capturing hop into ``capturers`` (board order, as
    :func:`_scan`); return (how many, whether some stone can crush: complete only when
    there is no capturer, the one case where it decides N). ``enemy``: the enemy stones as
    words, to rule out a direction whose strip holds none before walking it."""
    n_cap, crush = 0, False
    for i in range(n_own):
        s = own_cells[i]
        for d in range(6):
            n = RAY_LEN[s, d]
            if n == 0:
                continue
            if sq[RAY[s, d, 0]] >= 0:
                crush = True
                continue
            k_cap = min(n, (mx[d] - PROJ[d, s] - 1) >> 1)  # the closer rule (spec 4)
            if k_cap >= 3 and _in_strip(enemy, s, d) and _whistles_along(sq, s, d, k_cap):
                capturers[n_cap] = s
                n_cap += 1
                break
    return n_cap, crush


@njit(cache=True)
def _direct_hops(sq: np.ndarray, ecell: np.ndarray, cell: int, axis: int, left: np.uint64,
                 cells_left: np.ndarray, hops: np.ndarray, caps: np.ndarray, at: int) -> int:
    """Write the capturing hops from node (``cell``, ``axis``, ``left``; ``cells_left``: the
    stones left as cell words) at row ``at`` of ``hops`` and ``caps``, as
    :func:`_capture_hops` does, but walked on the board up to the closer rule's bound, only
    in the directions whose zone strip holds a stone left, with no per-ray facts (why: N
    alone searches a few nodes, most of them dead ends, and most cells once, where filling
    a cell's six rays costs more than walking the few it needs); return how many."""
    ways = 0
    for d in range(6):
        if d % 3 != axis and _in_strip(cells_left, cell, d):
            ways |= 1 << d
    n = at
    for d in range(6):
        if not (ways >> d) & 1:
            continue
        far = -(1 << 20)  # the closer rule's bound along d: the stones left's farthest
        rest = left
        while rest != ZERO:
            far = max(far, PROJ[d, ecell[lowest_square(rest)]])
            rest &= rest - ONE
        cum = ZERO
        for k in range(1, min(RAY_LEN[cell, d], (far - PROJ[d, cell] - 1) >> 1) + 1):
            j = sq[RAY[cell, d, k - 1]]
            if j == OWN or (j >= 0 and _has(left, j)):  # a stone on the board blocks
                break
            for t in range(2):
                g = GAIN[cell, d, k, t]
                if g >= 0 and sq[g] >= 0 and _has(left, sq[g]):
                    cum |= _bit(sq[g])
            if cum != ZERO:
                hops[n, 0], hops[n, 1], hops[n, 2] = d, RAY[cell, d, k - 1], k
                caps[n] = cum
                n += 1
    return n - at


@njit(cache=True)
def _without(ecell: np.ndarray, cells: np.ndarray, cap: np.uint64, out: np.ndarray) -> None:
    """Write the cell words ``cells`` less the enemy stones ``cap`` into ``out``."""
    for w in range(WORDS):
        out[w] = cells[w]
    rest = cap
    while rest != ZERO:
        c = ecell[lowest_square(rest)]
        rest &= rest - ONE
        out[c >> 6] &= ~_bit(c & 63)


@njit(cache=True)
def _direct_best(sq: np.ndarray, ecell: np.ndarray, m: int, start: int, enemy: np.ndarray,
                 ws: tuple, cells_left: np.ndarray, memo: np.ndarray, filled: np.ndarray) -> int:
    """Return the best capture of the stone on ``start`` (its start cell empty on ``sq``;
    ``enemy``: the enemy stones as cell words), or -1 past ``LEAF_MEMO_NODES`` nodes:
    :func:`_memo_best`'s depth-first search for N alone, its hops walked by
    :func:`_direct_hops` (``cells_left[f]``: frame f's stones left as cell words), a node
    left once it takes every stone left (no chain takes more), nodes with hops kept in the
    caller's memo (``filled``: the slots written), emptied again before returning."""
    hops, caps, fr, lefts = ws[1], ws[2], ws[3], ws[4]
    left0, any_axis, zero = _all(m), np.int64(3), np.int64(0)
    for w in range(WORDS):
        cells_left[0, w] = enemy[w]
    fr[0, F_CELL], fr[0, F_AXIS], fr[0, F_NEXT], fr[0, F_VALUE] = start, any_axis, 0, 0
    fr[0, F_END] = _direct_hops(sq, ecell, start, any_axis, left0, cells_left[0], hops, caps,
                                zero)
    lefts[0] = left0
    top, used, best = 1, 0, -1
    while True:
        f = top - 1
        h = fr[f, F_NEXT]
        if h < fr[f, F_END] and fr[f, F_VALUE] < popcount(lefts[f]):
            fr[f, F_NEXT] = h + 1
            cap = caps[h]
            left = lefts[f] & ~cap
            v = popcount(cap)
            if left != ZERO:
                cell, axis = hops[h, 1], hops[h, 0] % 3
                j = _find(memo, _key(cell, axis, left), False)
                if memo[2 * j] != EMPTY_KEY:
                    v += np.int64(memo[2 * j + 1])
                else:
                    at = fr[f, F_END]
                    _without(ecell, cells_left[f], cap, cells_left[top])
                    k = _direct_hops(sq, ecell, cell, axis, left, cells_left[top], hops, caps,
                                     at)
                    if k:  # a node with hops: search it first (without, it takes no more)
                        fr[top, F_CELL], fr[top, F_AXIS], fr[top, F_VALUE] = cell, axis, 0
                        fr[top, F_NEXT], fr[top, F_END] = at, at + k
                        lefts[top] = left
                        top += 1
                        continue
            fr[f, F_VALUE] = max(fr[f, F_VALUE], v)
            continue
        top -= 1
        if top == 0:
            best = fr[0, F_VALUE]
            break
        if used == LEAF_MEMO_NODES:
            break
        key = _key(fr[f, F_CELL], fr[f, F_AXIS], lefts[f])
        j = _find(memo, key, False)
        memo[2 * j], memo[2 * j + 1] = key, np.uint64(fr[f, F_VALUE])
        filled[used] = j
        used += 1
        p = top - 1
        fr[p, F_VALUE] = max(fr[p, F_VALUE], popcount(caps[fr[p, F_NEXT] - 1]) + fr[f, F_VALUE])
    for i in range(used):
        memo[2 * filled[i]] = EMPTY_KEY
    return best


@njit(cache=True)
def _best_here(own_cells: np.ndarray, n_own: int, enemy: np.ndarray, m: int,
               lw: tuple) -> tuple[int, int]:
    """Return (N, status) of the mover laid out on ``lw``'s board (its cells ``own_cells``,
    the ``m`` stones ``enemy``, the closer-rule maxima in ``lw``'s stack): :func:`_count`'s
    N. A stone whose search passes the kept memo is searched again with the per-ray facts
    (an allocated memo, then layers, as a count searches it), with the same statuses."""
    sq, _, ecell, capturers, zt, reach, memo, slots, cells_left, ws = lw
    n_cap, crush = _capturers(sq, own_cells, n_own, ws[0], enemy, capturers)
    if n_cap == 0:
        return (1 if crush else 0), OK
    if m > MAX_STONES:
        return -1, TOO_BIG
    n_best, total, status, any_axis = 0, ZERO, OK, np.int64(3)
    for i in range(n_cap):
        s = capturers[i]
        _search_start(sq, s, reach)
        b = _direct_best(sq, ecell, m, s, enemy, ws, cells_left, memo, slots)
        c, st = ZERO, OK
        if b < 0:
            b, _ = _memo_best(sq, ecell, m, s, any_axis, zt, reach, ws,
                              np.int64(COUNT_MEMO_NODES), _new_memo(np.int64(256), False),
                              False, True)
            if b < 0:  # the count's layered pass, its count and status kept as _count's
                b, c, st = _layered_count(sq, ecell, m, s, any_axis, zt, reach, ws)
        sq[s] = OWN
        if st == TOO_BIG:
            return -1, TOO_BIG
        if b > n_best:
            n_best, total, status = b, ZERO, OK
        if b == n_best:
            total, status = _add(total, c, max(status, st))
    return n_best, status


@njit(cache=True)
def _best_of(own: np.ndarray, enemy: np.ndarray, quiet: int, lw: tuple) -> tuple[int, int]:
    """Return (N, status) of the mover ``own`` against ``enemy`` (:func:`_count`'s N)."""
    if _over(own, enemy, quiet):
        return 0, OK
    sq, own_cells, ecell, ws = lw[0], lw[1], lw[2], lw[9]
    n_own, m = _setup(own, enemy, sq, own_cells, ecell)
    _extremes(ecell, m, ws[0])
    return _best_here(own_cells, n_own, enemy, m, lw)


@njit(cache=True)
def max_capture_in(x: np.ndarray, o: np.ndarray, side: int, quiet: int,
                   lw: tuple) -> tuple[int, int]:
    """Return (N of spec 8, status) on the workspace ``lw`` (:func:`leaf_workspace`)."""
    own, enemy = _mover(x, o, side)
    return _best_of(own, enemy, quiet, lw)


@njit(cache=True)
def _value(material: int, now: int, exposed: int) -> float:
    """Return the evaluation: material, plus the capture the side to move must make now,
    minus the capture the opponent would have if it were to move."""
    return material + W_NOW * now - W_EXPOSED * exposed


@njit(cache=True)
def evaluate_in(x: np.ndarray, o: np.ndarray, side: int, quiet: int,
                lw: tuple) -> tuple[float, int]:
    """Return (the static evaluation for the side to move, status), on the workspace ``lw``
    (:func:`leaf_workspace`)."""
    own, enemy = _mover(x, o, side)
    now, s1 = _best_of(own, enemy, quiet, lw)
    # the same position with the opponent to move (quiet counter 0) shows which stones hang
    exposed, s2 = _best_of(enemy, own, np.int64(0), lw)
    return _value(_stones(own) - _stones(enemy), now, exposed), max(s1, s2)


@njit(cache=True)
def judge_terms(x: np.ndarray, o: np.ndarray, side: int, quiet: int, evaluated: bool,
                lw: tuple) -> tuple[int, int, int, int, int, int]:
    """Return (:func:`result`, the mover's stones, the other side's, and when ``evaluated``
    and the game goes on the evaluation's capture terms, the capture the mover must make now
    and the one the opponent would have, else 0 and 0; status) on the workspace ``lw``: the
    search's question at every node. The mover's board is laid out once for both (why: at a
    leaf the scan is most of the work)."""
    own, enemy = _mover(x, o, side)
    other = O_WINS if side == 0 else X_WINS
    if not _any(own):
        return other, 0, 0, 0, 0, OK
    if quiet >= DRAW_QUIET:
        return DRAW, 0, 0, 0, 0, OK
    if not _any(enemy):
        return other, 0, 0, 0, 0, OK
    sq, own_cells, ecell, ws = lw[0], lw[1], lw[2], lw[9]
    n_own, m = _setup(own, enemy, sq, own_cells, ecell)
    _extremes(ecell, m, ws[0])
    if not _has_turn(sq, own_cells, n_own, ws[0]):
        return other, 0, 0, 0, 0, OK
    if not evaluated:
        return ONGOING, n_own, m, 0, 0, OK
    now, s1 = _best_here(own_cells, n_own, enemy, m, lw)
    exposed, s2 = _best_of(enemy, own, np.int64(0), lw)
    return ONGOING, n_own, m, now, exposed, max(s1, s2)


@njit(cache=True)
def judge(x: np.ndarray, o: np.ndarray, side: int, quiet: int, evaluated: bool,
          lw: tuple) -> tuple[int, float, int]:
    """Return (:func:`result`, the evaluation when ``evaluated`` and the game goes on, else
    0.0, status) on the workspace ``lw`` (:func:`judge_terms`)."""
    r, n_own, m, now, exposed, status = judge_terms(x, o, side, quiet, evaluated, lw)
    if r != ONGOING or not evaluated:
        return r, 0.0, status
    return r, _value(n_own - m, now, exposed), status


# -- the Python API -----------------------------------------------------------------------------
# Positions as rules.State keeps them (Python int bitmasks, side, quiet counter); each call
# converts them to words. A status other than OK (a search past the kernel's bounds, more
# than MAX_STONES enemy stones, or a count past 2**64) raises :class:`ChainLimitError`.

NUM_ACTIONS = NC * 6 * MAX_DISTANCE
RESULT_NAMES = {ONGOING: "ongoing", X_WINS: "x", O_WINS: "o", DRAW: "draw"}


class ChainLimitError(PositionError):
    """A position whose maximum-capture search passes the kernel's bounds (memory)."""


def _refused(status: int, what: str) -> ChainLimitError:
    """Return the refusal of a search that ended with ``status`` (``what``: the question)."""
    if status == OVERFLOW:
        why = "counts past 2**64 turns"
    else:
        why = (f"needs more than {MEMO_BYTES >> 20:,} MB of chain nodes when listed, or "
               f"{LAYERED_BYTES >> 20:,} MB when counted, or numbers more than {MAX_STONES} "
               "enemy stones")
    return ChainLimitError(
        f"{what} of this position {why} (stones that can chain-capture among many scattered "
        "enemy stones); boardzoo refuses it to bound memory")


_KEPT: list[tuple] = []  # the Python API's one leaf workspace, made on first use


def _workspace_kept() -> tuple:
    """Return the Python API's leaf workspace (why one: the kernel holds the GIL, so no two
    calls use it at once)."""
    if not _KEPT:
        _KEPT.append(leaf_workspace())
    return _KEPT[0]


def words(mask: int) -> np.ndarray:
    """Return a cell bitmask (bit i = cell i) as six uint64 words, lowest cells first."""
    return np.frombuffer(mask.to_bytes(8 * WORDS, "little"), np.uint64).copy()


def mask_of(ws: np.ndarray) -> int:
    """Return six uint64 words as a cell bitmask."""
    return int.from_bytes(np.ascontiguousarray(ws, np.uint64).tobytes(), "little")


def counts(x: int, o: int, side: int, quiet: int, best_only: bool = False) -> tuple[int, int]:
    """Return (N of spec 8, the number of legal turns; 0 with ``best_only``)."""
    if best_only:
        n, status = max_capture_in(words(x), words(o), side, quiet, _workspace_kept())
        c = ZERO
    else:
        n, c, status = legal_count(words(x), words(o), side, quiet, False, COUNT_MEMO_NODES)
    if status != OK:
        raise _refused(status, "the maximum-capture search")
    return int(n), int(c)


def hop_actions(x: int, o: int, side: int, quiet: int, mover: int = -1,
                last: int = -1) -> list[int]:
    """Return the legal hop actions, ascending: at a turn's start (``mover`` -1) the first hops
    of the legal turns, mid-chain (the board as it stands, the moving stone on ``mover``, its
    last hop along ``last``) the hops that continue a maximal chain (actions.py's mask)."""
    return hop_array(words(x), words(o), side, quiet, mover, last).tolist()


def hop_array(x: np.ndarray, o: np.ndarray, side: int, quiet: int, mover: int,
              last: int) -> np.ndarray:
    """Return :func:`hop_actions` as an int64 array, from the stones as words (why: the env
    keeps a position's words and indexes its mask with the array)."""
    out = getattr(_SCRATCH, "hops", None)
    if out is None:  # this thread's first call
        out = _SCRATCH.hops = np.empty(NUM_ACTIONS, np.int64)
    n, status = legal_actions(x, o, side, quiet, mover, last, out)
    if status != OK:
        raise _refused(status, "listing the hops")
    return out[:n].copy()


#: Per-thread room for :func:`hop_array`'s kernel call (why: a fresh 318 KB buffer a call
#: cost more than the copy of the few hops it holds).
_SCRATCH = threading.local()


def play_hop(x: int, o: int, side: int, quiet: int, mover: int, last: int,
             action: int) -> tuple[int, int, int, int, int, int]:
    """Return (x, o, side, quiet, mover, last) after a legal hop (see :func:`apply_hop`)."""
    a, b, s, q, mv, la = apply_hop(words(x), words(o), side, quiet, mover, last, action)
    return mask_of(a), mask_of(b), int(s), int(q), int(mv), int(la)


def turn_rows(x: int, o: int, side: int,
              quiet: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
    """Return every legal turn as (path, each hop's captured cell bitmask, kind), in the
    order of the search (rules.State.legal_moves)."""
    kind, path, caps, lens, ecell, n, status = legal_turns(words(x), words(o), side, quiet)
    if status != OK:
        raise _refused(status, "listing the turns")
    bits = [1 << int(c) for c in ecell]
    out = []
    for i in range(n):
        p = tuple(path[i, :lens[i]].tolist())
        if kind[i] == PLAIN:
            hop_caps: tuple[int, ...] = (0,)
        elif kind[i] == CRUSH:
            hop_caps = (1 << p[1],)
        else:
            hop_caps = tuple(sum(bits[j] for j in range(len(bits)) if c >> j & 1)
                             for c in caps[i, :lens[i] - 1].tolist())
        out.append((p, hop_caps, int(kind[i])))
    return out


def outcome(x: int, o: int, side: int, quiet: int) -> int:
    """Return ONGOING, X_WINS, O_WINS or DRAW (see :func:`result`)."""
    return int(result(words(x), words(o), side, quiet))


def evaluation(x: int, o: int, side: int, quiet: int) -> float:
    """Return the static evaluation of the position for the side to move (:func:`evaluate`)."""
    value, status = evaluate_in(words(x), words(o), side, quiet, _workspace_kept())
    if status != OK:
        raise _refused(status, "the maximum-capture search")
    return float(value)


def perft(x: int, o: int, side: int, quiet: int, depth: int) -> int:
    """Return the number of turn sequences of ``depth`` plies (rules.State.perft)."""
    total, status = perft_words(words(x), words(o), side, quiet, depth)
    if status != OK:
        raise _refused(status, "counting the turns")
    return int(total)
