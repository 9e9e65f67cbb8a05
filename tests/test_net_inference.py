"""The network's inference paths: the trunk's chunks in eval mode (bit for bit the whole
batch's features), and batch norm folded into the convolutions as bench/net_inference.py
measures it (equal up to rounding)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.envs.core.registry import action_game
from boardzoo.training.config import load_config
from boardzoo.training.knowledge import Knowledge

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from net_inference import fold_batchnorm, perturbed_net  # noqa: E402  (bench/net_inference.py)

torch.set_num_threads(1)

#: the shipped configs' networks, and Whistling's without the axial grid (a cell-mask plane
#: per row instead of one grid mask)
NETS = [("loa", ()), ("ultima", ()), ("whistling", ()),
        ("whistling", ("model.internal_grid=false", "model.policy_head=conv"))]


def moved_net(name: str, sets: tuple[str, ...]) -> torch.nn.Module:
    """The config's network with every weight and batch-norm statistic moved off its fresh
    value (a fresh network with priors reads nothing of its trunk), in eval mode."""
    cfg = load_config(REPO / "configs" / f"{name}.yaml", list(sets))
    return perturbed_net(cfg, action_game(name))


def net_inputs(name: str, net, count: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Observations and priors of ``count`` random positions, as self-play passes them."""
    game = action_game(name)
    states = random_action_states(name, count, seed=5, max_plies=40)
    obs = torch.from_numpy(np.stack([game.observation(s, game.to_move(s)) for s in states]))
    return obs, Knowledge.inputs(*Knowledge.for_net(net).reference(states))


@pytest.mark.parametrize(("name", "sets"), NETS)
def test_trunk_chunks_give_the_whole_batch_features_bit_for_bit(name, sets):
    net = moved_net(name, sets)
    obs, priors = net_inputs(name, net, 13)
    net.trunk_rows = 64
    with torch.inference_mode():
        whole = net(obs, **priors)
        for rows in (1, 2, 3, 5, 6, 12):  # chunks of 2 to 6 rows, 7 and 6 of 13
            net.trunk_rows = rows
            chunked = net(obs, **priors)
            assert all(torch.equal(a, b) for a, b in zip(whole, chunked, strict=True)), rows


def test_default_trunk_rows_keep_a_layers_activations_within_the_budget():
    from boardzoo.training.network import TRUNK_CHUNK_BYTES
    whistling, ultima = moved_net("whistling", ()), moved_net("ultima", ())
    # 32 channels on Whistling's 21 x 21 grid, on Ultima's 8 x 8 board
    assert whistling.trunk_rows == TRUNK_CHUNK_BYTES // (4 * 32 * 441)
    assert ultima.trunk_rows == TRUNK_CHUNK_BYTES // (4 * 32 * 64)


def test_training_mode_runs_the_whole_batch_through_batch_norm():
    """In training mode batch norm normalises by the batch's statistics: chunks would change
    them, so the trunk takes the whole batch whatever ``trunk_rows`` says."""
    net = moved_net("loa", ())
    obs, _ = net_inputs("loa", net, 8)
    net.train()
    net.trunk_rows = 64
    whole = net(obs)
    net.trunk_rows = 2
    again = net(obs)
    assert all(torch.equal(a, b) for a, b in zip(whole, again, strict=True))
    chunks = torch.cat([net(part)[0] for part in torch.tensor_split(obs, 4)])
    assert not torch.equal(whole[0], chunks)  # what chunking would have done


@pytest.mark.parametrize(("name", "sets"), NETS)
def test_folded_batch_norm_gives_the_same_outputs_up_to_rounding(name, sets):
    net = moved_net(name, sets)
    obs, priors = net_inputs(name, net, 9)
    folded = fold_batchnorm(net)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in folded.modules())
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())  # a copy
    with torch.inference_mode():
        (logits, values), (flogits, fvalues) = net(obs, **priors), folded(obs, **priors)
    scale = float(logits.abs().max())
    assert scale > 1e-2  # the heads read the trunk: the comparison means something
    torch.testing.assert_close(flogits, logits, rtol=0, atol=1e-5 * max(scale, 1.0))
    torch.testing.assert_close(fvalues, values, rtol=0, atol=1e-5)
