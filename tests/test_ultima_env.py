"""The Ultima PettingZoo env: API conformance, masks, observations, rewards, rendering."""

from __future__ import annotations

import numpy as np
import pytest

import boardzoo  # noqa: F401 - registers the envs
from boardzoo.envs import ultima_v0
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.ultima import State
from boardzoo.envs.ultima.actions import NUM_PLANES, UltimaActions
from boardzoo.envs.ultima.render import FROZEN_RING


def test_spaces_and_metadata():
    env = ultima_v0.raw_env()
    assert env.action_space("player_0").n == 4096
    assert env.observation_space("player_1")["observation"].shape == (8, 8, NUM_PLANES)
    assert env.observation_space("player_1")["action_mask"].shape == (4096,)
    assert env.metadata["is_parallelizable"] is False and "render_fps" in env.metadata


def test_mask_equals_legal_moves_and_actions_decode():
    env = ultima_v0.raw_env()
    env.reset()
    mask = env.observe("player_0")["action_mask"]
    legal = sorted(env.action_to_move_str(int(a)) for a in np.flatnonzero(mask))
    assert legal == State.start().legal_move_strs()
    assert env.move_str_to_action("e2-e5") == 64 * 12 + 36  # e2 = 12, e5 = 36
    assert env.observe("player_1")["action_mask"].sum() == 0  # not player_1's turn


def test_multi_capture_is_one_step():
    env = ultima_v0.raw_env(position="7k/2C1O3/3lc3/2Pw1oL1/8/8/4P3/K7 w 0 1")
    env.reset()
    env.step(env.move_str_to_action("e2e5"))
    assert env.infos["player_0"]["turn"] == "e2e5xd5xe6xf5"
    assert env.game.to_text() == "7k/2C1O3/3l4/2P1P1L1/8/8/8/K7 b 0 1"
    assert env.agent_selection == "player_1"


def test_observation_planes():
    env = ultima_v0.raw_env(position="k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 7 3")
    env.reset()
    white = env.observe("player_0")["observation"]
    black = env.observe("player_1")["observation"]
    assert white.dtype == np.float32 and white.shape == (8, 8, NUM_PLANES)
    assert white.min() >= 0 and white.max() <= 1
    assert white[0, 7, 0] == 1 and black[0, 7, 7] == 1  # h1: White's king
    assert white[7, 0, 7] == 1 and black[7, 0, 0] == 1  # a8: Black's king
    assert white[4, 4, 12] == 1 and black[4, 4, 5] == 1  # e5: Black's immobilizer
    assert white[3, 3, 1] == 1 and white[2, 3, 8] == 1  # d4 own pawn, d3 enemy pawn
    frozen = {(3, 3), (3, 5), (5, 5)}  # d4, f4, f6 next to the immobilizer
    assert {tuple(x) for x in np.argwhere(white[..., 14])} == frozen
    assert {tuple(x) for x in np.argwhere(black[..., 15])} == frozen
    assert white[..., 15].sum() == 0
    assert white[..., 16].min() == 1 and black[..., 16].max() == 0  # side to move
    assert white[..., 17].min() == 1 and black[..., 17].max() == 0  # plays White
    assert np.allclose(white[..., 18], 0.07) and np.allclose(white[..., 19], 4 / 400)
    assert white[..., 20].max() == 0 and white[..., 21].min() == 1
    # every piece is on exactly one piece plane
    assert white[..., :14].sum() == 8 and (white[..., :14].sum(axis=2) <= 1).all()


def test_checkmate_rewards_and_termination():
    # Black's withdrawer d1-b1 reaches the spec's checkmate position (king a1 frozen by b2)
    env = ultima_v0.raw_env(position="7k/8/8/8/8/7P/1i6/K2w4 b 0 1")
    env.reset()
    env.step(env.move_str_to_action("d1b1"))
    assert env.game.to_text() == "7k/8/8/8/8/7P/1i6/Kw6 w 1 2"
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.rewards == {"player_0": -1, "player_1": 1}
    assert env.observe(env.agent_selection)["action_mask"].sum() == 0


def test_draw_gives_zero_rewards_and_empty_mask():
    env = ultima_v0.raw_env(position="7k/8/8/8/8/8/1p6/K7 w 0 1")
    env.reset()
    env.step(env.move_str_to_action("a1b2"))  # bare kings
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 0, "player_1": 0}
    assert env.observe("player_1")["action_mask"].sum() == 0
    assert env.legal_actions() == []
    with pytest.raises(MoveError, match="game is over"):
        env.move_str_to_action("h8g8")


def test_no_legal_move_at_reset_ends_the_episode():
    env = ultima_v0.raw_env(position="7k/8/8/8/8/8/1i6/KP6 w 0 1")
    env.reset()
    assert env.terminations["player_0"] and env.rewards == {"player_0": -1, "player_1": 1}


def test_raw_env_rejects_illegal_action_clearly():
    env = ultima_v0.raw_env()
    env.reset()
    with pytest.raises(MoveError, match="not legal"):
        env.step(64 * 3 + 11)  # the king d1 is boxed in


def test_bad_constructor_arguments():
    with pytest.raises(ValueError):
        ultima_v0.raw_env(render_mode="bogus")
    with pytest.raises(ValueError):
        ultima_v0.raw_env(max_moves=0)
    with pytest.raises(ValueError, match="field"):
        ultima_v0.raw_env(position="not a position at all")


def test_reset_options_position_and_renders():
    env = ultima_v0.raw_env(render_mode="ansi")
    env.reset(options={"position": "7k/2C1O3/3lc3/2Pw1oL1/8/8/4P3/K7 w 0 1"})
    text = env.render()
    assert "a b c d e f g h" in text and "to move: white" in text
    env.step(env.move_str_to_action("e2e5"))
    assert "last move: e2e5xd5xe6xf5" in env.render()
    rgb = ultima_v0.raw_env(render_mode="rgb_array")
    rgb.reset()
    rgb.step(rgb.move_str_to_action("e2e4"))
    picture = rgb.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 4


def test_rgb_picture_marks_frozen_pieces():
    def ring_pixels(position):
        env = ultima_v0.raw_env(render_mode="rgb_array", position=position)
        env.reset()
        return int((env.render().reshape(-1, 3) == FROZEN_RING).all(axis=1).sum())

    with_frozen = ring_pixels("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1")
    without = ring_pixels("k7/8/5W2/8/3P1L2/3p4/P7/7K w 0 1")
    assert with_frozen > without + 100  # three rings on the board (the legend has one)


def test_action_game_is_usable_without_env():
    actions = UltimaActions()
    state = actions.initial_state()
    assert actions.action_mask(state).sum() == 32
    assert actions.legal_actions(state) == sorted(state.legal_moves())
    nxt, turn = actions.apply_action(state, 64 * 12 + 28)
    assert turn == "e2e4" and actions.to_move(nxt) == 1
    assert state.to_move == 0  # immutable
    assert actions.str_to_action(state, "E2-E4") == 64 * 12 + 28
    drawn = actions.initial_state("7k/8/8/8/8/8/8/K7 w 0 1")
    assert actions.legal_actions(drawn) == [] and actions.action_mask(drawn).sum() == 0
    with pytest.raises(MoveError):
        actions.apply_action(drawn, 1)
