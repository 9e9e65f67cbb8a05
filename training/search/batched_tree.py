"""B search trees held in tensors (mctx-style), the storage of :mod:`.batched_mcts`.

Every array has the games along dimension 0 and the nodes along dimension 1:
node ``j`` of game ``b`` is ``[b, j]``, the root is node 0 and nodes are
numbered in the order they were created, so a parent's number is always lower
than its children's. A node's state is row ``b * max_nodes + j`` of ``pool``,
one :class:`BatchState` for all nodes of all games.

Edges are stored compactly: an expanded node lists its legal actions in
ascending order (the order of ``ActionGame.legal_actions``) in ``actions``,
padded with -1 to the tree's width ``K``; the width grows when a node with more
legal actions is expanded. Edge statistics (visits ``N``, value sums ``W``) are
from the view of the player who acts at the node, as in
:mod:`boardzoo.training.mcts`; values are float64 like that module's.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from boardzoo.envs.core.batched import BatchedGame, BatchState

#: Padding of the per-edge arrays (an absent edge).
EDGE_PAD = {"actions": -1, "children": -1, "logits": -math.inf, "prior": 0.0, "N": 0.0,
            "W": 0.0}


@dataclass
class Tree:
    """Search trees of B games (see the module docstring for the layout)."""

    pool: BatchState
    max_nodes: int
    num_nodes: torch.Tensor  # (B,) int64
    parent: torch.Tensor  # (B, M) int64, -1 for roots and unused nodes
    depth: torch.Tensor  # (B, M) int64
    expanded: torch.Tensor  # (B, M) bool
    terminal: torch.Tensor  # (B, M) bool
    player: torch.Tensor  # (B, M) int64: who acts at the node
    ret0: torch.Tensor  # (B, M) float64: player 0's result at terminal nodes
    value: torch.Tensor  # (B, M) float64: network value for ``player``
    visits: torch.Tensor  # (B, M) float64: sum of the node's N
    actions: torch.Tensor  # (B, M, K) int64
    children: torch.Tensor  # (B, M, K) int64, -1 where not created
    logits: torch.Tensor  # (B, M, K) float64
    prior: torch.Tensor  # (B, M, K) float64
    N: torch.Tensor  # (B, M, K) float64
    W: torch.Tensor  # (B, M, K) float64

    @property
    def size(self) -> int:
        """Number of games."""
        return self.num_nodes.shape[0]

    @property
    def width(self) -> int:
        """Edge slots per node (K)."""
        return self.actions.shape[2]

    def arrays(self) -> dict[str, torch.Tensor]:
        """Return the per-game tensors by name (everything but ``pool``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("pool", "max_nodes")}

    def _rows(self, games: torch.Tensor) -> torch.Tensor:
        """Pool rows of every node of ``games`` (an index tensor), game-major."""
        m = self.max_nodes
        return (games[:, None] * m + torch.arange(m, device=games.device)).reshape(-1)

    def index(self, games: torch.Tensor) -> Tree:
        """Return the trees of ``games`` (an int64 index tensor)."""
        return dataclasses.replace(self, pool=self.pool.index(self._rows(games)),
                                   **{k: v[games] for k, v in self.arrays().items()})

    def where(self, mask: torch.Tensor, other: Tree) -> Tree:
        """Return ``other``'s tree where ``mask`` (B,) is True, this one's elsewhere."""
        k = max(self.width, other.width)
        a, b = self.widened(k), other.widened(k)
        out = {}
        for name, mine in a.arrays().items():
            m = mask.view(-1, *([1] * (mine.dim() - 1)))
            out[name] = torch.where(m, getattr(b, name), mine)
        pool = a.pool.where(mask.repeat_interleave(self.max_nodes), b.pool)
        return dataclasses.replace(a, pool=pool, **out)

    def widened(self, k: int) -> Tree:
        """Return the trees with at least ``k`` edge slots per node."""
        extra = k - self.width
        if extra <= 0:
            return self
        out = {}
        for name, pad in EDGE_PAD.items():
            t = getattr(self, name)
            fill = torch.full((*t.shape[:2], extra), pad, dtype=t.dtype, device=t.device)
            out[name] = torch.cat([t, fill], dim=2)
        return dataclasses.replace(self, **out)


def new_tree(engine: BatchedGame, roots: BatchState, max_nodes: int) -> Tree:
    """Return B one-node trees whose roots (not yet expanded) are ``roots``."""
    b, m, dev = roots.size, max_nodes, roots.device
    games = torch.arange(b, device=dev)
    # rows are written before they are read (node creation), so they start uninitialised
    pool = dataclasses.replace(roots, **{k: v.new_empty((b * m, *v.shape[1:]))
                                         for k, v in roots.tensors().items()})

    def full(value, dtype, *shape):
        return torch.full((b, m, *shape), value, dtype=dtype, device=dev)

    f64, i64 = torch.float64, torch.int64
    tree = Tree(pool=pool, max_nodes=m, num_nodes=torch.ones(b, dtype=i64, device=dev),
                parent=full(-1, i64), depth=full(0, i64), expanded=full(False, torch.bool),
                terminal=full(False, torch.bool), player=full(0, i64), ret0=full(0.0, f64),
                value=full(0.0, f64), visits=full(0.0, f64),
                **{name: full(pad, i64 if name in ("actions", "children") else f64, 1)
                   for name, pad in EDGE_PAD.items()})
    set_node_info(tree, engine, games, torch.zeros_like(games), roots)
    return tree


