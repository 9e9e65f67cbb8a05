"""Self-play: many games advanced together, their search leaves evaluated in one batch.

:func:`play_games` plays one game per seed with the network and returns the
training examples of each game. A position with a single legal action (about
40% of Whistling's: a capture chain often has one way on) is played at once,
without a network call or a search, and gives no example: its policy target
would be that one action, and its value is the next position's
(``GameRecord.forced`` counts these actions). With playout-cap randomisation
(``selfplay.full_search_prob`` < 1) each other move gets the full search with that
probability and is an example; the rest get a fast search and are played only
(``GameRecord.fast``). ``parallel_games`` games run interleaved in
one process: every round, each game's search walks to one leaf, and all the
leaves go through the network as one batch (batched inference). With
``workers > 1`` the games are split over worker processes
(:class:`SelfPlayPool`), each running the same batched loop with one torch
thread; ``selfplay.backend: ray`` runs the same chunks as Ray tasks
(:class:`RaySelfPlayPool`, on a local Ray instance or a cluster).

Determinism: every game draws its randomness (Dirichlet or Gumbel noise,
temperature sampling) from a generator seeded by its own seed, and games are
assigned to batches and workers in a fixed order, so the same config, network
and seeds give the same games on a CPU. Changing ``parallel_games`` or
``workers`` changes the batch shapes, which can change results in the last
floating-point bits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from boardzoo.agents.evaluation import static_value

from .config import Config
from .knowledge import Knowledge
from .search.leaf import SearchedLeaves
from .search.roots import reuses_tree, root_rule
from .search.tree import Node, Search, evaluate_leaves


@dataclass
class GameRecord:
    """The examples of one self-play game."""

    seed: int
    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)  # legal actions at each position
    probs: list[np.ndarray] = field(default_factory=list)  # search policy over those actions
    players: list[int] = field(default_factory=list)
    #: +1/-1/0 for player 0 at the end (0 for a game stopped at ``max_moves``, or the
    #: adjudicated value in [-1, 1] with ``selfplay.adjudicate``).
    outcome: float = 0.0
    #: Actions played, forced ones included (``len(obs)`` counts the searched ones).
    length: int = 0
    capped: bool = False
    #: Forced actions: positions with a single legal action, played without a network call
    #: or a search and kept out of the examples (their policy target is that one action).
    forced: int = 0
    #: Actions played after a fast search (``selfplay.full_search_prob`` < 1), not examples:
    #: ``len(obs) + fast + forced == length``.
    fast: int = 0
    #: Static-evaluation prior of each position (``model.value_prior`` only, else empty).
    priors: list[float] = field(default_factory=list)
    #: Action prior of each position's legal actions (``model.policy_prior`` only, else empty).
    action_priors: list[np.ndarray] = field(default_factory=list)
    #: The root search's value of each position for the player to act (its mean backed-up
    #: value; empty where the record was not made by a search).
    root_values: list[float] = field(default_factory=list)

    def outcomes(self) -> np.ndarray:
        """The outcome from the view of the player who acted at each position (float32);
        the replay buffer mixes the value targets from these and ``root_values``
        (:func:`boardzoo.training.buffer.value_targets`)."""
        p = np.asarray(self.players)
        return np.where(p == 0, self.outcome, -self.outcome).astype(np.float32)


class NetEvaluator:
    """Batched network inference over action states: states -> (logits, values) as numpy.

    ``policy_temperature`` T divides the logits (the search's prior becomes
    softmax(logits / T)); 1 leaves them as the network gives them. ``knowledge`` computes
    the priors the network takes (by default from the network's own settings).
    """

    def __init__(self, net: torch.nn.Module, game, policy_temperature: float = 1.0,
                 knowledge: Knowledge | None = None) -> None:
        self.net = net
        self.game = game
        self.policy_temperature = float(policy_temperature)
        self.knowledge = Knowledge.for_net(net) if knowledge is None else knowledge
        self.calls = 0
        self.positions = 0

    def __call__(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self._infer(states, lambda obs, priors: self.net(obs, **priors))
        return logits.numpy(), values.numpy()

    def evaluate_at(self, states: list[Any], legal: list[np.ndarray],
                    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Return (each state's logits of its actions ``legal[i]``, values): those of
        :meth:`__call__`, up to rounding, without scoring every action."""
        sizes = [len(a) for a in legal]
        rows = torch.from_numpy(np.repeat(np.arange(len(states)), sizes))
        actions = torch.from_numpy(np.concatenate(legal) if legal else np.zeros(0, np.int64))
        logits, values = self._infer(
            states, lambda obs, priors: self.net.forward_at(obs, rows, actions, **priors))
        return np.split(logits.numpy(), np.cumsum(sizes)[:-1]), values.numpy()

    def _infer(self, states: list[Any], run: Callable[..., tuple[torch.Tensor, torch.Tensor]],
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``run(observations, priors)`` of the states in inference mode, its logits
        divided by the policy temperature, and count the call."""
        game = self.game
        obs = np.stack([game.observation(s, game.to_move(s)) for s in states])
        if self.net.training:
            self.net.eval()
        priors = Knowledge.inputs(*self.knowledge.reference(states))
        with torch.inference_mode():
            logits, values = run(torch.from_numpy(obs), priors)
        if self.policy_temperature != 1.0:
            logits = logits / self.policy_temperature
        self.calls += 1
        self.positions += len(states)
        return logits, values


def adjudicate(game_name: str, state) -> float:
    """Score an unfinished game for player 0 in [-1, 1] by the game's static evaluation."""
    v = static_value(game_name, state)
    return v if state.to_move == 0 else -v


def selfplay_seed(seed: int, iteration: int, index: int) -> int:
    """Return the seed of self-play game ``index`` of ``iteration`` (stable across runs)."""
    return int(np.random.SeedSequence([seed, iteration, index]).generate_state(1)[0])


class _Slot:
    """One game in progress. ``search`` is None once the game is over."""

    def __init__(self, game, cfg: Config, seed: int, knowledge: Knowledge) -> None:
        self.game = game
        self.cfg = cfg
        self.knowledge = knowledge
        self.rng = np.random.default_rng(seed)
        self.record = GameRecord(seed)
        self.state = game.initial_state()
        self.moves = 0
        self.search: Search | None = None
        p = cfg.selfplay.full_search_prob
        #: the fast search's settings (playout-cap randomisation), None when it is off
        self.fast_mcts = None if p >= 1 else replace(
            cfg.mcts, simulations=cfg.selfplay.fast_simulations)
        self.full = True  # whether the search in progress is a full one
        if not self._play_forced():
            self.search = self._new_search(None)

    def _new_search(self, root: Node | None) -> Search:
        # why no draw when the randomisation is off: the games stay those of earlier versions
        self.full = (self.fast_mcts is None
                     or self.rng.random() < self.cfg.selfplay.full_search_prob)
        mcts = self.cfg.mcts if self.full else self.fast_mcts
        # a fast PUCT search has no Dirichlet noise (KataGo); Gumbel's noise is how its root
        # samples the move played, so a fast Gumbel search keeps it
        noise = self.full or root_rule(mcts.root).noise_in_fast_search
        s = Search(self.game, mcts, self.rng, root if root is not None else self.state,
                   add_noise=noise)
        s.prepare_root()
        return s

    def _ended(self) -> bool:
        """Score the game if the last action ended it (rules or ``max_moves``)."""
        game, cfg, rec = self.game, self.cfg, self.record
        if game.is_terminal(self.state):
            rec.outcome = float(game.returns(self.state)[0])
        elif self.moves >= cfg.selfplay.max_moves:
            rec.capped = True
            if cfg.selfplay.adjudicate:
                rec.outcome = adjudicate(cfg.game, game.game_state(self.state))
        else:
            return False
        rec.length = self.moves
        return True

    def _play_forced(self) -> bool:
        """Play actions that are the only legal one, with no search and no example (the
        policy target would be trivial); return True when that ended the game."""
        game = self.game
        while True:
            legal = game.legal_actions(self.state)
            if len(legal) != 1:
                return False
            self.state, _ = game.apply_action(self.state, int(legal[0]))
            self.moves += 1
            self.record.forced += 1
            if self._ended():
                return True

    def step(self) -> bool:
        """Play the searched action; return True when the game is over."""
        search, cfg, game = self.search, self.cfg, self.game
        root = search.root
        actions, probs = search.policy_target()
        rec = self.record
        if self.full:
            self._keep_example(root, actions, probs)
        else:
            rec.fast += 1
        temperature = 1.0 if self.moves < cfg.selfplay.temperature_moves else 0.0
        i = search.choose(temperature)
        child = root.children[i]
        self.state, _ = game.apply_action(self.state, int(actions[i]))
        self.moves += 1
        before = self.moves
        if self._ended() or self._play_forced():
            self.search = None
            return True
        reuse = (reuses_tree(cfg.mcts) and self.moves == before
                 and child is not None and child.expanded)
        self.search = self._new_search(child if reuse else None)
        return False

    def _keep_example(self, root: Node, actions: np.ndarray, probs: np.ndarray) -> None:
        """Add the searched position ``root`` to the record as a training example."""
        game, rec = self.game, self.record
        rec.obs.append(game.observation(root.state, root.player))
        rec.actions.append(actions.astype(np.int32))
        rec.probs.append(probs.astype(np.float32))
        rec.players.append(root.player)
        value_prior, action_prior = self.knowledge.root(root.state, actions)
        if value_prior is not None:
            rec.priors.append(value_prior)
        if action_prior is not None:
            rec.action_priors.append(action_prior)
        rec.root_values.append(float(root.W.sum() / max(root.N.sum(), 1)))


def play_games(net: torch.nn.Module | None, game, cfg: Config, seeds: list[int],
               progress: Callable[[int], None] | None = None,
               evaluate: Callable[[list[Any]], tuple[np.ndarray, np.ndarray]] | None = None,
               ) -> list[GameRecord]:
    """Play one self-play game per seed; return the records in seed order.

    ``evaluate`` (states -> (logits, values)) replaces the network (``net`` may then be None).
    """
    knowledge = Knowledge.for_config(cfg)  # one per run of games: records reuse its memo
    if evaluate is None:
        if net is None:
            raise ValueError("play_games needs a network or an evaluator")
        evaluate = NetEvaluator(net, game, knowledge=knowledge)
    if cfg.mcts.leaf_depth:
        evaluate = SearchedLeaves(evaluate, cfg.game, game, cfg.mcts.leaf_depth)
    queue = list(enumerate(seeds))[::-1]
    slots: list[tuple[int, _Slot]] = []
    results: dict[int, GameRecord] = {}
    width = cfg.selfplay.parallel_games
    while queue or slots:
        while queue and len(slots) < width:
            idx, seed = queue.pop()
            slot = _Slot(game, cfg, seed, knowledge)
            if slot.search is None:  # over before its first search (forced actions only)
                results[idx] = slot.record
                if progress is not None:
                    progress(1)
            else:
                slots.append((idx, slot))
        leaves: list[tuple[_Slot, Node]] = []
        for _, slot in slots:
            while not slot.search.finished():
                leaf = slot.search.select()
                if leaf is not None:
                    leaves.append((slot, leaf))
                    break
        if leaves:
            evaluate_leaves(evaluate, game, [(slot.search, leaf) for slot, leaf in leaves])
        still: list[tuple[int, _Slot]] = []
        for idx, slot in slots:
            if slot.search.finished() and slot.step():
                results[idx] = slot.record
                if progress is not None:
                    progress(1)
            else:
                still.append((idx, slot))
        slots = still
    return [results[i] for i in range(len(seeds))]
