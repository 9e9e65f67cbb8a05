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
    VALUE_TARGETS,
    WIN_SCORE,
    action_scores,
    distill,
    save_model,
    teacher_positions,
)
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


@pytest.mark.parametrize("value", ["eval", "search", "outcome"])
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


def test_loa_search_values_come_from_the_compiled_search_and_equal_the_python_one(monkeypatch):
    # LOA's teacher values come from the compiled alpha-beta; replaying the same positions
    # through one Python search (agents/alphabeta.py, its table kept as the teacher's is)
    # gives the same values, bit for bit
    import math

    from boardzoo.agents.alphabeta import AlphaBetaAgent, searcher
    from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta
    from boardzoo.envs.core.registry import get_spec
    from boardzoo.training import distill as distill_module

    built: list[AlphaBetaAgent] = []

    def recording(*args: object, **kwargs: object) -> AlphaBetaAgent:
        built.append(searcher(*args, **kwargs))  # type: ignore[arg-type]
        return built[-1]

    monkeypatch.setattr(distill_module, "alphabeta_searcher", recording)
    cfg = load_config(TINY, ["selfplay.max_moves=12"])
    data = teacher_positions(cfg, 12, seed=5, value_target="search", search_depth=2)
    assert len(built) == 1 and isinstance(built[0], CompiledLoaAlphaBeta)
    assert len(set(data.values)) > 3
    python = AlphaBetaAgent("loa", depth=2, seed=5)
    game, scale = action_game("loa"), get_spec("loa").eval_scale
    for state, value in zip(data.states, data.values, strict=True):
        v = python.search_value(game.game_state(state))
        assert value == math.tanh(max(-WIN_SCORE, min(WIN_SCORE, v)) / scale)


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


def test_distill_command_writes_a_playable_model(tmp_path, capsys):
    from boardzoo.cli import build_parser, main

    out = tmp_path / "w.pt"
    value = next(a for a in build_parser()._subparsers._group_actions[0].choices["distill"]
                 ._actions if a.dest == "value")
    assert tuple(value.choices) == VALUE_TARGETS  # the CLI offers what distillation takes
    args = ["distill", "--config", str(REPO / "configs" / "whistling.yaml"), "--positions", "3",
            "--steps", "1", "--out", str(out), "--set", "model.channels=4",
            "--set", "model.blocks=1", "--set", "model.internal_grid=true",
            "--set", "model.policy_head=bilinear", "--set", "train.batch_size=2"]
    assert main(args) == 0
    assert "wrote" in capsys.readouterr().out
    net, cfg, data = load_net(out, "whistling")
    assert cfg.model.internal_grid and "distilled from 3" in data["note"]


def test_alphabeta_search_value_sees_a_mate_in_one_at_depth_one():
    """Black mates with c1-b1 (the spec's worked checkmate, section 11): a one-turn search
    values the position as won for Black, the static evaluation does not."""
    from boardzoo.agents.alphabeta import WIN, AlphaBetaAgent
    from boardzoo.envs.ultima.rules import State

    state = State.from_text("7k/8/8/8/8/7P/1i6/K1w5 b 0 1")
    assert AlphaBetaAgent("ultima", depth=1, seed=0).search_value(state) >= WIN - 2
    assert abs(get_evaluator("ultima")(state)) < 20


def test_search_value_targets_and_kept_policy():
    """value_target search: each target is tanh(depth-1 alpha-beta value / scale) of the
    position for its player to act, and some differ from the evaluation's; policy_net: each
    policy target is that network's own softmax over the legal actions."""
    from boardzoo.agents.alphabeta import AlphaBetaAgent

    cfg = load_config(TINY, ULTIMA + ["selfplay.max_moves=40"])
    net = distill(cfg, teacher_positions(cfg, 8, seed=1), 2)[0]
    data = teacher_positions(cfg, 30, seed=4, value_target="search", policy_net=net)
    game, scale = action_game("ultima"), 3.0
    logits = NetEvaluator(net, game)(data.states)[0]
    searcher = AlphaBetaAgent("ultima", depth=1, seed=0)
    differs = 0
    for k, state in enumerate(data.states):
        v = searcher.search_value(state)  # Ultima: the action state is the rules state
        assert data.values[k] == pytest.approx(np.tanh(np.clip(v, -WIN_SCORE, WIN_SCORE) / scale),
                                               abs=1e-6)
        differs += abs(data.values[k] - np.tanh(data.priors[k])) > 0.02
        z = logits[k][data.actions[k]].astype(np.float64)
        assert data.probs[k] == pytest.approx(np.exp(z - z.max()) / np.exp(z - z.max()).sum(),
                                              abs=1e-5)
    assert differs > 0


def test_start_net_lets_model_value_change_and_nothing_else(tmp_path):
    """--init-from in distill: a static-value model file starts a prior-value network with
    the same weights; a model file of another architecture is refused in one line."""
    from boardzoo.training.distill import start_net

    static = load_config(TINY, ULTIMA[:-1] + ["model.value=static", "model.policy_prior=2"])
    path = tmp_path / "static.pt"
    torch.manual_seed(0)
    save_model(static, distill(static, teacher_positions(static, 4, seed=1), 1)[0], path)
    learns = load_config(TINY, ULTIMA[:-1] + ["model.value=prior", "model.policy_prior=2"])
    net = start_net(learns, path)
    saved = torch.load(path, weights_only=True)["model"]
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in saved.items())
    with pytest.raises(CheckpointError, match="another model"):
        start_net(load_config(TINY, [*ULTIMA, "model.policy_prior=2", "model.bilinear_dim=8"]),
                  path)
    from boardzoo.cli import main

    assert main(["distill", "--config", TINY, "--keep-policy", "--out",
                 str(tmp_path / "x.pt")]) == 2
