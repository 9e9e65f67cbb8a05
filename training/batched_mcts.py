"""Network-guided tree search over a BatchedGame: the trees of B games searched in lockstep.

The batched twin of :mod:`boardzoo.training.mcts` (same roots, same config,
same policy targets), with every game's tree held in tensors
(:mod:`.batched_tree`, mctx-style) instead of Python nodes. One simulation is,
for all games at once:

1. selection: a loop over depth, vectorised over games, from each root down
   to an edge without a child or to a terminal node;
2. one batched ``step`` creating the new leaves (one per game);
3. one batched network call on the leaves that are not terminal;
4. backup along each game's path, adding the leaf value to every edge from
   the view of the player acting at that edge's node (``to_move``), never by
   alternating signs: a Whistling chain is several edges by one player.

Roots: ``gumbel`` (Gumbel top-k at the root with sequential halving, the
improved policy as target, inner nodes by the paper's deterministic rule) and
``puct`` (PUCT, Dirichlet noise at the root, visit counts as target, subtree
reuse across moves in self-play). Randomness (noise, temperature sampling)
comes from one ``torch.Generator``: the same seed gives the same search.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from boardzoo.envs.core.batched import BatchedGame, BatchState

from .batched_tree import Tree, expand, new_tree, set_node_info
from .config import MCTSConfig
from .knowledge import Knowledge

#: batch of states -> (logits (n, num_actions), values (n,) for each state's player to move).
#: An evaluator with a method ``evaluate_at(batch, rows, actions)`` -> (logits (K,) of those
#: (row, action) pairs, values (n,)) is asked for the legal actions' logits only.
Evaluator = Callable[[BatchState], tuple[torch.Tensor, torch.Tensor]]


class NetBatchEvaluator:
    """Batched network inference on a BatchState (the net lives on the engine's device),
    with the priors the network takes computed over the whole batch (``knowledge``; by
    default from the network's own settings)."""

    def __init__(self, net: torch.nn.Module, engine: BatchedGame,
                 knowledge: Knowledge | None = None) -> None:
        self.net = net
        self.engine = engine
        self.knowledge = Knowledge.for_net(net) if knowledge is None else knowledge
        self.calls = 0
        self.positions = 0

    def __call__(self, batch: BatchState) -> tuple[torch.Tensor, torch.Tensor]:
        return self._infer(batch, lambda obs, priors: self.net(obs, **priors))

    def evaluate_at(self, batch: BatchState, rows: torch.Tensor, actions: torch.Tensor,
                    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the logits ``(K,)`` of the (row, action) pairs and the values ``(B,)``:
        :meth:`__call__`'s, up to rounding, without scoring every action."""
        return self._infer(
            batch, lambda obs, priors: self.net.forward_at(obs, rows, actions, **priors))

    def _infer(self, batch: BatchState, run: Callable[..., tuple[torch.Tensor, torch.Tensor]],
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``run(observations, priors)`` of the batch in inference mode; count it."""
        if self.net.training:
            self.net.eval()
        with torch.inference_mode():
            priors = Knowledge.inputs(*self.knowledge.batched(self.engine, batch))
            out = run(self.engine.observation(batch), priors)
        self.calls += 1
        self.positions += batch.size
        return out


def tree_capacity(cfg: MCTSConfig, simulations: int) -> int:
    """Nodes per tree: the root and one per simulation, plus room for a reused subtree."""
    reuse = cfg.reuse_tree and cfg.root == "puct"
    return (2 if reuse else 1) * simulations + 1


def completed_q(n: torch.Tensor, w: torch.Tensor, prior: torch.Tensor,
                value: torch.Tensor) -> torch.Tensor:
    """Edge values (B, K) with unvisited edges set to the mixed value v_mix (as mcts.py)."""
    visited = n > 0
    total = n.sum(1)
    q = torch.where(visited, w / n.clamp(min=1), 0.0)
    pv = torch.where(visited, prior, 0.0)
    mixed = (value + total * (pv * q).sum(1) / pv.sum(1)) / (1 + total)
    v_mix = torch.where(visited.any(1), mixed, value)
    return torch.where(visited, q, v_mix[:, None])


class BatchedSearch:
    """One search per game of ``tree`` (its roots), driven to ``simulations`` by :meth:`run`."""

    def __init__(self, engine: BatchedGame, cfg: MCTSConfig, evaluate: Evaluator,
                 generator: torch.Generator, tree: Tree, add_noise: bool = True,
                 simulations: int | None = None) -> None:
        self.engine = engine
        self.cfg = cfg
        self.evaluate = evaluate
        self.gen = generator
        self.tree = tree
        self.add_noise = add_noise
        self.simulations = cfg.simulations if simulations is None else simulations
        self.gumbel = cfg.root == "gumbel"
        dev = tree.num_nodes.device
        self.ar = torch.arange(tree.size, device=dev)
        self.done = torch.zeros(tree.size, dtype=torch.int64, device=dev)
        #: Positions evaluated by the network in this search.
        self.evaluations = 0

    # -- driving ------------------------------------------------------------------------
    def run(self) -> BatchedSearch:
        """Expand the roots that need it, prepare them, then simulate until every game is done."""
        t = self.tree
        self.done[t.terminal[:, 0]] = self.simulations  # nothing to search in a finished game
        need = (~t.expanded[:, 0] & ~t.terminal[:, 0]).nonzero().squeeze(1)
        if len(need):
            self._evaluate(need, torch.zeros_like(need))
            self.done[need] += 1  # the root's evaluation is the first simulation, as in mcts.py
        self._root_ready()
        while True:
            active = self.done < self.simulations
            if not bool(active.any()):
                return self
            self._simulate(active)

    def _evaluate(self, games: torch.Tensor, nodes: torch.Tensor,
                  states: BatchState | None = None) -> torch.Tensor:
        """Evaluate and expand nodes (whose states may be given); return their float64 values
        (for their players)."""
        t = self.tree
        if states is None:
            states = t.pool.index(games * t.max_nodes + nodes)
        rows, cols = self.engine.legal_mask(states).nonzero(as_tuple=True)
        evaluate_at = getattr(self.evaluate, "evaluate_at", None)
        if evaluate_at is None:
            logits, values = self.evaluate(states)
            legal_logits = logits[rows, cols]
        else:
            legal_logits, values = evaluate_at(states, rows, cols)
        self.tree = expand(t, games, nodes, rows, cols, legal_logits, values)
        self.evaluations += len(games)
        return values.to(torch.float64)

    def _simulate(self, active: torch.Tensor) -> None:
        t, ar, m = self.tree, self.ar, self.tree.max_nodes
        node = torch.zeros_like(self.done)
        going = active & t.expanded[:, 0]
        path: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        leaf_parent = torch.full_like(node, -1)
        leaf_edge = torch.zeros_like(node)
        while bool(going.any()):
            edge = self._pick_root(going) if not path else self._pick(node)
            child = t.children[ar, node, edge]
            path.append((node, edge, going))
            new = going & (child < 0)
            leaf_parent = torch.where(new, node, leaf_parent)
            leaf_edge = torch.where(new, edge, leaf_edge)
            moved = going & (child >= 0)
            node = torch.where(moved, child, node)
            going = moved & t.expanded[ar, node] & ~t.terminal[ar, node]
        # one step creates the new leaves of all games
        gs = (active & (leaf_parent >= 0)).nonzero().squeeze(1)
        states = None
        if len(gs):
            par, ed = leaf_parent[gs], leaf_edge[gs]
            # the parents are a fresh copy, so the engine may write into them
            states = self.engine.step_inplace(t.pool.index(gs * m + par), t.actions[gs, par, ed])
            j = t.num_nodes[gs]
            if bool((j >= m).any()):  # tree_capacity makes this impossible
                raise RuntimeError("batched search tree is full")
            t.num_nodes[gs] += 1
            set_node_info(t, self.engine, gs, j, states)
            t.children[gs, par, ed] = j
            t.parent[gs, j] = par
            t.depth[gs, j] = t.depth[gs, par] + 1
            node[gs] = j
        # one network call on the non-terminal leaves
        v0 = torch.where(t.terminal[ar, node], t.ret0[ar, node], 0.0)
        ev = (active & ~t.terminal[ar, node] & ~t.expanded[ar, node]).nonzero().squeeze(1)
        if len(ev):
            # only new leaves are unexpanded: evaluate their states without a copy if we can
            if states is not None and len(ev) == len(gs):
                values = self._evaluate(ev, node[ev], states)
            else:
                values = self._evaluate(ev, node[ev])
            t = self.tree
            v0[ev] = torch.where(t.player[ev, node[ev]] == 0, values, -values)
        # backup of all depths at once: a path never holds a node twice
        on = torch.stack([p[2] for p in path])  # (depth, B)
        d, b = on.nonzero(as_tuple=True)
        nd = torch.stack([p[0] for p in path])[d, b]
        ed = torch.stack([p[1] for p in path])[d, b]
        v = v0[b]
        node_row = b * t.max_nodes + nd
        edge_row = node_row * t.width + ed
        one = torch.ones_like(v)
        t.N.view(-1).index_put_((edge_row,), one, accumulate=True)
        t.W.view(-1).index_put_((edge_row,), torch.where(t.player.view(-1)[node_row] == 0, v, -v),
                                accumulate=True)
        t.visits.view(-1).index_put_((node_row,), one, accumulate=True)
        self.done += active.to(torch.int64)

    # -- selection ----------------------------------------------------------------------
    def _pick(self, node: torch.Tensor) -> torch.Tensor:
        t, ar = self.tree, self.ar
        n, w, prior = t.N[ar, node], t.W[ar, node], t.prior[ar, node]
        valid = t.actions[ar, node] >= 0
        if self.gumbel:
            pi = self._improved(t.logits[ar, node], n, w, prior, t.value[ar, node])
            score = pi - n / (1 + n.sum(1, keepdim=True))
        else:
            c = self.cfg
            fpu = (t.value[ar, node] - c.fpu_reduction)[:, None]
            q = torch.where(n > 0, w / n.clamp(min=1), fpu)
            sq = torch.sqrt(t.visits[ar, node].clamp(min=1))[:, None]
            score = q + (c.c_puct * prior) * (sq / (1 + n))
        return torch.where(valid, score, -math.inf).argmax(1)

    def _pick_root(self, going: torch.Tensor) -> torch.Tensor:
        if not self.gumbel:
            return self._pick(torch.zeros_like(self.done))
        need = going & (self.phase_k >= self.phase_total)
        if bool(need.any()):
            self._next_phase(need)
        slot = self.phase_k % self.ncands.clamp(min=1)
        self.phase_k += going.to(torch.int64)
        return self.cands.gather(1, slot[:, None]).squeeze(1)

    # -- roots --------------------------------------------------------------------------
    def _root_ready(self) -> None:
        """Add Dirichlet noise (puct) or draw the Gumbel candidates, as mcts.py does."""
        t, c = self.tree, self.cfg
        valid = t.actions[:, 0] >= 0
        if self.gumbel:
            self._start_gumbel(valid)
        elif self.add_noise and c.dirichlet_alpha > 0:
            alpha = torch.full(valid.shape, c.dirichlet_alpha, dtype=torch.float64,
                               device=valid.device)
            # private but long-standing: the only gamma sampler that takes a generator
            gamma = torch._standard_gamma(alpha, generator=self.gen) * valid
            noise = gamma / gamma.sum(1, keepdim=True).clamp(min=1e-300)
            f = c.dirichlet_fraction
            on = (t.expanded[:, 0] & (valid.sum(1) > 1))[:, None]
            t.prior[:, 0] = torch.where(on, (1 - f) * t.prior[:, 0] + f * noise, t.prior[:, 0])

    def _start_gumbel(self, valid: torch.Tensor) -> None:
        t = self.tree
        n = valid.sum(1)
        if self.add_noise:
            u = torch.rand(valid.shape, generator=self.gen, dtype=torch.float64,
                           device=valid.device).clamp(min=1e-300)
            g = torch.where(valid, -torch.log(-torch.log(u)), 0.0)
        else:
            g = torch.zeros(valid.shape, dtype=torch.float64, device=valid.device)
        self.g = g
        m = n.clamp(max=min(self.cfg.gumbel_m, self.simulations)
                    ).clamp(min=1)
        key = torch.where(valid, -(g + t.logits[:, 0]), math.inf)
        order = torch.sort(key, dim=1, stable=True).indices
        self.cands = order[:, : int(m.max())]
        self.ncands = m
        bits = torch.zeros_like(m)  # ceil(log2(m)) = bit length of m - 1
        rest = m - 1
        while bool((rest > 0).any()):
            bits += (rest > 0).to(torch.int64)
            rest = rest >> 1
        self.phases = bits.clamp(min=1)
        self.phase = torch.zeros_like(m)
        self.phase_k = torch.zeros_like(m)
        self.phase_total = torch.zeros_like(m)

    def _improved(self, logits: torch.Tensor, n: torch.Tensor, w: torch.Tensor,
                  prior: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        """softmax(logits + sigma(completed q)) over each row's edges."""
        c = self.cfg
        q = completed_q(n, w, prior, value)
        sigma = ((c.gumbel_c_visit + n.max(1).values) * c.gumbel_c_scale)[:, None] * ((q + 1) / 2)
        z = logits + sigma
        p = torch.exp(z - z.max(1, keepdim=True).values)
        return p / p.sum(1, keepdim=True)

    def _root_scores(self) -> torch.Tensor:
        """g + logits + sigma(completed q) of each game's candidates (-inf past the last)."""
        t = self.tree
        n = t.N[:, 0]
        q = completed_q(n, t.W[:, 0], t.prior[:, 0], t.value[:, 0])
        sigma = ((self.cfg.gumbel_c_visit + n.max(1).values) * self.cfg.gumbel_c_scale)[:, None]
        c = self.cands  # (the tree may have widened since self.g was drawn)
        scores = self.g.gather(1, c) + t.logits[:, 0].gather(1, c) + sigma * (
            (q.gather(1, c) + 1) / 2)
        slot = torch.arange(c.shape[1], device=c.device)
        return torch.where(slot < self.ncands[:, None], scores, -math.inf)

    def _next_phase(self, need: torch.Tensor) -> None:
        """Halve the candidates (after the first phase) and plan the next phase's visits."""
        halve = need & (self.phase > 0) & (self.ncands > 1)
        if bool(halve.any()):
            order = torch.sort(-self._root_scores(), dim=1, stable=True).indices
            self.cands = torch.where(halve[:, None], self.cands.gather(1, order), self.cands)
            self.ncands = torch.where(halve, (self.ncands // 2).clamp(min=1), self.ncands)
        left = self.simulations - self.done
        phases_left = (self.phases - self.phase).clamp(min=1)
        per = (left // (phases_left * self.ncands)).clamp(min=1)
        self.phase_total = torch.where(need, per * self.ncands, self.phase_total)
        self.phase_k = torch.where(need, 0, self.phase_k)
        self.phase = self.phase + need.to(torch.int64)

    # -- results ------------------------------------------------------------------------
    def policy_target(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (legal actions (B, K), -1 padded; target probabilities (B, K), 0 padded)."""
        t = self.tree
        actions, n = t.actions[:, 0], t.N[:, 0]
        if self.gumbel:
            probs = self._improved(t.logits[:, 0], n, t.W[:, 0], t.prior[:, 0], t.value[:, 0])
        else:
            total = n.sum(1, keepdim=True)
            probs = torch.where(total > 0, n / total.clamp(min=1), t.prior[:, 0])
        return actions, torch.where(actions >= 0, probs, 0.0)

    def choose(self, temperature: torch.Tensor | float = 0.0) -> torch.Tensor:
        """Return each game's chosen edge (index into ``policy_target``'s actions)."""
        t = self.tree
        if self.gumbel:  # the last survivor of sequential halving; no temperature
            best = self._root_scores().argmax(1)
            return self.cands.gather(1, best[:, None]).squeeze(1)
        n, valid = t.N[:, 0], t.actions[:, 0] >= 0
        total = n.sum(1)
        most = torch.where(valid, n, -1.0)
        top = valid & (most == most.max(1, keepdim=True).values)
        q = torch.where(n > 0, t.W[:, 0] / n.clamp(min=1), 0.0)
        greedy = torch.where(top, q, -math.inf).argmax(1)  # ties: highest mean value, then first
        greedy = torch.where(total > 0, greedy,
                             torch.where(valid, t.prior[:, 0], -math.inf).argmax(1))
        temp = torch.as_tensor(temperature, dtype=torch.float64, device=n.device).expand(len(n))
        rows = ((temp > 0) & (total > 0)).nonzero().squeeze(1)
        if len(rows):
            p = n[rows] ** (1.0 / temp[rows])[:, None]
            greedy[rows] = torch.multinomial(p / p.sum(1, keepdim=True), 1,
                                             generator=self.gen).squeeze(1)
        return greedy


def run_batched_search(engine: BatchedGame, evaluate: Evaluator, roots: BatchState,
                       cfg: MCTSConfig, generator: torch.Generator,
                       simulations: int | None = None, add_noise: bool = False) -> BatchedSearch:
    """Search every game of ``roots`` from scratch; return the finished search."""
    sims = cfg.simulations if simulations is None else simulations
    tree = new_tree(engine, roots, tree_capacity(cfg, sims))
    return BatchedSearch(engine, cfg, evaluate, generator, tree, add_noise, sims).run()
