"""The single-agent Gymnasium wrapper: API checks, masks and observations against the AEC env
and the rules engine, colour alternation, the opponent's moves, rewards, Whistling chains,
determinism and bad input."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from boardzoo.agents.base import Agent, UnknownAgentError
from boardzoo.agents.single_agent import SingleAgentEnv, SingleAgentError, make_single_agent
from boardzoo.envs.aec import BoardGameEnv
from boardzoo.envs.core.game import MoveError
from boardzoo.envs.core.registry import load_state

from conftest import load_vector

GAMES = ["loa", "ultima", "whistling"]
LOA_CASES = {c["id"]: c for c in load_vector("loa", "rules.json")["cases"]}
TAYLOR = load_vector("whistling", "taylor_example.json")


class Scripted(Agent):
    """Plays the given move texts in order, then the first legal move in ASCII order."""

    def __init__(self, moves: list[str] | None = None) -> None:
        self.moves = list(moves or [])

    def select_move(self, state):
        text = self.moves.pop(0) if self.moves else state.legal_move_strs()[0]
        return state.parse_move(text)


def random_legal(env: SingleAgentEnv, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_env_checker_passes(game):
    # check_env steps with unmasked samples, which only the penalty mode accepts.
    check_env(SingleAgentEnv(game, seed=0, illegal="penalty"), skip_render_check=True)
    env = gymnasium.make(f"boardzoo/{game}-single-v0", opponent="random", illegal="penalty")
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("game", ["loa", "ultima"])
def test_masks_and_observations_equal_the_aec_env_and_rules(game):
    """Replay every turn of the wrapper's games on a separate AEC env and a rules state."""
    rng = np.random.default_rng(1)
    env = SingleAgentEnv(game, seed=5)
    for _ in range(2):  # learner as player 0, then as player 1
        obs, info = env.reset()
        learner = info["learner_side"]
        aec = BoardGameEnv(game)
        aec.reset()
        rules = load_state(game)
        for text in info["opponent_moves"]:
            aec.step(aec.move_str_to_action(text))
            rules = rules.apply(rules.parse_move(text))
        for _ in range(30):
            seen = aec.observe(aec.possible_agents[learner])
            assert np.array_equal(obs, seen["observation"])
            assert np.array_equal(env.action_masks(), seen["action_mask"].astype(bool))
            assert np.array_equal(info["action_mask"], seen["action_mask"])
            # Moves are their own action numbers in LOA and Ultima.
            assert set(np.flatnonzero(env.action_masks())) == set(rules.legal_moves())
            action = random_legal(env, rng)
            obs, reward, terminated, truncated, info = env.step(action)
            aec.step(action)
            rules = rules.apply(action)
            for text in info["opponent_moves"]:
                aec.step(aec.move_str_to_action(text))
                rules = rules.apply(rules.parse_move(text))
            assert rules.to_text() == env.raw.game.to_text()
            if terminated or truncated:
                break
            assert rules.to_move == learner


def test_colours_alternate_and_the_opponent_moves_first_as_black():
    env = SingleAgentEnv("loa", opponent=Scripted(), seed=0)
    sides = []
    for _ in range(4):
        _, info = env.reset()
        sides.append(info["learner_side"])
        start = load_state("loa")
        if info["learner_side"] == 1:
            # The scripted opponent (Black) already played the first move in ASCII order.
            assert info["opponent_moves"] == [start.legal_move_strs()[0]]
            assert env.raw.game.to_move == 1 and env.raw.game.ply == 1
        else:
            assert info["opponent_moves"] == [] and env.raw.game.ply == 0
    assert sides == [0, 1, 0, 1]
    env.reset(seed=3)  # a seeded reset starts the alternation again
    assert env.learner == 0
    fixed = SingleAgentEnv("loa", learner_side=1, seed=0)
    assert {fixed.reset()[1]["learner_side"] for _ in range(3)} == {1}


def test_the_opponent_plays_its_agents_moves_each_step():
    env = SingleAgentEnv("loa", opponent=Scripted(), learner_side=0, seed=0)
    env.reset()
    rules = load_state("loa")
    rng = np.random.default_rng(0)
    for _ in range(10):
        action = random_legal(env, rng)
        rules = rules.apply(action)
        _, _, terminated, _, info = env.step(action)
        expected = rules.legal_move_strs()[0]  # what Scripted must answer, from the rules engine
        assert info["opponent_moves"] == [expected]
        rules = rules.apply(rules.parse_move(expected))
        assert env.raw.game.to_text() == rules.to_text()
        assert not terminated


