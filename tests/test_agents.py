"""Agents on games with known answers: forced wins, blocks, seeding, spec parsing."""

from __future__ import annotations

import io

import pytest
from toygames import Nim, TicTacToe

from boardzoo.agents import AGENT_FACTORIES, UnknownAgentError, make_agent
from boardzoo.agents.alphabeta import AlphaBetaAgent
from boardzoo.agents.base import register_agent
from boardzoo.agents.greedy import GreedyAgent
from boardzoo.agents.human import HumanAgent, HumanQuit
from boardzoo.agents.mcts import MCTSAgent
from boardzoo.envs.core.game import BoardzooError
from boardzoo.envs.core.registry import load_state

WIN_IN_ONE = TicTacToe.from_text("xx.oo....")  # x to move: c1 wins, b2.. would let o win
MUST_BLOCK = TicTacToe.from_text("xx.o.....")  # o to move: only c1 avoids losing


def play(state, agents, limit=50):
    """Play to the end (or ``limit`` plies) and return the canonical moves."""
    moves = []
    while not state.is_terminal() and len(moves) < limit:
        move = agents[state.to_move].select_move(state)
        moves.append(state.move_to_str(move))
        state = state.apply(move)
    return moves


@pytest.mark.parametrize("agent", [
    AlphaBetaAgent("tictactoe", depth=1, seed=3),
    AlphaBetaAgent("tictactoe", depth=5, seed=3),
    MCTSAgent("tictactoe", 100, seed=3),
    GreedyAgent("tictactoe", seed=3),
])
def test_takes_win_in_one(agent):
    assert WIN_IN_ONE.move_to_str(agent.select_move(WIN_IN_ONE)) == "c1"


@pytest.mark.parametrize("agent", [
    AlphaBetaAgent("tictactoe", depth=2, seed=1), MCTSAgent("tictactoe", 300, seed=1)])
def test_blocks_the_threat(agent):
    assert MUST_BLOCK.move_to_str(agent.select_move(MUST_BLOCK)) == "c1"


def test_mcts_finds_forced_win_in_nim():
    # Piles that are multiples of 4 lose for the mover: from 13 the only winning take is 1.
    for seed in range(3):
        assert MCTSAgent("nim", 1000, seed=seed).select_move(Nim(13)) == 1


def test_forced_win_in_three_found_by_both_searches():
    # x to move, no immediate win; b2 is the only move that wins by force (a double threat).
    state = TicTacToe.from_text(".....xoxo")
    agent = AlphaBetaAgent("tictactoe", depth=9, seed=0)
    assert state.move_to_str(agent.select_move(state)) == "b2"
    assert agent.last_value > 0
    for seed in range(2):
        assert state.move_to_str(MCTSAgent("tictactoe", 1500, seed=seed).select_move(state)) == "b2"


def test_alphabeta_prefers_faster_win_and_sees_forced_loss():
    agent = AlphaBetaAgent("nim", depth=12, seed=0)
    assert agent.select_move(Nim(3)) == 3  # take all: win now
    agent.select_move(Nim(8))
    assert agent.last_value < 0  # every move loses against best play


def test_alphabeta_time_limit_returns_a_legal_move():
    agent = make_agent("alphabeta:t=0.05s", "tictactoe", 0)
    assert agent.select_move(TicTacToe()) in TicTacToe().legal_moves()


def test_perfect_play_draws_tictactoe():
    agents = [AlphaBetaAgent("tictactoe", depth=9, seed=s) for s in (0, 1)]
    moves = play(TicTacToe(), agents)
    state = TicTacToe()
    for m in moves:
        state = state.apply(state.parse_move(m))
    assert state.is_terminal() and state.winner() is None


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts:30", "alphabeta:2"])
def test_same_seed_same_moves(spec):
    runs = [play(TicTacToe(), [make_agent(spec, "tictactoe", 7),
                              make_agent("random", "tictactoe", 8)]) for _ in range(2)]
    assert runs[0] == runs[1]
    other = {tuple(play(TicTacToe(), [make_agent(spec, "tictactoe", s),
                                      make_agent("random", "tictactoe", 8)])) for s in range(8)}
    assert len(other) > 1  # seeds matter: the agent is not a fixed sequence


