"""Root rules: how a search picks at its root and inner nodes, what it teaches, what it plays.

A rule is written once over :class:`Edges` (a node's edge statistics as numpy
arrays or as torch tensors with one row per game) and drives either tree backend
(:mod:`.tree`, :mod:`.batched`); its randomness comes from the backend's
:class:`Randomness`, so each backend draws exactly what it drew before the two
searches shared their rules. Two rules, named by ``mcts.root``:

* ``puct`` (:class:`PuctRoot`): AlphaZero's PUCT everywhere, Dirichlet noise at the
  root; the policy target is the root's visit distribution; the move is sampled from
  visits with a temperature or is the most visited (ties: the best mean value).
* ``gumbel`` (:class:`GumbelRoot`): Gumbel MuZero's root (Danihelka et al., 2022):
  ``m`` actions sampled without replacement by Gumbel-top-k on the prior logits
  (without noise, the top ``m``), the simulations split over them by sequential
  halving on ``g + logits + sigma(q)``, the survivor played; the policy target is
  ``softmax(logits + sigma(completed q))``, and inner nodes use the paper's
  deterministic selection toward that policy.

Each rule declares the config keys it reads (:attr:`RootRule.keys` wherever it runs,
``selfplay_keys`` and ``play_keys`` where it is self-play's or play's root), so the
config's no-effect check asks the rules instead of repeating them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from . import formulas as f

if TYPE_CHECKING:  # why not at run time: the config schema imports the rules' keys
    from ..config_schema import MCTSConfig


@dataclass(slots=True)
class Edges:
    """One node's edges (``(K,)`` numpy arrays) or one node of each game (``(B, K)``
    tensors); per-node values broadcast over the edges (see :mod:`.formulas`)."""

    n: Any  #: visits of each edge
    w: Any  #: value sum of each edge, for the player acting at the node
    prior: Any  #: prior probabilities (0 on padding)
    logits: Any  #: prior logits (-inf on padding)
    value: Any  #: the node's network value for its player
    visits: Any  #: the node's visits (sum of n)
    valid: Any | None  #: real edges; None: all of them
    prior_sums: f.PriorSums  #: the backend's weighted sum (see :func:`.formulas.completed_q`)
    xp: Any  #: the backend's array namespace (see :mod:`.formulas`)


class Randomness(Protocol):
    """A backend's random draws (numpy ``Generator`` or ``torch.Generator``)."""

    def gumbel(self, valid: Any) -> Any:
        """Standard Gumbel noise on the valid edges, 0 elsewhere."""

    def dirichlet(self, alpha: float, valid: Any) -> Any:
        """Dirichlet(alpha) noise over each row's valid edges (rows with one valid edge
        may get anything: the noise is not used there)."""

    def sample(self, p: Any) -> Any:
        """One index per row of probabilities ``p``."""


class RootRule:
    """One search's root rule (it keeps the search's root state, e.g. Gumbel's candidates)."""

    #: ``mcts.root`` value that selects the rule.
    name: ClassVar[str]
    #: Config keys the rule reads wherever it is the root (self-play or play).
    keys: ClassVar[tuple[str, ...]] = ()
    #: Keys read only where it is self-play's root (``mcts.root``).
    selfplay_keys: ClassVar[tuple[str, ...]] = ()
    #: Keys read only where it is play's root (``play.root``, else ``mcts.root``).
    play_keys: ClassVar[tuple[str, ...]] = ()
    #: Whether self-play keeps the played child's subtree as the next root (with
    #: ``mcts.reuse_tree``).
    reuses_subtrees: ClassVar[bool] = False
    #: Whether a fast search (playout-cap randomisation) keeps the root noise.
    noise_in_fast_search: ClassVar[bool] = False
    #: Whether its searches may gather several leaves per network batch under a virtual
    #: loss (``checkpoint:...,batch=N``); Gumbel's halving counts simulations one by one.
    batches_leaves: ClassVar[bool] = False

    def __init__(self, cfg: MCTSConfig, simulations: Any, add_noise: Any,
                 draw: Randomness) -> None:
        """``simulations`` and ``add_noise``: for the search, or (batched) for each game."""
        self.cfg = cfg
        self.simulations = simulations
        self.add_noise = add_noise
        self.draw = draw

    def start(self, root: Edges) -> Any | None:
        """Prepare the expanded root; return its new prior (noise) or None to keep it."""
        return None

    def pick_root(self, root: Edges, done: Any, going: Any) -> Any:
        """Return the edge to take at the root of each game still ``going``."""
        return self.pick_inner(root)

    def pick_inner(self, node: Edges) -> Any:
        """Return the edge to take at an inner node."""
        raise NotImplementedError

    def target(self, root: Edges) -> Any:
        """Return the policy target over the root's edges."""
        raise NotImplementedError

    def choose(self, root: Edges, temperature: Any) -> Any:
        """Return the root edge to play."""
        raise NotImplementedError

    def settled(self, root: Edges, remaining: int) -> bool:
        """Whether ``remaining`` more simulations cannot change the edge :meth:`choose`
        plays at temperature 0 (``play.stop_early``); a rule without such a test says no."""
        return False


