"""``boardzoo fit-eval --selfplay``: an evaluation learned from self-play alone
(training/eval_scratch.py). Counts are checked against positions counted by hand, the packed
evaluation against its linear function, the fit against weights it must recover from
synthetic results; strength is a benchmark's (docs/training_results.md), not a test's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from boardzoo.agents.alphabeta import searcher
from boardzoo.agents.base import make_agent
from boardzoo.cli import main
from boardzoo.envs.core.learned_eval import LearnedEval
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.ultima import learned_eval as U
from boardzoo.envs.ultima.rules import State
from boardzoo.training.eval_scratch import counts, fit_linear, fit_selfplay, linear_eval

# White: king, immobilizer and two pawns; Black: the king alone
LOPSIDED = "4k3/8/8/8/8/8/PP6/I3K3"


def features(text: str) -> np.ndarray:
    return counts(U, U.inputs([State.from_text(text)]))[0]


def test_counts_of_positions_by_hand() -> None:
    # the start: the same pieces each side, 32 moves a side (the spec's perft 1) / 50, none frozen
    assert features("olcwkcli/pppppppp/8/8/8/8/PPPPPPPP/ILCKWCLO w 0 1").tolist() == \
        pytest.approx([0] * 7 + [0.64, 0.64, 0, 0])
    # kinds: king, pawn, leaper, chameleon, withdrawer, immobilizer, coordinator
    assert features(f"{LOPSIDED} w 0 1")[:7].tolist() == [0, 2, 0, 0, 0, 1, 0]
    assert features(f"{LOPSIDED} b 0 1")[:7].tolist() == [0, -2, 0, 0, 0, -1, 0]


def random_positions(count: int, seed: int) -> list[State]:
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        state = State.start()
        while not state.is_terminal() and state.ply < 150 and len(out) < count:
            out.append(state)
            state = state.apply(rng.choice(state.legal_moves()))
    return out


def test_the_packed_evaluation_is_exactly_its_linear_function() -> None:
    rng = np.random.default_rng(5)
    weights, bias = rng.normal(size=11), 0.3
    learned = linear_eval("ultima", U, weights, bias)
    agent = searcher("ultima", depth=1, learned_eval=learned)
    states = random_positions(200, seed=6)
    z = np.array([agent.learned_value(s) for s in states]) / get_spec("ultima").eval_scale
    expected = counts(U, U.inputs(states)).astype(np.float64) @ weights + bias
    assert np.allclose(z, expected, rtol=0, atol=1e-5) and expected.std() > 0.1
    # the start by hand: only the two move counts (32 / 50 each) and the bias
    assert agent.learned_value(State.start()) / get_spec("ultima").eval_scale == pytest.approx(
        0.64 * weights[7] + 0.64 * weights[8] + bias)


def test_the_fit_recovers_the_weights_that_made_the_results() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, size=(40_000, 4)).astype(np.float32)
    true_w, true_b = np.array([0.5, -0.2, 0.1, 0.0]), 0.1
    win = rng.random(len(x)) < (1 + np.tanh(x @ true_w + true_b)) / 2  # E[result] = tanh(.)
    results = np.where(win, 1.0, -1.0).astype(np.float32)
    w, b, held = fit_linear(x, results, held_from=36_000, l2=0.0, steps=800)
    assert np.abs(w - true_w).max() < 0.04 and abs(b - true_b) < 0.04
    assert held < results[36_000:].var()  # it predicts the held-out results better than the mean


def test_selfplay_learns_with_its_seed_and_plays(tmp_path, capsys) -> None:
    first, gens = fit_selfplay("ultima", generations=2, games=24, per_game=5, seed=3)
    again, _ = fit_selfplay("ultima", generations=2, games=24, per_game=5, seed=3)
    assert np.array_equal(first.weights, again.weights)
    assert [g.games for g in gens] == [24, 24] and all(g.positions <= 120 for g in gens)
    out = tmp_path / "scratch.npz"
    assert main(["fit-eval", "--selfplay", "1", "--game", "ultima", "--games", "12",
                 "--per-game", "3", "--out", str(out), "--threads", "1"]) == 0
    assert "generation 0: 12 games" in capsys.readouterr().out
    LearnedEval.load(out, "ultima", U.SPARSE, U.DENSE)
    agent = make_agent(f"alphabeta:1,eval={out}", "ultima", 0)
    assert agent.select_move(State.start()) in State.start().legal_moves()


@pytest.mark.parametrize(("argv", "needle"), [
    (["--selfplay", "1", "--game", "loa"], "declare no counts to learn from"),
    (["--selfplay", "1"], "--selfplay needs --game"),
    (["--selfplay", "0", "--game", "ultima"], "1 to 100 generations"),
    (["--selfplay", "1", "--game", "ultima", "--games", "3"], "--games must be >= 10"),
    (["--selfplay", "1", "--game", "chess"], "chess"),
    (["--checkpoint", "loa", "--game", "loa"], "--game: not an option of fit-eval --checkpoint"),
    (["--checkpoint", "loa", "--games", "100", "--per-game", "5"],
     "--games, --per-game: not an option of fit-eval --checkpoint (it goes with --selfplay)"),
    (["--selfplay", "1", "--game", "ultima", "--positions", "1000", "--epochs", "2"],
     "--positions, --epochs: not an option of fit-eval --selfplay (it goes with --checkpoint)"),
    (["--selfplay", "1", "--game", "ultima", "--hidden", "8"], "--hidden: not an option"),
])
def test_selfplay_refuses_bad_input(tmp_path, capsys, argv: list[str], needle: str) -> None:
    assert main(["fit-eval", "--out", str(tmp_path / "x.npz"), *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
