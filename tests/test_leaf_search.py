"""Leaf values from a shallow alpha-beta search (mcts.leaf_depth, play.leaf_depth, leaf=D)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.envs.core.registry import action_game
from boardzoo.envs.ultima.rules import State
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.search.leaf import LeafSearch, SearchedLeaves
from boardzoo.training.selfplay import play_games

TINY = str(Path(__file__).resolve().parent.parent / "configs" / "tiny.yaml")
# the spec's worked checkmate (section 11): Black mates with the withdrawer c1-b1
BEFORE_MATE = "7k/8/8/8/8/7P/1i6/K1w5 b 0 1"
MATE = "7k/8/8/8/8/7P/1i6/Kw6 w 1 2"


def test_a_mate_in_one_is_a_won_leaf_and_the_mated_side_a_lost_one():
    leaf = LeafSearch("ultima", 1)
    assert leaf(State.from_text(BEFORE_MATE)) == 1.0  # Black to move mates at once
    assert leaf(State.from_text(MATE)) == -1.0  # White to move is mated
    # one turn is too short to see the mate from the other side of it
    assert -1.0 < LeafSearch("ultima", 1)(State.from_text(BEFORE_MATE.replace(" b ", " w "))) \
        < 1.0
    assert leaf.positions == 2


class _Uniform:
    """A fake network: zero logits, value 0.5 (never a searched value: those are tanh of
    integers' multiples or +-1, and a start position's is not 0.5)."""

    def __init__(self, game):
        self.n = game.num_actions
        self.states = 0

    def __call__(self, states):
        self.states += len(states)
        return np.zeros((len(states), self.n), np.float32), np.full(len(states), 0.5, np.float32)


def test_searched_leaves_keep_the_priors_and_replace_the_value():
    game = action_game("ultima")
    inner = _Uniform(game)
    leaves = SearchedLeaves(inner, "ultima", game, 1)
    states = [State.from_text(BEFORE_MATE), State.from_text(MATE)]
    logits, values = leaves(states)
    assert inner.states == 2 and logits.shape == (2, game.num_actions)
    assert values.tolist() == [1.0, -1.0]


def test_selfplay_values_its_leaves_by_search():
    cfg = load_config(TINY, ["selfplay.max_moves=4", "mcts.simulations=6",
                             "mcts.leaf_depth=1"])
    game = action_game("loa")
    inner = _Uniform(game)
    recs = play_games(None, game, cfg, [1, 2], evaluate=inner)
    assert all(r.length == 4 for r in recs)
    # every leaf the network saw was also searched; the values the search backed up are
    # the searched ones, so no root value is the fake network's 0.5
    assert inner.states > 0
    assert all(abs(v - 0.5) > 1e-6 for r in recs for v in r.root_values)


def test_the_option_and_the_keys_are_checked():
    agent = make_agent("checkpoint:ultima,leaf=1,sims=8,win1=off", "ultima", seed=0)
    assert agent.search_cfg.leaf_depth == 1
    state = State.from_text(BEFORE_MATE)
    assert agent.select_move(state) in state.legal_moves()
    assert agent.search_evaluate.leaf.positions > 0
    with pytest.raises(UnknownAgentError, match="leaf must be a whole number from 0 to 8"):
        make_agent("checkpoint:ultima,leaf=9", "ultima", seed=0)
    with pytest.raises(UnknownAgentError, match="whole moves"):
        make_agent("checkpoint:whistling,leaf=1", "whistling", seed=0)
    with pytest.raises(ConfigError, match="mcts.leaf_depth has no effect"):
        load_config(TINY, ["game=whistling", "mcts.leaf_depth=1"])
