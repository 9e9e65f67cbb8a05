"""Ultima rules on int64 bitboards for many games at once (used by :mod:`.batched`).

An *army* is a list of 8 (N,) int64 bitboards: entry ``kind`` (1..7 = K P L C W I O,
the codes of :mod:`.board`) for that kind, entry 0 the union of all of them.

Legality follows the compiled rules (:mod:`.kernel`): every pseudo-legal move is generated
per piece and direction with Kogge-Stone fills; a move can leave the king capturable only if it is a
king move, an immobilizer move that releases a frozen attacker, or a move that *empties*
a square an attack needs (filling a square only ever blocks). Those candidates (and
every move while in check) are played out and tested with :func:`attacked`; the rest
are legal. CPU notes: ``index_select`` instead of ``[]`` indexing, bit masks instead of
``torch.where`` and bool views instead of ``any(1)``: each is many times faster.
"""

from __future__ import annotations

import torch

from ..core.board8 import OPPOSITE, ORTHOGONAL
from .batched_tables import (
    MASK,
    UP,
    Tables,
    any_true,
    fill,
    keep,
    or_cols,
    slide,
    smear_down,
    spread,
    square_of,
    step,
    take,
)

K, P, L, C, W, I, O = range(1, 8)  # noqa: E741 - the spec's piece letters
Army = list[torch.Tensor]


def armies(bb: torch.Tensor, side: torch.Tensor) -> tuple[Army, Army]:
    """Return (army to move, the other army) from (N, 16) bitboards per piece code."""
    cols = bb.t().contiguous()
    black = -side  # all ones where Black moves
    us, them = [cols[0]], [cols[0]]
    for kind in range(1, 8):
        flip = (cols[kind] ^ cols[8 + kind]) & black
        us.append(cols[kind] ^ flip)
        them.append(cols[8 + kind] ^ flip)
    us[0] = us[1] | us[2] | us[3] | us[4] | us[5] | us[6] | us[7]
    them[0] = them[1] | them[2] | them[3] | them[4] | them[5] | them[6] | them[7]
    return us, them


def attacked(tb: Tables, k: torch.Tensor, e: torch.Tensor, occ: torch.Tensor,
             them: Army, active: torch.Tensor) -> torch.Tensor:
    """Return (M,) bool: can army ``them`` (king on ``e``) capture the piece on ``k``,
    ignoring its own king's safety (spec 8)? ``active``: the squares where an attacker
    is not frozen (not next to one of our immobilizers)."""
    empty = ~occ
    adj = take(tb.adj, k)
    hit = (adj & (them[K] | them[C]) & active) != 0
    # each rarer mechanism is tested only on the rows where its piece is in place
    wd = them[W] & active & adj
    rows = (wd != 0).nonzero().squeeze(1)
    if rows.numel():  # a withdrawer next to k with room behind it
        kk = take(k, rows)
        near = (take(tb.nb1, kk) & take(wd, rows).unsqueeze(1)) != 0
        room = (take(tb.nb2, kk) & take(empty, rows).unsqueeze(1)) != 0
        _or_at(hit, rows, any_true(near & room))
    leap = them[L] & active
    rows = ((leap & take(tb.queen, k)) != 0).nonzero().squeeze(1)
    if rows.numel():
        _or_at(hit, rows, _leaper(tb, take(k, rows), take(occ, rows), take(them[0], rows),
                                  take(leap, rows)))
    pawns = them[P] & active
    kb = take(tb.bit, k)
    lands = torch.zeros_like(kb)  # empty orthogonal neighbours with an attacker opposite
    for d in ORTHOGONAL:
        partner = step(kb, OPPOSITE[d]) & them[0]
        lands |= keep(partner != 0, step(kb, d) & empty)
    rows = ((lands != 0) & (pawns != 0)).nonzero().squeeze(1)
    if rows.numel():  # pincer: a pawn reaches one of them
        emp, pw = take(empty, rows), take(pawns, rows)
        reach = slide(pw, emp, 0) | slide(pw, emp, 2) | slide(pw, emp, 4) | slide(pw, emp, 6)
        _or_at(hit, rows, (reach & take(lands, rows)) != 0)
    line = take(tb.line, e * 64 + k)
    co = them[O] & active
    rows = ((line != 0) & (co != 0)).nonzero().squeeze(1)
    if rows.numel():  # coordinator: reaches k's file (kings on one rank) or rank
        co, emp = take(co, rows), take(empty, rows)
        reach = slide(co, emp, 0)
        for d in range(1, 8):
            reach |= slide(co, emp, d)
        _or_at(hit, rows, (reach & take(line, rows)) != 0)
    return hit


