"""The policy prior (``model.policy_prior``, Ultima's capture values), zero-initialised
heads and the value loss of positions without a value target (the targets themselves:
test_value_targets.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game, get_spec
from boardzoo.envs.ultima.evaluation import capture_values
from boardzoo.training.buffer import ReplayBuffer
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.knowledge import Knowledge
from boardzoo.training.network import build_net
from boardzoo.training.selfplay import NetEvaluator

from conftest import defined_priors, random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")

torch.set_num_threads(1)


def ultima_net(*sets: str):
    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", *sets])
    return build_net(cfg, action_game("ultima")).eval()


# -- Ultima's capture values (hand-checked against the rules, spec 11) -----------------------
def test_capture_values_of_hand_checked_positions():
    state = get_spec("ultima").load_state
    # Spec 11: the only capture is a2-d2 with the frozen d4 pawn as pincer partner (d3 = pawn).
    moves, values = capture_values(state("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1"))
    assert [state("k7/8/5W2/4i3/3P1L2/3p4/P7/7K w 0 1").move_to_str(m) for m in moves] == \
        ["a2d2xd3"] and values.tolist() == [1.0]
    # Spec 11: the king takes the adjacent chameleon (3 pawns); its other moves take nothing.
    pos = state("4k3/pp1C4/8/8/8/8/8/7K b 0 1")
    moves, values = capture_values(pos)
    assert [pos.move_to_str(m) for m in moves] == ["e8d7xd7"] and values.tolist() == [3.0]
    # The start position has no capture; a finished game has no legal move at all.
    assert len(capture_values(get_spec("ultima").start())[0]) == 0
    assert len(capture_values(state("7k/8/8/8/8/7P/1i6/Kw6 w 0 1"))[0]) == 0


def test_action_prior_lines_up_with_the_legal_actions():
    game = action_game("ultima")
    for s in random_action_states("ultima", 6, seed=3, max_plies=60):
        actions = np.asarray(game.legal_actions(s))
        _, aligned = Knowledge("ultima", policy_prior=1.0).root(s, actions)
        dense = defined_priors("ultima", [s])[1][0]
        assert np.array_equal(dense[actions], aligned)
        assert dense.sum() == aligned.sum()  # nothing outside the legal actions
        moves, values = capture_values(game.game_state(s))
        assert sorted(actions[aligned > 0].tolist()) == sorted(moves.tolist())


# -- network --------------------------------------------------------------------------------
def test_zero_init_network_is_exactly_its_priors():
    """A fresh network with priors: logits = policy_prior x capture values, value =
    tanh(evaluation / scale), for the player to act."""
    game = action_game("ultima")
    net = ultima_net("model.policy_prior=2", "model.value=prior")
    states = random_action_states("ultima", 8, seed=5, max_plies=80)
    logits, values = NetEvaluator(net, game)(states)
    spec = get_spec("ultima")
    for s, lg, v in zip(states, logits, values, strict=True):
        want = np.zeros(game.num_actions, np.float32)
        moves, caps = capture_values(s)
        want[moves] = 2.0 * caps
        assert np.allclose(lg, want, atol=1e-6)
        assert v == pytest.approx(math.tanh(spec.evaluate(s) / spec.eval_scale), abs=1e-5)


def test_policy_prior_network_needs_the_action_prior():
    net = ultima_net("model.policy_prior=1", "model.value=learned")
    obs = torch.zeros(2, *action_game("ultima").observation_shape)
    with pytest.raises(ValueError, match="policy_prior"):
        net(obs)
    bonus = torch.zeros(2, 4096)
    bonus[0, 7] = 3.0
    with torch.no_grad():
        base, _ = net(obs, None, torch.zeros(2, 4096))
        with_bonus, _ = net(obs, None, bonus)
    assert torch.allclose(with_bonus - base, bonus)


def test_a_network_without_priors_starts_from_a_random_initialisation():
    net = ultima_net("model.policy_prior=0", "model.value=learned")
    assert net.value_fc[-1].weight.abs().sum() > 0 and net.policy.key.weight.abs().sum() > 0
    with_prior = ultima_net("model.policy_prior=0", "model.value=prior")
    assert with_prior.value_fc[-1].weight.abs().sum() == 0


# -- config ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sets, message", [
    (["game=loa", "model.policy_prior=1"], "loa has no action prior"),
    (["game=ultima", "model.policy_prior=-1"],
     r"model.policy_prior must be between 0 and 100 \(0: off\), got -1"),
    (["train.value_target_q=1.5"], "train.value_target_q must be between 0 and 1, got 1.5"),
])
def test_prior_settings_are_validated(sets, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, sets)


def test_training_keys_are_validated_and_prior_kl_needs_a_policy_prior():
    from boardzoo.training.config import refused_keys

    for key in ("train.prior_kl", "train.policy_loss_weight"):
        with pytest.raises(ConfigError, match=f"{key} must be between 0 and 1000, got -1"):
            load_config(TINY, ["game=ultima", f"{key}=-1"])
    plain = load_config(TINY, ["game=loa"])
    assert "model.policy_prior" in refused_keys(plain, ["train.prior_kl"])
    ultima = load_config(REPO / "configs" / "ultima.yaml", ["train.prior_kl=1"])
    assert refused_keys(ultima, ["train.prior_kl"]) is None


# -- policy loss weight and the pull toward the prior ---------------------------------------
def _ultima_batch(n: int, seed: int) -> dict[str, torch.Tensor]:
    """A batch of ``n`` Ultima positions with random search targets on the legal actions."""
    game = action_game("ultima")
    states = random_action_states("ultima", n, seed=seed, max_plies=60)
    rng = np.random.default_rng(seed)
    mask = np.stack([game.action_mask(s).astype(bool) for s in states])
    policy = rng.random(mask.shape).astype(np.float32) * mask
    policy /= policy.sum(1, keepdims=True)
    obs = np.stack([game.observation(s, game.to_move(s)) for s in states])
    return {"obs": torch.from_numpy(obs), "mask": torch.from_numpy(mask),
            "policy": torch.from_numpy(policy), "value": torch.zeros(n),
            "action_prior": torch.from_numpy(defined_priors("ultima", states)[1])}


def test_prior_kl_is_the_divergence_from_the_capture_policy():
    """KL(softmax(2 x capture values) || the net's policy) over the legal moves, by hand."""
    from boardzoo.training.learner import compute_loss

    torch.manual_seed(0)
    net = ultima_net("model.policy_prior=2", "model.value=learned")
    batch = _ultima_batch(6, seed=11)
    assert batch["action_prior"].sum() > 0  # some positions have captures
    with torch.no_grad():
        plain, _, _ = compute_loss(net, batch, 0.0)
        fresh, _, _ = compute_loss(net, batch, 0.0, prior_kl=5.0)
        assert fresh.item() == pytest.approx(plain.item(), abs=1e-6)  # exactly its prior
        net.policy.key.weight.normal_(0.0, 3.0)
        net.policy.query.weight.normal_(0.0, 3.0)
        plain, _, _ = compute_loss(net, batch, 0.0)
        pulled, _, _ = compute_loss(net, batch, 0.0, prior_kl=0.5)
        logits, _ = net(batch["obs"], None, batch["action_prior"])
    kls = []
    for lg, m, ap in zip(logits.numpy().astype(np.float64), batch["mask"].numpy(),
                         batch["action_prior"].numpy(), strict=True):
        legal = np.flatnonzero(m)
        p0 = np.exp(2.0 * ap[legal]) / np.exp(2.0 * ap[legal]).sum()
        logq = lg[legal] - np.log(np.exp(lg[legal]).sum())
        kls.append((p0 * (np.log(p0) - logq)).sum())
    assert pulled.item() - plain.item() == pytest.approx(0.5 * np.mean(kls), rel=1e-4)
    assert np.mean(kls) > 0.1


def test_prior_kl_equals_mixing_the_target_with_the_prior():
    """CE(target) + w KL(prior || policy) has the gradient of (1 + w) CE((target + w prior)
    / (1 + w)): the pull toward the prior is a target mixed with it."""
    from boardzoo.training.learner import compute_loss

    torch.manual_seed(1)
    net = ultima_net("model.policy_prior=2", "model.value=learned")
    with torch.no_grad():
        net.policy.key.weight.normal_()
    batch = _ultima_batch(5, seed=12)
    w = 0.7
    prior = torch.softmax((2.0 * batch["action_prior"]).masked_fill(~batch["mask"], -math.inf), 1)
    mixed = dict(batch, policy=(batch["policy"] + w * prior) / (1 + w))
    grads = []
    for b, kw in ((batch, {"prior_kl": w}), (mixed, {"policy_weight": 1 + w})):
        net.zero_grad()
        compute_loss(net, b, 0.0, **kw)[0].backward()
        grads.append(net.policy.key.weight.grad.clone())
    assert grads[0].abs().max() > 1e-4
    assert torch.allclose(grads[0], grads[1], atol=1e-6)


def _fill_buffer(learner, batch: dict[str, torch.Tensor], priors: bool) -> None:
    """Add ``batch``'s positions to the learner's buffer, results alternating; ``priors``:
    with a value prior and the action priors of their legal actions."""
    for k in range(len(batch["obs"])):
        legal = np.flatnonzero(batch["mask"][k].numpy())
        extra = ({"prior": 0.1, "action_prior": batch["action_prior"][k].numpy()[legal]}
                 if priors else {})
        learner.buffer.add(batch["obs"][k].numpy(), legal.astype(np.int32),
                           batch["policy"][k].numpy()[legal], 1.0 if k % 2 else -1.0, **extra)


def test_policy_loss_weight_zero_trains_the_value_only():
    from boardzoo.training.learner import Learner

    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", "model.value=prior",
                       "train.policy_loss_weight=0", "train.prior_kl=0", "train.min_buffer=1",
                       "train.batch_size=8", "train.steps_per_iteration=5",
                       "train.replay_ratio=0"])
    game = action_game("ultima")
    learner = Learner(cfg, game)
    _fill_buffer(learner, _ultima_batch(8, seed=13), priors=True)
    key = learner.net.policy.key.weight.clone()
    value_out = learner.net.value_fc[-1].weight.clone()
    learner.train_steps(1)
    assert learner.last_steps == 5
    assert torch.equal(learner.net.policy.key.weight, key)  # zero, and held there
    assert not torch.equal(learner.net.value_fc[-1].weight, value_out)