def test_mcts_reuses_its_tree():
    agent = MCTSAgent("tictactoe", 50, seed=0)
    play(TicTacToe(), [agent, make_agent("random", "tictactoe", 1)])
    assert agent.stats()["reused"] >= 1
    agent.reset()
    assert agent.root is None


@pytest.mark.parametrize("spec", [
    "nonsense", "random:3", "greedy:x", "mcts:zero", "mcts:0", "mcts:10,q=3", "alphabeta:0",
    "alphabeta:t=fast", "alphabeta:x=1", "human:yes", "mcts:5,6"])
def test_bad_specs_raise_clear_errors(spec):
    with pytest.raises(UnknownAgentError) as info:
        make_agent(spec, "tictactoe", 0)
    assert isinstance(info.value, BoardzooError) and str(info.value)


def test_spec_options():
    assert make_agent("mcts:7,c=2,cap=5", "loa", 0).playout_cap == 5
    timed = make_agent("alphabeta:t=0.5s", "loa", 0)
    assert timed.seconds == 0.5 and timed.spec == "alphabeta:t=0.5s"
    assert make_agent("alphabeta", "loa", 0).depth == 2


def test_checkpoint_hook_is_replaceable():
    saved = AGENT_FACTORIES["checkpoint"]
    try:
        register_agent("checkpoint", lambda arg, game, seed: GreedyAgent(game, seed))
        assert make_agent("checkpoint:model.pt", "tictactoe", 0).spec == "checkpoint:model.pt"
    finally:
        AGENT_FACTORIES["checkpoint"] = saved


def test_human_explains_rejections_and_asks_again():
    out = io.StringIO()
    agent = HumanAgent(io.StringIO("zz\n?\nb1\n\na1\n"), out)
    move = agent.select_move(TicTacToe.from_text(".x......."))  # b1 is taken, o to move
    text = out.getvalue()
    assert text.startswith(". . .")  # the board comes first
    assert "rejected 'zz'" in text and "malformed" in text
    assert "legal moves: a1 a2" in text
    assert "rejected 'b1'" in text and "taken" in text
    assert move == 0  # a1
    agent.input = io.StringIO("c3\n")
    agent.select_move(TicTacToe.from_text("ox.....x."))  # x answered at b3
    assert "x played b3" in out.getvalue()
    out = io.StringIO()
    agent = HumanAgent(io.StringIO("z" * 100_000 + "\nb1-b3\n"), out)
    agent.select_move(load_state("loa"))
    rejected = next(line for line in out.getvalue().splitlines() if "rejected" in line)
    assert len(rejected) < 1000 and "100,000 characters" in rejected  # the echo is cut
    with pytest.raises(HumanQuit):
        HumanAgent(io.StringIO("quit\n"), io.StringIO()).select_move(TicTacToe())
    with pytest.raises(HumanQuit):
        HumanAgent(io.StringIO(""), io.StringIO()).select_move(TicTacToe())


@pytest.mark.parametrize("game", ["loa", "whistling"])
def test_env_adapter_plays_whole_games(game):
    from boardzoo.agents.env_adapter import EnvAgent
    from boardzoo.envs.aec import make_env

    env = make_env(game, max_moves=40)
    env.reset(seed=0)
    players = {a: EnvAgent(make_agent("random", game, i)) for i, a in enumerate(env.agents)}
    steps = hops = 0
    for name in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else players[name].act(env))
        steps += 1
        hops += termination is False and len(getattr(env.unwrapped.action_state, "done", ())) > 0
    assert steps > 10 and (game != "whistling" or hops > 0)  # chains took several steps