def _or_at(hit: torch.Tensor, rows: torch.Tensor, value: torch.Tensor) -> None:
    """Set ``hit[rows] |= value`` in place (``rows`` distinct)."""
    hit.index_copy_(0, rows, take(hit, rows) | value)


def _leaper(tb: Tables, k: torch.Tensor, occ: torch.Tensor, enemy: torch.Tensor,
            leap: torch.Tensor) -> torch.Tensor:
    """Return (M,) bool: can an active leaper of ``leap`` jump the piece on ``k``?

    Outward from k, the first square holding an attacker, or a piece right after another
    piece (k counts as one), must be such a leaper, and the square behind k empty.
    """
    empty = ~occ
    out = torch.zeros_like(k, dtype=torch.bool)
    for d in range(8):
        blk = ((occ & step(occ, d)) | enemy) & take(tb.ray_d[d], k)
        lh = blk & leap
        if d in UP:  # the nearest piece is the lowest bit
            near = ((blk & -blk) & lh) != 0
        else:  # the highest bit (a downward ray never holds the sign bit)
            near = lh > (blk ^ lh)
        out |= near & ((take(tb.back_d[d], k) & empty) != 0)
    return out


def captures(tb: Tables, kind: torch.Tensor, f: torch.Tensor, t: torch.Tensor,
             occ: torch.Tensor, mine: torch.Tensor, them: Army,
             ksq: torch.Tensor) -> torch.Tensor:
    """Return (M,) bitboards: what the move ``f``->``t`` of a piece of ``kind`` captures
    (spec 6); ``mine`` are the mover's pieces, ``them`` the enemy army, ``ksq`` our king."""
    ft = f * 64 + t
    enemy = them[0]
    pin = torch.zeros_like(t)  # pawn: pincer any enemy
    pin_p = torch.zeros_like(t)  # chameleon: pincer enemy pawns
    for d in ORTHOGONAL:
        victim = take(tb.nb1_d[d], t)
        partner = (take(tb.nb2_d[d], t) & mine) != 0
        pin |= keep(((victim & enemy) != 0) & partner, victim)
        pin_p |= keep(((victim & them[P]) != 0) & partner, victim)
    between, behind = take(tb.between, ft), take(tb.behind, ft)
    corner = take(tb.corner, t * 64 + ksq)
    cham = ((between & them[L]) | (behind & them[W]) | (corner & them[O])
            | keep(take(tb.orth, ft), pin_p))
    out = keep(kind == K, take(tb.bit, t) & enemy)
    out |= keep(kind == P, pin)
    out |= keep(kind == L, between & occ)
    out |= keep(kind == C, cham)
    out |= keep(kind == W, behind & enemy)
    return out | keep(kind == O, corner & enemy)


def _vacate(tb: Tables, ksq: torch.Tensor, line: torch.Tensor, us: Army,
            them: Army) -> torch.Tensor:
    """Return (N,) bitboards: a superset of the squares whose emptying could let
    ``them`` capture our king on ``ksq`` (as :func:`.check.vacate_mask`)."""
    v = torch.zeros_like(ksq)
    for d in range(8):  # a withdrawer's retreat square
        v |= step(step(us[K], d) & them[W], d)
    # a leaper's line up to the farthest leaper, and the landing square behind k
    leap = them[L].unsqueeze(1)
    ray = take(tb.ray_up, ksq)
    far = ray & leap
    v |= or_cols((ray & smear_down(far)) | (take(tb.back_up, ksq) & -(far != 0).long()))
    ray = take(tb.ray_down, ksq)
    far = ray & leap
    v |= or_cols((ray & -(far & -far)) | (take(tb.back_down, ksq) & -(far != 0).long()))
    # a pawn's path (up to the farthest pawn) to a neighbour with a partner opposite
    ray = take(tb.pawn_rays, ksq)
    far = ray & them[P].unsqueeze(1)
    far &= -((take(tb.pawn_ray_partner, ksq) & them[0].unsqueeze(1)) != 0).long()
    up, down = ray[:, :6], ray[:, 6:]
    seg = torch.cat([up & smear_down(far[:, :6]), down & -(far[:, 6:] & -far[:, 6:])], 1)
    v |= or_cols(seg | (take(tb.pawn_ray_n, ksq) & -(far != 0).long()))
    co, off = keep(line != 0, them[O]), ~line
    for d in range(8):  # each coordinator ray up to its first square on the line
        run = fill(co, off & MASK[d], d)  # (with the coordinators' own squares: one may
        hit = step(run, d) & line  # stand in another's path)
        v |= keep(hit != 0, run | hit)
    return v


