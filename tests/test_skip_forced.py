"""``play.skip_forced``: forced actions below the root are played through, not searched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.envs.core.registry import action_game
from boardzoo.training.config import load_config
from boardzoo.training.search.tree import Node, run_search

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "configs" / "tiny.yaml"
WHISTLING = action_game("whistling")


class ForcedLineGame:
    """A toy ActionGame: from "", action 0 leads to "a", where player 0 has one legal action
    (to "ab"), then player 1 one (to "abc", a win for player 0); action 1 leads to "x", a
    position with two actions that both draw. States are strings."""

    num_actions = 2
    observation_shape = (1, 1, 1)

    def to_move(self, s):
        return 1 if s == "ab" else 0

    def is_terminal(self, s):
        return s in ("abc", "x0", "x1")

    def returns(self, s):
        return (1.0, -1.0) if s == "abc" else (0.0, 0.0)

    def legal_actions(self, s):
        return {"": [0, 1], "a": [0], "ab": [1], "x": [0, 1]}.get(s, [])

    def apply_action(self, s, a):
        if s == "":
            return ("a", "x")[a], None
        return s + ("b" if s == "a" else "c" if s == "ab" else str(a)), None


def _zero(states, actions: int = 2):
    """A fake network: uniform logits, value 0."""
    return np.zeros((len(states), actions), np.float32), np.zeros(len(states), np.float32)


def _zero_whistling(states):
    """The fake network over Whistling's actions."""
    return _zero(states, WHISTLING.num_actions)


def _tree(node: Node):
    """Yield every node made below ``node``."""
    for child in node.children:
        if child is not None:
            yield child
            yield from _tree(child)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_forced_line_is_played_through_to_its_result(root):
    """With skip_forced the child of action 0 is the terminal win two forced actions on: its
    first visit backs up the win, no network call is made for it, and the search picks it."""
    cfg = load_config(TINY, [f"mcts.root={root}"]).mcts
    seen = []

    def evaluate(states):
        seen.extend(states)
        return _zero(states)

    search = run_search(ForcedLineGame(), evaluate, "", cfg, np.random.default_rng(0), 8,
                        skip_forced=True)
    child = search.root.children[0]
    assert child.state == "abc" and child.terminal
    assert search.root.q()[0] == 1.0
    assert int(search.root.actions[search.choose(0.0)]) == 0
    assert not {"a", "ab"} & set(seen)  # forced positions never reach the network
    # without it, the forced positions are nodes of their own, each valued by the network
    seen.clear()
    search = run_search(ForcedLineGame(), evaluate, "", cfg, np.random.default_rng(0), 8)
    assert search.root.children[0].state == "a" and "a" in seen


def test_whistling_tree_holds_no_forced_node():
    """On Whistling positions (chains force hops), a tree searched with skip_forced has no
    node below the root with exactly one legal action; without it, the same searches do."""
    found = {False: 0, True: 0}
    for skip in (False, True):
        cfg = load_config(TINY, ["mcts.root=gumbel"])
        for state in random_action_states("whistling", 12, seed=5, max_plies=40):
            if len(WHISTLING.legal_actions(state)) < 2:
                continue
            search = run_search(WHISTLING, _zero_whistling, state, cfg.mcts,
                                np.random.default_rng(1), 64, skip_forced=skip)
            assert search.root.N.sum() == 63  # the first simulation expands the root
            for node in _tree(search.root):
                forced = not node.terminal and len(WHISTLING.legal_actions(node.state)) == 1
                found[skip] += forced
    assert found[True] == 0
    assert found[False] > 0


def test_checkpoint_agent_option_forced():
    agent = make_agent("checkpoint:whistling,forced=skip,sims=4", "whistling", seed=0)
    assert agent.cfg.play.skip_forced
    agent = make_agent("checkpoint:whistling,forced=search,sims=4", "whistling", seed=0)
    assert not agent.cfg.play.skip_forced
    with pytest.raises(UnknownAgentError, match="forced must be skip or search"):
        make_agent("checkpoint:whistling,forced=maybe", "whistling", seed=0)


@pytest.mark.parametrize("forced", ["skip", "search"])
def test_checkpoint_agent_values_forced_positions_only_when_it_searches_them(forced):
    """The agent's searches (here on Whistling positions with chains ahead) ask the network
    about forced positions with ``forced=search`` and never with ``forced=skip``."""
    agent = make_agent(f"checkpoint:whistling,forced={forced},sims=10", "whistling", seed=0)
    asked = []
    real = agent.evaluate

    def spy(states):
        asked.extend(states)
        return real(states)

    agent.evaluate = spy
    for state in random_action_states("whistling", 3, seed=5, max_plies=40):
        if len(WHISTLING.legal_actions(state)) > 1:
            agent.select_action(state)
    assert asked
    forced_asked = sum(len(WHISTLING.legal_actions(s)) == 1 for s in asked)
    assert (forced_asked == 0) == (forced == "skip")


def test_export_sets_skip_forced(tmp_path):
    from boardzoo.cli import main
    from boardzoo.training.agent import load_net, shipped_net

    out = tmp_path / "skip.pt"
    assert main(["export", str(shipped_net("whistling")), str(out),
                 "--set", "play.skip_forced=true"]) == 0
    assert load_net(out)[1].play.skip_forced
    assert make_agent(f"checkpoint:{out}", "whistling", seed=0).cfg.play.skip_forced
