"""Network-guided tree search over an ActionGame: PUCT (AlphaZero) and a Gumbel root.

The search runs on *action states* (one edge = one action; for Whistling a
capture chain is several edges by the same player). Every node keeps its
edges' statistics from the view of the player who acts at that node
(``game.to_move(state)``), and backup converts the leaf value to each node's
player, so nothing assumes that players alternate.

A search is driven from outside so that many trees can share one network
batch: :meth:`Search.select` walks to a leaf and returns it when it needs a
network evaluation (or backs up a terminal result itself and returns None),
and :meth:`Search.expand` gives the leaf its priors and value and backs up.
:func:`run_search` drives one tree with a network (evaluation, agents);
self-play drives many (:mod:`boardzoo.training.selfplay`).

Roots:

* ``puct``: AlphaZero's PUCT with Dirichlet noise at the root; the policy
  target is the visit distribution; the move is sampled from visits with
  temperature or taken as the most visited.
* ``gumbel``: Gumbel MuZero's root (Danihelka et al., 2022): sample ``m``
  actions without replacement by Gumbel-top-k on the prior logits (``m`` =
  ``gumbel_m``; without noise, when the search plays rather than explores, the
  top ``m`` by prior: play's ``gumbel_m``, :func:`.config.play_search`), split the
  simulations over them by sequential halving on ``g + logits + sigma(q)``,
  play the survivor; the policy target is ``softmax(logits + sigma(completed
  q))``, a policy improvement even when few actions were visited. Inner nodes
  use the paper's deterministic selection toward that improved policy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .config import MCTSConfig


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
        return np.where(self.N > 0, self.W / np.maximum(self.N, 1), 0.0)


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
        self._noise_added = False
        self._pending: list[tuple[Node, int]] | None = None
        self.gumbel = cfg.root == "gumbel"
        self._plan: list[int] = []  # gumbel: root edge indices still to visit this phase
        self._cands: np.ndarray | None = None
        self._g: np.ndarray | None = None
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
        while node.expanded and not node.terminal:
            i = self._pick_root() if not path else self._pick(node)
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

    def expand(self, leaf: Node, logits: np.ndarray, value: float,
               actions: np.ndarray | None = None) -> None:
        """Give ``leaf`` its priors (full logits vector, or with ``actions``, the leaf's legal
        actions, the logits of those alone) and value (for its player); back up."""
        if not leaf.expanded:
            self._expand_node(leaf, logits, value, actions)
        path, self._pending = self._pending or [], None
        if leaf is self.root and not path:
            self._root_ready()
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

    def _root_ready(self) -> None:
        """Called once the root has priors: add noise (puct) or plan the first phase (gumbel)."""
        root = self.root
        if self.gumbel:
            self._start_gumbel()
        elif self.add_noise and not self._noise_added and self.cfg.dirichlet_alpha > 0:
            n = len(root.actions)
            if n > 1:
                noise = self.rng.dirichlet([self.cfg.dirichlet_alpha] * n)
                f = self.cfg.dirichlet_fraction
                root.prior = (1 - f) * root.prior + f * noise
            self._noise_added = True

    def prepare_root(self) -> None:
        """Set up a root that arrived already expanded (reused subtree)."""
        if self.root.expanded:
            self._root_ready()

    def _backup(self, path: list[tuple[Node, int]], v0: float) -> None:
        for node, i in path:
            node.N[i] += 1
            node.W[i] += v0 if node.player == 0 else -v0
            node.visits += 1
        self.done += 1

    def _pick(self, node: Node) -> int:
        if self.gumbel:
            return self._pick_gumbel_inner(node)
        return self._pick_puct(node)

    def _pick_root(self) -> int:
        if self.gumbel:
            if not self._plan:
                self._next_phase()
            return self._plan.pop()
        return self._pick_puct(self.root)

    def _pick_puct(self, node: Node) -> int:
        n = node.N
        fpu = node.value - self.cfg.fpu_reduction
        q = np.where(n > 0, node.W / np.maximum(n, 1), fpu)
        u = self.cfg.c_puct * node.prior * (math.sqrt(max(node.visits, 1)) / (1 + n))
        return int(np.argmax(q + u))

    # -- gumbel ----------------------------------------------------------------------------
    def _sigma(self, node: Node, q: np.ndarray) -> np.ndarray:
        """Monotone transform of values in [-1, 1] (rescaled to [0, 1]) into logit units."""
        c = self.cfg
        return (c.gumbel_c_visit + (node.N.max() if len(node.N) else 0)) * c.gumbel_c_scale * (
            (q + 1) / 2)

    def completed_q(self, node: Node) -> np.ndarray:
        """Edge values for ``node.player`` with unvisited edges set to the mixed value v_mix."""
        n = node.N
        visited = n > 0
        total = n.sum()
        if visited.any():
            pv = node.prior[visited]
            qv = node.W[visited] / n[visited]
            v_mix = (node.value + total * (pv @ qv) / pv.sum()) / (1 + total)
        else:
            v_mix = node.value
        return np.where(visited, node.W / np.maximum(n, 1), v_mix)

    def improved_policy(self, node: Node) -> np.ndarray:
        """softmax(logits + sigma(completed q)) over ``node``'s legal actions."""
        z = node.logits + self._sigma(node, self.completed_q(node))
        p = np.exp(z - z.max())
        return p / p.sum()

    def _pick_gumbel_inner(self, node: Node) -> int:
        pi = self.improved_policy(node)
        return int(np.argmax(pi - node.N / (1 + node.N.sum())))

    def _start_gumbel(self) -> None:
        root = self.root
        n = len(root.actions)
        self._g = self.rng.gumbel(size=n) if self.add_noise else np.zeros(n)
        m = min(self.cfg.gumbel_m, n, self.simulations)
        order = np.argsort(-(self._g + root.logits), kind="stable")
        self._cands = order[:m]
        self._phases = max(1, math.ceil(math.log2(m))) if m > 1 else 1
        self._phase = 0
        self._plan = []

    def _gumbel_scores(self, idx: np.ndarray) -> np.ndarray:
        root = self.root
        q = self.completed_q(root)
        return self._g[idx] + root.logits[idx] + self._sigma(root, q)[idx]

    def _next_phase(self) -> None:
        """Halve the candidates (after the first phase) and plan the next phase's visits."""
        cands = self._cands
        if self._phase > 0 and len(cands) > 1:
            scores = self._gumbel_scores(cands)
            keep = max(1, len(cands) // 2)
            cands = cands[np.argsort(-scores, kind="stable")[:keep]]
            self._cands = cands
        left = self.simulations - self.done
        phases_left = max(1, self._phases - self._phase)
        per = max(1, left // (phases_left * len(cands)))
        self._phase += 1
        # visit each candidate ``per`` times, round-robin; popped from the end
        self._plan = [int(i) for _ in range(per) for i in cands][::-1]

    # -- results -----------------------------------------------------------------------
    def policy_target(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (legal actions, target probabilities) at the root."""
        root = self.root
        if self.gumbel:
            return root.actions, self.improved_policy(root)
        n = root.N
        if n.sum() == 0:
            return root.actions, root.prior.copy()
        return root.actions, n / n.sum()

    def choose(self, temperature: float) -> int:
        """Return the index (into root.actions) of the action to play."""
        root = self.root
        if self.gumbel:
            cands = self._cands if self._cands is not None else np.arange(len(root.actions))
            scores = self._gumbel_scores(cands)
            return int(cands[int(np.argmax(scores))])
        n = root.N
        if temperature <= 0 or n.sum() == 0:
            if n.sum() == 0:
                return int(np.argmax(root.prior))
            best = np.flatnonzero(n == n.max())
            if len(best) > 1:  # ties: highest mean value, then first
                q = root.q()[best]
                return int(best[int(np.argmax(q))])
            return int(best[0])
        p = n ** (1.0 / temperature)
        return int(self.rng.choice(len(n), p=p / p.sum()))


def run_search(game, net_eval, state_or_node, cfg: MCTSConfig, rng: np.random.Generator,
               simulations: int, add_noise: bool = False, deadline: float | None = None,
               skip_forced: bool = False,
               winning_action: Callable[[Any], int | None] | None = None) -> Search:
    """Run one search with ``net_eval(list of states) -> (logits (B, A), values (B,))``; stop
    early, after at least one simulation, once time.perf_counter() passes ``deadline``;
    ``skip_forced``: play forced actions below the root through; ``winning_action``: value
    positions below the root whose player can win at once as won (``play.win_in_one``)."""
    search = Search(game, cfg, rng, state_or_node, add_noise=add_noise, simulations=simulations,
                    skip_forced=skip_forced, winning_action=winning_action)
    search.prepare_root()
    while not search.finished():
        if deadline is not None and search.done and time.perf_counter() >= deadline:
            break
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
