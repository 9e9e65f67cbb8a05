"""Network options: pair layouts and the bilinear policy head, Whistling's axial hex grid,
the static-evaluation value prior."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.agents.evaluation import get_evaluator, get_scale
from boardzoo.envs.core.registry import action_game, get_spec
from boardzoo.training.buffer import ReplayBuffer
from boardzoo.training.config import ConfigError, load_config
from boardzoo.training.knowledge import Knowledge
from boardzoo.training.network import MaskedConv2d, build_net, masked_softmax
from boardzoo.training.selfplay import NetEvaluator

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")

torch.set_num_threads(1)




def small(name: str, *sets: str):
    """The game's shipped config with a small trunk, no priors, default initialisation (unless
    ``sets`` turn them on) and the given overrides."""
    return load_config(REPO / "configs" / f"{name}.yaml",
                       ["model.channels=8", "model.blocks=1", "model.value=learned",
                        "model.policy_prior=0", *sets])


def observations(name: str, states: list) -> torch.Tensor:
    game = action_game(name)
    return torch.from_numpy(np.stack([game.observation(s, game.to_move(s)) for s in states]))


# -- pair layouts --------------------------------------------------------------------------
def test_ultima_pairs_are_origin_and_destination_of_each_legal_move():
    game = action_game("ultima")
    pairs = get_spec("ultima").pair_layout()
    assert pairs.pairs.shape == (4096, 2) and pairs.kinds.max() < pairs.num_kinds
    for s in random_action_states("ultima", 4, seed=3, max_plies=20):
        for a in game.legal_actions(s):
            frm, to = pairs.pairs[a]
            child, _ = game.apply_action(s, a)
            assert s.board[frm] != 0 and child.board[frm] == 0, a
            assert child.board[to] == s.board[frm], a  # the mover lands on ``to``


def test_whistling_pairs_match_the_env_hop_table():
    from boardzoo.envs.whistling.actions import HOP_ACTION
    from boardzoo.envs.whistling.hexgrid import NUM_CELLS

    pairs = get_spec("whistling").pair_layout().pairs
    on_board = {int(a): (k // NUM_CELLS, k % NUM_CELLS) for k, a in HOP_ACTION.items()}
    assert len(on_board) == int((pairs[:, 1] >= 0).sum())
    for a, (frm, to) in on_board.items():
        assert tuple(pairs[a]) == (frm, to)
    off = np.flatnonzero(pairs[:, 1] < 0)
    assert not set(off.tolist()) & set(on_board)
    # a hop off the board is never legal
    for s in random_action_states("whistling", 4, seed=5, max_plies=20):
        assert (pairs[game_legal(s), 1] >= 0).all()


def game_legal(s) -> np.ndarray:
    return np.asarray(action_game("whistling").legal_actions(s))


def test_loa_has_no_pair_layout_and_bilinear_is_a_config_error():
    assert get_spec("loa").pair_layout is None
    with pytest.raises(ConfigError, match="bilinear needs"):
        build_net(load_config(TINY, ["model.policy_head=bilinear"]), action_game("loa"))
    with pytest.raises(ConfigError, match="no internal grid"):
        build_net(load_config(TINY, ["model.internal_grid=true"]), action_game("loa"))


# -- bilinear head -------------------------------------------------------------------------
@pytest.mark.parametrize("name, grid", [("ultima", "false"), ("whistling", "false"),
                                        ("whistling", "true")])
def test_bilinear_logits_are_query_key_products_plus_kind_bias(name, grid):
    game = action_game(name)
    net = build_net(small(name, "model.policy_head=bilinear", "model.bilinear_dim=4",
                          f"model.internal_grid={grid}"), game).eval()
    head = net.policy
    # Ultima's cells and pairs are in order: the head skips both gathers (checked below)
    assert head.cells_in_order == head.pairs_in_order == (name == "ultima")
    torch.nn.init.normal_(head.kind_bias)
    states = random_action_states(name, 2, seed=1, max_plies=10)
    seen = {}
    net.blocks[-1].register_forward_hook(lambda m, i, o: seen.setdefault("x", o))
    with torch.no_grad():
        logits, _ = net(observations(name, states))
        cells = seen["x"].flatten(2)[:, :, head.cell_feature].transpose(1, 2)
        q, k = head.query(cells), head.key(cells)
    pairs = get_spec(name).pair_layout()
    rng = np.random.default_rng(0)
    for a in rng.choice(game.num_actions, 300, replace=False):
        frm, to = pairs.pairs[a]
        bias = head.kind_bias[pairs.kinds[a]]
        want = bias if to < 0 else (q[:, frm] * k[:, to]).sum(-1) / 2 + bias  # 1/sqrt(4)
        assert torch.allclose(logits[:, a], want.expand(2), atol=1e-5), a
    assert torch.isfinite(logits).all()
    mask = torch.from_numpy(np.stack([game.action_mask(s) for s in states]).astype(bool))
    p = masked_softmax(logits, mask)
    assert torch.all(p[~mask] == 0) and torch.allclose(p.sum(-1), torch.ones(2))


def test_bilinear_scores_have_rank_d_where_the_conv_head_has_policy_channels_plus_one():
    """Ultima's 64 x 64 origin x destination logits of one position: rank 16 with a 16-dim
    bilinear head, at most 8 + 1 with a conv head of 8 policy channels (+ bias)."""
    game = action_game("ultima")
    obs = observations("ultima", random_action_states("ultima", 1, seed=2))
    base = ["model.blocks=1", "model.value=learned", "model.policy_prior=0"]
    conv = build_net(load_config(REPO / "configs" / "ultima.yaml",
                                 [*base, "model.policy_head=conv", "model.policy_channels=8"]),
                     game).eval()
    net = build_net(load_config(REPO / "configs" / "ultima.yaml",
                                [*base, "model.policy_head=bilinear", "model.bilinear_dim=16"]),
                    game).eval()
    with torch.no_grad():
        conv_logits = conv(obs)[0][0].view(64, 64)
        logits = net(obs)[0][0]
    scores = (logits - net.policy.kind_bias[net.policy.kinds]).view(64, 64)
    assert torch.linalg.matrix_rank(scores).item() == 16
    assert torch.linalg.matrix_rank(conv_logits).item() <= 9


# -- axial hex grid ------------------------------------------------------------------------
def test_axial_map_is_a_bijection_onto_the_cells_and_keeps_hex_neighbours():
    from boardzoo.envs.whistling.axial import HEX_KERNEL, SIZE, axial_index, axial_source
    from boardzoo.envs.whistling.hexgrid import CELLS, DIRECTIONS, NUM_COLUMNS, RAYS

    index = axial_index()
    src = axial_source()
    assert len(set(index.tolist())) == len(CELLS) == 331
    assert sorted(src[src >= 0].tolist()) == sorted((r - 1) * NUM_COLUMNS + c for c, r in CELLS)
    for i, (c, r) in enumerate(CELLS):
        assert src[index[i]] == (r - 1) * NUM_COLUMNS + c
    offsets = {(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)
               if HEX_KERNEL[di + 1, dj + 1] and (di, dj) != (0, 0)}
    assert len(offsets) == 6
    cell_at = {int(k): i for i, k in enumerate(index)}
    for i in range(len(CELLS)):
        row, col = divmod(int(index[i]), SIZE)
        hex_nbrs = {RAYS[i][d][0] for d in range(len(DIRECTIONS)) if RAYS[i][d]}
        grid_nbrs = {cell_at[(row + di) * SIZE + col + dj] for di, dj in offsets
                     if 0 <= row + di < SIZE and 0 <= col + dj < SIZE
                     and (row + di) * SIZE + col + dj in cell_at}
        assert hex_nbrs == grid_nbrs, i


def test_masked_conv_reaches_exactly_the_six_hex_neighbours():
    from boardzoo.envs.whistling.axial import HEX_KERNEL, SIZE, axial_index
    from boardzoo.envs.whistling.hexgrid import NEIGHBOURS

    conv = MaskedConv2d(1, 1, HEX_KERNEL)
    torch.nn.init.ones_(conv.weight)  # the mask must still cut the two corners
    index = torch.as_tensor(axial_index())
    x = torch.zeros(331, 1, SIZE * SIZE)
    x[torch.arange(331), 0, index] = 1.0
    with torch.no_grad():
        y = conv(x.view(331, 1, SIZE, SIZE)).flatten(1)
    on = y[:, index] > 0  # (cell, cell reached), on-board cells only
    for i in range(331):
        assert set(torch.nonzero(on[i]).flatten().tolist()) == {i, *NEIGHBOURS[i]}, i
    assert int((y > 0).sum(1).max()) == 7  # never more than the cell and its 6 neighbours


def test_internal_grid_keeps_off_board_cells_zero_after_every_layer():
    game = action_game("whistling")
    net = build_net(small("whistling", "model.internal_grid=true"), game).eval()
    grid = get_spec("whistling").internal_grid
    off = torch.from_numpy(grid.source < 0).view(grid.height, grid.width)
    seen = []
    for layer in (net.stem, *net.blocks):
        layer.register_forward_hook(lambda m, i, o: seen.append(o))
    states = random_action_states("whistling", 3, seed=6, max_plies=20)
    with torch.no_grad():
        logits, value = net(observations("whistling", states))
    x_stem = seen[0] * net.grid_mask  # the stem's output is masked right after it
    assert torch.all(x_stem[:, :, off] == 0)
    for out in seen[1:]:
        assert out.shape[-2:] == (21, 21) and torch.all(out[:, :, off] == 0)
    assert logits.shape == (3, game.num_actions) and value.shape == (3,)


def test_internal_grid_gathers_the_observation_planes():
    game = action_game("whistling")
    net = build_net(small("whistling", "model.internal_grid=true"), game)
    obs = observations("whistling", random_action_states("whistling", 2, seed=7))
    flat = obs.permute(0, 3, 1, 2).flatten(2)
    b, c = flat.shape[:2]
    gathered = torch.cat([flat, flat.new_zeros(b, c, 1)], 2)[:, :, net.grid_source]
    src = get_spec("whistling").internal_grid.source
    for k in np.flatnonzero(src >= 0)[::17]:
        assert torch.equal(gathered[:, :, k], flat[:, :, src[k]])
    assert torch.all(gathered[:, :, torch.from_numpy(src < 0)] == 0)


# -- value prior ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_value_prior_is_tanh_of_the_evaluation_with_a_zero_residual(name):
    game = action_game(name)
    net = build_net(small(name, "model.value=prior"), game).eval()
    torch.nn.init.zeros_(net.value_fc[2].weight)
    torch.nn.init.zeros_(net.value_fc[2].bias)
    states = random_action_states(name, 6, seed=8, max_plies=40)
    _, values = NetEvaluator(net, game)(states)
    evaluate, scale = get_evaluator(name), get_scale(name)
    for s, v in zip(states, values, strict=True):
        g = game.game_state(s)
        e = evaluate(g) if g.to_move == game.to_move(s) else -evaluate(g)
        assert v == pytest.approx(math.tanh(e / scale), abs=1e-6)


def test_value_prior_output_is_strictly_inside_minus_one_one():
    game = action_game("ultima")
    net = build_net(small("ultima", "model.value=prior"), game).eval()
    torch.nn.init.normal_(net.value_fc[2].weight, std=100.0)
    obs = observations("ultima", random_action_states("ultima", 4, seed=9)).repeat(3, 1, 1, 1)
    prior = torch.tensor([1e6, -1e6, 50.0, -50.0] * 3)
    with torch.no_grad():
        _, v = net(obs, prior)
    assert torch.all(v.abs() < 1) and torch.all(torch.isfinite(v))
    with pytest.raises(ValueError, match="value prior"):
        net(obs)


def test_value_prior_with_the_batched_engine_needs_a_batched_evaluation():
    with pytest.raises(ConfigError, match="model.value .* no batched evaluation"):
        load_config(TINY, ["game=loa", "model.value=prior", "selfplay.engine=batched"])


def test_static_prior_sign_follows_the_player_to_act():
    game = action_game("whistling")
    for s in random_action_states("whistling", 8, seed=10, max_plies=40):
        g = game.game_state(s)
        value, _ = Knowledge("whistling", value_prior=True).reference([s])
        assert value[0] == pytest.approx(
            get_evaluator("whistling")(g) / get_scale("whistling"))
        assert g.to_move == game.to_move(s)


def test_buffer_keeps_priors_through_its_state_dict():
    buf = ReplayBuffer(8, (2, 2, 1), 3, priors=True)
    for k in range(5):
        buf.add(np.full((2, 2, 1), k, np.float32), np.array([0, 2], np.int32),
                np.array([0.5, 0.5], np.float32), 0.1 * k, prior=float(k))
    other = ReplayBuffer(8, (2, 2, 1), 3, priors=True)
    other.load_state_dict(buf.state_dict())
    batch = other.sample(16, np.random.default_rng(0))
    assert torch.equal(batch["prior"], batch["obs"][:, 0, 0, 0])
    assert "prior" not in ReplayBuffer(8, (2, 2, 1), 3).state_dict()


def test_value_prior_training_records_priors_and_resumes(tmp_path):
    from boardzoo.training.trainer import Trainer

    sets = ["game=ultima", "iterations=1", "selfplay.max_moves=6", "mcts.simulations=3",
            "eval.games=0", "model.policy_head=bilinear", "model.value=prior"]
    t = Trainer(load_config(TINY, sets), tmp_path / "run", progress=False, echo=False)
    t.run()
    n = len(t.buffer)
    assert n > 0 and np.any(t.buffer.prior[:n] != 0)
    again = Trainer(load_config(TINY, [*sets[:1], "iterations=2", *sets[2:]]), tmp_path / "run",
                    resume=True, progress=False, echo=False)
    assert np.array_equal(again.buffer.prior[:n], t.buffer.prior[:n])
    assert again.run()["iteration"] == 2


def _filled_buffer(values: np.ndarray) -> ReplayBuffer:
    """A buffer of 5 positions of shape (3, 3, 2) from ``values`` (one array per position)."""
    buf = ReplayBuffer(8, (3, 3, 2), 4)
    for k, obs in enumerate(values):
        buf.add(obs, np.array([k % 4], np.int32), np.array([1.0], np.float32), 0.5)
    return buf


def test_buffer_saves_binary_observations_bit_packed_and_restores_them():
    rng = np.random.default_rng(3)
    binary = rng.integers(0, 2, size=(5, 3, 3, 2)).astype(np.float32)
    state = _filled_buffer(binary).state_dict()
    assert "obs" not in state and state["obs_bits"].dtype == torch.uint8
    assert state["obs_bits"].numel() == (5 * 18 + 7) // 8   # one bit per value
    other = ReplayBuffer(8, (3, 3, 2), 4)
    other.load_state_dict(state)
    assert np.array_equal(other.obs[:5], binary.astype(np.float16))
    # a resume into a smaller buffer keeps the newest positions, unpacked the same way
    small = ReplayBuffer(3, (3, 3, 2), 4)
    small.load_state_dict(state)
    assert np.array_equal(small.obs[:3], binary[2:].astype(np.float16))


def test_buffer_keeps_fractional_observations_as_they_are():
    values = np.zeros((5, 3, 3, 2), np.float32)
    values[2, 1, 1, 0] = 0.25   # one fraction: no packing
    state = _filled_buffer(values).state_dict()
    assert "obs_bits" not in state
    other = ReplayBuffer(8, (3, 3, 2), 4)
    other.load_state_dict(state)
    assert other.obs[2, 1, 1, 0] == np.float16(0.25)
    assert np.array_equal(other.obs[:5], values.astype(np.float16))


def test_buffer_rejects_observation_bits_that_do_not_fit():
    state = _filled_buffer(np.ones((5, 3, 3, 2), np.float32)).state_dict()
    state["obs_bits"] = state["obs_bits"][:-1]
    with pytest.raises(ValueError, match="do not fit"):
        ReplayBuffer(8, (3, 3, 2), 4).load_state_dict(state)
    with pytest.raises(ValueError, match="do not fit"):
        ReplayBuffer(8, (3, 3, 3), 4).load_state_dict(_filled_buffer(
            np.ones((5, 3, 3, 2), np.float32)).state_dict())


@pytest.mark.parametrize("name, head", [("loa", "linear"), ("ultima", "conv"),
                                        ("ultima", "bilinear")])
def test_a_file_saved_before_the_heads_were_modules_loads(name, head):
    # before 2026-12-06 the heads' layers sat on the network itself: policy_conv, policy_fc,
    # policy_cells, policy_extra, bilinear (the shipped networks are such files)
    old_names = {"policy.conv.": "policy_conv.", "policy.fc.": "policy_fc.",
                 "policy.cells.": "policy_cells.", "policy.extra.": "policy_extra."}
    game = action_game(name)
    cfg = small(name, f"model.policy_head={head}")
    net = build_net(cfg, game)
    old = {}
    for key, value in net.state_dict().items():
        for new, before in old_names.items():
            if key.startswith(new):
                key = before + key[len(new):]
                break
        else:
            if key.startswith("policy."):
                key = "bilinear." + key[len("policy."):]
        old[key] = value.clone() + 1.0
    assert any(k.startswith(("policy_", "bilinear.")) for k in old)
    fresh = build_net(cfg, game)
    fresh.load_state_dict(old)  # strict: every key found
    for key, value in fresh.state_dict().items():
        assert torch.equal(value, net.state_dict()[key] + 1.0), key