def test_priors_turned_off_by_an_override_train_without_the_pull():
    # configs/ultima.yaml sets train.prior_kl; --set model.policy_prior=0 (pure self-play)
    # keeps that key from the file, and training must not look for action priors it lacks
    from boardzoo.training.learner import Learner

    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", "model.value=learned",
                       "model.policy_prior=0", "train.min_buffer=1", "train.batch_size=8",
                       "train.steps_per_iteration=3", "train.replay_ratio=0"])
    assert cfg.train.prior_kl > 0 and cfg.model.policy_prior == 0
    learner = Learner(cfg, action_game("ultima"))
    _fill_buffer(learner, _ultima_batch(8, seed=14), priors=False)
    before = learner.net.policy.key.weight.clone()
    losses = learner.train_steps(1)
    assert learner.last_steps == 3 and math.isfinite(losses["loss"])
    assert not torch.equal(learner.net.policy.key.weight, before)


# -- value loss and buffer ----------------------------------------------------------------
def test_value_loss_leaves_out_positions_without_a_target():
    from boardzoo.training.learner import compute_loss

    torch.manual_seed(2)
    net = ultima_net("model.value=learned")
    with torch.no_grad():
        net.value_fc[-1].weight.normal_()
    batch = _ultima_batch(6, seed=14)
    batch["value"] = torch.tensor([0.5, math.nan, -1.0, math.nan, 1.0, 0.0])
    _, value = net(batch["obs"], None, batch["action_prior"])
    known = [0, 2, 4, 5]
    want = ((value.detach()[known] - batch["value"][known]) ** 2).mean()
    net.zero_grad()
    total, _, got = compute_loss(net, batch, 1.0)
    assert got.item() == pytest.approx(want.item(), rel=1e-6) and want > 0
    total.backward()
    assert all(torch.isfinite(q.grad).all() for q in net.parameters() if q.grad is not None)
    batch["value"] = torch.full((6,), math.nan)  # no position has a target: no value loss
    net.zero_grad()
    _, _, none_known = compute_loss(net, batch, 1.0, policy_weight=0.0)
    none_known.backward()
    assert none_known.item() == 0.0 and net.value_fc[-1].weight.grad.abs().max() == 0.0


