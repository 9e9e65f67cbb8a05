"""Training on Ultima and Whistling: action layouts, Whistling's symmetries, smoke runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from boardzoo.agents import make_agent
from boardzoo.agents.arena.play import play_game
from boardzoo.envs.core.registry import action_game, get_spec
from boardzoo.training.config import load_config
from boardzoo.training.network import build_net, masked_softmax
from boardzoo.training.trainer import Trainer

from conftest import random_action_states

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")

torch.set_num_threads(1)




@pytest.mark.parametrize("name", ["loa", "ultima", "whistling"])
def test_action_layout_puts_each_action_on_its_start_cell(name):
    """Every legal action starts on a cell holding one of the mover's pieces at the grid
    position the layout names (own pieces: plane 0; Ultima: planes 0-6, one per kind)."""
    game = action_game(name)
    layout = get_spec(name).action_layout
    assert layout.num_actions == game.num_actions
    h, w, _ = game.observation_shape
    for s in random_action_states(name, 3, seed=2, max_plies=12):
        obs = game.observation(s, game.to_move(s)).reshape(h * w, -1)
        for a in game.legal_actions(s):
            if a >= layout.num_actions - layout.extra:
                continue  # LOA's pass
            cell = a // layout.per_cell
            own = obs[layout.cell_grid[cell], : 7 if name == "ultima" else 1].sum()
            moving = obs[layout.cell_grid[cell], 2] if name == "whistling" else 0
            assert own == 1 or moving == 1, (name, a)


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_conv_head_masked_policy_is_legal_only(name):
    game = action_game(name)
    cfg = load_config(REPO / "configs" / f"{name}.yaml",
                      ["model.channels=8", "model.blocks=1", "model.policy_head=conv",
                       "model.value=learned", "model.policy_prior=0"])
    net = build_net(cfg, game).eval()
    states = random_action_states(name, 2, seed=1, max_plies=10)
    obs = torch.from_numpy(np.stack([game.observation(s, game.to_move(s)) for s in states]))
    mask = torch.from_numpy(np.stack([game.action_mask(s) for s in states]).astype(bool))
    with torch.no_grad():
        logits, _ = net(obs)
    p = masked_softmax(logits, mask)
    assert torch.all(p[~mask] == 0) and torch.allclose(p.sum(-1), torch.ones(len(states)))


def test_whistling_off_board_features_stay_zero():
    game = action_game("whistling")
    cfg = load_config(REPO / "configs" / "whistling.yaml",
                      ["model.channels=8", "model.blocks=1", "model.internal_grid=false",
                       "model.cell_mask_plane=10", "model.value=learned"])
    net = build_net(cfg, game).eval()
    obs = torch.from_numpy(game.observation(game.initial_state(), 0))[None]
    seen = {}
    net.blocks[0].register_forward_hook(lambda m, i, o: seen.setdefault("x", o))
    with torch.no_grad():
        net(obs)
    off = obs[0, :, :, 10] == 0
    assert torch.all(seen["x"][0][:, off] == 0)


def test_whistling_rotations_map_legal_hops_to_legal_hops():
    from boardzoo.envs.whistling.actions import decode, encode
    from boardzoo.envs.whistling.rules import State
    actions = action_game("whistling")
    syms = get_spec("whistling").all_symmetries()
    assert [s.name for s in syms] == ["rot0", "rot120", "rot240"]
    for sym in syms[1:]:
        cell_map = [decode(int(sym.action_perm[encode(c, 0, 1)]))[0] for c in range(331)]

        def rotate(bb, cell_map=cell_map):
            out = 0
            for c in range(331):
                if bb >> c & 1:
                    out |= 1 << cell_map[c]
            return out

        assert rotate(State.start().stones[0]) == State.start().stones[0]
        for s in random_action_states("whistling", 3, seed=4, max_plies=16):
            if s.done:
                continue  # mid-chain states: the turn start is what the test builds
            g = s.game
            image = actions.from_game_state(
                State(rotate(g.stones[0]), rotate(g.stones[1]), g.side, g.quiet, g.ply))
            legal = np.array(actions.legal_actions(s))
            assert sorted(sym.action_perm[legal].tolist()) == actions.legal_actions(image)
            obs = actions.observation(s, g.side)
            assert np.array_equal(sym.obs(obs), actions.observation(image, g.side))


@pytest.mark.parametrize("name", ["ultima", "whistling"])
def test_smoke_training_iteration_and_checkpoint_agent(name, tmp_path):
    cfg = load_config(TINY, [f"game={name}", "iterations=1", "selfplay.max_moves=6",
                             "mcts.simulations=3", "eval.games=0", "model.policy_head=conv"])
    summary = Trainer(cfg, tmp_path / name, progress=False, echo=False).run()
    assert summary["iteration"] == 1 and summary["buffer"] > 0
    agent = make_agent(f"checkpoint:{tmp_path / name / 'model.pt'},sims=2", name, 0)
    record = play_game(name, [agent, make_agent("random", name, 1)], max_moves=2)
    assert record.plies == 2


@pytest.mark.parametrize("name", ["loa", "whistling"])  # no Ultima network ships yet
def test_shipped_network_plays_legal_moves_with_and_without_search(name):
    """checkpoint:GAME works after install (package data, agents/nets/)."""
    state = get_spec(name).start()
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    for spec in (f"checkpoint:{name},sims=0", f"checkpoint:{name},sims=8"):
        agent = make_agent(spec, name, 0)
        # building an agent leaves the process's threads alone (the command sets them)
        assert torch.get_num_threads() == 2
        for _ in range(3):
            move = agent.select_move(state)
            assert move in state.legal_moves()
            state = state.apply(move)
    torch.set_num_threads(threads)