def _landing(tb: Tables, ksq: torch.Tensor, x: torch.Tensor, mine: torch.Tensor,
             coord: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (pincer, coordinator) landing squares whose capture would take a piece of
    ``x`` (partners ``mine``), resp. of ``coord`` (rectangle with our king on ``ksq``)."""
    pin = torch.zeros_like(x)
    for d in (0, 2, 4, 6):  # victim next to the landing square, partner beyond it
        pin |= step(x & step(mine, OPPOSITE[d]), OPPOSITE[d])
    byte = ((coord & take(tb.rank, ksq)) >> (ksq & 56)) & 0xFF  # victims on the king's rank
    byte |= byte << 8
    byte |= byte << 16
    byte |= byte << 32  # -> their files
    col = ((coord & take(tb.file, ksq)) >> (ksq & 7)) & tb.file[0]  # on the king's file
    col |= col << 1
    col |= col << 2
    col |= col << 4  # -> their ranks
    return pin, byte | col


def legal_moves(tb: Tables, codes: torch.Tensor, bb: torch.Tensor,
                side: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ((N, 64) destination bitboards per origin: every move spec 7 allows the
    side to move, draw rules not applied; (N,) bool: it has one)."""
    n = side.shape[0]
    us, them = armies(bb, side)
    occ = us[0] | them[0]
    empty = ~occ
    ksq, esq = square_of(us[K]), square_of(them[K])
    active = ~spread(us[I])  # attackers next to our immobilizer are frozen
    check = attacked(tb, ksq, esq, occ, them, active)
    frozen = spread(them[I]) | (us[I] & spread(them[C]))
    movable = us[0] & ~us[K] & ~frozen
    risk = _Risk(tb, ksq, esq, us, them, check)
    gp, fp = tb.expand(movable & us[P]).nonzero(as_tuple=True)
    dest_p, flag_p = _pawn_moves(tb, gp, fp, empty, risk)
    gq, fq = tb.expand(movable & ~us[P]).nonzero(as_tuple=True)
    kq = take(codes.reshape(-1), gq * 64 + fq) & 7
    dest_q, flag_q = _piece_moves(tb, gq, fq, kq, empty, them, risk)
    g, f = torch.cat([gp, gq]), torch.cat([fp, fq])
    kind = torch.cat([torch.full_like(fp, P, dtype=kq.dtype), kq])
    dest, flagged = torch.cat([dest_p, dest_q]), torch.cat([flag_p, flag_q])
    kd = keep((frozen & us[K]) == 0, take(tb.adj, ksq) & ~us[0] & ~them[K])

    # play out the flagged moves and every king move
    sel = (flagged != 0).nonzero().squeeze(1)
    pi, ct = tb.expand(take(flagged, sel)).nonzero(as_tuple=True)
    pi = take(sel, pi)
    kg, kt = tb.expand(kd).nonzero(as_tuple=True)
    cg, cf, ck = take(g, pi), take(f, pi), take(kind, pi)
    caps = captures(tb, ck, cf, ct, take(occ, cg), take(us[0], cg), [take(a, cg) for a in them],
                    take(ksq, cg))
    kcaps = take(tb.bit, kt) & take(them[0], kg)  # a king captures on its destination
    cg = torch.cat([cg, kg])
    ct = torch.cat([ct, kt])
    bad = _exposes(tb, cg, torch.cat([cf, take(ksq, kg)]), ct,
                   torch.cat([ck, torch.full_like(kt, K, dtype=ck.dtype)]),
                   torch.cat([caps, kcaps]), occ, us, them, ksq, esq, active)
    drop = keep(bad, take(tb.bit, ct))
    m = pi.shape[0]
    dest = dest & ~torch.zeros_like(dest).index_add_(0, pi, drop[:m])
    kd = kd & ~torch.zeros_like(kd).index_add_(0, kg, drop[m:])
    legal = torch.zeros(n * 64, dtype=torch.int64, device=bb.device)
    legal.index_copy_(0, g * 64 + f, dest)
    legal.index_copy_(0, torch.arange(n, device=bb.device) * 64 + ksq, kd)
    has = torch.zeros_like(kd).index_add_(0, g, (dest != 0).long())
    return legal.view(n, 64), (has != 0) | (kd != 0)


def pseudo_moves(tb: Tables, codes: torch.Tensor, us: Army,
                 them: Army) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return (game, origin, kind, destinations) per piece of army ``us`` that can move:
    every move that obeys movement and immobilization, ignoring the king's safety (as
    :func:`.kernel.pseudo_moves`); the pawns first, then the other pieces but the king,
    then one king row per game (with no destination where the king cannot move)."""
    n = us[0].shape[0]
    empty = ~(us[0] | them[0])
    ksq = square_of(us[K])
    frozen = spread(them[I]) | (us[I] & spread(them[C]))
    movable = us[0] & ~us[K] & ~frozen
    risk = _Risk.none(n, us[0].device)
    gp, fp = tb.expand(movable & us[P]).nonzero(as_tuple=True)
    dest_p, _ = _pawn_moves(tb, gp, fp, empty, risk)
    gq, fq = tb.expand(movable & ~us[P]).nonzero(as_tuple=True)
    kq = take(codes.reshape(-1), gq * 64 + fq).long() & 7
    dest_q, _ = _piece_moves(tb, gq, fq, kq, empty, them, risk)
    kd = keep((frozen & us[K]) == 0, take(tb.adj, ksq) & ~us[0] & ~them[K])
    games = torch.arange(n, device=kd.device)
    return (torch.cat([gp, gq, games]), torch.cat([fp, fq, ksq]),
            torch.cat([torch.full_like(fp, P), kq, torch.full_like(ksq, K)]),
            torch.cat([dest_p, dest_q, kd]))


class _Risk:
    """Per game: what a move must touch to be played out (see the module docstring)."""

    @classmethod
    def none(cls, n: int, device: torch.device) -> _Risk:
        """Return the risk of pseudo-legal move generation: no move is played out."""
        risk = cls.__new__(cls)
        zero = torch.zeros(n, dtype=torch.int64, device=device)
        risk.check = torch.zeros(n, dtype=torch.bool, device=device)
        risk.v = risk.threat = risk.x = risk.xw = risk.xl = zero
        risk.pin = risk.crd = risk.pin_p = risk.crd_o = zero
        return risk

    def __init__(self, tb: Tables, ksq: torch.Tensor, esq: torch.Tensor, us: Army,
                 them: Army, check: torch.Tensor) -> None:
        line = take(tb.line, esq * 64 + ksq)
        v = _vacate(tb, ksq, line, us, them)
        self.check, self.v = check, v
        # enemies that could capture our king if our immobilizer stopped freezing them
        self.threat = (((them[K] | them[C] | them[W]) & take(tb.adj, ksq))
                       | (them[L] & take(tb.queen, ksq)) | (them[P] & take(tb.pawn_zone, ksq))
                       | keep(line != 0, them[O]))
        self.x = them[0] & v  # enemies whose capture matters
        self.xw, self.xl = them[W] & v, them[L] & v
        self.pin, self.crd = _landing(tb, ksq, self.x, us[0], self.x)
        self.pin_p, self.crd_o = _landing(tb, ksq, them[P] & v, us[0], them[O] & v)

    def whole(self, g: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
        """Return (P,) bool: all moves of the piece on ``fb`` in game ``g`` are played out."""
        return take(self.check, g) | ((take(self.v, g) & fb) != 0)


def _pawn_moves(tb: Tables, g: torch.Tensor, f: torch.Tensor, empty: torch.Tensor,
                risk: _Risk) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (destinations, moves to play out) of the pawns ``f`` in games ``g``."""
    fb, pro = take(tb.bit, f), take(empty, g)
    dest = slide(fb, pro, 0) | slide(fb, pro, 2) | slide(fb, pro, 4) | slide(fb, pro, 6)
    return dest, dest & (-risk.whole(g, fb).long() | take(risk.pin, g))


