"""The OpenSpiel adapter (boardzoo.envs.openspiel): OpenSpiel's tools run on our games and
agree with the PettingZoo envs and the rules engines; skipped without the extra."""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import evaluate_bots, mcts  # noqa: E402

from boardzoo.agents import openspiel_bots  # noqa: E402
from boardzoo.agents.base import RandomAgent, UnknownAgentError, make_agent  # noqa: E402
from boardzoo.envs import openspiel  # noqa: E402
from boardzoo.envs.aec import BoardGameEnv  # noqa: E402
from boardzoo.envs.core.game import MoveError, PositionError  # noqa: E402
from boardzoo.envs.core.registry import UnknownGameError, load_state  # noqa: E402

from conftest import REPO, load_vector  # noqa: E402

GAMES = ["loa", "ultima", "whistling"]
TAYLOR = load_vector("whistling", "taylor_example.json")


@pytest.mark.parametrize("game", GAMES)
def test_games_load_with_the_env_spaces(game):
    spiel = pyspiel.load_game(f"python_boardzoo_{game}")
    env = BoardGameEnv(game)
    gtype = spiel.get_type()
    assert gtype.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert gtype.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert spiel.num_players() == 2
    assert spiel.num_distinct_actions() == env.action_space("player_0").n
    assert tuple(spiel.observation_tensor_shape()) == \
        env.observation_space("player_0")["observation"].shape
    assert openspiel.load(game).get_type().short_name == gtype.short_name


def test_max_game_lengths_follow_the_draw_caps():
    # LOA spec 6.2 and Ultima spec 9.5: 400 plies. Whistling (one action per hop): every
    # hop captures, 41 stones can go before a side is empty, at most 39 quiet turns before
    # each capture and 40 after the last one: 41 + 41 * 39 + 40.
    expected = {"loa": 400, "ultima": 400, "whistling": 41 + 41 * 39 + 40}
    assert {g: openspiel.load(g).max_game_length() for g in GAMES} == expected


@pytest.mark.parametrize("game", GAMES)
def test_openspiel_consistency_checker_passes(game):
    pyspiel.random_sim_test(openspiel.load(game), num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("game,seed,max_steps", [
    ("loa", 0, None), ("loa", 1, None), ("ultima", 2, 120),
    ("whistling", 3, None), ("whistling", 4, None)])
def test_random_games_agree_with_env_and_engine(game, seed, max_steps):
    env = BoardGameEnv(game)
    env.reset()
    state = openspiel.load(game).new_initial_state()
    rules = load_state(game)
    shape = env.observation_space("player_0")["observation"].shape
    rng = random.Random(seed)
    steps = 0
    while not state.is_terminal() and steps != max_steps:
        agent = env.agent_selection
        assert state.current_player() == env.agent_name_mapping[agent]
        assert state.legal_actions() == np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
        for p, name in enumerate(env.possible_agents):
            planes = np.asarray(state.observation_tensor(p), np.float32).reshape(shape)
            np.testing.assert_array_equal(planes, env.observe(name)["observation"])
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
        steps += 1
        if not state.mid_turn:  # a finished turn: replay it on the rules engine
            assert state.last_turn == env.infos[agent]["turn"]
            rules = rules.apply(rules.parse_move(state.last_turn))
            assert state.game_state.to_text() == rules.to_text()
    assert state.is_terminal() == rules.is_terminal() == all(env.terminations.values())
    assert state.returns() == list(rules.returns())
    if state.is_terminal():
        assert state.returns() == [env.rewards[a] for a in env.possible_agents]
        assert state.current_player() == pyspiel.PlayerId.TERMINAL
        assert state.legal_actions() == []
    assert len(state.history()) == steps


def test_rl_environment_runs_a_game():
    from open_spiel.python import rl_environment

    env = rl_environment.Environment("python_boardzoo_whistling")
    step = env.reset()
    rng = random.Random(7)
    rules = load_state("whistling")
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([rng.choice(step.observations["legal_actions"][player])])
        if not env.get_state.mid_turn:
            rules = rules.apply(rules.parse_move(env.get_state.last_turn))
    assert rules.is_terminal() and step.rewards == list(rules.returns())
    assert len(step.observations["info_state"][0]) == 21 * 41 * 11  # the flat planes


def test_clones_are_independent():
    game = openspiel.load("loa")
    state = game.new_initial_state()
    for _ in range(2):
        state.apply_action(state.legal_actions()[0])
    before = (str(state), state.legal_actions(), state.history())
    clone = state.clone()
    action = clone.legal_actions()[-1]
    clone.apply_action(action)
    assert (str(state), state.legal_actions(), state.history()) == before
    assert clone.history() == before[2] + [action]
    expected = load_state("loa")
    for a in clone.history():
        expected = expected.apply(a)  # an LOA action is the engine's move number
    assert str(clone) == expected.to_text()


def test_whistling_chain_keeps_the_same_player():
    game = openspiel.load("whistling")
    state = game.new_initial_state(TAYLOR["position"])
    assert state.current_player() == 1  # O to move
    assert [state.action_to_string(a) for a in state.legal_actions()] == ["w19-G19:D20"]
    state.apply_action(state.legal_actions()[0])
    assert state.mid_turn and state.current_player() == 1
    assert "turn so far: w19-G19:D20" in str(state)
    assert len(state.legal_actions()) == 1
    state.apply_action(state.legal_actions()[0])
    assert not state.mid_turn and state.current_player() == 0
    assert state.last_turn == TAYLOR["legal_moves"][0]
    assert str(state) == TAYLOR["position_after"]


def test_serialization_keeps_a_chain_in_progress():
    game = openspiel.load("whistling")
    state = game.new_initial_state(TAYLOR["position"])
    state.apply_action(state.legal_actions()[0])
    _, copy = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert (str(copy), copy.legal_actions(), copy.current_player(), copy.history()) == \
        (str(state), state.legal_actions(), 1, state.history())


def test_bad_position_and_illegal_action_are_clear_errors():
    game = openspiel.load("loa")
    with pytest.raises(PositionError, match="ranks"):
        game.new_initial_state("not a position")
    with pytest.raises(MoveError, match="not legal"):
        game.new_initial_state().apply_action(5)  # from a1, which is empty at the start
    with pytest.raises(UnknownGameError, match="unknown game"):
        openspiel.load("chess")
    state = game.new_initial_state()
    action = state.legal_actions()[0]
    with pytest.raises(MoveError, match="an action is an integer"):
        state._apply_action(action + 0.9)  # not played as int(action + 0.9)
    state._apply_action(np.int64(action))  # a NumPy integer is an integer


def test_mcts_bot_beats_our_random_agent_in_full_games():
    game = openspiel.load("loa")
    wins = 0
    for g in range(4):
        rng = np.random.RandomState(g)
        evaluator = openspiel_bots.HeuristicEvaluator("loa")
        bot = mcts.MCTSBot(game, 2.0, 10, evaluator, random_state=rng)
        rand = openspiel_bots.AgentBot(RandomAgent(g))
        side = g % 2
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, [bot, rand] if side == 0 else [rand, bot],
                                              rng)
        # the result is the rules engine's verdict on the game the bots played
        rules = load_state("loa")
        for a in state.history():
            rules = rules.apply(a)
        assert rules.is_terminal() and returns == list(rules.returns())
        wins += returns[side] == 1.0
    assert wins >= 3