def test_value_capped_games_is_refused_with_a_static_value():
    with pytest.raises(ConfigError, match="train.value_capped_games has no effect here "
                       r"\(the value is not trained with model.value: static\)"):
        load_config(REPO / "configs" / "ultima.yaml", ["train.value_capped_games=false"])
    learned = load_config(REPO / "configs" / "ultima.yaml",
                          ["model.value=prior", "train.value_capped_games=false"])
    assert learned.train.value_capped_games is False


def test_buffer_keeps_action_priors_through_its_state_dict():
    buf = ReplayBuffer(8, (2, 2, 1), 5, action_priors=True)
    for k in range(6):
        buf.add(np.full((2, 2, 1), k, np.float32), np.array([1, 3], np.int32),
                np.array([0.5, 0.5], np.float32), 0.0, action_prior=np.array([k, 2.0 * k]))
    other = ReplayBuffer(4, (2, 2, 1), 5, action_priors=True)  # smaller: keeps the newest
    other.load_state_dict(buf.state_dict())
    batch = other.sample(32, np.random.default_rng(0))
    k = batch["obs"][:, 0, 0, 0]
    assert torch.all(k >= 2)
    want = torch.zeros(32, 5)
    want[:, 1], want[:, 3] = k, 2 * k
    assert torch.equal(batch["action_prior"], want)
    plain = ReplayBuffer(8, (2, 2, 1), 5)
    plain.add(np.zeros((2, 2, 1), np.float32), np.array([1], np.int32), np.ones(1, np.float32), 0.0)
    assert "action_prior" not in plain.state_dict()
    assert "action_prior" not in plain.sample(2, np.random.default_rng(0))


