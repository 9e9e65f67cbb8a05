"""Self-play on a batched engine: all games stepped, searched and evaluated as tensors.

:func:`play_games_batched` is the batched twin of
:func:`boardzoo.training.selfplay.play_games` (``selfplay.engine: batched``):
``selfplay.parallel_games`` games run as one :class:`BatchState`, each move is
one :class:`~.batched_mcts.BatchedSearch` over all of them (one ``step`` and
one network call per simulation for every game at once), and a finished game's
slot takes the next seed, or is dropped when none is left. The examples are
the same :class:`~.selfplay.GameRecord` s (observation, legal actions, search
policy, player, outcome, ``max_moves`` capping and ``selfplay.adjudicate``,
``temperature_moves``, the root search's value, the priors of ``model.value_prior``
and ``model.policy_prior`` computed in torch by :class:`~.knowledge.Knowledge`), so the
replay buffer and the trainer take them unchanged. As in the reference path, a
game whose position has a single legal action plays it without a search or a
network call and records no example (``GameRecord.forced``): while any game is
in that state, those games step alone and the others wait for the next search.

Determinism: all randomness comes from one ``torch.Generator`` seeded from the
list of seeds, so the same seeds, config and network give the same records on
a given device. Unlike the reference path a game's randomness is shared with
the games played beside it: a seed alone does not fix its game.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from boardzoo.envs.core.batched import BatchedGame, BatchState

from .config import Config
from .knowledge import Knowledge
from .search.batched import BatchedSearch, Evaluator, NetBatchEvaluator, tree_capacity
from .search.batched_tree import Tree, new_tree, reroot
from .search.leaf import SearchedBatchLeaves
from .search.roots import reuses_tree, root_rule
from .selfplay import GameRecord, adjudicate


def generator_seed(seeds: list[int]) -> int:
    """Return the seed of the generator that plays the games of ``seeds``."""
    return int(np.random.SeedSequence([int(s) for s in seeds]).generate_state(1, np.uint64)[0])


def play_games_batched(net: torch.nn.Module | None, engine: BatchedGame, cfg: Config,
                       seeds: list[int], progress: Callable[[int], None] | None = None,
                       evaluate: Evaluator | None = None) -> list[GameRecord]:
    """Play one self-play game per seed; return the records in seed order.

    ``evaluate`` replaces the network (``net`` may then be None).
    """
    if not seeds:
        return []
    knowledge = Knowledge.for_config(cfg)
    if evaluate is None:
        if net is None:
            raise ValueError("play_games_batched needs a network or an evaluator")
        evaluate = NetBatchEvaluator(net, engine, knowledge)
    if cfg.mcts.leaf_depth:
        evaluate = SearchedBatchLeaves(evaluate, cfg.game, engine, cfg.mcts.leaf_depth)
    return _Games(engine, cfg, seeds, evaluate, knowledge, progress).play()


class _Games:
    """The games of one :func:`play_games_batched` call: which game each slot plays, the
    records, the positions and the subtrees kept for reuse."""

    def __init__(self, engine: BatchedGame, cfg: Config, seeds: list[int], evaluate: Evaluator,
                 knowledge: Knowledge, progress: Callable[[int], None] | None) -> None:
        self.engine, self.cfg, self.seeds = engine, cfg, seeds
        self.evaluate, self.knowledge, self.progress = evaluate, knowledge, progress
        mc, dev = cfg.mcts, engine.device
        self.gen = torch.Generator(device=dev)
        self.gen.manual_seed(generator_seed(seeds))
        self.cap = tree_capacity(mc, mc.simulations)
        self.reuse = reuses_tree(mc)
        width = min(cfg.selfplay.parallel_games, len(seeds))
        self.slots = list(range(width))  # the game index each slot plays
        self.moves = [0] * width
        self.records = {i: GameRecord(int(seeds[i])) for i in self.slots}
        self.queued = width
        self.results: dict[int, GameRecord] = {}
        self.states = engine.initial(width)
        self.kept: Tree | None = None  # subtrees reused as the next roots (puct) where ``keep``
        self.keep = torch.zeros(width, dtype=torch.bool, device=dev)

    def play(self) -> list[GameRecord]:
        """Play every game to its end; return the records in seed order."""
        while self.slots:
            legal_mask = self.engine.legal_mask(self.states)
            # (a slot never holds a finished game; a byte sum is ~30x a bool sum's speed)
            forced = legal_mask.view(torch.uint8).sum(1, dtype=torch.int32) == 1
            if bool(forced.any()):
                after, search, edge = self._play_forced(legal_mask, forced), None, None
                moved = forced.cpu().tolist()
            else:
                after, search, edge = self._search()
                moved = [True] * len(self.slots)
            finished = self._score(after, moved, search is None)
            self._next(after, finished, search, edge)
        return [self.results[i] for i in range(len(self.seeds))]

    def _play_forced(self, legal_mask: torch.Tensor, forced: torch.Tensor) -> BatchState:
        """Play the only legal action of the ``forced`` games, with no search and no example;
        return all games' next positions (the others unchanged)."""
        states = self.states
        idx = forced.nonzero().squeeze(1)
        only = legal_mask[idx].nonzero()[:, 1]  # one legal action per row, rows in order
        stepped = self.engine.step(states.index(idx), only)
        self.keep = self.keep & ~forced
        return states.where(forced, stepped.index((forced.cumsum(0) - 1).clamp(min=0)))

    def _search(self) -> tuple[BatchState, BatchedSearch, torch.Tensor]:
        """Search every game, record its example and play the chosen action; return the
        next positions, the search and the chosen edges."""
        engine, states, dev = self.engine, self.states, self.engine.device
        tree = new_tree(engine, states, self.cap)
        if self.kept is not None and bool(self.keep.any()):
            tree = tree.where(self.keep, self.kept)
        mc, sp = self.cfg.mcts, self.cfg.selfplay
        sims, noise, full = mc.simulations, True, None
        if sp.full_search_prob < 1:  # playout caps: which games get the full search
            # (no draw when the randomisation is off: the games stay those of earlier versions)
            full = torch.rand(len(self.slots), generator=self.gen, dtype=torch.float64,
                              device=dev) < sp.full_search_prob
            sims = torch.where(full, mc.simulations, sp.fast_simulations)
            noise = True if root_rule(mc.root).noise_in_fast_search else full
        search = BatchedSearch(engine, mc, self.evaluate, self.gen, tree, add_noise=noise,
                               simulations=sims).run()
        actions, probs = search.policy_target()
        temps = torch.tensor([1.0 if m < sp.temperature_moves else 0.0
                              for m in self.moves], dtype=torch.float64, device=dev)
        edge = search.choose(temps)
        self._record(search, actions, probs, None if full is None else full.cpu().tolist())
        return engine.step(states, actions.gather(1, edge[:, None]).squeeze(1)), search, edge

    def _record(self, search: BatchedSearch, actions: torch.Tensor, probs: torch.Tensor,
                full: list[bool] | None) -> None:
        """Append each game's example: observation, legal actions, search policy, player,
        root value and (with priors) the position's priors; a game whose search was a fast
        one (``full`` False) only counts it."""
        engine, states, t = self.engine, self.states, search.tree
        obs = engine.observation(states).cpu().numpy()
        players = engine.to_move(states).cpu().tolist()
        legal = (actions >= 0).sum(1).cpu().tolist()
        acts_np = actions.cpu().numpy().astype(np.int32)
        probs_np = probs.cpu().numpy().astype(np.float32)
        root_values = (t.W[:, 0].sum(1) / t.N[:, 0].sum(1).clamp(min=1)).cpu().tolist()
        value_prior, action_prior = self.knowledge.batched(engine, states)
        if value_prior is not None:
            value_prior = value_prior.cpu().tolist()
        if action_prior is not None:
            action_prior = action_prior.cpu().numpy()
        for k, game in enumerate(self.slots):
            rec, n = self.records[game], legal[k]
            if full is not None and not full[k]:
                rec.fast += 1
                continue
            rec.obs.append(obs[k].copy())
            rec.actions.append(acts_np[k, :n].copy())
            rec.probs.append(probs_np[k, :n].copy())
            rec.players.append(int(players[k]))
            rec.root_values.append(float(root_values[k]))
            if value_prior is not None:
                rec.priors.append(float(value_prior[k]))
            if action_prior is not None:
                rec.action_priors.append(action_prior[k, acts_np[k, :n]])

    def _score(self, after: BatchState, moved: list[bool], forced: bool) -> list[int]:
        """Count the action each moved game played, score the games it ended (by the rules
        or ``max_moves``, adjudicated as in the reference path); return their slots."""
        sp, engine = self.cfg.selfplay, self.engine
        over = engine.terminated(after).cpu().tolist()
        ret0 = engine.returns(after)[:, 0].cpu().tolist()
        finished: list[int] = []
        for k, game in enumerate(self.slots):
            if not moved[k]:
                continue
            rec = self.records[game]
            rec.forced += int(forced)
            self.moves[k] += 1
            if over[k]:
                rec.outcome = float(ret0[k])
            elif self.moves[k] >= sp.max_moves:
                rec.capped = True
                if sp.adjudicate:
                    idx = torch.tensor([k], device=engine.device)
                    state = engine.to_states(after.index(idx))[0]
                    rec.outcome = adjudicate(self.cfg.game, engine.action_game.game_state(state))
            else:
                continue
            rec.length = self.moves[k]
            finished.append(k)
            self.results[game] = rec
            if self.progress is not None:
                self.progress(1)
        return finished

    def _next(self, after: BatchState, finished: list[int], search: BatchedSearch | None,
              edge: torch.Tensor | None) -> None:
        """Move on to ``after``: finished slots take the next games (or are dropped when
        none is left) and, with tree reuse, the played children's subtrees are kept."""
        dev, seeds = self.engine.device, self.seeds
        done = torch.zeros(len(self.slots), dtype=torch.bool, device=dev)
        done[finished] = True
        refill = finished[: len(seeds) - self.queued]
        if refill:
            fresh = torch.zeros_like(done)
            fresh[refill] = True
            after = after.where(fresh, self.engine.initial(len(self.slots)))
            for k in refill:
                self.slots[k], self.moves[k] = self.queued, 0
                self.records[self.queued] = GameRecord(int(seeds[self.queued]))
                self.queued += 1
        self.states = after
        if search is not None and self.reuse:  # keep the chosen child's subtree, as mcts.py
            t = search.tree
            child = t.children[search.ar, 0, edge]
            self.keep = (child >= 0) & ~done & t.expanded[search.ar, child.clamp(min=0)]
            self.kept = reroot(t, child.clamp(min=0), self.cap - self.cfg.mcts.simulations) \
                if bool(self.keep.any()) else None
        retired = finished[len(refill):]
        if retired:
            gone = set(retired)
            stay = [k for k in range(len(self.slots)) if k not in gone]
            idx = torch.tensor(stay, dtype=torch.int64, device=dev)
            self.states, self.keep = self.states.index(idx), self.keep[idx]
            self.kept = self.kept.index(idx) if self.kept is not None else None
            self.slots = [self.slots[k] for k in stay]
            self.moves = [self.moves[k] for k in stay]
