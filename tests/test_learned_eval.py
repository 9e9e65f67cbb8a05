"""The learned evaluation of LOA's compiled alpha-beta (envs/core/learned_eval.py,
envs/loa/learned_eval.py, ``alphabeta:...,eval=``) and ``boardzoo fit-eval``.

The compiled evaluation is held to torch's forward pass of the same weights on the inputs
``inputs()`` writes; the inputs to hand-counted groups and pieces; the dense inputs to the
hand-made evaluation (weights that rebuild it); the search that uses it to the Python search
of agents/alphabeta.py with the same leaf function (move, score and nodes); files to their
checks. Strength is a benchmark's (bench/learned_eval.py), not a test's.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import torch
from alphabeta_helpers import assert_same_search

from boardzoo.agents.alphabeta import AlphaBetaAgent, searcher, shipped_eval
from boardzoo.agents.alphabeta_loa import CompiledLoaAlphaBeta
from boardzoo.agents.base import UnknownAgentError, make_agent
from boardzoo.cli import main
from boardzoo.envs.core.game import UnknownGameError
from boardzoo.envs.core.learned_eval import LearnedEval, LearnedEvalError
from boardzoo.envs.core.registry import get_spec
from boardzoo.envs.loa import learned_eval as L
from boardzoo.envs.loa.evaluation import loa_eval
from boardzoo.envs.loa.rules import State


def played(count: int, seed: int, game: str = "loa", max_ply: int = 1000) -> list:
    """Unfinished positions of random games (all of them kept, so openings and endings;
    each game to ``max_ply`` at most)."""
    rng = random.Random(seed)
    out: list = []
    while len(out) < count:
        state = get_spec(game).start()
        while not state.is_terminal() and len(out) < count and state.ply < max_ply:
            out.append(state)
            state = state.apply(rng.choice(state.legal_moves()))
    return out


def random_eval(seed: int, game: str = "loa", hidden: int = 16) -> LearnedEval:
    """A learned evaluation of random weights for ``game``."""
    inputs = get_spec(game).learned_eval_inputs()
    rng = np.random.default_rng(seed)
    n = inputs.SPARSE + inputs.DENSE
    return LearnedEval.pack(game, inputs.SPARSE, inputs.DENSE, rng.normal(0, 0.3, (n, hidden)),
                            rng.normal(0, 0.3, hidden), rng.normal(0, 0.5, hidden),
                            float(rng.normal()))


def torch_z(learned: LearnedEval, x: np.ndarray) -> np.ndarray:
    """The output of torch's Linear-ReLU-Linear with ``learned``'s weights, in float64."""
    n = learned.sparse + learned.dense
    w = torch.from_numpy(learned.weights)
    h = torch.relu(torch.from_numpy(x.astype(np.float64)) @ w[:n] + w[n])
    return (h @ w[n + 1] + w[n + 2, 0]).numpy()


def test_the_compiled_evaluation_equals_torch_on_the_same_weights() -> None:
    learned = random_eval(1)
    states = played(300, seed=2)
    hidden = learned.scratch()
    compiled = np.array([L.evaluate(np.uint64(s.bb[0]), np.uint64(s.bb[1]), s.to_move,
                                    learned.weights, hidden) for s in states])
    # the inputs are float32 (the fit's), the compiled sums float64
    assert np.allclose(compiled, torch_z(learned, L.inputs(states)), rtol=0, atol=1e-5)
    assert compiled.std() > 0.1  # the positions are told apart


def test_inputs_of_the_start_position_by_hand() -> None:
    # Black to move: its 12 pieces on b1-g1 and b8-g8 (two groups), White's on a2-a7 and
    # h2-h7 (two groups).
    x = L.inputs([State.start()])[0]
    own = {8 * r + f for r in (0, 7) for f in range(1, 7)}
    other = {8 * r + f for r in range(1, 7) for f in (0, 7)}
    assert set(np.flatnonzero(x[:64])) == own
    assert set(np.flatnonzero(x[64:128])) == other
    assert x[128] == 1 and x[130] == 1  # groups - 1, pieces / 12
    assert x[131] == 1 and x[133] == 1
    # White to move after b1-b3: the views swap
    after = State.start().apply(State.start().parse_move("b1-b3"))
    y = L.inputs([after])[0]
    assert set(np.flatnonzero(y[:64])) == other
    assert 8 * 2 + 1 in set(np.flatnonzero(y[64:128])) and 1 not in set(np.flatnonzero(y[64:128]))


def test_symmetric_images_keep_the_hand_made_terms() -> None:
    states = played(200, seed=3)
    images = L.inputs(states, symmetric=True).reshape(8, len(states), -1)
    assert np.array_equal(images[0], L.inputs(states))
    for k in range(1, 8):
        assert images[k, :, :128].sum() == images[0, :, :128].sum()
        # groups and counts are the same in every image of the board
        same = [128, 130, 131, 133]
        assert np.array_equal(images[k, :, same], images[0, :, same])
    assert not np.array_equal(images[1, :, :128], images[0, :, :128])


def hand_made_as_learned() -> LearnedEval:
    """Weights whose output is the hand-made evaluation / scale: two hidden units,
    relu(x) - relu(-x) with x = (own score - the opponent's) / 4 (the terms are the inputs)."""
    n = L.SPARSE + L.DENSE
    w1 = np.zeros((n, 2))
    terms = np.array([-1.0, -4.0, 0.0, 1.0, 4.0, 0.0]) / 4.0  # W_GROUPS 1, W_SPREAD 4
    w1[L.SPARSE:, 0], w1[L.SPARSE:, 1] = terms, -terms
    return LearnedEval.pack("loa", L.SPARSE, L.DENSE, w1, np.zeros(2), np.array([1.0, -1.0]), 0.0)


def test_weights_can_rebuild_the_hand_made_evaluation() -> None:
    agent = CompiledLoaAlphaBeta(depth=1, learned_eval=hand_made_as_learned())
    for state in played(300, seed=4):
        assert agent.learned_value(state) == pytest.approx(loa_eval(state), abs=1e-9)


@pytest.mark.parametrize("depth", [2, 3])
def test_the_compiled_search_with_a_learned_evaluation_equals_the_reference(depth: int) -> None:
    learned = random_eval(5)
    rng = random.Random(6)
    for i, state in enumerate([State.start()] + rng.sample(played(600, seed=7), 9)):
        compiled = CompiledLoaAlphaBeta(depth=depth, seed=i, learned_eval=learned)
        reference = AlphaBetaAgent("loa", depth=depth, seed=i, evaluator=compiled.learned_value)
        assert_same_search(reference, compiled, state)


def test_the_learned_evaluation_changes_the_search() -> None:
    # the same search with the hand-made evaluation scores differently: the weights reach it
    state = played(60, seed=8)[-1]
    hand = CompiledLoaAlphaBeta(depth=2, seed=0)
    learned = CompiledLoaAlphaBeta(depth=2, seed=0, learned_eval=random_eval(9))
    hand.select_move(state)
    learned.select_move(state)
    assert hand.last_value != learned.last_value


def test_a_file_round_trips_and_bad_files_are_refused(tmp_path) -> None:
    learned = random_eval(10)
    path = tmp_path / "e.npz"
    learned.save(path)
    back = LearnedEval.load(path, "loa", L.SPARSE, L.DENSE)
    assert np.array_equal(back.weights, learned.weights)
    with pytest.raises(LearnedEvalError, match="for 'loa', not ultima"):
        LearnedEval.load(path, "ultima", L.SPARSE, L.DENSE)
    with pytest.raises(LearnedEvalError, match="inputs"):
        LearnedEval.load(path, "loa", 64, L.DENSE)
    bad = dict(np.load(path))
    for name, change in (("nan", lambda w: w * np.nan), ("shape", lambda w: w[:5]),
                         ("dtype", lambda w: w.astype(np.float32))):
        np.savez(tmp_path / f"{name}.npz", **{**bad, "weights": change(bad["weights"])})
        with pytest.raises(LearnedEvalError):
            LearnedEval.load(tmp_path / f"{name}.npz", "loa", L.SPARSE, L.DENSE)
    # an object array needs pickle to load: refused, never unpickled
    np.savez(tmp_path / "pickled.npz", **{**bad, "weights": np.array([object()], dtype=object)})
    with pytest.raises(LearnedEvalError, match="not a learned-evaluation file"):
        LearnedEval.load(tmp_path / "pickled.npz", "loa", L.SPARSE, L.DENSE)
    # an entry that unpacks to more than the limit (a compression bomb) is refused unread
    import zipfile
    with zipfile.ZipFile(tmp_path / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("weights.npy", "w", force_zip64=True) as f:
            for _ in range(65):
                f.write(bytes(1 << 20))
    with pytest.raises(LearnedEvalError, match="unpacks to more than"):
        LearnedEval.load(tmp_path / "bomb.npz", "loa", L.SPARSE, L.DENSE)
    np.save(tmp_path / "single.npy", np.zeros(3))
    with pytest.raises(LearnedEvalError, match="not an .npz"):
        LearnedEval.load(tmp_path / "single.npy", "loa", L.SPARSE, L.DENSE)
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    with pytest.raises(LearnedEvalError, match="not a learned-evaluation file"):
        LearnedEval.load(tmp_path / "junk.npz", "loa", L.SPARSE, L.DENSE)


def test_agent_specs_take_the_shipped_file_a_path_or_refuse(tmp_path) -> None:
    assert shipped_eval("loa").is_file()
    agent = make_agent("alphabeta:1,eval=learned", "loa", 0)
    assert agent.learned_eval is not None and agent.learned_eval.hidden >= 1
    state = State.start()
    assert agent.select_move(state) in state.legal_moves()
    with pytest.raises(UnknownAgentError, match="does not exist"):
        make_agent(f"alphabeta:1,eval={tmp_path / 'missing.npz'}", "loa", 0)
    with pytest.raises(UnknownAgentError, match="no learned evaluation is shipped for ultima"):
        make_agent("alphabeta:1,eval=learned", "ultima", 0)
    with pytest.raises(UnknownGameError, match="no learned evaluation"):
        dataclasses.replace(get_spec("loa"), learned_eval_module=None).learned_eval_inputs()


def test_fit_eval_writes_a_file_that_plays_and_repeats_with_its_seed(tmp_path, capsys) -> None:
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.npz"
        code = main(["fit-eval", "--checkpoint", "loa", "--out", str(out), "--positions", "400",
                     "--epochs", "1", "--hidden", "8", "--threads", "1", "--seed", "3"])
        assert code == 0
        outs.append(LearnedEval.load(out, "loa", L.SPARSE, L.DENSE))
    assert "held-out MSE" in capsys.readouterr().out
    assert np.array_equal(outs[0].weights, outs[1].weights)
    agent = make_agent(f"alphabeta:1,eval={tmp_path / 'a.npz'}", "loa", 0)
    assert agent.select_move(State.start()) in State.start().legal_moves()


def test_a_fit_smaller_than_a_batch_finishes(tmp_path) -> None:
    # 100 positions in 8 images leave 760 rows to train on, fewer than a batch of 1024
    out = tmp_path / "small.npz"
    assert main(["fit-eval", "--checkpoint", "loa", "--out", str(out), "--positions", "100",
                 "--epochs", "1", "--hidden", "4", "--threads", "1"]) == 0
    assert LearnedEval.load(out, "loa", L.SPARSE, L.DENSE).hidden == 4


@pytest.mark.parametrize(("config", "needle"), [("loa", "almost a constant"),
                                             ("whistling", "is the hand-made evaluation")])
def test_fit_eval_warns_of_a_network_it_cannot_learn_from(tmp_path, capsys, config: str,
                                                          needle: str) -> None:
    # a fresh network's value is a constant (LOA: a learnt value starts at 0) or exactly the
    # hand-made evaluation (Whistling's model.value: prior starts with no learnt part)
    from boardzoo.envs.core.registry import action_game
    from boardzoo.training.config import load_config
    from boardzoo.training.configfiles import resolve_config
    from boardzoo.training.distill import save_model
    from boardzoo.training.network import build_net

    cfg = load_config(resolve_config(config)[0], ["model.channels=8", "model.blocks=1"])
    torch.manual_seed(0)
    path = tmp_path / "fresh.pt"
    save_model(cfg, build_net(cfg, action_game(cfg.game)), path, "a fresh network")
    assert main(["fit-eval", "--checkpoint", str(path), "--out", str(tmp_path / "e.npz"),
                 "--positions", "200", "--epochs", "1", "--hidden", "4", "--threads", "1"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and needle in notes[0]


def test_fit_eval_does_not_warn_of_a_trained_network(tmp_path, capsys) -> None:
    assert main(["fit-eval", "--checkpoint", "loa", "--out", str(tmp_path / "e.npz"),
                 "--positions", "200", "--epochs", "1", "--hidden", "4", "--threads", "1"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_fit_eval_refuses_bad_input(tmp_path, capsys) -> None:
    for argv, needle in ((["--checkpoint", "ultima"], "value is the static evaluation"),
                         (["--checkpoint", "loa", "--positions", "5"], "--positions"),
                         (["--checkpoint", str(tmp_path / "none.pt")], "not found")):
        assert main(["fit-eval", "--out", str(tmp_path / "x.npz"), *argv]) == 2
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1


# -- Ultima --------------------------------------------------------------------------------


def test_ultima_inputs_of_the_start_position_by_hand() -> None:
    from boardzoo.envs.ultima import learned_eval as U
    from boardzoo.envs.ultima.rules import State as UltimaState

    x = U.inputs([UltimaState.start()])[0]
    # 16 pieces a side; material 8 pawns + 2 x 3 (leapers) + 2 x 3 (chameleons) + 3.5
    # (withdrawer) + 5 (immobilizer) + 3.5 (coordinator) = 32; 32 moves a side (the spec's
    # perft 1); no capture, nothing frozen
    assert x[:448].sum() == 16 and x[448:896].sum() == 16
    assert x[896:].tolist() == pytest.approx([3.2, 3.2, 0.64, 0.64, 0.0, 0.0, 0.0])
    assert x[64 * 1 + 8:64 * 1 + 16].sum() == 8  # the mover's (White's) pawns on rank 2


@pytest.mark.parametrize(("game", "positions", "searched"),
                         [("ultima", 120, 5), ("whistling", 80, 2)])
def test_compiled_evaluation_equals_torch_and_the_search_the_reference(
        game: str, positions: int, searched: int) -> None:
    inputs = get_spec(game).learned_eval_inputs()
    learned = random_eval(11, game)
    states = played(positions, seed=12, game=game, max_ply=120 if game == "ultima" else 60)
    agent = searcher(game, depth=1, learned_eval=learned)
    compiled = np.array([agent.learned_value(s) / get_spec(game).eval_scale for s in states])
    assert np.allclose(compiled, torch_z(learned, inputs.inputs(states)), rtol=0, atol=1e-5)
    assert compiled.std() > 0.1
    for i, state in enumerate(random.Random(13).sample(states, searched - 1) + [states[0]]):
        compiled_search = searcher(game, depth=2, seed=i, learned_eval=learned)
        reference = AlphaBetaAgent(game, depth=2, seed=i,
                                   evaluator=compiled_search.learned_value)
        assert_same_search(reference, compiled_search, state)


# -- Whistling -----------------------------------------------------------------------------


def test_whistling_inputs_of_the_start_position_by_hand() -> None:
    from boardzoo.envs.whistling import learned_eval as W
    from boardzoo.envs.whistling.rules import State as WhistlingState

    # by hand: 21 stones a side at the start, no capture either way, no quiet turn yet
    x = W.inputs([WhistlingState.start()], symmetric=True)
    assert x.shape == (3, W.SPARSE + W.DENSE)
    assert (x[:, :331].sum(1) == 21).all() and (x[:, 331:662].sum(1) == 21).all()
    assert x[:, 662:] == pytest.approx(np.array([[1.05, 1.05, 0.0, 0.0, 0.0]] * 3))
    # the start stones are fixed by the three turns: the images are the same position
    assert (x[1] == x[0]).all() and (x[2] == x[0]).all()