def test_an_agent_spec_string_opponent_moves():
    env = SingleAgentEnv("loa", opponent="mcts:5", learner_side=0, seed=0)
    env.reset()
    _, _, _, _, info = env.step(random_legal(env, np.random.default_rng(0)))
    assert len(info["opponent_moves"]) == 1 and env.raw.game.ply == 2


def test_rewards_are_from_the_learners_view():
    win = LOA_CASES["win_by_connection"]  # Black c5-c3 connects: Black wins
    env = SingleAgentEnv("loa", learner_side=0, position=win["position"])
    env.reset()
    _, reward, terminated, truncated, info = env.step(env.raw.move_str_to_action("c5-c3"))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["result"] == win["result_after"] == "black"
    assert not env.action_masks().any()

    lose = LOA_CASES["capture_connects_opponent"]  # Black's capture connects White
    env = SingleAgentEnv("loa", learner_side=0, position=lose["position"])
    env.reset()
    _, reward, terminated, _, _ = env.step(env.raw.move_str_to_action("g5xe5"))
    assert (reward, terminated) == (-1.0, True)

    draw = LOA_CASES["move_cap_draw"]
    env = SingleAgentEnv("loa", learner_side=0, position=draw["position"])
    env.reset()
    _, reward, terminated, _, info = env.step(env.raw.move_str_to_action("b1-b3"))
    assert (reward, terminated, info["result"]) == (0.0, True, "draw")


def test_the_learner_as_white_loses_when_the_opponent_connects():
    # White to move in the win_by_connection position; after a quiet White move Black's
    # c5-c3 still wins (checked on the rules engine), and the opponent plays it.
    position = LOA_CASES["win_by_connection"]["position"].replace(" b 20", " w 19")
    rules = load_state("loa", position)
    quiet = next(m for m in rules.legal_moves()
                 if "c5-c3" in rules.apply(m).legal_move_strs()
                 and rules.apply(m).apply(rules.apply(m).parse_move("c5-c3")).winner() == 0)
    env = SingleAgentEnv("loa", opponent=Scripted(["c5-c3"]), learner_side=1, position=position)
    obs, _ = env.reset()
    assert obs[0, 0, 2] == 0.0  # plane 2: the learner does not play Black
    _, reward, terminated, _, info = env.step(quiet)
    assert (reward, terminated, info["opponent_moves"]) == (-1.0, True, ["c5-c3"])


def test_max_moves_truncates_with_zero_reward():
    env = SingleAgentEnv("loa", learner_side=0, max_moves=2, seed=0)
    env.reset()
    _, reward, terminated, truncated, info = env.step(random_legal(env, np.random.default_rng(0)))
    assert (reward, terminated, truncated, info["result"]) == (0.0, False, True, "truncated")


def test_whistling_learner_plays_its_chain_hop_by_hop():
    # O (player 1) must play w19-G19:D20-o1:r2s3: two hops by the learner.
    env = SingleAgentEnv("whistling", opponent=Scripted(), learner_side=1,
                         position=TAYLOR["position"])
    _, info = env.reset()
    assert info["opponent_moves"] == []
    first = env.raw.move_str_to_action("w19-G19")
    assert np.flatnonzero(env.action_masks()).tolist() == [first]
    obs, reward, terminated, _, info = env.step(first)
    assert (reward, terminated, info["opponent_moves"]) == (0.0, False, [])
    assert obs[:, :, 2].sum() == 1.0  # plane 2 marks the stone that must continue
    assert env.action_masks().sum() == 1 and env.raw.agent_selection == "player_1"
    _, _, _, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    after = load_state("whistling", TAYLOR["position_after"])
    reply = after.legal_move_strs()[0]
    assert info["opponent_moves"] == [reply]
    assert env.raw.game.to_text() == after.apply(after.parse_move(reply)).to_text()


