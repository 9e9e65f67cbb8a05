"""Distillation warm start: teacher scores, teacher games, and the model file round trip
through ``boardzoo train --init-from`` and ``checkpoint:PATH``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.agents.evaluation import get_evaluator
from boardzoo.agents.greedy import move_value
from boardzoo.envs.core.registry import action_game
from boardzoo.training.agent import load_net
from boardzoo.training.checkpoint import CheckpointError
from boardzoo.training.config import load_config
from boardzoo.training.distill import (
    WIN_SCORE,
    action_scores,
    distill,
    main,
    save_model,
    teacher_positions,
)
from boardzoo.training.prior import static_prior
from boardzoo.training.selfplay import NetEvaluator
from boardzoo.training.trainer import Trainer

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")
ULTIMA = ["game=ultima", "iterations=1", "selfplay.max_moves=6", "mcts.simulations=3",
          "eval.games=0", "model.policy_head=bilinear", "model.bilinear_dim=4",
          "model.value=prior"]

torch.set_num_threads(1)




def clipped(v: float) -> float:
    return float(np.clip(v, -WIN_SCORE, WIN_SCORE))


def test_ultima_teacher_scores_are_greedy_move_values():
    game, evaluate = action_game("ultima"), get_evaluator("ultima")
    for s in random_action_states("ultima", 3, seed=1):
        actions, scores = action_scores(game, s, evaluate)
        assert actions.tolist() == game.legal_actions(s)
        for a, v in zip(actions, scores, strict=True):
            assert v == pytest.approx(clipped(move_value(s, int(a), evaluate)))


def test_whistling_hop_scores_are_the_best_turn_that_starts_with_the_hop():
    game, evaluate = action_game("whistling"), get_evaluator("whistling")
    for s in random_action_states("whistling", 3, seed=2, max_plies=40):
        if s.done:
            continue
        best: dict[int, float] = {}
        for turn, acts in game.candidates(s):
            v = clipped(move_value(s.game, turn, evaluate))
            best[acts[0]] = max(best.get(acts[0], -np.inf), v)
        actions, scores = action_scores(game, s, evaluate)
        assert dict(zip(actions.tolist(), scores.tolist(), strict=True)) == pytest.approx(best)


@pytest.mark.parametrize("value", ["eval", "outcome"])
def test_teacher_positions_have_legal_policies_and_their_value_targets(value):
    cfg = load_config(TINY, ULTIMA)
    data = teacher_positions(cfg, 10, seed=3, value_target=value)
    game = action_game("ultima")
    assert len(data) == 10 and data.games == 2  # max_moves 6: 6 + 4 positions
    for k in range(len(data)):
        assert data.obs[k].shape == game.observation_shape
        assert np.all(data.probs[k] >= 0) and data.probs[k].sum() == pytest.approx(1.0)
        assert len(data.actions[k]) == len(data.probs[k])
        if value == "eval":
            assert data.values[k] == pytest.approx(np.tanh(data.priors[k]))
        else:
            assert -1 <= data.values[k] <= 1
    # the same seed gives the same games
    again = teacher_positions(cfg, 10, seed=3, value_target=value)
    assert all(np.array_equal(a, b) for a, b in zip(data.obs, again.obs, strict=True))
    sparse = teacher_positions(cfg, 10, seed=3, value_target=value, keep=0.3)
    assert len(sparse) == 10 and sparse.games > data.games


def test_distilled_model_round_trips_through_init_from_and_the_checkpoint_agent(tmp_path):
    cfg = load_config(TINY, ULTIMA)
    data = teacher_positions(cfg, 12, seed=4)
    net, losses = distill(cfg, data, steps=3, seed=4)
    assert np.isfinite(losses["loss"])
    path = tmp_path / "distilled.pt"
    save_model(cfg, net, path, "test")
    game = action_game("ultima")
    states = random_action_states("ultima", 3, seed=5)
    want = NetEvaluator(net, game)(states)

    run_cfg = load_config(TINY, ULTIMA)
    trainer = Trainer(run_cfg, tmp_path / "run", progress=False, echo=False, init_from=path)
    got = NetEvaluator(trainer.net, game)(states)
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
    loaded, _, _ = load_net(path, "ultima")
    got = NetEvaluator(loaded, game)(states)
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])
    assert static_prior("ultima", game, states).shape == (3,)

    # the run trains from there, and resumes without reading the model file again
    trainer.run()
    path.unlink()
    more = load_config(TINY, [*ULTIMA, "iterations=2"])
    assert Trainer(more, tmp_path / "run", resume=True, progress=False,
                   echo=False).run()["iteration"] == 2


def test_init_from_is_a_start_up_option_that_resume_does_not_need(tmp_path, capsys):
    """``train --init-from`` starts a run; resuming it needs no --init-from (the model
    identity does not include where the weights came from); with --resume it is refused."""
    from boardzoo.cli import main

    cfg = load_config(TINY, ULTIMA)
    path = tmp_path / "d.pt"
    save_model(cfg, distill(cfg, teacher_positions(cfg, 4, seed=6), steps=1)[0], path)
    sets = [a for s in ULTIMA for a in ("--set", s)]
    out = str(tmp_path / "run")
    assert main(["train", "--config", TINY, *sets, "--out", out, "--quiet",
                 "--init-from", str(path)]) == 0
    assert main(["train", "--config", TINY, *sets, "--set", "iterations=2", "--out", out,
                 "--quiet", "--resume"]) == 0
    assert main(["train", "--config", TINY, *sets, "--set", "iterations=3", "--out", out,
                 "--quiet", "--resume", "--init-from", str(path)]) == 2
    assert "--init-from starts a new run" in capsys.readouterr().err
    assert main(["train", "--config", TINY, "--set", f"model.init_from={path}", "--out",
                 str(tmp_path / "old"), "--quiet"]) == 2
    assert "--init-from" in capsys.readouterr().err  # the old key names its replacement


def test_init_from_a_model_of_another_config_or_game_is_an_error(tmp_path):
    cfg = load_config(TINY, ULTIMA)
    net, _ = distill(cfg, teacher_positions(cfg, 4, seed=6), steps=1)
    path = tmp_path / "d.pt"
    save_model(cfg, net, path)
    other = load_config(TINY, [*ULTIMA, "model.bilinear_dim=8"])
    with pytest.raises(CheckpointError, match="has another model: model.bilinear_dim"):
        Trainer(other, tmp_path / "a", progress=False, echo=False, init_from=path)
    loa = load_config(TINY)
    with pytest.raises(CheckpointError, match="network for ultima"):
        Trainer(loa, tmp_path / "b", progress=False, echo=False, init_from=path)
    missing = load_config(TINY, ULTIMA)
    with pytest.raises(CheckpointError, match="not found"):
        Trainer(missing, tmp_path / "c", progress=False, echo=False,
                init_from=tmp_path / "none.pt")


def test_distill_entry_point_writes_a_playable_model(tmp_path, capsys):
    out = tmp_path / "w.pt"
    args = ["--config", str(REPO / "configs" / "whistling.yaml"), "--positions", "3",
            "--steps", "1", "--out", str(out), "--set", "model.channels=4",
            "--set", "model.blocks=1", "--set", "model.internal_grid=true",
            "--set", "model.policy_head=bilinear", "--set", "train.batch_size=2"]
    assert main(args) == 0
    assert "wrote" in capsys.readouterr().out
    net, cfg, data = load_net(out, "whistling")
    assert cfg.model.internal_grid and "distilled from 3" in data["note"]
