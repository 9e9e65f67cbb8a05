"""Agents on the real games: wins in one, evaluation sanity, short seeded games."""

from __future__ import annotations

import pytest

from boardzoo.agents import make_agent
from boardzoo.agents.evaluation import get_evaluator
from boardzoo.envs.core.registry import load_state

# Found by search over random games; the listed move is the only immediate win.
WINS_IN_ONE = [
    ("loa", "w4w2/7w/2w1w3/5wb1/4bb2/2bbw1w1/2bw1b2/1bb5 b 40", "g5xg3"),  # 26 moves
    ("ultima", "8/4k3/6O1/2PPPL1P/8/4IL1P/P1W1P3/2PK2C1 w 1 48", "f5c8"),  # mate; 105 moves
]


@pytest.mark.parametrize("game, position, win", WINS_IN_ONE)
@pytest.mark.parametrize("spec", ["greedy", "alphabeta:1", "alphabeta:3", "mcts:200"])
def test_finds_the_win_in_one(game, position, win, spec):
    state = load_state(game, position)
    assert state.move_to_str(make_agent(spec, game, 0).select_move(state)) == win


@pytest.mark.parametrize("game", ["loa", "ultima", "whistling"])
def test_evaluation_is_zero_sum_at_symmetric_start(game):
    state = load_state(game)
    evaluate = get_evaluator(game)
    assert evaluate(state) == pytest.approx(0.0, abs=1e-9)
    after = state.apply(state.legal_moves()[0])
    assert isinstance(evaluate(after), float)


@pytest.mark.parametrize("game, position", [
    ("ultima", "olcwkcli/pppppppp/8/8/8/8/1PPPPPPP/ILCKWCLO w 0 1"),  # white lacks a pawn
    ("loa", "bbb5/bbb5/8/8/3w4/8/w6w/3w3b w 0"),  # white: 4 scattered groups; black: 2
])
def test_evaluation_prefers_the_better_side(game, position):
    state = load_state(game, position)
    assert get_evaluator(game)(state) < 0  # white (to move) is worse off


@pytest.mark.parametrize("game", ["loa", "ultima", "whistling"])
def test_short_games_are_reproducible(game):
    def moves(seed):
        state, out = load_state(game), []
        agents = [make_agent("mcts:8", game, seed), make_agent("alphabeta:1", game, seed + 1)]
        while not state.is_terminal() and len(out) < 6:
            move = agents[state.to_move].select_move(state)
            out.append(state.move_to_str(move))
            state = state.apply(move)
        return out

    assert moves(1) == moves(1)