def test_policy_prior_training_records_priors_and_resumes(tmp_path):
    from boardzoo.training.trainer import Trainer

    sets = ["game=ultima", "iterations=1", "selfplay.max_moves=30", "mcts.simulations=3",
            "eval.games=0", "model.policy_head=bilinear", "model.policy_prior=2",
            "model.value=prior", "train.value_target_q=0.5",
            "train.min_buffer=1", "selfplay.games_per_iteration=2"]
    t = Trainer(load_config(TINY, sets), tmp_path / "run", progress=False, echo=False)
    t.run()
    n = len(t.buffer)
    assert n > 0 and any(a.sum() > 0 for a in t.buffer.aprior[:n])  # captures happened
    again = Trainer(load_config(TINY, [*sets[:1], "iterations=2", *sets[2:]]), tmp_path / "run",
                    resume=True, progress=False, echo=False)
    assert all(np.array_equal(a, b) for a, b in zip(again.buffer.aprior[:n], t.buffer.aprior[:n],
                                                     strict=True))
    assert again.run()["iteration"] == 2


# -- play root --------------------------------------------------------------------------------
def test_play_root_is_the_agents_root_and_self_play_keeps_its_own():
    from boardzoo.training.agent import NetAgent

    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", "mcts.root=gumbel",
                       "play.root=puct"])
    net = build_net(cfg, action_game("ultima")).eval()
    agent = NetAgent("ultima", net, cfg, 8, seed=0)
    assert agent.search_cfg.root == "puct" and cfg.mcts.root == "gumbel"
    assert NetAgent("ultima", net, load_config(TINY, ["game=ultima"]), 8).search_cfg.root == \
        load_config(TINY).mcts.root  # no play.root: the training root


