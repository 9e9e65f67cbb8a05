"""Leaf batches in play (agent option ``batch=N``): several leaves per network call, spread by
virtual loss, which every backup takes back (visit counts exactly)."""

from __future__ import annotations

import numpy as np
import pytest

from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.envs.core.registry import action_game, load_state
from boardzoo.training.config_schema import MCTSConfig
from boardzoo.training.search.tree import Search, run_search

from conftest import random_action_states


def flat(value: float):
    """An evaluator with uniform priors and ``value`` for every leaf's player to act."""
    def evaluate(states):
        return np.zeros((len(states), action_game("loa").num_actions)), np.full(len(states), value)
    return evaluate


def expanded_root(value: float = 0.0) -> Search:
    game = action_game("loa")
    search = Search(game, MCTSConfig(root="puct"), np.random.default_rng(0),
                    game.initial_state(), add_noise=False, simulations=100)
    leaves = search.select_leaves(4)
    assert [leaf is search.root for leaf in leaves] == [True]  # the root first, alone
    logits, values = flat(value)([search.root.state])
    search.expand(search.root, logits[0], values[0])
    return search


def test_a_batch_holds_distinct_leaves_under_virtual_loss():
    search = expanded_root()
    root = search.root
    leaves = search.select_leaves(4)
    assert len({id(leaf) for leaf in leaves}) == 4
    # each walk left a visit valued as a loss for the root's player on its edge
    assert root.N.sum() == 4 and root.W.sum() == -4 and root.visits == 4
    assert sorted(root.W[root.N > 0]) == [-1, -1, -1, -1]


def test_backing_up_a_batch_takes_the_virtual_loss_back():
    search = expanded_root()
    root = search.root
    leaves = search.select_leaves(4)
    logits, _ = flat(0.0)([leaf.state for leaf in leaves])
    for leaf, lg in zip(leaves, logits, strict=True):
        search.expand(leaf, lg, 0.25)  # 0.25 for the leaf's player: -0.25 for the root's
    visited = root.N > 0
    assert visited.sum() == 4 and np.all(root.N[visited] == 1)
    assert np.allclose(root.W[visited], -0.25) and np.all(root.W[~visited] == 0)
    assert root.visits == 4 and search.done == 1 + 4  # the root's own expansion counts once


@pytest.mark.parametrize("batch", [2, 8])
def test_a_batched_search_ends_with_exact_statistics(batch):
    """After a whole search no virtual loss is left anywhere: every node's visits equal the
    sum of its edge counts, and every edge's mean value is within [-1, 1]."""
    game = action_game("loa")
    for state in random_action_states("loa", 3, seed=4, max_plies=20):
        search = run_search(game, flat(0.1), state, MCTSConfig(root="puct"),
                            np.random.default_rng(1), 60, leaf_batch=batch)
        assert search.done == 60 and not search._batched
        # every simulation after the root's expansion passed the root once, no more
        assert search.root.N.sum() == 60 - 1
        todo = [search.root]
        while todo:
            node = todo.pop()
            if not node.expanded:
                continue
            assert node.N.sum() == node.visits
            assert np.all(np.abs(node.W) <= node.N + 1e-9)
            todo.extend(c for c in node.children if c is not None)


def test_the_agent_option_needs_a_puct_root():
    with pytest.raises(UnknownAgentError, match="batch=N needs a PUCT root"):
        make_agent("checkpoint:loa,batch=8,root=gumbel", "loa", 0)
    with pytest.raises(UnknownAgentError, match="batch must be a whole number from 1 to 256"):
        make_agent("checkpoint:loa,batch=0", "loa", 0)
    agent = make_agent("checkpoint:loa,batch=8,root=puct,sims=40", "loa", 0)
    move = agent.select_move(load_state("loa", None))
    assert move in list(load_state("loa", None).legal_moves())