def _piece_moves(tb: Tables, g: torch.Tensor, f: torch.Tensor, kind: torch.Tensor,
                 empty: torch.Tensor, them: Army,
                 risk: _Risk) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (destinations, moves to play out) of the queen-moving pieces ``f`` (of
    ``kind``) in games ``g``; leapers and chameleons also jump."""
    fb, pro = take(tb.bit, f), take(empty, g)
    is_c = kind == C
    whole = risk.whole(g, fb) | ((kind == I) & ((take(tb.adj, f) & take(risk.threat, g)) != 0))
    land = keep(kind == O, take(risk.crd, g)) | keep(is_c, take(risk.crd_o, g))
    land_orth = land | keep(is_c, take(risk.pin_p, g))  # chameleons pincer pawns
    base = -whole.long()
    # withdrawers, leapers and chameleons: captures that depend on the direction
    r = ((kind == W) | (kind == L) | is_c).nonzero().squeeze(1)
    gr, fr, kr = take(g, r), take(f, r), take(kind, r)
    xs = take(risk.x, gr)
    cr = kr == C
    xb = keep(kr == W, xs) | keep(cr, take(risk.xw, gr))  # the piece behind the origin
    xr = keep(kr == L, xs) | keep(cr, take(risk.xl, gr))  # pieces jumped along the ray
    jump = keep(cr, take(them[L], gr)) | keep(kr == L, take(them[0], gr))
    emp, fbr = take(empty, gr), take(fb, r)
    base_r, land_r, land_orth_r = take(base, r), take(land, r), take(land_orth, r)
    dest, flagged = torch.zeros_like(fb), torch.zeros_like(fb)
    jdest, jflag = torch.zeros_like(fbr), torch.zeros_like(fbr)
    for d in range(8):
        dd = slide(fb, pro, d)
        orth = d in ORTHOGONAL
        dest |= dd
        flagged |= dd & (base | (land_orth if orth else land))
        if r.numel():  # land right after a jumped piece (nothing to jump: no landing)
            passable = (emp | (jump & step(emp, OPPOSITE[d]))) & MASK[d]
            jumps = step(fill(fbr, passable, d), d) & emp & step(jump, d)
            hot = ((take(tb.back_d[d], fr) & xb) | (take(tb.ray_d[d], fr) & xr)) != 0
            jdest |= jumps
            jflag |= (jumps & (base_r | (land_orth_r if orth else land_r))) | keep(
                hot, take(dd, r) | jumps)
    if r.numel():
        dest.index_add_(0, r, jdest)  # landings are never slide squares: sum = union
        flagged.index_copy_(0, r, take(flagged, r) | jflag)
    return dest, flagged


def _exposes(tb: Tables, g: torch.Tensor, f: torch.Tensor, t: torch.Tensor,
             kind: torch.Tensor, caps: torch.Tensor, occ: torch.Tensor, us: Army, them: Army,
             ksq: torch.Tensor, esq: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
    """Return (M,) bool: does move ``f``->``t`` (capturing ``caps``) in game ``g`` leave
    our king capturable? ``active``: per game, where attackers are not frozen."""
    fb, tbit = take(tb.bit, f), take(tb.bit, t)
    occ2 = (take(occ, g) & ~caps & ~fb) | tbit
    them2 = [take(a, g) & ~caps for a in them]
    act = take(active, g)
    rows = (kind == I).nonzero().squeeze(1)
    if rows.numel():  # a moving immobilizer frees what it left and freezes anew
        imm = take(take(us[I], g) ^ fb ^ tbit, rows)
        act.index_copy_(0, rows, ~spread(imm))
    k = take(ksq, g)
    return attacked(tb, k ^ keep(kind == K, t ^ k), take(esq, g), occ2, them2, act)
