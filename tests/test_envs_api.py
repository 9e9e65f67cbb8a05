"""PettingZoo conformance of every boardzoo env: api_test, seed_test, render_test, registry."""

from __future__ import annotations

import importlib

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import boardzoo

GAMES = ["loa", "ultima", "whistling"]


def env_module(game: str):
    return importlib.import_module(f"boardzoo.envs.{game}_v0")


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_test(game):
    api_test(env_module(game).env(), num_cycles=300)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_seed_test(game):
    seed_test(env_module(game).env, num_cycles=300)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_render_test(game):
    def env_fn(**kwargs):  # "human" opens a (headless) window; no need to wait 1/render_fps
        env = env_module(game).env(**kwargs)
        env.unwrapped.metadata = {**env.unwrapped.metadata, "render_fps": 1000}
        return env

    render_test(env_fn)


@pytest.mark.parametrize("game", GAMES)
def test_registry_make_and_metadata(game):
    env = pettingzoo.make("aec", f"boardzoo/{game}-v0")
    env.reset(seed=0)
    meta = env.unwrapped.metadata
    assert meta["name"] == f"{game}_v0"
    assert meta["is_parallelizable"] is False and meta["render_fps"] > 0
    assert env.agent_selection == "player_0"
    assert set(boardzoo.ENV_IDS) == {f"boardzoo/{g}-v0" for g in GAMES}


@pytest.mark.parametrize("game", GAMES)
def test_max_moves_truncates_after_whole_turns(game):
    env = env_module(game).env(max_moves=5)
    env.reset(seed=3)
    ends = []
    for _agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            ends.append((reward, term, trunc))
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.unwrapped.turns_played == 5  # a Whistling chain of hops is one turn
    assert ends == [(0, False, True), (0, False, True)]  # both agents truncated, no reward


@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_ends_game_with_penalty(game):
    env = env_module(game).env()
    env.reset()
    illegal = int(np.flatnonzero(env.observe("player_0")["action_mask"] == 0)[0])
    env.step(illegal)
    assert env.rewards == {"player_0": -1, "player_1": 0}
    assert all(env.terminations.values())


@pytest.mark.parametrize("game", GAMES)
def test_wrappers_read_the_raw_envs_step_data(game):
    # the stack keeps PettingZoo's wrapper types and their checks; every layer shows the raw
    # env's per-step data and legal actions, read in one look-up (boardzoo.envs.aec.RawData)
    from pettingzoo.utils import wrappers

    from boardzoo.envs.aec import STEP_DATA, RawData

    env = env_module(game).env()
    with pytest.raises(AttributeError, match="before reset"):
        env.agents  # noqa: B018  (OrderEnforcingWrapper's check still runs)
    env.reset(seed=0)
    raw, layers = env.unwrapped, []
    layer = env
    while layer is not raw:
        layers.append(layer)
        layer = layer.env
    kinds = (wrappers.OrderEnforcingWrapper, wrappers.AssertOutOfBoundsWrapper,
             wrappers.TerminateIllegalWrapper)
    assert all(any(isinstance(w, k) for w in layers) for k in kinds)
    assert all(isinstance(w, RawData) for w in layers)
    assert str(env) == "IntegerActionWrapper<" + str(raw) + ">"  # as PettingZoo's stack shows
    rng = np.random.default_rng(0)
    for _ in range(6):
        obs, *_ = env.last()
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert legal and all(w.legal_actions() == legal for w in layers)
        env.step(int(rng.choice(legal)))
        for w in layers:
            assert all(getattr(w, name) is getattr(raw, name) for name in STEP_DATA)
    layers[1].infos = {"x": {}}  # a write lands on the raw env, as a read comes from it
    assert raw.infos == {"x": {}}


def test_out_of_bounds_check_still_refuses_what_pettingzoo_refuses():
    # wrap()'s AssertOutOfBoundsWrapper skips PettingZoo's check for the Python ints the
    # integer check above it passes; on its own it still asserts as PettingZoo's does
    from boardzoo.envs.aec import AssertOutOfBoundsWrapper

    env = AssertOutOfBoundsWrapper(env_module("loa").raw_env())
    env.reset()
    with pytest.raises(AssertionError, match="not in action space"):
        env.step(513)
    with pytest.raises(AssertionError, match="not in action space"):
        env.step(-1)
    legal = env.legal_actions()[0]
    env.step(np.int64(legal))  # a NumPy integer in the space passes PettingZoo's check
    assert env.unwrapped.turns_played == 1
