"""The search on per-game Python trees (numpy edge arrays): one tree, driven from outside.

The search runs on *action states* (one edge = one action; for Whistling a
capture chain is several edges by the same player). Every node keeps its
edges' statistics from the view of the player who acts at that node
(``game.to_move(state)``), and backup converts the leaf value to each node's
player, so nothing assumes that players alternate. How the root and inner nodes
pick, what the search teaches and what it plays is the root rule's
(:mod:`.roots`, shared with the batched backend :mod:`.batched`).

A search is driven from outside so that many trees can share one network
batch: :meth:`Search.select` walks to a leaf and returns it when it needs a
network evaluation (or backs up a terminal result itself and returns None),
and :meth:`Search.expand` gives the leaf its priors and value and backs up.
:func:`run_search` drives one tree with a network (evaluation, agents);
self-play drives many (:mod:`boardzoo.training.selfplay`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..config_schema import MCTSConfig
from .formulas import edge_q
from .roots import Edges, RootRule, root_rule


class Node:
    __slots__ = ("state", "player", "actions", "children", "logits", "prior", "N", "W",
                 "visits", "value", "terminal", "returns", "expanded")

    def __init__(self, game, state: Any) -> None:
        self.state = state
        self.terminal = game.is_terminal(state)
        self.player = game.to_move(state)
        self.returns = game.returns(state) if self.terminal else None
        self.actions: np.ndarray | None = None
        self.children: list[Node | None] = []
        self.logits: np.ndarray | None = None
        self.prior: np.ndarray | None = None
        self.N: np.ndarray | None = None
        self.W: np.ndarray | None = None
        self.visits = 0
        #: Network value of this node for ``player`` (set on expansion); ``visits`` = sum of N.
        self.value = 0.0
        self.expanded = False

    def q(self) -> np.ndarray:
        """Mean value of each edge for ``player`` (0 where unvisited)."""
        return edge_q(np, self.N, self.W, 0.0)


class NumpyRandomness:
    """The root rules' random draws from a numpy ``Generator``."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def gumbel(self, valid: np.ndarray) -> np.ndarray:
        return self.rng.gumbel(size=valid.shape[-1])

    def dirichlet(self, alpha: float, valid: np.ndarray) -> np.ndarray:
        n = valid.shape[-1]
        # drawn only where it is used: the generator's stream is that of earlier releases
        return self.rng.dirichlet([alpha] * n) if n > 1 else np.zeros(n)

    def sample(self, p: np.ndarray) -> int:
        return int(self.rng.choice(len(p), p=p))


def prior_sums(prior: np.ndarray, q: np.ndarray, visited: np.ndarray) -> tuple[float, float]:
    """Sum of prior * q and of prior over the visited edges (a BLAS dot over those alone);
    (0, 1) when none is visited."""
    pv = prior[visited]
    if not len(pv):
        return 0.0, 1.0
    return pv @ q[visited], pv.sum()


def node_edges(node: Node, valid: np.ndarray | None = None) -> Edges:
    """Return ``node``'s edges as the root rules see them."""
    return Edges(node.N, node.W, node.prior, node.logits, node.value, np.float64(node.visits),
                 valid, prior_sums, np)


