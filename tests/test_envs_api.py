"""PettingZoo conformance of every boardzoo env: api_test, seed_test, render_test, registry."""

from __future__ import annotations

import importlib

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
    render_test(env_module(game).env)


@pytest.mark.parametrize("game", GAMES)
def test_registry_make_and_metadata(game):
    env = pettingzoo.make("aec", f"boardzoo/{game}-v0")
    env.reset(seed=0)
    meta = env.unwrapped.metadata
    assert meta["name"] == f"{game}_v0"
    assert meta["is_parallelizable"] is False and meta["render_fps"] > 0
    assert env.agent_selection == "player_0"
    assert set(boardzoo.ENV_IDS) == {f"boardzoo/{g}-v0" for g in GAMES}
