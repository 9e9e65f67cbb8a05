"""``play.stop_early``: a search stops once the simulations it has left cannot change the move
it plays; at a fixed budget it plays the whole search's move with fewer simulations."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.envs.core.registry import action_game
from boardzoo.training.config_schema import MCTSConfig
from boardzoo.training.search import tree
from boardzoo.training.search.roots import Edges, GumbelRoot, PuctRoot
from boardzoo.training.search.tree import run_search, simulations_left

from conftest import random_action_states


def edges(n: list[float], valid: list[bool] | None = None) -> Edges:
    """A root with visit counts ``n`` (values and priors do not matter to the test)."""
    k = len(n)
    na = np.asarray(n, dtype=np.float64)
    return Edges(na, np.zeros(k), np.full(k, 1 / k), np.zeros(k), 0.0, np.float64(na.sum()),
                 None if valid is None else np.asarray(valid), tree.prior_sums, np)


def puct() -> PuctRoot:
    return PuctRoot(MCTSConfig(root="puct"), 100, False, None)


def test_puct_is_settled_once_the_leader_cannot_be_caught():
    rule = puct()
    # 10 against 3: six more visits to the second leave it at 9, seven could tie it at 10
    # (a tie is broken by value, so it could change the move)
    assert rule.settled(edges([10, 3, 0]), 6)
    assert not rule.settled(edges([10, 3, 0]), 7)
    assert not rule.settled(edges([5, 5, 1]), 0)  # a tie now: the values decide, not visits
    assert rule.settled(edges([5, 4, 1]), 0)  # nothing left: the move is what it is
    # the leader by visits among the real edges only (a padded edge's count is ignored)
    assert rule.settled(edges([2, 9, 40], [True, True, False]), 6)
    assert not rule.settled(edges([2, 9, 40], [True, True, False]), 7)
    assert rule.settled(edges([3]), 1000)  # one edge: nothing to choose


def test_gumbel_has_no_stopping_test():
    rule = GumbelRoot(MCTSConfig(root="gumbel"), 100, False, None)
    assert not rule.settled(edges([90, 0, 0]), 1)


def test_simulations_left_by_hand():
    assert simulations_left(20, 100, 0.1, None) == 80  # the budget alone
    # 20 simulations in 0.1 s: 200 a second, 0.05 s left -> 10 more at most
    assert simulations_left(20, 100, 0.1, 0.05) == 10
    assert simulations_left(20, 100, 0.1, 0.0501) == 11  # rounded up: never stop too soon
    assert simulations_left(20, 100, 0.1, 5.0) == 80  # time enough for the whole budget
    assert simulations_left(20, 100, 0.1, -0.01) == 0  # past the deadline
    assert simulations_left(0, 100, 0.0, 0.05) == 100  # no rate yet: the budget


class HashedNet:
    """A fixed evaluator: logits and value drawn from each state's text (no torch)."""

    def __init__(self, game) -> None:
        self.game = game
        self.calls = 0

    def __call__(self, states):
        self.calls += len(states)
        out_logits, out_values = [], []
        for s in states:
            seed = zlib.crc32(repr(s).encode())
            rng = np.random.default_rng(seed)
            out_logits.append(rng.normal(size=self.game.num_actions) * 2)
            out_values.append(rng.uniform(-0.9, 0.9))
        return np.array(out_logits), np.array(out_values)


@pytest.mark.parametrize("name", ["loa", "ultima"])
def test_stopping_early_plays_the_whole_searchs_move(name):
    game = action_game(name)
    cfg = MCTSConfig(root="puct")
    saved = 0
    for state in random_action_states(name, 12, seed=3):
        if game.is_terminal(state) or len(game.legal_actions(state)) < 2:
            continue
        runs = {}
        for stop in (False, True):
            net = HashedNet(game)
            search = run_search(game, net, state, cfg, np.random.default_rng(0), 120,
                                stop_early=stop)
            runs[stop] = (int(search.root.actions[search.choose(0.0)]), search.done)
        assert runs[True][0] == runs[False][0]
        assert runs[True][1] <= runs[False][1] == 120
        saved += runs[False][1] - runs[True][1]
    assert saved > 0  # the test positions include searches that settle before their budget


def test_agent_option_stop():
    agent = make_agent("checkpoint:ultima,stop=off", "ultima", 0)
    assert agent.cfg.play.stop_early is False
    assert make_agent("checkpoint:ultima", "ultima", 0).cfg.play.stop_early is True
    with pytest.raises(UnknownAgentError, match="stop must be on or off"):
        make_agent("checkpoint:ultima,stop=maybe", "ultima", 0)


def test_a_timed_search_plans_for_what_the_last_ones_rate_runs():
    import time

    agent = make_agent("checkpoint:loa,sims=100000", "loa", 0)
    assert agent.budget() == 100000  # no time limit: the sims
    agent.move_deadline = time.perf_counter() + 0.5
    assert agent.budget() == 100000  # no rate measured yet
    agent.seconds_per_simulation = 0.01  # 0.5 s left at 100 a second: at most 50
    assert 46 <= agent.budget() <= 51  # (one more than fits: the deadline ends it)
    agent.move_deadline = time.perf_counter() - 1.0  # past it: one simulation still
    assert agent.budget() == 1
    # a timed move measures the rate and plays a legal move
    from boardzoo.envs.core.registry import load_state

    agent.set_move_time(0.2)
    agent.seconds_per_simulation = None
    state = load_state("loa", None)
    move = agent.select_move(state)
    assert move in state.legal_moves() and agent.seconds_per_simulation > 0