class Search:
    """One search tree over ``game`` from ``root_state``."""

    def __init__(self, game, cfg: MCTSConfig, rng: np.random.Generator, root: Node | Any,
                 add_noise: bool = True, simulations: int | None = None,
                 skip_forced: bool = False,
                 winning_action: Callable[[Any], int | None] | None = None) -> None:
        self.game = game
        self.cfg = cfg
        self.rng = rng
        self.root = root if isinstance(root, Node) else Node(game, root)
        self.add_noise = add_noise
        self.simulations = cfg.simulations if simulations is None else simulations
        self.done = 0  # simulations finished
        self._pending: list[tuple[Node, int]] | None = None
        #: Paths of the leaves :meth:`select_leaves` handed out, by leaf id, holding virtual loss.
        self._batched: dict[int, list[tuple[Node, int]]] = {}
        #: The root rule (``cfg.root``): how nodes pick, the target, the move played.
        self.rule: RootRule = root_rule(cfg.root)(cfg, self.simulations, add_noise,
                                                  NumpyRandomness(rng))
        self._started = False
        self._root_valid: np.ndarray | None = None
        #: Play forced actions below the root through (``play.skip_forced``).
        self.skip_forced = skip_forced
        #: ``play.win_in_one``: finds an action that wins at once (None: no such check).
        self.winning_action = winning_action

    def _through_forced(self, state: Any) -> Any:
        """Return ``state`` after the actions it forces (positions with one legal action,
        e.g. a hop a Whistling chain must make), played in turn until a choice or the end."""
        game = self.game
        while not game.is_terminal(state):
            legal = game.legal_actions(state)
            if len(legal) != 1:
                return state
            state, _ = game.apply_action(state, int(legal[0]))
        return state

    def _mark_won(self, node: Node) -> None:
        """Make ``node`` a won end for its player when that player can win at once: the
        search then values it exactly, without the network, as it values a finished game."""
        if not node.terminal and self.winning_action(node.state) is not None:
            node.terminal = True
            node.returns = (1.0, -1.0) if node.player == 0 else (-1.0, 1.0)

    # -- driving -------------------------------------------------------------------------
    def finished(self) -> bool:
        return self.done >= self.simulations

    def select(self) -> Node | None:
        """Walk from the root to a leaf. Return the leaf if it needs the network; else back up
        its terminal result and return None."""
        node = self.root
        path: list[tuple[Node, int]] = []
        rule = self.rule
        while node.expanded and not node.terminal:
            if path:
                i = int(rule.pick_inner(node_edges(node)))
            else:
                i = int(rule.pick_root(self._root_edges(), self.done, True))
            child = node.children[i]
            if child is None:
                state, _ = self.game.apply_action(node.state, int(node.actions[i]))
                if self.skip_forced:  # no simulation is spent on forced actions
                    state = self._through_forced(state)
                child = Node(self.game, state)
                if self.winning_action is not None:
                    self._mark_won(child)
                node.children[i] = child
            path.append((node, i))
            node = child
        if node.terminal:
            self._backup(path, node.returns[0])
            return None
        self._pending = path
        return node

    def select_leaves(self, size: int) -> list[Node]:
        """Walk to up to ``size`` distinct leaves for one network batch (PUCT roots only).

        Each walk leaves a virtual loss on its path (a visit valued as a loss for the player
        at each node), so the next walk turns elsewhere; :meth:`expand` takes it back before
        backing up the leaf's value. Terminal ends are backed up at once. Gathering stops at
        the budget, or when a walk reaches a leaf already in the batch."""
        leaves: list[Node] = []
        while len(leaves) < size and self.done + len(leaves) < self.simulations:
            leaf = self.select()
            if leaf is None:
                continue
            path, self._pending = self._pending or [], None
            if id(leaf) in self._batched:
                break
            self._virtual_loss(path, 1)
            self._batched[id(leaf)] = path
            leaves.append(leaf)
        return leaves

    def _virtual_loss(self, path: list[tuple[Node, int]], sign: int) -> None:
        for node, i in path:
            node.N[i] += sign
            node.W[i] -= sign
            node.visits += sign

    def expand(self, leaf: Node, logits: np.ndarray, value: float,
               actions: np.ndarray | None = None) -> None:
        """Give ``leaf`` its priors (full logits vector, or with ``actions``, the leaf's legal
        actions, the logits of those alone) and value (for its player); back up."""
        if not leaf.expanded:
            self._expand_node(leaf, logits, value, actions)
        batched = self._batched.pop(id(leaf), None)
        if batched is not None:
            self._virtual_loss(batched, -1)
            path = batched
        else:
            path, self._pending = self._pending or [], None
        if leaf is self.root and not path:
            self.prepare_root()
        v0 = value if leaf.player == 0 else -value
        self._backup(path, v0)

    # -- internals ----------------------------------------------------------------------
    def _expand_node(self, node: Node, logits: np.ndarray, value: float,
                     actions: np.ndarray | None = None) -> None:
        if actions is None:
            actions = np.asarray(self.game.legal_actions(node.state), dtype=np.int64)
            logits = logits[actions]
        node.actions = actions
        lg = logits.astype(np.float64)
        node.logits = lg
        p = np.exp(lg - lg.max())
        node.prior = p / p.sum()
        node.N = np.zeros(len(actions))
        node.W = np.zeros(len(actions))
        node.children = [None] * len(actions)
        node.value = float(value)
        node.expanded = True

    def _root_edges(self) -> Edges:
        root = self.root
        if self._root_valid is None:  # the root's edges are fixed once it is expanded
            self._root_valid = np.ones(len(root.actions), dtype=bool)
        return node_edges(root, self._root_valid)

    def prepare_root(self) -> None:
        """Start the root rule once the root has priors (noise, Gumbel candidates); a root
        that arrives expanded (a reused subtree) starts at once."""
        if self.root.expanded and not self._started:
            self._started = True
            prior = self.rule.start(self._root_edges())
            if prior is not None:
                self.root.prior = prior

    def _backup(self, path: list[tuple[Node, int]], v0: float) -> None:
        for node, i in path:
            node.N[i] += 1
            node.W[i] += v0 if node.player == 0 else -v0
            node.visits += 1
        self.done += 1

    # -- results -----------------------------------------------------------------------
    def policy_target(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (legal actions, target probabilities) at the root."""
        root = self.root
        return root.actions, self.rule.target(self._root_edges())

    def choose(self, temperature: float) -> int:
        """Return the index (into root.actions) of the action to play."""
        return int(self.rule.choose(self._root_edges(), temperature))

    def settled(self, left: int) -> bool:
        """Whether ``left`` more simulations cannot change :meth:`choose` at temperature 0."""
        return bool(self.root.expanded and self.rule.settled(self._root_edges(), left))


def simulations_left(done: int, simulations: int, elapsed: float,
                     time_left: float | None) -> int:
    """Return how many more simulations a search can still run: what is left of its budget,
    and with a deadline (``time_left`` seconds away) at most what it finishes by then at the
    rate it has run so far (``done`` simulations in ``elapsed`` seconds), rounded up."""
    left = simulations - done
    if time_left is None or done <= 0:
        return left
    if time_left <= 0:
        return 0
    rate = done / elapsed if elapsed > 0 else math.inf
    return left if rate == math.inf else min(left, math.ceil(time_left * rate))


def run_search(game, net_eval, state_or_node, cfg: MCTSConfig, rng: np.random.Generator,
               simulations: int, add_noise: bool = False, deadline: float | None = None,
               skip_forced: bool = False,
               winning_action: Callable[[Any], int | None] | None = None,
               stop_early: bool = False, leaf_batch: int = 1) -> Search:
    """Run one search with ``net_eval(list of states) -> (logits (B, A), values (B,))``; stop
    early, after at least one simulation, once time.perf_counter() passes ``deadline``;
    ``skip_forced``: play forced actions below the root through; ``winning_action``: value
    positions below the root whose player can win at once as won (``play.win_in_one``);
    ``stop_early``: stop once the simulations left (:func:`simulations_left`) cannot change
    the move played (the root rule's ``settled``; ``play.stop_early``); ``leaf_batch`` > 1:
    evaluate up to that many leaves in one network call, spread by virtual loss (a PUCT
    root; not the same search as one leaf at a time)."""
    started = time.perf_counter()
    search = Search(game, cfg, rng, state_or_node, add_noise=add_noise, simulations=simulations,
                    skip_forced=skip_forced, winning_action=winning_action)
    search.prepare_root()
    while not search.finished():
        if deadline is not None and search.done and time.perf_counter() >= deadline:
            break
        if stop_early:
            now = time.perf_counter()
            left = simulations_left(search.done, search.simulations, now - started,
                                    None if deadline is None else deadline - now)
            if search.settled(left):
                break
        if leaf_batch > 1:
            leaves = search.select_leaves(leaf_batch)
            if leaves:
                evaluate_leaves(net_eval, game, [(search, leaf) for leaf in leaves])
            continue
        leaf = search.select()
        if leaf is not None:
            evaluate_leaves(net_eval, game, [(search, leaf)])
    return search


def evaluate_leaves(net_eval, game, leaves: list[tuple[Search, Node]]) -> None:
    """Evaluate the leaves of searches in one batch and expand them; an evaluator with
    ``evaluate_at(states, legal actions)`` scores only each leaf's legal actions."""
    states = [leaf.state for _, leaf in leaves]
    evaluate_at = getattr(net_eval, "evaluate_at", None)
    if evaluate_at is None:
        logits, values = net_eval(states)
        for k, (search, leaf) in enumerate(leaves):
            search.expand(leaf, logits[k], float(values[k]))
        return
    legal = [np.asarray(game.legal_actions(s), dtype=np.int64) for s in states]
    logits, values = evaluate_at(states, legal)
    for k, (search, leaf) in enumerate(leaves):
        search.expand(leaf, logits[k], float(values[k]), legal[k])