def test_whistling_opponent_plays_its_whole_chain_in_one_step():
    env = SingleAgentEnv("whistling", opponent="random", learner_side=0, seed=0)
    env.reset()
    _, reward, _, _, info = env.step(env.raw.move_str_to_action(TAYLOR["setup_from_start"][0]))
    # The chain is O's only legal turn, so any opponent must play all of it.
    assert info["opponent_moves"] == TAYLOR["legal_moves"]
    assert env.raw.game.to_text() == TAYLOR["position_after"]
    assert reward == 0.0 and env.raw.agent_selection == "player_0"


def play_out(env: SingleAgentEnv, seed: int | None, steps: int = 40) -> list:
    """Reset with ``seed``, play random legal actions; return what the env showed."""
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=seed)
    trace = [obs.tobytes(), info["opponent_moves"]]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(random_legal(env, rng))
        trace += [obs.tobytes(), reward, info["opponent_moves"]]
        if terminated or truncated:
            break
    return trace


def test_same_seed_same_games_different_seed_different_games():
    env = SingleAgentEnv("loa")
    a = play_out(env, 7)
    assert play_out(SingleAgentEnv("loa"), 7) == a
    assert play_out(SingleAgentEnv("loa", seed=7), None) == a  # the constructor's seed
    assert play_out(SingleAgentEnv("loa"), 8) != a
    assert play_out(env, None) != a  # the next episode: the other colour, the game goes on
    assert play_out(env, 7) == a  # reseeding restarts everything


def test_bad_input_gets_clear_errors():
    with pytest.raises(SingleAgentError, match="unknown game"):
        SingleAgentEnv("chess")
    with pytest.raises(SingleAgentError, match="learner_side"):
        SingleAgentEnv("loa", learner_side=2)
    with pytest.raises(SingleAgentError, match="learner_side"):
        SingleAgentEnv("loa", learner_side=True)
    with pytest.raises(SingleAgentError, match="illegal"):
        SingleAgentEnv("loa", illegal="ignore")
    with pytest.raises(UnknownAgentError, match="unknown agent"):
        SingleAgentEnv("loa", opponent="nobody")
    env = SingleAgentEnv("loa", learner_side=0, seed=0)
    with pytest.raises(SingleAgentError, match="reset"):
        env.step(0)
    env.reset()
    with pytest.raises(SingleAgentError, match="integer"):
        env.step(1.5)
    with pytest.raises(SingleAgentError, match="outside"):
        env.step(513)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(MoveError, match=f"action {illegal} is not legal"):
        env.step(illegal)
    won = LOA_CASES["static_decided_last_mover_wins"]["position"]
    env = SingleAgentEnv("loa", position=won)
    with pytest.raises(SingleAgentError, match="over before"):
        env.reset()
    with pytest.raises(SingleAgentError, match="finished episode"):
        env.step(0)


def test_penalty_mode_ends_the_episode():
    env = make_single_agent("loa", "random", learner_side=0, seed=0, illegal="penalty",
                            illegal_reward=-2.0)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-2.0, True, False, True)
    with pytest.raises(SingleAgentError):
        env.step(illegal)


def test_render_ansi_shows_the_board():
    env = SingleAgentEnv("loa", render_mode="ansi", seed=0)
    env.reset()
    assert "to move: black" in env.render()


def test_the_constructor_seed_does_not_override_a_later_unseeded_reset():
    # reset(seed=7) first: the constructor's seed must not come back on the next reset(),
    # which would restart the opponent's randomness and the colour alternation
    env = SingleAgentEnv("loa", seed=3)
    a = play_out(env, 7) + play_out(env, None)
    fresh = SingleAgentEnv("loa")
    assert play_out(fresh, 7) + play_out(fresh, None) == a
    env.reset(seed=7)
    assert env.reset()[1]["learner_side"] == 1


def test_unknown_reset_options_are_rejected():
    env = SingleAgentEnv("loa", seed=0)
    with pytest.raises(SingleAgentError, match="position"):
        env.reset(options={"positon": "anything"})  # misspelt
    assert env.reset(options={})[1]["learner_side"] == 0


def test_import_boardzoo_alone_registers_the_gymnasium_ids():
    import subprocess
    import sys

    code = ("import boardzoo, gymnasium; "
            "print(gymnasium.make('boardzoo/whistling-single-v0').unwrapped.game_name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["whistling"]