def set_node_info(tree: Tree, engine: BatchedGame, games: torch.Tensor, nodes: torch.Tensor,
                  states: BatchState) -> None:
    """Store ``states`` as nodes ``nodes`` of ``games``: pool rows, terminal, player, result."""
    rows = games * tree.max_nodes + nodes
    for name, t in tree.pool.tensors().items():
        t[rows] = getattr(states, name)
    tree.terminal[games, nodes] = engine.terminated(states)
    tree.player[games, nodes] = engine.to_move(states).to(torch.int64)
    tree.ret0[games, nodes] = engine.returns(states)[:, 0].to(torch.float64)


def compact_actions(n: int, rows: torch.Tensor, cols: torch.Tensor, legal_logits: torch.Tensor,
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Return each of ``n`` rows' legal actions (ascending, -1 padded) and their float64
    logits, from the legal (row, action) pairs in row-major order (``mask.nonzero()``) and
    their logits ``(K,)``."""
    counts = torch.bincount(rows, minlength=n)
    width = max(int(counts.max()) if n else 0, 1)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(rows.shape[0], device=rows.device) - starts[rows]
    actions = torch.full((n, width), -1, dtype=torch.int64, device=rows.device)
    actions[rows, pos] = cols
    lg = torch.full((n, width), -math.inf, dtype=torch.float64, device=rows.device)
    lg[rows, pos] = legal_logits.to(torch.float64)
    return actions, lg


def expand(tree: Tree, games: torch.Tensor, nodes: torch.Tensor, rows: torch.Tensor,
           cols: torch.Tensor, legal_logits: torch.Tensor, values: torch.Tensor) -> Tree:
    """Give nodes their edges (the legal (row, action) pairs ``rows``, ``cols`` in row-major
    order), priors (softmax of ``legal_logits`` over each node's actions) and values; return
    the tree (widened if a node has more actions than fit)."""
    actions, lg = compact_actions(len(games), rows, cols, legal_logits)
    tree = tree.widened(actions.shape[1])
    k = actions.shape[1]
    p = torch.exp(lg - lg.max(dim=1, keepdim=True).values)
    # a node is expanded once, while its N, W, children and visits are still blank
    tree.actions[games, nodes, :k] = actions
    tree.logits[games, nodes, :k] = lg
    tree.prior[games, nodes, :k] = p / p.sum(dim=1, keepdim=True)
    tree.value[games, nodes] = values.to(torch.float64)
    tree.expanded[games, nodes] = True
    return tree


def reroot(tree: Tree, child: torch.Tensor, keep: int) -> Tree:
    """Return the trees re-rooted at node ``child`` (B,) of each game (which must exist),
    keeping the subtree's first ``keep`` nodes in creation order (parents come first, so
    what is kept is a tree; an edge whose child was dropped is re-created when visited)."""
    b, m, dev = tree.size, tree.max_nodes, tree.num_nodes.device
    games = torch.arange(b, device=dev)
    nodes = torch.arange(m, device=dev).expand(b, m)
    used = nodes < tree.num_nodes[:, None]
    c = child[:, None]
    anc = nodes.clone()
    inside = anc == c
    for _ in range(int(tree.depth.max())):  # walk every node up to the root
        anc = torch.where(anc >= 0, tree.parent.gather(1, anc.clamp(min=0)), anc)
        inside |= anc == c
    inside &= used
    rank = torch.cumsum(inside.to(torch.int64), 1) - 1
    kept = inside & (rank < keep)
    count = kept.sum(1)
    new_id = torch.where(kept, rank, -1)  # old node -> new number
    src = torch.zeros(b, m, dtype=torch.int64, device=dev)  # new number -> old node
    kb, kn = kept.nonzero(as_tuple=True)
    src[kb, rank[kb, kn]] = kn
    fresh = nodes >= count[:, None]
    out = {}
    for name, t in tree.arrays().items():
        if name == "num_nodes":
            continue
        g = src.view(b, m, *([1] * (t.dim() - 2))).expand(b, m, *t.shape[2:])
        out[name] = t.gather(1, g)
    out["children"] = torch.where(out["children"] >= 0,
                                  new_id.gather(1, out["children"].clamp(min=0).view(b, -1))
                                  .view_as(out["children"]), -1)
    out["parent"] = torch.where(out["parent"] >= 0,
                                new_id.gather(1, out["parent"].clamp(min=0)), -1)
    out["depth"] = out["depth"] - tree.depth[games, child][:, None]
    for name, t in out.items():  # unused slots back to their blank values
        pad = EDGE_PAD.get(name, -1 if name == "parent" else 0)
        m_ = fresh.view(b, m, *([1] * (t.dim() - 2)))
        out[name] = torch.where(m_, torch.tensor(pad, dtype=t.dtype, device=dev), t)
    pool = tree.pool.index((games[:, None] * m + src).reshape(-1))
    return dataclasses.replace(tree, pool=pool, num_nodes=count, **out)