def test_play_root_reaches_checkpoint_agents_unless_overridden(tmp_path):
    from boardzoo.agents.base import make_agent
    from boardzoo.training.distill import save_model

    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", "mcts.root=gumbel",
                       "play.root=puct"])
    path = tmp_path / "net.pt"
    save_model(cfg, build_net(cfg, action_game("ultima")), path)
    assert make_agent(f"checkpoint:{path}", "ultima", 0).search_cfg.root == "puct"
    assert make_agent(f"checkpoint:{path},root=gumbel", "ultima", 0).search_cfg.root == "gumbel"
    with pytest.raises(ConfigError, match="play.root"):
        load_config(TINY, ["play.root=alphazero"])


# -- play-time policy temperature ----------------------------------------------------------------
def test_play_policy_temperature_divides_the_logits_of_play_only(tmp_path):
    from boardzoo.agents.base import make_agent
    from boardzoo.training.distill import save_model

    cfg = load_config(REPO / "configs" / "ultima.yaml",
                      ["model.channels=8", "model.blocks=1", "play.policy_temperature=2"])
    net = build_net(cfg, action_game("ultima")).eval()
    states = random_action_states("ultima", 4, seed=5, max_plies=40)
    plain_logits, plain_values = NetEvaluator(net, action_game("ultima"))(states)
    path = tmp_path / "net.pt"
    save_model(cfg, net, path)
    agent = make_agent(f"checkpoint:{path}", "ultima", 0)  # the network's own setting: 2
    logits, values = agent.evaluate(states)
    assert np.allclose(logits, plain_logits / 2, atol=1e-6) and np.allclose(values, plain_values)
    assert np.any(np.abs(plain_logits) > 1e-3)  # the capture prior makes logits non-zero
    logits4, _ = make_agent(f"checkpoint:{path},ptemp=4", "ultima", 0).evaluate(states)
    assert np.allclose(logits4, plain_logits / 4, atol=1e-6)
    # the raw policy's choice does not depend on it
    state = states[0]
    assert make_agent(f"checkpoint:{path},sims=0,ptemp=4", "ultima", 0).select_action(state) == \
        make_agent(f"checkpoint:{path},sims=0,ptemp=1", "ultima", 0).select_action(state)


@pytest.mark.parametrize("spec", ["ptemp=0", "ptemp=-1", "ptemp=abc", "ptemp=inf"])
def test_play_policy_temperature_spec_errors(spec):
    from boardzoo.agents.base import UnknownAgentError, make_agent

    with pytest.raises(UnknownAgentError, match="ptemp must be a number > 0"):
        make_agent(f"checkpoint:ultima,{spec}", "ultima", 0)


def test_play_policy_temperature_is_validated_and_self_play_ignores_it():
    for bad in ("0", ".inf"):
        with pytest.raises(ConfigError, match="play.policy_temperature"):
            load_config(TINY, [f"play.policy_temperature={bad}"])
    from boardzoo.training import selfplay

    seen = []
    real = selfplay.NetEvaluator

    class Spy(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.policy_temperature)

    cfg = load_config(TINY, ["play.policy_temperature=3", "selfplay.max_moves=4",
                             "mcts.simulations=2"])
    net = build_net(cfg, action_game(cfg.game)).eval()
    selfplay.NetEvaluator = Spy
    try:
        records = selfplay.play_games(net, action_game(cfg.game), cfg, [1])
    finally:
        selfplay.NetEvaluator = real
    assert seen == [1.0] and len(records) == 1


