"""Leaf values from a shallow alpha-beta search (``mcts.leaf_depth``, ``play.leaf_depth``).

The network's search asks an evaluator for each leaf's priors and value. These
wrappers keep the network's priors and replace its value by the value of an
alpha-beta search of ``depth`` turns from the leaf (the ``alphabeta:D`` agent's
search: the game's static evaluation at its own leaves), squashed as every static
value in boardzoo is, tanh(score / the game's eval scale), and +-1 for a forced
result. A two-turn search at every leaf is what made Ultima's 100-simulation search
beat ``alphabeta:2`` (docs/training_results.md, "the oracle").

Games whose actions are whole moves only (LOA, Ultima): there an action state is the
rules' position (the config refuses the key for Whistling, whose chains are several
actions).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from boardzoo.agents.alphabeta import MAX_DEPTH, WIN, searcher
from boardzoo.agents.evaluation import as_value, get_scale
from boardzoo.envs.core.game import GameState


class LeafSearch:
    """The searched value of a position for its side to move, in [-1, 1]."""

    def __init__(self, game: str, depth: int) -> None:
        self.depth = depth
        # the agent alphabeta:D builds: the compiled search where the game has one
        self.searcher = searcher(game, depth=depth)
        self.scale = get_scale(game)
        #: Positions valued (one alpha-beta search each).
        self.positions = 0

    def __call__(self, state: GameState) -> float:
        self.positions += 1
        score = self.searcher.search_value(state)
        if abs(score) >= WIN - MAX_DEPTH:  # a forced win or loss within the search
            return 1.0 if score > 0 else -1.0
        return as_value(score, self.scale)


class SearchedLeaves:
    """An evaluator over action states (:mod:`.tree`'s) with the inner evaluator's priors
    and :class:`LeafSearch` values."""

    def __init__(self, evaluate: Any, game: str, action_game: Any, depth: int) -> None:
        self.inner = evaluate
        self.action_game = action_game
        self.leaf = LeafSearch(game, depth)
        if hasattr(evaluate, "evaluate_at"):
            self.evaluate_at = self._evaluate_at

    def _values(self, states: list[Any]) -> np.ndarray:
        game = self.action_game
        return np.array([self.leaf(game.game_state(s)) for s in states], dtype=np.float32)

    def __call__(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        logits, _ = self.inner(states)
        return logits, self._values(states)

    def _evaluate_at(self, states: list[Any], legal: list[np.ndarray],
                     ) -> tuple[list[np.ndarray], np.ndarray]:
        logits, _ = self.inner.evaluate_at(states, legal)
        return logits, self._values(states)


class SearchedBatchLeaves:
    """The same over a batched engine's states (:mod:`.batched`'s evaluators)."""

    def __init__(self, evaluate: Any, game: str, engine: Any, depth: int) -> None:
        self.inner = evaluate
        self.engine = engine
        self.leaf = LeafSearch(game, depth)
        if hasattr(evaluate, "evaluate_at"):
            self.evaluate_at = self._evaluate_at

    def _values(self, batch: Any, like: torch.Tensor) -> torch.Tensor:
        game = self.engine.action_game
        values = [self.leaf(game.game_state(s)) for s in self.engine.to_states(batch)]
        return torch.tensor(values, dtype=like.dtype, device=like.device)

    def __call__(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = self.inner(batch)
        return logits, self._values(batch, values)

    def _evaluate_at(self, batch: Any, rows: torch.Tensor, actions: torch.Tensor,
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = self.inner.evaluate_at(batch, rows, actions)
        return logits, self._values(batch, values)