def test_rollout_mcts_agent_plays_legal_moves_and_the_forced_chain():
    agent = make_agent("openspiel_mcts:3", "loa", seed=0)
    state = load_state("loa")
    for _ in range(3):
        move = agent.select_move(state)
        assert move in state.legal_moves()
        state = state.apply(move)
    assert agent.stats()["simulations"] == 9
    taylor = load_state("whistling", TAYLOR["position"])
    turn = make_agent("openspiel_mcts:2", "whistling", seed=0).select_move(taylor)
    assert taylor.move_to_str(turn) == TAYLOR["legal_moves"][0]


def test_mcts_agent_is_deterministic_per_seed_and_checks_its_spec():
    def moves(seed):
        agent = make_agent("openspiel_mcts:8,leaf=eval", "whistling", seed)
        state, out = load_state("whistling"), []
        for _ in range(4):
            move = agent.select_move(state)
            out.append(state.move_to_str(move))
            state = state.apply(move)
        return out

    assert moves(5) == moves(5)
    for bad in ("openspiel_mcts:x", "openspiel_mcts:0", "openspiel_mcts:4,leaf=nn",
                "openspiel_mcts:4,depth=2"):
        with pytest.raises(UnknownAgentError):
            make_agent(bad, "loa")


def test_missing_extra_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes `import pyspiel` fail
    monkeypatch.delitem(sys.modules, "boardzoo.envs.openspiel")
    with pytest.raises(ModuleNotFoundError, match=r"boardzoo\[openspiel\]"):
        importlib.import_module("boardzoo.envs.openspiel")


def test_example_runs(capsys):
    path = REPO / "training" / "examples" / "openspiel_mcts.py"
    spec = importlib.util.spec_from_file_location("boardzoo_example_openspiel_mcts", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    tally = example.main(["--game", "loa", "--simulations", "5", "--games", "1"])
    assert sum(tally.values()) == 1
    assert "MCTS(5, eval) vs random on loa" in capsys.readouterr().out


@pytest.mark.parametrize("game", GAMES)
def test_games_and_states_pickle_also_into_a_fresh_process(game, tmp_path):
    import pickle
    import subprocess
    import sys

    spiel_game = openspiel.load(game)
    state = spiel_game.new_initial_state()
    for _ in range(3):
        state.apply_action(state.legal_actions()[len(state.legal_actions()) // 2])
    again = pickle.loads(pickle.dumps(state))
    assert str(again) == str(state) and again.legal_actions() == state.legal_actions()
    assert pickle.loads(pickle.dumps(spiel_game)).num_distinct_actions() == \
        spiel_game.num_distinct_actions()
    path = tmp_path / "state.pkl"
    path.write_bytes(pickle.dumps(state))
    code = ("import pickle, sys; s = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(len(s.legal_actions()), s.current_player())")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == [str(len(state.legal_actions())), str(state.current_player())]