def test_export_changes_play_settings_only_and_keeps_the_weights(tmp_path, capsys):
    from boardzoo.cli import main
    from boardzoo.training.agent import load_net
    from boardzoo.training.distill import save_model

    cfg = load_config(REPO / "configs" / "ultima.yaml", ["model.channels=8", "model.blocks=1",
                                                          "play.policy_temperature=1"])
    src = tmp_path / "best.pt"
    save_model(cfg, build_net(cfg, action_game("ultima")), src, note="run x, iteration 3")
    out = tmp_path / "shipped.pt"
    assert main(["export", str(src), str(out), "--set", "play.policy_temperature=3",
                 "--set", "play.root=gumbel", "--set", "play.gumbel_m=32"]) == 0
    net_a, cfg_a, data_a = load_net(src)
    net_b, cfg_b, data_b = load_net(out)
    assert cfg_b.play.policy_temperature == 3 and cfg_b.play.gumbel_m == 32
    assert cfg_b.play.root == "gumbel" and cfg_a.play.root == "puct"
    assert cfg_a.play.policy_temperature == 1
    assert cfg_b.model == cfg_a.model and data_b["note"] == "run x, iteration 3"
    sd_a, sd_b = net_a.state_dict(), net_b.state_dict()
    assert all(torch.equal(sd_a[k], sd_b[k]) for k in sd_a)
    for bad in (["--set", "model.channels=16"], ["--set", "train.lr=0.1"],
                ["--set", "play.policy_temperature=0"],
                ["--set", "play.gumbel_m=32"],  # no effect: this network plays with PUCT
                ["--set", "mcts.play_root=gumbel"]):  # an old key: one line naming play.root
        assert main(["export", str(src), str(tmp_path / "x.pt"), *bad]) == 2
        assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()


# -- evaluation games are kept for replays ------------------------------------------------------
def test_evaluation_games_are_recorded_replayable_and_not_doubled_on_resume(tmp_path):
    from boardzoo.agents.arena.records import read_games
    from boardzoo.agents.arena.replay import replay
    from boardzoo.training.trainer import EVAL_GAMES, Trainer

    out = tmp_path / "run"
    Trainer(load_config(TINY, ["iterations=1", "eval.every=1"]), out, progress=False,
            echo=False).run()
    games = read_games(out / EVAL_GAMES)
    # raw policy vs random, network vs random, network vs the previous best: 2 games each
    assert len(games) == 6 and len({g["id"] for g in games}) == 6
    assert {tuple(sorted(g["players"])) for g in games} == {
        ("net@1,sims=0", "random"), ("net@1", "random"), ("net@0 (best)", "net@1")}
    for g in games:
        assert g["game"] == "loa" and g["iteration"] == 1
        final = replay(g).states[-1]
        assert len(g["moves"]) == g["plies"] and g["result"] in ("1-0", "0-1", "1/2-1/2")
        # the same record the arena writes: its result is what the replayed game says
        if g["termination"] == "rules":
            assert final.is_terminal()
            winner = final.winner()
            assert g["result"] == {None: "1/2-1/2", 0: "1-0", 1: "0-1"}[winner]
        else:
            assert g["termination"] == "max_plies" and g["result"] == "1/2-1/2"
    # a run that plays iteration 1's evaluation again (as after a kill) keeps it once
    t = Trainer(load_config(TINY, ["iterations=1", "eval.every=1"]), out, resume=True,
                progress=False, echo=False)
    t.evaluate(1)
    again = read_games(out / EVAL_GAMES)
    assert len(again) == 6 and [g["moves"] for g in again] == [g["moves"] for g in games]
