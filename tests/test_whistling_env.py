"""The Whistling PettingZoo env: API conformance, hop actions and chains, masks, observations,
rewards, rendering, and the sample game played hop by hop."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

import boardzoo  # noqa: F401 - registers the envs
from boardzoo.envs import whistling_v0
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.whistling import State
from boardzoo.envs.whistling.actions import NUM_ACTIONS, WhistlingActions, decode, encode
from boardzoo.envs.whistling.hexgrid import CELL_INDEX

from conftest import load_vector

TAYLOR = load_vector("whistling", "taylor_example.json")
GAME = load_vector("whistling", "sample_game.json")


def test_registry_make_and_spaces():
    env = pettingzoo.make("aec", "boardzoo/whistling-v0")
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "whistling_v0"
    assert env.agent_selection == "player_0"
    assert env.action_space("player_0").n == NUM_ACTIONS == 331 * 6 * 20
    assert env.observation_space("player_1")["observation"].shape == (21, 41, 11)


def test_action_encoding_is_the_documented_one():
    a = encode(CELL_INDEX["w19"], 0, 5)  # w19 -> G19: five cells east
    assert a == (6 * CELL_INDEX["w19"] + 0) * 20 + 4
    assert decode(a) == (CELL_INDEX["w19"], 0, 5)
    env = whistling_v0.raw_env(position=TAYLOR["position"])
    env.reset()
    assert env.legal_actions() == [a]
    assert env.action_to_move_str(a) == "w19-G19:D20"
    assert env.move_str_to_action("w19-G19") == a
    assert env.move_str_to_action("w19-G19:D20-o1:r2s3") == a  # a whole turn: its first hop


def test_taylor_chain_is_two_steps_by_the_same_agent():
    env = whistling_v0.raw_env(position=TAYLOR["position"])
    env.reset()
    assert env.agent_selection == "player_1"
    env.step(env.move_str_to_action("w19-G19"))
    assert env.agent_selection == "player_1"  # the chain continues
    assert env.infos["player_1"] == {}
    obs = env.observe("player_1")
    mask = obs["action_mask"]
    assert mask.sum() == 1 and env.action_to_move_str(int(mask.argmax())) == "G19-o1:r2s3"
    planes = obs["observation"]
    g19 = (19 - 1, 32)  # row 19, column G = 32
    assert planes[g19][2] == 1 and planes[..., 2].sum() == 1  # the stone that must continue
    assert planes[g19][3 + 0] == 1 and planes[..., 3:9].sum() == 1  # it arrived moving E
    assert planes[..., 1].sum() == 20  # D20 is gone already (O's view: X is the enemy)
    assert env.observe("player_0")["action_mask"].sum() == 0
    with pytest.raises(MoveError, match="continues from G19"):
        env.move_str_to_action("u19-w19")
    env.step(int(mask.argmax()))
    assert env.infos["player_1"]["turn"] == "w19-G19:D20-o1:r2s3"
    assert env.agent_selection == "player_0"
    assert env.game.to_text() == TAYLOR["position_after"]


def test_observation_is_from_the_observers_view():
    env = whistling_v0.raw_env()
    env.reset()
    x_view = env.observe("player_0")["observation"]
    o_view = env.observe("player_1")["observation"]
    assert x_view.dtype == np.float32 and x_view.shape == (21, 41, 11)
    assert x_view[0, 18, 0] == 1 and o_view[0, 18, 1] == 1  # s1 (row 1, column s = 18) is X's
    assert x_view[..., 0].sum() == x_view[..., 1].sum() == 21
    np.testing.assert_array_equal(x_view[..., 0], o_view[..., 1])
    assert x_view[..., 10].sum() == 331 and x_view[..., 2:10].sum() == 0


def test_draw_counter_plane_and_draw_rewards():
    env = whistling_v0.raw_env(position="u11/E21 x 39")
    env.reset()
    assert env.observe("player_0")["observation"][0, 0, 9] == pytest.approx(39 / 40)
    env.step(env.move_str_to_action("u11-w11"))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 0, "player_1": 0}
    assert env.infos["player_0"]["turn"] == "u11-w11"


def test_elimination_rewards():
    env = whistling_v0.raw_env(position="u11/w11 x 0")
    env.reset()
    env.step(env.move_str_to_action("u11:w11"))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 1, "player_1": -1}


def test_illegal_action_raw_and_wrapped():
    raw = whistling_v0.raw_env()
    raw.reset()
    with pytest.raises(MoveError, match="not a legal hop"):
        raw.step(0)  # k1 holds no stone
    wrapped = whistling_v0.env()
    wrapped.reset()
    wrapped.step(0)
    assert wrapped.rewards["player_0"] == -1 and all(wrapped.terminations.values())


def test_renders_mid_chain():
    env = whistling_v0.raw_env(render_mode="ansi", position=TAYLOR["position"])
    env.reset()
    env.step(env.move_str_to_action("w19-G19"))
    text = env.render()
    assert "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO" in text
    assert "turn in progress: w19-G19:D20" in text and "O" in text.splitlines()[19]
    rgb = whistling_v0.raw_env(render_mode="rgb_array", position=TAYLOR["position"])
    rgb.reset()
    rgb.step(rgb.move_str_to_action("w19-G19"))
    picture = rgb.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 4


def test_sample_game_hop_by_hop():
    actions = WhistlingActions()
    for ply in GAME["plies"]:
        if not ply["played_is_legal"]:
            continue
        state = actions.initial_state(ply["position_before"])
        hops = ply["played_canonical"]
        turn = None
        while turn is None:
            state, turn = actions.apply_action(state, actions.str_to_action(state, hops))
            if turn is None:  # drop the hop just played: the text continues from the stone
                rest = hops.split("-", 2)
                hops = rest[1].split(":")[0] + "-" + rest[2]
        assert turn == ply["played_canonical"]
        assert actions.game_state(state).to_text() == ply["position_after"]


def test_action_game_without_env_and_bad_arguments():
    actions = WhistlingActions()
    state = actions.initial_state()
    assert actions.action_mask(state).sum() == 306
    assert actions.to_move(state) == 0 and not actions.is_terminal(state)
    nxt, turn = actions.apply_action(state, actions.str_to_action(state, "s1-q1"))
    assert turn == "s1-q1" and actions.to_move(nxt) == 1
    assert actions.game_state(state) == State.start()  # the parent is unchanged
    with pytest.raises(ValueError):
        whistling_v0.raw_env(position="u11/k20 x 0")
    with pytest.raises(MoveError, match="out of range"):
        actions.apply_action(state, NUM_ACTIONS + 5)
