"""BatchedEnv (auto-reset, rewards, checks), random_legal_actions and the registry hook."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from boardzoo.envs.core import registry
from boardzoo.envs.core.batched import BatchedEnv, BatchedGame, random_legal_actions
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.core.registry import UnknownGameError, batched_game
from boardzoo.envs.loa.actions import LoaActions
from boardzoo.envs.loa.rules import State

ACTIONS = LoaActions()


def test_auto_reset_env_follows_the_reference_game_by_game():
    n = 6
    env = BatchedEnv("loa", n)
    obs, mask = env.reset(seed=3)
    states, finished = [State.start()] * n, 0
    for _ in range(300):
        actions = env.random_actions()
        assert env.legal_mask().gather(1, actions[:, None]).all()
        obs, rewards, terminated = env.step(actions)
        for i, action in enumerate(actions.tolist()):
            states[i] = states[i].apply(action)
            ended = states[i].is_terminal()
            assert bool(terminated[i]) == ended
            assert tuple(rewards[i].tolist()) == (states[i].returns() if ended else (0.0, 0.0))
            if ended:
                states[i], finished = State.start(), finished + 1
        ref_obs = np.stack([ACTIONS.observation(s, s.to_move) for s in states])
        ref_mask = np.stack([ACTIONS.action_mask(s) for s in states]).astype(bool)
        assert np.array_equal(obs.numpy(), ref_obs)
        assert np.array_equal(env.legal_mask().numpy(), ref_mask)
        assert env.to_move().tolist() == [s.to_move for s in states]
    assert finished >= 4  # random LOA games last about 210 plies


def test_without_auto_reset_finished_games_stay_and_pay_once():
    env = BatchedEnv("loa", 4, auto_reset=False)
    env.reset(seed=1)
    paid = torch.zeros(4, 2)
    for _ in range(2000):
        _, rewards, terminated = env.step(env.random_actions())
        paid += rewards
        if terminated.all():
            break
    assert terminated.all() and not env.legal_mask().any()
    assert torch.equal(paid, env.game.returns(env.batch))
    _, rewards, terminated = env.step(torch.zeros(4, dtype=torch.long))
    assert terminated.all() and not rewards.any()


def test_same_seed_same_games():
    runs = []
    for _ in range(2):
        env = BatchedEnv("loa", 8)
        env.reset(seed=7)
        runs.append(torch.stack([env.step(env.random_actions())[0] for _ in range(30)]))
    assert torch.equal(runs[0], runs[1])


def test_a_cloned_batch_outlives_in_place_steps():
    env = BatchedEnv("loa", 3)
    for _ in range(10):
        env.step(env.random_actions())
    snapshot = env.batch.clone()
    before = [(s.to_text(), s.history) for s in env.game.to_states(snapshot)]
    for _ in range(10):
        env.step(env.random_actions())
    assert [(s.to_text(), s.history) for s in env.game.to_states(snapshot)] == before


def test_check_actions_rejects_illegal_and_out_of_range_actions():
    env = BatchedEnv("loa", 2, check_actions=True)
    env.reset()
    with pytest.raises(MoveError):
        env.step(torch.tensor([512, 512]))  # pass while moves exist
    with pytest.raises(MoveError):
        env.step(torch.tensor([513, 0]))
    with pytest.raises(ValueError):
        env.step(torch.tensor([0]))


def test_random_legal_actions_are_uniform_and_legal():
    # rows of one mask: the last column alone (width not a multiple of 8), a spread set,
    # a full row and an empty row (-> 0)
    width, draws = 13, 4000
    mask = torch.zeros(4, width, dtype=torch.bool)
    mask[0, 12] = True
    mask[1, [0, 5, 8, 12]] = True
    mask[2] = True
    rows = mask.repeat(draws, 1)
    gen = torch.Generator().manual_seed(0)
    actions = random_legal_actions(rows, gen).view(draws, 4)
    assert (actions[:, 0] == 12).all() and (actions[:, 3] == 0).all()
    for row in (1, 2):
        legal = mask[row].nonzero()[:, 0]
        counts = torch.bincount(actions[:, row], minlength=width)[legal].double()
        assert counts.sum() == draws  # never an illegal action
        expected = draws / len(legal)
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < 35.0  # far above the 99.9% point for up to 12 degrees of freedom
    again = random_legal_actions(rows, torch.Generator().manual_seed(0)).view(draws, 4)
    assert torch.equal(actions, again)
    # the same rows as views into word-aligned storage (read in place when the padding is
    # zero, copied when it is not) give the same draws
    for pad in (False, True):
        storage = torch.full((rows.shape[0], 16), pad)
        storage[:, :width] = rows
        view = random_legal_actions(storage[:, :width], torch.Generator().manual_seed(0))
        assert torch.equal(view.view(draws, 4), actions)


def test_registry_batched_game():
    assert batched_game("loa").name == "loa"
    with pytest.raises(UnknownGameError):
        batched_game("chess")


def test_registry_game_without_batched_engine(monkeypatch):
    # a registered game whose descriptor names no batched engine
    spec = dataclasses.replace(registry.get_spec("loa"), name="fake", batched_module=None)
    monkeypatch.setitem(registry._SPECS, "fake", spec)
    with pytest.raises(UnknownGameError):
        batched_game("fake")


def test_base_reset_where_matches_the_engines_override():
    env = BatchedEnv("loa", 5)
    for _ in range(20):
        env.step(env.random_actions())
    done = torch.tensor([True, False, False, True, False])
    game = env.game
    texts = [s.to_text() for s in game.to_states(BatchedGame.reset_where(game, env.batch, done))]
    fast = [s.to_text() for s in game.to_states(game.reset_where(env.batch, done))]
    assert texts == fast
    assert [texts[i] == State.start().to_text() for i in range(5)] == done.tolist()


def test_a_device_that_contradicts_the_given_engine_is_an_error():
    # the env runs on its engine's device: a different explicit device was silently ignored
    engine = batched_game("loa", "cpu")
    with pytest.raises(ValueError, match="device"):
        BatchedEnv(engine, 2, device="meta")
    assert BatchedEnv(engine, 2, device="cpu").device == torch.device("cpu")
    assert BatchedEnv(engine, 2).device == engine.device  # no device given: the engine's