class PuctRoot(RootRule):
    """AlphaZero: PUCT, Dirichlet noise at the root, visit-count targets."""

    name = "puct"
    keys = ("mcts.c_puct", "mcts.fpu_reduction")
    selfplay_keys = ("mcts.dirichlet_alpha", "mcts.dirichlet_fraction", "mcts.reuse_tree",
                     "selfplay.temperature_moves")
    play_keys = ("play.stop_early",)
    reuses_subtrees = True
    batches_leaves = True

    def start(self, root: Edges) -> Any | None:
        c = self.cfg
        by_game = not isinstance(self.add_noise, bool)
        if not (by_game or self.add_noise) or c.dirichlet_alpha <= 0:
            return None
        xp = root.xp
        noise = self.draw.dirichlet(c.dirichlet_alpha, root.valid)
        on = xp.sum(xp.astype(root.valid, xp.int64), axis=-1, keepdims=True) > 1
        if by_game:
            on = on & self.add_noise[..., None]
        frac = c.dirichlet_fraction
        return xp.where(on, (1 - frac) * root.prior + frac * noise, root.prior)

    def pick_inner(self, node: Edges) -> Any:
        xp = node.xp
        c = self.cfg
        score = f.puct_scores(xp, node.n, node.w, node.prior, node.value, node.visits, c.c_puct,
                              c.fpu_reduction)
        return f.masked(xp, score, node.valid).argmax(axis=-1)

    def target(self, root: Edges) -> Any:
        xp = root.xp
        total = xp.sum(root.n, axis=-1, keepdims=True)
        return xp.where(total > 0, root.n / xp.maximum(total, 1), root.prior)

    def choose(self, root: Edges, temperature: Any) -> Any:
        """The most visited edge (ties: the best mean value, then the first; no visits:
        the best prior), or with ``temperature`` > 0 one sampled from visits ** (1 / T)."""
        xp = root.xp
        n, valid = root.n, root.valid
        total = xp.sum(n, axis=-1)
        most = xp.where(valid, n, -1.0)
        top = valid & (most == xp.max(most, axis=-1, keepdims=True))
        by_value = xp.argmax(xp.where(top, f.edge_q(xp, n, root.w, 0.0), -math.inf), axis=-1)
        by_prior = xp.argmax(xp.where(valid, root.prior, -math.inf), axis=-1)
        best = xp.where(total > 0, by_value, by_prior)
        temperature = xp.broadcast_to(
            xp.asarray(temperature, dtype=n.dtype, device=n.device), total.shape)
        sampled = (temperature > 0) & (total > 0)
        if not f.any_true(sampled):
            return best
        if best.ndim == 0:  # one tree (numpy)
            p = n ** (1.0 / temperature)
            return xp.asarray(self.draw.sample(p / xp.sum(p, axis=-1, keepdims=True)))
        rows = xp.nonzero(sampled)[0]
        p = n[rows] ** (1.0 / temperature[rows])[:, None]
        best[rows] = self.draw.sample(p / xp.sum(p, axis=-1, keepdims=True))
        return best


    def settled(self, root: Edges, remaining: int) -> bool:
        """The most visited edge is played (:meth:`choose`); once it leads every other by
        more than the simulations left, none can catch it, not even to a tie (Leela Chess
        Zero's "smart pruning"). One tree (one row of edges) only."""
        n = root.n if root.valid is None else root.n[root.valid]
        if n.shape[-1] < 2:
            return True
        ranked = root.xp.sort(n)
        return bool(ranked[-1] - ranked[-2] > remaining)


