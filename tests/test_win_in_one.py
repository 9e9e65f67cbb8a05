"""``play.win_in_one``: a search values positions whose player can win at once as won.

Ultima's check (``winning_move``) is tested on the spec's worked checkmate (section 11:
``7k/8/8/8/8/7P/1i6/Kw6 w``, reached here by its only mating move) and against a full
enumeration of the moves that leave the opponent without a legal move.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.envs.ultima.evaluation import winning_move
from boardzoo.envs.ultima.rules import State
from boardzoo.training.config import load_config
from boardzoo.training.search.tree import run_search

TINY = Path(__file__).resolve().parent.parent / "configs" / "tiny.yaml"

# Black to move: the withdrawer c1-b1 gives the spec's worked checkmate (White's king a1 is
# frozen by the immobilizer b2 and attacked by a withdrawal from b1; the pawn h3 cannot help).
BEFORE_MATE = "7k/8/8/8/8/7P/1i6/K1w5 b 0 1"
MATE = "7k/8/8/8/8/7P/1i6/Kw6 w 1 2"  # halfmove 1: no capture


def _zero(states):
    """A fake network over two actions: uniform logits, value 0."""
    return np.zeros((len(states), 2), np.float32), np.zeros(len(states), np.float32)


def _wins_by_enumeration(state: State) -> set[int]:
    """Every legal move after which the opponent has no legal move (spec 9.1: they lose)."""
    return {m for m in state.legal_moves() if state.apply(m).winner() == state.to_move}


def test_winning_move_finds_the_spec_checkmate():
    state = State.from_text(BEFORE_MATE)
    move = winning_move(state)
    assert move is not None and state.move_to_str(move) == "c1b1"
    after = state.apply(move)
    assert after.to_text() == MATE and after.is_terminal() and after.winner() == 1
    assert winning_move(after) is None  # a finished game has no move at all


def test_winning_move_agrees_with_enumeration_on_games_that_end_in_mate():
    """Seeded games between alphabeta:1 (which mates when it can) and random play: at every
    position of the last 12 plies and every 7th before, winning_move finds a mate exactly
    where one exists."""
    checked = mates = 0
    for seed in range(8):
        rng = random.Random(seed)
        ab = make_agent("alphabeta:1", "ultima", seed=seed)
        state, history = State.start(), []
        while not state.is_terminal() and state.ply < 160:
            history.append(state)
            if state.to_move == seed % 2:
                state = state.apply(ab.select_move(state))
            else:
                state = state.apply(rng.choice(state.legal_moves()))
        for k, s in enumerate(history):
            if k % 7 and k < len(history) - 12:
                continue
            wins = _wins_by_enumeration(s)
            move = winning_move(s)
            assert (move is None) == (not wins), s.to_text()
            assert move is None or move in wins
            checked += 1
            mates += bool(wins)
    assert checked > 100 and mates >= 3


class WinAtOnceGame:
    """A toy ActionGame: from "", action 0 leads to "a", where player 1 moves and action 1
    wins for player 1 (to "a1"; "a0" draws); action 1 leads to "x", whose two actions draw.
    States are strings."""

    num_actions = 2
    observation_shape = (1, 1, 1)

    def to_move(self, s):
        return 1 if s == "a" else 0

    def is_terminal(self, s):
        return s in ("a0", "a1", "x0", "x1")

    def returns(self, s):
        return (-1.0, 1.0) if s == "a1" else (0.0, 0.0)

    def legal_actions(self, s):
        return [0, 1] if s in ("", "a", "x") else []

    def apply_action(self, s, a):
        return (("a", "x")[a] if s == "" else s + str(a)), None


def _toy_win(state):
    return 1 if state == "a" else None


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_search_values_a_position_with_a_win_at_once_as_lost_for_the_other_side(root):
    """With the check, the child "a" is a terminal win for player 1: the network is never
    asked about it, every visit backs up -1 for the root's player, and the root avoids it.
    Without it, "a" is valued by the (zero) network."""
    cfg = load_config(TINY, [f"mcts.root={root}"]).mcts
    for check in (True, False):
        asked = []

        def evaluate(states, asked=asked):
            asked.extend(states)
            return _zero(states)

        search = run_search(WinAtOnceGame(), evaluate, "", cfg, np.random.default_rng(0), 16,
                            winning_action=_toy_win if check else None)
        child = search.root.children[0]
        assert ("a" in asked) != check
        if check:
            assert child.terminal and child.returns == (-1.0, 1.0)
            assert search.root.W[0] == -search.root.N[0] and search.root.N[0] >= 1
            assert search.root.actions[search.choose(0.0)] == 1
        else:
            assert not child.terminal


def test_checkpoint_agent_plays_the_mate_in_one_without_a_search():
    state = State.from_text(BEFORE_MATE)
    agent = make_agent("checkpoint:ultima,win1=on,sims=50", "ultima", seed=0)
    assert agent.cfg.play.win_in_one
    assert state.move_to_str(agent.select_move(state)) == "c1b1"
    assert agent.stats()["evaluations"] == 0  # found by the check, not by the network


def test_checkpoint_agent_option_win1(tmp_path):
    assert not make_agent("checkpoint:ultima,win1=off", "ultima", seed=0).cfg.play.win_in_one
    with pytest.raises(UnknownAgentError, match="win1 must be on or off"):
        make_agent("checkpoint:ultima,win1=yes", "ultima", seed=0)
    from boardzoo.cli import main
    from boardzoo.training.agent import load_net, shipped_net

    out = tmp_path / "win1.pt"
    assert main(["export", str(shipped_net("ultima")), str(out),
                 "--set", "play.win_in_one=true"]) == 0
    assert load_net(out)[1].play.win_in_one
    # LOA has no win-in-one check: the key would do nothing there, so export refuses it
    assert main(["export", str(shipped_net("loa")), str(tmp_path / "loa.pt"),
                 "--set", "play.win_in_one=true"]) == 2
