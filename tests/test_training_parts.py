"""Training building blocks: config validation, masked policy, symmetries, search, buffer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game
from boardzoo.envs.core.symmetry import SQUARE_MAPS, square_map
from boardzoo.envs.loa.rules import State
from boardzoo.envs.loa.symmetry import loa_symmetries
from boardzoo.training.buffer import ReplayBuffer
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.network import build_net, masked_log_softmax, masked_softmax
from boardzoo.training.search.tree import Search, run_search
from boardzoo.training.selfplay import NetEvaluator, play_games, selfplay_seed

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "configs" / "tiny.yaml"
LOA = action_game("loa")

torch.set_num_threads(1)


def random_positions(n: int, seed: int = 0) -> list[State]:
    """Non-terminal LOA positions reached by random play."""
    return random_action_states("loa", n, seed, max_plies=60)


def uniform_net(cfg):
    """A network with uniform priors and value 0 (zeroed output layers)."""
    net = build_net(cfg, LOA)
    for layer in (net.policy.fc, net.value_fc[2]):
        torch.nn.init.zeros_(layer.weight)
        torch.nn.init.zeros_(layer.bias)
    return net.eval()


# -- config ------------------------------------------------------------------------------------
def test_shipped_configs_load():
    for name in ("tiny", "loa", "ultima", "whistling"):
        cfg = load_config(REPO / "configs" / f"{name}.yaml")
        assert cfg.iterations >= 1


@pytest.mark.parametrize("text, message", [
    ("game: loa\nsimulations: 3\n", "unknown config key(s) simulations"),
    ("mcts: {simulation: 3}\n", "unknown config key(s) mcts.simulation"),
    ("mcts: {simulations: many}\n", "mcts.simulations: expected an integer"),
    ("game: loa\nmcts: {simulations: 0}\n", "mcts.simulations must be between 1 and 100000, got 0"),
    ("game: loa\nmcts: {root: alphago}\n",
     "mcts.root must be one of 'puct', 'gumbel' (got 'alphago')"),
    ("game: loa\ntrain: {lr: -1}\n", "train.lr must be above 0 and at most 10, got -1"),
    ("train: {augment: 2}\n", "train.augment: expected true or false"),
    ("game: chess\n", "game must be one of"),
    ("train: {lr: 0.1}\n", "game must be one of"),  # every config names its game
    ("game: loa\neval: {baselines: [stockfish]}\n", "eval.baselines must be agent specs"),
    ("mcts: 3\n", "mcts: expected a mapping"),
    ("- a\n- b\n", "must be a mapping"),
    ("game: [\n", "not valid YAML"),
])
def test_config_errors(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)


def test_config_overrides():
    cfg = load_config(TINY, ["mcts.simulations=7", "mcts.root=gumbel", "train.lr=1e-3",
                             "eval.baselines=random,mcts:5", "iterations=3"])
    assert (cfg.mcts.simulations, cfg.mcts.root, cfg.train.lr, cfg.iterations) == (
        7, "gumbel", 0.001, 3)
    assert cfg.eval.baselines == ["random", "mcts:5"]
    for bad, message in [("mcts.simulatoins=3", "unknown config key(s) mcts.simulatoins"),
                         ("nosuch.key=1", "unknown section 'nosuch'"),
                         ("iterations", "expects key=value"),
                         ("mcts.simulations=-2", "between 1 and 100000, got -2")]:
        with pytest.raises(ConfigError, match=None) as info:
            load_config(TINY, [bad])
        assert message in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml")


# -- masked policy -----------------------------------------------------------------------------
def test_masked_softmax_gives_no_mass_to_illegal_actions():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 513, generator=gen) * 30
    mask = torch.rand(64, 513, generator=gen) < 0.05
    mask[:, 0] = True  # at least one legal action per row
    logits[~mask] += 1000.0  # illegal logits far larger than the legal ones
    p = masked_softmax(logits, mask)
    assert torch.all(p[~mask] == 0)
    assert torch.allclose(p.sum(-1), torch.ones(64))
    logp = masked_log_softmax(logits, mask)
    assert torch.all(torch.isneginf(logp[~mask])) and torch.all(torch.isfinite(logp[mask]))


def test_network_policy_on_loa_positions_is_legal_only():
    cfg = load_config(TINY)
    net = build_net(cfg, LOA).eval()
    states = random_positions(8)
    obs = torch.from_numpy(np.stack([LOA.observation(s, s.to_move) for s in states]))
    mask = torch.from_numpy(np.stack([LOA.action_mask(s) for s in states]).astype(bool))
    with torch.no_grad():
        logits, value = net(obs)
    p = masked_softmax(logits, mask)
    assert logits.shape == (8, 513) and value.shape == (8,)
    assert torch.all(p[~mask] == 0) and torch.allclose(p.sum(-1), torch.ones(8))
    assert torch.all(value.abs() <= 1)


# -- symmetries --------------------------------------------------------------------------------
def transform_state(state: State, name: str) -> State:
    bbs = []
    for bb in state.bb:
        out = 0
        for s in range(64):
            if bb >> s & 1:
                out |= 1 << square_map(name, s)
        bbs.append(out)
    return State(bbs[0], bbs[1], state.side, state.ply)


def test_loa_symmetries_map_legal_moves_to_legal_moves():
    syms = loa_symmetries()
    assert [s.name for s in syms] == list(SQUARE_MAPS)
    for state in random_positions(12, seed=1):
        legal = np.array(LOA.legal_actions(state))
        obs = LOA.observation(state, state.to_move)
        mask = LOA.action_mask(state)
        for sym in syms:
            assert sorted(sym.action_perm) == list(range(513))  # a permutation
            image = transform_state(state, sym.name)
            assert sorted(sym.action_perm[legal].tolist()) == LOA.legal_actions(image)
            assert np.array_equal(sym.obs(obs), LOA.observation(image, image.to_move))
            assert np.array_equal(sym.actions(mask), LOA.action_mask(image))


def test_symmetry_keeps_move_destinations():
    state = random_positions(1, seed=5)[0]
    for sym in loa_symmetries():
        image = transform_state(state, sym.name)
        for a in LOA.legal_actions(state):
            if a == 512:
                continue
            b = int(sym.action_perm[a])
            assert image.destination(b) == square_map(sym.name, state.destination(a))


# -- search ------------------------------------------------------------------------------------
def test_search_finds_the_winning_move():
    """With uniform priors and values, the search still finds a connecting move (the terminal
    result is backed up to the right player)."""
    cfg = load_config(TINY)
    evaluate = NetEvaluator(uniform_net(cfg), LOA)
    found = 0
    for state in random_positions(300, seed=3):
        me = state.to_move
        wins = {a for a in LOA.legal_actions(state)
                if LOA.returns(LOA.apply_action(state, a)[0])[me] == 1}
        if not wins or len(wins) == len(LOA.legal_actions(state)):
            continue
        search = run_search(LOA, evaluate, state, cfg.mcts, np.random.default_rng(0), 80)
        assert int(search.root.actions[search.choose(0.0)]) in wins
        found += 1
        if found == 3:
            break
    assert found == 3


class TwoStepGame:
    """A toy ActionGame where player 0 may act twice in a row (like a Whistling chain).

    States are strings. From "": action 0 -> "A" (player 0 moves again), action 1 -> "B"
    (player 1 to move). From "A": 0 -> "AX" (player 0 wins), 1 -> "AY" (player 0 loses).
    From "B": either action -> a draw.
    """

    num_actions = 2
    observation_shape = (1, 1, 1)
    results = {"AX": (1.0, -1.0), "AY": (-1.0, 1.0), "B0": (0.0, 0.0), "B1": (0.0, 0.0)}

    def to_move(self, s):
        return 1 if s == "B" else 0

    def is_terminal(self, s):
        return s in self.results

    def returns(self, s):
        return self.results.get(s, (0.0, 0.0))

    def legal_actions(self, s):
        return [] if self.is_terminal(s) else [0, 1]

    def apply_action(self, s, a):
        nxt = {"": "AB", "A": "XY", "B": "01"}[s][a]
        return (nxt if s == "" else s + nxt), None

    def observation(self, s, player):
        return np.zeros((1, 1, 1), np.float32)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_backup_follows_the_player_to_move_not_alternation(root):
    game = TwoStepGame()
    cfg = load_config(TINY, [f"mcts.root={root}"]).mcts

    def evaluate(states):
        return np.zeros((len(states), 2), np.float32), np.zeros(len(states), np.float32)

    search = run_search(game, evaluate, "", cfg, np.random.default_rng(0), 40)
    assert int(search.root.actions[search.choose(0.0)]) == 0  # go to "A", then win
    a_node = search.root.children[0]
    assert a_node.player == 0 and a_node.q()[0] == 1.0 and a_node.q()[1] == -1.0
    assert search.root.q()[0] > 0.5


def test_policy_targets_are_distributions_over_legal_actions():
    for root in ("puct", "gumbel"):
        cfg = load_config(TINY, [f"mcts.root={root}"])
        evaluate = NetEvaluator(build_net(cfg, LOA).eval(), LOA)
        for state in random_positions(3, seed=7):
            search = Search(LOA, cfg.mcts, np.random.default_rng(1), state, add_noise=True,
                            simulations=12)
            while not search.finished():
                leaf = search.select()
                if leaf is not None:
                    logits, values = evaluate([leaf.state])
                    search.expand(leaf, logits[0], float(values[0]))
            actions, probs = search.policy_target()
            assert actions.tolist() == LOA.legal_actions(state)
            assert probs.min() >= 0 and abs(probs.sum() - 1) < 1e-9
            assert 0 <= search.choose(1.0) < len(actions)


# -- self-play and buffer ----------------------------------------------------------------------
def test_selfplay_is_deterministic_under_seed():
    cfg = load_config(TINY)
    torch.manual_seed(0)
    net = build_net(cfg, LOA).eval()
    seeds = [selfplay_seed(1, 1, i) for i in range(3)]
    a = play_games(net, LOA, cfg, seeds)
    b = play_games(net, LOA, cfg, seeds)
    assert [r.seed for r in a] == seeds
    for ra, rb in zip(a, b, strict=True):
        assert ra.length == rb.length and ra.outcome == rb.outcome
        assert all(np.array_equal(x, y) for x, y in zip(ra.actions, rb.actions, strict=True))
        assert all(np.array_equal(x, y) for x, y in zip(ra.probs, rb.probs, strict=True))
        assert all(np.array_equal(x, y) for x, y in zip(ra.obs, rb.obs, strict=True))


def test_buffer_round_trip_and_augmented_sampling():
    cfg = load_config(TINY)
    net = build_net(cfg, LOA).eval()
    recs = play_games(net, LOA, cfg, [11, 12, 13])
    buf = ReplayBuffer(20, LOA.observation_shape, LOA.num_actions)
    for r in recs:
        buf.add_game(r)
    assert len(buf) == 20 and buf.added == sum(len(r.obs) for r in recs)
    copy = ReplayBuffer(20, LOA.observation_shape, LOA.num_actions)
    copy.load_state_dict(buf.state_dict())
    assert (copy.ptr, copy.size, copy.added) == (buf.ptr, buf.size, buf.added)
    assert np.array_equal(copy.obs, buf.obs)
    assert np.array_equal(copy.outcome, buf.outcome) and np.array_equal(copy.capped, buf.capped)
    assert np.array_equal(copy.root_value, buf.root_value) and buf.capped.any()  # searched: no NaN
    smaller = ReplayBuffer(8, LOA.observation_shape, LOA.num_actions)
    smaller.load_state_dict(buf.state_dict())  # keeps the newest 8 positions
    newest = [(buf.ptr - 8 + k) % 20 for k in range(8)]
    assert np.array_equal(smaller.obs, buf.obs[newest])
    batch = buf.sample(16, np.random.default_rng(0), loa_symmetries())
    mask, policy = batch["mask"], batch["policy"]
    assert torch.all(policy[~mask] == 0)
    assert torch.allclose(policy.sum(-1), torch.ones(16), atol=1e-5)
    assert torch.all(mask.sum(-1) >= 1)