class GumbelRoot(RootRule):
    """Gumbel MuZero: Gumbel top-k and sequential halving at the root, improved-policy
    targets, deterministic inner selection."""

    name = "gumbel"
    keys = ("mcts.gumbel_c_visit", "mcts.gumbel_c_scale")
    selfplay_keys = ("mcts.gumbel_m",)
    play_keys = ("play.gumbel_m",)
    noise_in_fast_search = True  # the noise is how the root samples the move it plays

    def start(self, root: Edges) -> None:
        """Draw the Gumbel noise and the ``m`` candidates; plan nothing yet."""
        xp = self.xp = root.xp
        valid = root.valid
        if isinstance(self.add_noise, bool):
            self.g = self.draw.gumbel(valid) if self.add_noise else xp.zeros_like(root.logits)
        else:  # by game
            self.g = xp.where(self.add_noise[..., None], self.draw.gumbel(valid), 0.0)
        count = xp.sum(xp.astype(valid, xp.int64), axis=-1)
        cap = xp.minimum(xp.asarray(self.simulations, device=count.device), self.cfg.gumbel_m)
        m = xp.maximum(xp.minimum(count, cap), 1)
        key = xp.where(valid, -(self.g + root.logits), math.inf)
        self.cands = xp.argsort(key, axis=-1, stable=True)[..., : int(xp.max(m))]
        self.ncands = m
        self.phases = xp.maximum(f.bit_length(xp, m - 1), 1)  # ceil(log2(m)), at least 1
        self.phase = xp.zeros_like(m)
        self.phase_k = xp.zeros_like(m)  # visits made in this phase
        self.phase_total = xp.zeros_like(m)  # visits planned for this phase
        return None

    def pick_root(self, root: Edges, done: Any, going: Any) -> Any:
        """Visit the phase's candidates round-robin; start the next phase when one ends."""
        # (kept to a few operations: this runs once per simulation, on 0-d numpy arrays too)
        need = going & (self.phase_k >= self.phase_total)
        if f.any_true(need):
            self._next_phase(root, need, done)
        slot = self.phase_k % self.ncands  # ncands >= 1
        self.phase_k = self.phase_k + going
        return f.take(self.xp, self.cands, slot)

    def _next_phase(self, root: Edges, need: Any, done: Any) -> None:
        """Halve the candidates (after the first phase) and plan the next phase's visits:
        each candidate the same number of times, the simulations left spread evenly over
        the phases left."""
        xp = self.xp
        halve = need & (self.phase > 0) & (self.ncands > 1)
        if f.any_true(halve):
            order = xp.argsort(-self._scores(root), axis=-1, stable=True)
            self.cands = xp.where(halve[..., None], f.gather(xp, self.cands, order), self.cands)
            self.ncands = xp.where(halve, xp.maximum(self.ncands // 2, 1), self.ncands)
        left = self.simulations - done
        phases_left = xp.maximum(self.phases - self.phase, 1)
        per = xp.maximum(left // (phases_left * self.ncands), 1)
        self.phase_total = xp.where(need, per * self.ncands, self.phase_total)
        self.phase_k = xp.where(need, 0, self.phase_k)
        self.phase = self.phase + xp.astype(need, self.phase.dtype)

    def _scores(self, root: Edges) -> Any:
        """g + logits + sigma(completed q) of the candidates (-inf past the last)."""
        xp = self.xp
        c, cfg = self.cands, self.cfg
        q = f.completed_q(xp, root.n, root.w, root.prior, root.value, root.prior_sums)

        scores = f.gather(xp, self.g, c) + f.gather(xp, root.logits, c) + f.sigma(
            f.gather(xp, q, c), f.max_n(xp, root.n), cfg.gumbel_c_visit, cfg.gumbel_c_scale)
        slot = xp.arange(c.shape[-1], device=c.device)
        return xp.where(slot < self.ncands[..., None], scores, -math.inf)

    def pick_inner(self, node: Edges) -> Any:
        xp = node.xp
        pi = self._improved(node)
        score = f.gumbel_inner_scores(xp, pi, node.n)
        return f.masked(xp, score, node.valid).argmax(axis=-1)

    def _improved(self, node: Edges) -> Any:
        cfg = self.cfg
        return f.improved_policy(node.xp, node.n, node.w, node.prior, node.logits, node.value,
                                 cfg.gumbel_c_visit, cfg.gumbel_c_scale, node.prior_sums)

    def target(self, root: Edges) -> Any:
        return self._improved(root)

    def choose(self, root: Edges, temperature: Any = 0.0) -> Any:
        """The last survivor of sequential halving (the best score; no temperature)."""
        xp = self.xp
        best = xp.argmax(self._scores(root), axis=-1)
        return f.take(xp, self.cands, best)


#: The root rules by ``mcts.root`` name.
ROOT_RULES: dict[str, type[RootRule]] = {rule.name: rule for rule in (PuctRoot, GumbelRoot)}


def root_rule(name: str) -> type[RootRule]:
    """Return the root rule named ``name`` (``mcts.root``)."""
    return ROOT_RULES[name]


def reuses_tree(cfg: MCTSConfig) -> bool:
    """Whether self-play keeps the played child's subtree as the next root."""
    return cfg.reuse_tree and root_rule(cfg.root).reuses_subtrees
