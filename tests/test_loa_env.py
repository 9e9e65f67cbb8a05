"""The LOA PettingZoo env: API conformance, masks, rewards, truncation, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boardzoo  # noqa: F401 - registers the envs
from boardzoo.envs import loa_v0
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.loa import State
from boardzoo.envs.loa.actions import LoaActions


def test_spaces_and_metadata():
    env = loa_v0.raw_env()
    assert env.action_space("player_0").n == 513
    assert env.observation_space("player_1")["observation"].shape == (8, 8, 5)
    assert env.metadata["is_parallelizable"] is False
    assert "render_fps" in env.metadata


def test_mask_equals_legal_moves_and_actions_decode():
    env = loa_v0.raw_env()
    env.reset()
    mask = env.observe("player_0")["action_mask"]
    legal = sorted(env.action_to_move_str(int(a)) for a in np.flatnonzero(mask))
    assert legal == State.start().legal_move_strs()
    assert env.move_str_to_action("b1-b3") == 8 * 1 + 0  # b1 = 1, direction N = 0
    assert env.action_to_move_str(8 * 2 + 7) == "c1xa3"  # c1, direction NW
    assert env.observe("player_1")["action_mask"].sum() == 0  # not player_1's turn


def test_observation_is_from_the_observers_view():
    env = loa_v0.raw_env()
    env.reset()
    black = env.observe("player_0")["observation"]
    white = env.observe("player_1")["observation"]
    assert black[0, 1, 0] == 1 and black[1, 0, 1] == 1  # b1 own, a2 enemy for Black
    assert white[0, 1, 1] == 1 and white[1, 0, 0] == 1
    assert black[..., 2].min() == 1 and white[..., 2].max() == 0
    assert black[..., 0].sum() == 12 and black[..., 1].sum() == 12


def test_win_rewards_and_termination():
    env = loa_v0.raw_env(position="8/8/8/2b1w2w/2b5/4w2w/1b6/b7 b 20")
    env.reset()
    env.step(env.move_str_to_action("c5-c3"))
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": 1, "player_1": -1}
    assert env.infos["player_0"]["turn"] == "c5-c3"
    assert env.observe(env.agent_selection)["action_mask"].sum() == 0


def test_forced_pass_action():
    env = loa_v0.raw_env(position="6wb/6ww/8/8/8/8/ww6/bw6 b 10")
    env.reset()
    mask = env.observe("player_0")["action_mask"]
    assert mask.sum() == 1 and mask[512] == 1
    env.step(512)
    assert env.agent_selection == "player_1"


def test_move_cap_draw_gives_zero_rewards():
    env = loa_v0.raw_env(position="1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b 399")
    env.reset()
    env.step(env.move_str_to_action("b1-b3"))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 0, "player_1": 0}


def test_raw_env_rejects_illegal_action_clearly():
    env = loa_v0.raw_env()
    env.reset()
    with pytest.raises(MoveError, match="not legal"):
        env.step(0)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError):
        loa_v0.raw_env(render_mode="bogus")
    with pytest.raises(ValueError):
        loa_v0.raw_env(max_moves=0)
    with pytest.raises(ValueError):
        loa_v0.raw_env(position="not a position")


def test_reset_options_position_and_renders():
    env = loa_v0.raw_env(render_mode="ansi")
    env.reset(options={"position": "6wb/6ww/8/8/8/8/ww6/bw6 b 10"})
    text = env.render()
    assert "a b c d e f g h" in text and "to move: black" in text
    env.step(512)
    assert "last move: pass" in env.render()
    rgb = loa_v0.raw_env(render_mode="rgb_array")
    rgb.reset()
    picture = rgb.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 4  # a real picture, not a blank


def test_action_game_is_usable_without_env():
    actions = LoaActions()
    state = actions.initial_state()
    assert actions.action_mask(state).sum() == 36
    nxt, turn = actions.apply_action(state, 8 * 1 + 0)
    assert turn == "b1-b3" and actions.to_move(nxt) == 1
    assert state.to_move == 0  # immutable


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), max_size=60))
def test_mask_matches_legal_moves_along_random_games(choices):
    actions = LoaActions()
    state = actions.initial_state()
    for choice in choices:
        mask = actions.action_mask(state)
        legal = state.legal_move_strs()
        assert sorted(actions.action_to_str(state, int(a)) for a in np.flatnonzero(mask)) == legal
        if not legal:
            break
        action = int(np.flatnonzero(mask)[choice % int(mask.sum())])
        state, turn = actions.apply_action(state, action)
        assert turn in legal
