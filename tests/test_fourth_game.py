"""A fourth game added through its descriptor alone runs through every layer.

Tic-tac-toe (tests/toygames.py) gets an action encoding and a GameSpec here and
nothing else: no file of boardzoo changes. It then plays as a PettingZoo AEC env,
in the arena and through one training iteration with the learned agent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pettingzoo.test import api_test
from toygames import TicTacToe

from boardzoo.agents import make_agent
from boardzoo.agents.arena import run_tournament
from boardzoo.envs.aec import make_env
from boardzoo.envs.core.actions import MoveActions
from boardzoo.envs.core.registry import game_names, get_spec, register_game
from boardzoo.envs.core.spec import GameSpec
from boardzoo.training.config import from_dict
from boardzoo.training.trainer import Trainer


class Noughts(TicTacToe):
    """Tic-tac-toe under its own name, so that other tests' unregistered "tictactoe" (no
    evaluation, the arena's fallback) stays as it is in this process."""

    name = "noughts"


class TicTacToeActions(MoveActions):
    """Action = cell index 0..8; planes: own marks, the opponent's, a constant 1."""

    state_cls = Noughts
    num_actions = 9
    observation_shape = (3, 3, 3)

    def observation(self, state: TicTacToe, player: int) -> np.ndarray:
        mine, theirs = "xo"[player], "xo"[1 - player]
        cells = np.array(list(state.cells)).reshape(3, 3)
        return np.stack([cells == mine, cells == theirs, np.ones((3, 3), bool)],
                        axis=-1).astype(np.float32)


def lines_open(state: TicTacToe) -> float:
    """A tiny evaluation: lines still open to the mover minus those open to the opponent."""
    from toygames import LINES

    me, you = "xo"[state.to_move], "xo"[1 - state.to_move]
    cells = state.cells
    return float(sum(all(cells[i] != you for i in line) for line in LINES)
                 - sum(all(cells[i] != me for i in line) for line in LINES))


SPEC = register_game(GameSpec(name="noughts", long_name="Tic-tac-toe", state_cls=Noughts,
                              actions=TicTacToeActions(), max_game_length=9,
                              evaluate=lines_open, eval_scale=3.0, playout_cap=9))


def test_the_registry_knows_it_by_name():
    assert get_spec("noughts") is SPEC
    assert "noughts" in game_names()


def test_aec_env_passes_pettingzoo_api_test_and_plays_a_whole_game():
    api_test(make_env("noughts"), num_cycles=50)
    env = make_env(SPEC)
    env.reset(seed=0)
    # x a1 b1 c1 with o on a2 b2: x completes the first rank on its third move
    for action in (0, 3, 1, 4, 2):
        assert env.observe(env.agent_selection)["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.game.winner() == 0
    assert env.rewards == {"player_0": 1, "player_1": -1}
    assert env.unwrapped.metadata["name"] == "noughts_v0"


def test_arena_plays_a_round_robin(tmp_path):
    run_tournament("noughts", ["random", "greedy", "mcts:200"], 4, tmp_path, seed=1,
                   progress=False)
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(games) == 3 * 4
    mcts_points = sum(g["scores"][g["players"].index("mcts:200")] for g in games
                      if "mcts:200" in g["players"] and "random" in g["players"])
    assert mcts_points >= 3  # 200 simulations do not lose tic-tac-toe to random play


@pytest.mark.parametrize("root", ["puct"])
def test_one_training_iteration_and_the_learned_agent(tmp_path, root):
    cfg = from_dict({
        "game": "noughts", "seed": 0, "iterations": 1, "threads": 1, "tensorboard": False,
        "model": {"channels": 8, "blocks": 1, "policy_channels": 2, "value_hidden": 8},
        "mcts": {"root": root, "simulations": 8},
        "selfplay": {"games_per_iteration": 4, "parallel_games": 4, "max_moves": 9},
        "train": {"batch_size": 8, "steps_per_iteration": 2, "buffer_size": 64, "min_buffer": 8},
        "eval": {"every": 1, "games": 2, "simulations": 4, "baselines": ["random"]},
    })
    Trainer(cfg, tmp_path / "run", progress=False, echo=False).run()
    assert (tmp_path / "run" / "best.pt").is_file()
    agent = make_agent(f"checkpoint:{tmp_path / 'run' / 'best.pt'},sims=4", "noughts", 0)
    assert agent.select_move(Noughts.start()) in range(9)
