"""Network-guided tree search over a BatchedGame: the trees of B games searched in lockstep.

The batched backend of the search: the root rules of :mod:`.roots` (the same
config, targets and moves as the per-game trees of :mod:`.tree`), with every
game's tree held in tensors
(:mod:`.batched_tree`, mctx-style) instead of Python nodes. One simulation is,
for all games at once:

1. selection: a loop over depth, vectorised over games, from each root down
   to an edge without a child or to a terminal node;
2. one batched ``step`` creating the new leaves (one per game);
3. one batched network call on the leaves that are not terminal;
4. backup along each game's path, adding the leaf value to every edge from
   the view of the player acting at that edge's node (``to_move``), never by
   alternating signs: a Whistling chain is several edges by one player.

Subtrees are reused across moves in self-play where the rule says so (PUCT).
Randomness (noise, temperature sampling) comes from one ``torch.Generator``:
the same seed gives the same search.
"""

from __future__ import annotations

from collections.abc import Callable

import array_api_compat.torch as xp
import torch

from boardzoo.envs.core.batched import BatchedGame, BatchState

from ..config_schema import MCTSConfig
from ..knowledge import Knowledge
from .batched_tree import Tree, expand, new_tree, set_node_info
from .roots import Edges, RootRule, reuses_tree, root_rule

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
    return (2 if reuses_tree(cfg) else 1) * simulations + 1


class TorchRandomness:
    """The root rules' random draws from one ``torch.Generator`` (all games' trees)."""

    def __init__(self, generator: torch.Generator) -> None:
        self.gen = generator

    def gumbel(self, valid: torch.Tensor) -> torch.Tensor:
        u = torch.rand(valid.shape, generator=self.gen, dtype=torch.float64,
                       device=valid.device).clamp(min=1e-300)
        return torch.where(valid, -torch.log(-torch.log(u)), 0.0)

    def dirichlet(self, alpha: float, valid: torch.Tensor) -> torch.Tensor:
        alphas = torch.full(valid.shape, alpha, dtype=torch.float64, device=valid.device)
        # private but long-standing: the only gamma sampler that takes a generator
        gamma = torch._standard_gamma(alphas, generator=self.gen) * valid
        return gamma / gamma.sum(1, keepdim=True).clamp(min=1e-300)

    def sample(self, p: torch.Tensor) -> torch.Tensor:
        return torch.multinomial(p, 1, generator=self.gen).squeeze(1)


def prior_sums(prior: torch.Tensor, q: torch.Tensor, visited: torch.Tensor,
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of prior * q and of prior over each row's visited edges (padded row sums);
    (0, 1) for a row without visits."""
    pv = torch.where(visited, prior, 0.0)
    p = pv.sum(1, keepdim=True)
    return (pv * q).sum(1, keepdim=True), torch.where(p > 0, p, 1.0)


class BatchedSearch:
    """One search per game of ``tree`` (its roots), driven to ``simulations`` by :meth:`run`.

    ``simulations`` and ``add_noise`` may differ by game (tensors of shape (B,)): a fast
    search of playout-cap randomisation beside full ones (``selfplay.full_search_prob``).
    """

    def __init__(self, engine: BatchedGame, cfg: MCTSConfig, evaluate: Evaluator,
                 generator: torch.Generator, tree: Tree, add_noise: bool | torch.Tensor = True,
                 simulations: int | torch.Tensor | None = None) -> None:
        self.engine = engine
        self.cfg = cfg
        self.evaluate = evaluate
        self.gen = generator
        self.tree = tree
        self.add_noise = add_noise
        self.simulations = cfg.simulations if simulations is None else simulations
        #: The root rule (``cfg.root``): how nodes pick, the target, the move played.
        self.rule: RootRule = root_rule(cfg.root)(cfg, self.simulations, add_noise,
                                                  TorchRandomness(generator))
        dev = tree.num_nodes.device
        self.ar = torch.arange(tree.size, device=dev)
        self.done = torch.zeros(tree.size, dtype=torch.int64, device=dev)
        #: Each game's simulations.
        self.budget = torch.as_tensor(self.simulations, dtype=torch.int64,
                                      device=dev).expand(tree.size)
        #: Positions evaluated by the network in this search.
        self.evaluations = 0

    # -- driving ------------------------------------------------------------------------
    def run(self) -> BatchedSearch:
        """Expand the roots that need it, prepare them, then simulate until every game is done."""
        t = self.tree
        # nothing to search in a finished game
        self.done = torch.where(t.terminal[:, 0], self.budget, self.done)
        need = (~t.expanded[:, 0] & ~t.terminal[:, 0]).nonzero().squeeze(1)
        if len(need):
            self._evaluate(need, torch.zeros_like(need))
            self.done[need] += 1  # the root's evaluation is the first simulation, as in mcts.py
        self._root_ready()
        while True:
            active = self.done < self.budget
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
    def _edges(self, node: torch.Tensor) -> Edges:
        """Node ``node`` (B,) of each game's tree as the root rule sees it."""
        t, ar = self.tree, self.ar
        return Edges(t.N[ar, node], t.W[ar, node], t.prior[ar, node], t.logits[ar, node],
                     t.value[ar, node][:, None], t.visits[ar, node][:, None],
                     t.actions[ar, node] >= 0, prior_sums, xp)

    def _root_edges(self) -> Edges:
        t = self.tree
        return Edges(t.N[:, 0], t.W[:, 0], t.prior[:, 0], t.logits[:, 0], t.value[:, 0][:, None],
                     t.visits[:, 0][:, None], t.actions[:, 0] >= 0, prior_sums, xp)

    def _pick(self, node: torch.Tensor) -> torch.Tensor:
        return self.rule.pick_inner(self._edges(node))

    def _pick_root(self, going: torch.Tensor) -> torch.Tensor:
        return self.rule.pick_root(self._root_edges(), self.done, going)

    def _root_ready(self) -> None:
        """Start the root rule on the expanded roots (noise, Gumbel candidates)."""
        prior = self.rule.start(self._root_edges())
        if prior is not None:
            self.tree.prior[:, 0] = prior

    # -- results ------------------------------------------------------------------------
    def policy_target(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (legal actions (B, K), -1 padded; target probabilities (B, K), 0 padded)."""
        actions = self.tree.actions[:, 0]
        return actions, torch.where(actions >= 0, self.rule.target(self._root_edges()), 0.0)

    def choose(self, temperature: torch.Tensor | float = 0.0) -> torch.Tensor:
        """Return each game's chosen edge (index into ``policy_target``'s actions)."""
        return self.rule.choose(self._root_edges(), temperature)


def run_batched_search(engine: BatchedGame, evaluate: Evaluator, roots: BatchState,
                       cfg: MCTSConfig, generator: torch.Generator,
                       simulations: int | None = None, add_noise: bool = False) -> BatchedSearch:
    """Search every game of ``roots`` from scratch; return the finished search."""
    sims = cfg.simulations if simulations is None else simulations
    tree = new_tree(engine, roots, tree_capacity(cfg, sims))
    return BatchedSearch(engine, cfg, evaluate, generator, tree, add_noise, sims).run()
