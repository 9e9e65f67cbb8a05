"""The batched search and self-play (training/batched_*.py) against the single-env reference.

The toy games (tests/batched_toygames.py) have a reference ActionGame and a
BatchedGame each; the search is checked against training/mcts.py on the same
positions with the same fake network, against brute-force game values, and
the self-play records are replayed through the reference rules.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from batched_toygames import (
    BatchedBonusNim,
    BatchedTicTacToe,
    batched_fake_eval,
    fake_eval,
)
from toygames import TicTacToe

from boardzoo.training.batched_selfplay import play_games_batched
from boardzoo.training.config import ConfigError, MCTSConfig, ModelConfig, load_config
from boardzoo.training.network import PolicyValueNet
from boardzoo.training.search.batched import BatchedSearch, run_batched_search, tree_capacity
from boardzoo.training.search.batched_tree import new_tree, reroot
from boardzoo.training.search.tree import Search, run_search

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")
TTT, NIM = BatchedTicTacToe(), BatchedBonusNim()


def ttt_positions(games: int, seed: int = 0) -> list[TicTacToe]:
    """Every position of ``games`` random games (terminal ones included)."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        s = TicTacToe()
        while not s.is_terminal():
            out.append(s)
            s = s.apply(rng.choice(s.legal_moves()))
        out.append(s)
    return out


NIM_POSITIONS = [(p, side) for p in range(0, 13) for side in (0, 1)]


def ref_key(engine):
    return (lambda s: s.cells) if engine is TTT else repr


def unfinished(engine, states):
    return [s for s in states if not engine.action_game.is_terminal(s)]


@pytest.mark.parametrize("engine,states", [(TTT, ttt_positions(60)), (NIM, NIM_POSITIONS)],
                         ids=["tictactoe", "bonusnim"])
def test_toy_engines_match_their_reference(engine, states):
    ref = engine.action_game
    batch = engine.from_states(states)
    assert [repr(s) for s in engine.to_states(batch)] == [repr(s) for s in states]
    mask = engine.legal_mask(batch)
    assert engine.terminated(batch).tolist() == [ref.is_terminal(s) for s in states]
    assert engine.to_move(batch).tolist() == [ref.to_move(s) for s in states]
    assert engine.returns(batch).tolist() == [list(ref.returns(s)) for s in states]
    obs = engine.observation(batch).numpy()
    actions = []
    for i, s in enumerate(states):
        assert mask[i].nonzero().squeeze(1).tolist() == ref.legal_actions(s)
        assert np.array_equal(obs[i], ref.observation(s, ref.to_move(s)))
        actions.append(ref.legal_actions(s)[i % len(ref.legal_actions(s))]
                       if ref.legal_actions(s) else 0)
    after = engine.to_states(engine.step(batch, torch.tensor(actions)))
    for s, a, t in zip(states, actions, after, strict=True):
        assert repr(t) == repr(ref.apply_action(s, a)[0] if ref.legal_actions(s) else s)


# -- the search against mcts.py -----------------------------------------------------------------
@pytest.mark.parametrize("engine,states", [(TTT, ttt_positions(40)), (NIM, NIM_POSITIONS)],
                         ids=["tictactoe", "bonusnim"])
def test_puct_root_visits_equal_the_single_env_search(engine, states):
    """PUCT without noise is deterministic: the same fake network must give the same visits."""
    states = unfinished(engine, states)
    cfg = MCTSConfig(root="puct", dirichlet_alpha=0.0, fpu_reduction=0.1)
    search = run_batched_search(engine, batched_fake_eval(engine), engine.from_states(states),
                                cfg, torch.Generator().manual_seed(0), simulations=40)
    ref = engine.action_game

    def evaluate(st):
        return fake_eval(ref.num_actions, st, ref_key(engine))

    actions, probs = search.policy_target()
    chosen = search.choose(0.0)
    for i, s in enumerate(states):
        r = run_search(ref, evaluate, s, cfg, np.random.default_rng(0), 40)
        k = len(r.root.actions)
        assert actions[i, :k].tolist() == r.root.actions.tolist()
        assert search.tree.N[i, 0, :k].tolist() == r.root.N.tolist()  # exactly
        assert np.allclose(search.tree.W[i, 0, :k].numpy(), r.root.W, atol=1e-12)
        assert np.allclose(probs[i, :k].numpy(), r.policy_target()[1], atol=1e-12)
        assert int(chosen[i]) == r.choose(0.0)


@pytest.mark.parametrize("engine,states", [(TTT, ttt_positions(40, seed=1)),
                                           (NIM, NIM_POSITIONS)], ids=["tictactoe", "bonusnim"])
def test_gumbel_without_noise_equals_the_single_env_search(engine, states):
    states = unfinished(engine, states)
    cfg = MCTSConfig(root="gumbel", gumbel_m=4)
    search = run_batched_search(engine, batched_fake_eval(engine), engine.from_states(states),
                                cfg, torch.Generator().manual_seed(0), simulations=24)
    ref = engine.action_game
    _, probs = search.policy_target()
    chosen = search.choose()
    for i, s in enumerate(states):
        r = run_search(ref, lambda st: fake_eval(ref.num_actions, st, ref_key(engine)), s, cfg,
                       np.random.default_rng(0), 24)
        k = len(r.root.actions)
        assert search.tree.N[i, 0, :k].tolist() == r.root.N.tolist()
        assert np.allclose(probs[i, :k].numpy(), r.policy_target()[1], atol=1e-9)
        assert int(chosen[i]) == r.choose(0.0)


@functools.cache
def nim_value(state: tuple[int, int]) -> int:
    """Game value (+1/-1) of a Bonus Nim position for its player to move, by brute force."""
    ref = NIM.action_game
    if ref.is_terminal(state):
        return int(ref.returns(state)[state[1]])
    me = state[1]
    best = -1
    for a in ref.legal_actions(state):
        nxt = ref.apply_action(state, a)[0]
        best = max(best, nim_value(nxt) if nxt[1] == me else -nim_value(nxt))
    return best


def winning_actions(engine, s) -> set[int]:
    ref = engine.action_game
    if engine is TTT:
        return {a for a in ref.legal_actions(s) if ref.apply_action(s, a)[0].winner() == s.to_move}
    out = set()
    for a in ref.legal_actions(s):
        nxt = ref.apply_action(s, a)[0]
        if (nim_value(nxt) if nxt[1] == s[1] else -nim_value(nxt)) == 1:
            out.add(a)
    return out


@pytest.mark.parametrize("root", ["puct", "gumbel"])
@pytest.mark.parametrize("engine", [TTT, NIM], ids=["tictactoe", "bonusnim"])
def test_finds_forced_wins_with_an_uninformed_network(engine, root):
    """Uniform priors and zero values: only the backed-up terminal results (by each node's
    player, across Bonus Nim's extra turns) can point to the winning actions."""
    pool = unfinished(engine, ttt_positions(80, seed=2) if engine is TTT
                      else [(p, s) for p in range(1, 8) for s in (0, 1)])
    cases = []
    for s in pool:
        wins = winning_actions(engine, s)
        if wins and len(wins) < len(engine.action_game.legal_actions(s)):
            cases.append((s, wins))
    assert len(cases) >= 8
    cfg = MCTSConfig(root=root, dirichlet_alpha=0.0)
    search = run_batched_search(engine, batched_fake_eval(engine, uniform=True),
                                engine.from_states([s for s, _ in cases]), cfg,
                                torch.Generator().manual_seed(0), simulations=100)
    actions = search.policy_target()[0]
    chosen = actions.gather(1, search.choose(0.0)[:, None]).squeeze(1).tolist()
    assert all(a in wins for a, (_, wins) in zip(chosen, cases, strict=True))
    if engine is NIM:  # pile 4: only "take 2, move again, take 2" wins
        assert chosen[[s for s, _ in cases].index((4, 0))] == 1


def test_reused_subtree_searches_like_the_single_env_reuse():
    """Re-rooting at the played child keeps its statistics, and searching on gives the visits
    mcts.py gives when it reuses the same child as its next root."""
    states = unfinished(TTT, ttt_positions(6, seed=4))[:12]
    cfg = MCTSConfig(root="puct", dirichlet_alpha=0.0)
    sims = 30
    tree = new_tree(TTT, TTT.from_states(states), tree_capacity(cfg, sims))
    ev = batched_fake_eval(TTT)
    first = BatchedSearch(TTT, cfg, ev, torch.Generator(), tree, False, sims).run()
    edge = first.choose(0.0)
    child = first.tree.children[first.ar, 0, edge]
    kept = reroot(first.tree, child, tree_capacity(cfg, sims) - sims)
    kept_n = kept.N.clone()  # the second search adds to the tree in place
    second = BatchedSearch(TTT, cfg, ev, torch.Generator(), kept, False, sims).run()

    def evaluate(st):
        return fake_eval(9, st, lambda s: s.cells)

    checked = 0
    for i, s in enumerate(states):
        r = run_search(TTT.action_game, evaluate, s, cfg, np.random.default_rng(0), sims)
        node = r.root.children[int(edge[i])]
        assert bool(first.tree.expanded[i, child[i]]) == node.expanded
        if not node.expanded:  # a finished game: nothing to reuse
            continue
        checked += 1
        k = len(node.actions)
        assert kept_n[i, 0, :k].tolist() == node.N.tolist()
        again = Search(TTT.action_game, cfg, np.random.default_rng(0), node, False, sims)
        again.prepare_root()
        while not again.finished():
            leaf = again.select()
            if leaf is not None:
                logits, values = evaluate([leaf.state])
                again.expand(leaf, logits[0], float(values[0]))
        assert second.tree.N[i, 0, :k].tolist() == node.N.tolist()
    assert checked >= 8


def test_same_generator_seed_same_search_and_noise_matters():
    states = TTT.from_states(unfinished(TTT, ttt_positions(5, seed=5)))
    ev = batched_fake_eval(TTT)
    for root in ("puct", "gumbel"):
        cfg = MCTSConfig(root=root)
        a, b, c = (run_batched_search(TTT, ev, states, cfg, torch.Generator().manual_seed(seed),
                                      simulations=16, add_noise=True) for seed in (1, 1, 2))
        assert torch.equal(a.policy_target()[1], b.policy_target()[1])
        assert torch.equal(a.tree.N, b.tree.N)
        assert not torch.equal(a.tree.N, c.tree.N)


# -- self-play ----------------------------------------------------------------------------------
def tiny_net(engine) -> PolicyValueNet:
    torch.manual_seed(0)
    return PolicyValueNet(engine.observation_shape, engine.num_actions,
                          ModelConfig(channels=8, blocks=1, policy_channels=2, value_hidden=8))


def ttt_config(*overrides: str):
    # temperature sampling is PUCT's: with a Gumbel root the key has no effect (refused)
    temperature = [] if "mcts.root=gumbel" in overrides else ["selfplay.temperature_moves=2"]
    return load_config(TINY, ["mcts.simulations=12", "selfplay.parallel_games=3",
                              *temperature, *overrides])


def cells_of(obs: np.ndarray, player: int) -> str:
    """The position a tic-tac-toe observation shows (its planes are from ``player``'s view)."""
    mine, theirs = obs[..., 0].reshape(-1), obs[..., 1].reshape(-1)
    marks = "xo" if player == 0 else "ox"
    pairs = zip(mine, theirs, strict=True)
    return "".join(marks[0] if m else marks[1] if t else "." for m, t in pairs)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_selfplay_records_replay_through_the_reference_rules(root):
    seeds = list(range(7))  # 7 games on 3 slots: slots are refilled, then retired
    recs = play_games_batched(tiny_net(TTT), TTT, ttt_config(f"mcts.root={root}"), seeds)
    assert [r.seed for r in recs] == seeds
    ref = TTT.action_game

    def on(s):  # a position with one legal action is played on (no example is recorded)
        while not ref.is_terminal(s) and len(ref.legal_actions(s)) == 1:
            s = ref.apply_action(s, ref.legal_actions(s)[0])[0]
        return s

    for rec in recs:
        n = len(rec.obs)
        assert n == len(rec.actions) == len(rec.probs) == len(rec.players) >= 5
        assert rec.length == n + rec.forced and rec.forced == (rec.length == 9)
        states = [TicTacToe(cells_of(o, p)) for o, p in zip(rec.obs, rec.players, strict=True)]
        assert states[0].cells == "." * 9
        for k, s in enumerate(states):
            assert rec.players[k] == s.to_move
            assert rec.actions[k].tolist() == ref.legal_actions(s)
            assert rec.probs[k].dtype == np.float32 and rec.probs[k].min() >= 0
            assert abs(float(rec.probs[k].sum()) - 1) < 1e-5
            nxt = [on(ref.apply_action(s, a)[0]) for a in ref.legal_actions(s)]
            if k + 1 < n:
                assert states[k + 1].cells in {t.cells for t in nxt}
            else:  # the last recorded position leads to a finished game with this outcome
                assert any(t.is_terminal() and t.returns()[0] == rec.outcome for t in nxt)
        assert not rec.capped
        values = rec.outcomes()
        assert all(v == (rec.outcome if p == 0 else -rec.outcome)
                   for v, p in zip(values, rec.players, strict=True))


def test_selfplay_caps_long_games_and_is_deterministic():
    cfg = ttt_config("selfplay.max_moves=3")
    recs = play_games_batched(tiny_net(TTT), TTT, cfg, [5, 6, 7, 8])
    assert all(r.capped and r.length == 3 and r.outcome == 0.0 for r in recs)
    net = tiny_net(TTT)
    cfg = ttt_config("mcts.root=puct", "selfplay.temperature_moves=9")
    a, b = (play_games_batched(net, TTT, cfg, [1, 2, 3, 4]) for _ in range(2))
    c = play_games_batched(net, TTT, cfg, [9, 2, 3, 4])
    for ra, rb in zip(a, b, strict=True):
        assert (ra.length, ra.outcome) == (rb.length, rb.outcome)
        for name in ("obs", "actions", "probs"):
            assert all(np.array_equal(x, y) for x, y in
                       zip(getattr(ra, name), getattr(rb, name), strict=True))
    assert any(len(ra.obs) != len(rc.obs) or any(not np.array_equal(x, y) for x, y in
                                                 zip(ra.obs, rc.obs, strict=False))
               for ra, rc in zip(a, c, strict=True))


def test_selfplay_engine_config_is_validated():
    assert load_config(TINY).selfplay.engine == "reference"
    assert load_config(TINY, ["selfplay.engine=batched"]).selfplay.engine == "batched"
    with pytest.raises(ConfigError, match="selfplay.engine must be one of 'reference', 'batched'"):
        load_config(TINY, ["selfplay.engine=gpu"])
    with pytest.raises(ConfigError, match="selfplay.backend must be local with"):
        load_config(TINY, ["selfplay.engine=batched", "selfplay.backend=ray"])


def test_batched_engine_in_worker_processes_plays_each_chunk_as_one_batch():
    """selfplay.workers with the batched engine: each worker plays its chunk of the seeds
    in one batch, the games the same chunk gives in this process (so a run repeats)."""
    from boardzoo.envs.loa.batched import Engine
    from boardzoo.training.backends import SelfPlayPool, split_seeds
    from boardzoo.training.network import build_net

    cfg = load_config(TINY, ["selfplay.engine=batched", "selfplay.max_moves=6",
                             "selfplay.workers=2"])
    torch.manual_seed(0)
    engine = Engine()
    net = build_net(cfg, engine.action_game).eval()
    seeds = [11, 12, 13, 14, 15]
    pool = SelfPlayPool(cfg)
    try:
        got = pool.play(net, seeds)
    finally:
        pool.close()
    want = [r for chunk in split_seeds(seeds, 2)
            for r in play_games_batched(net, engine, cfg, chunk)]
    assert [r.seed for r in got] == seeds and pool.cpu > 0
    for a, b in zip(got, want, strict=True):  # the same positions, so the same moves
        assert all(np.array_equal(x, y) for x, y in zip(a.obs, b.obs, strict=True))
        assert all(np.allclose(x, y) for x, y in zip(a.probs, b.probs, strict=True))
    whole = play_games_batched(net, engine, cfg, seeds)  # one batch of all 5: other games
    assert any(not np.array_equal(x, y) for a, b in zip(got, whole, strict=True)
               for x, y in zip(a.obs, b.obs, strict=False))


def test_tiny_training_run_with_the_batched_engine(tmp_path, capsys):
    from boardzoo.cli import main
    from boardzoo.training.checkpoint import load

    out = tmp_path / "batched"
    code = main(["train", "--config", TINY, "--out", str(out), "--quiet",
                 "--set", "selfplay.engine=batched"])
    assert code == 0, capsys.readouterr().err
    data = load(out / "checkpoint.pt")
    assert data["iteration"] == 2 and data["config"]["selfplay"]["engine"] == "batched"
    assert data["buffer"]["added"] > 0
    # one iteration, stop, resume for the second: the same buffer and weights
    from boardzoo.training.trainer import Trainer

    split = tmp_path / "split"
    sets = ["selfplay.engine=batched"]
    Trainer(load_config(TINY, [*sets, "iterations=1"]), split, progress=False, echo=False).run()
    Trainer(load_config(TINY, sets), split, resume=True, progress=False, echo=False).run()
    again = load(split / "checkpoint.pt")
    assert torch.equal(again["buffer"]["obs"], data["buffer"]["obs"])
    assert all(torch.equal(again["model"][k], v) for k, v in data["model"].items())


# -- the real batched engines -------------------------------------------------------------------
def action_positions(name: str, n: int, seed: int) -> list:
    """Unfinished action states from seeded random play (restarting after 100 actions)."""
    from boardzoo.envs.core.registry import action_game

    ref, rng = action_game(name), random.Random(seed)
    out, s, k = [], action_game(name).initial_state(), 0
    while len(out) < n:
        actions = ref.legal_actions(s)
        if not actions or k >= 100:
            s, k = ref.initial_state(), 0
            continue
        s, k = ref.apply_action(s, rng.choice(actions))[0], k + 1
        if not ref.is_terminal(s) and rng.random() < 0.2:
            out.append(s)
    return out


@pytest.mark.parametrize("root", ["puct", "gumbel"])
@pytest.mark.parametrize("name", ["loa", "ultima", "whistling"])
def test_real_engines_search_like_the_single_env_search(name, root):
    """On each game's batched engine (Whistling: hops of a chain by one player), the same
    fake network gives the same root visits as mcts.py over the reference ActionGame."""
    from boardzoo.envs.core.registry import batched_game

    engine = batched_game(name)
    states = action_positions(name, 6, seed=11)
    cfg = MCTSConfig(root=root, dirichlet_alpha=0.0, gumbel_m=8)
    search = run_batched_search(engine, batched_fake_eval(engine), engine.from_states(states),
                                cfg, torch.Generator().manual_seed(0), simulations=16)
    ref = engine.action_game
    _, probs = search.policy_target()
    chosen = search.choose(0.0)
    for i, s in enumerate(states):
        r = run_search(ref, lambda st: fake_eval(ref.num_actions, st), s, cfg,
                       np.random.default_rng(0), 16)
        k = len(r.root.actions)
        assert search.tree.actions[i, 0, :k].tolist() == r.root.actions.tolist()
        assert search.tree.N[i, 0, :k].tolist() == r.root.N.tolist()
        assert np.allclose(probs[i, :k].numpy(), r.policy_target()[1], atol=1e-9)
        assert int(chosen[i]) == r.choose(0.0)


def loa_state_of(obs: np.ndarray, player: int):
    """The LOA position (without repetition history) an observation shows."""
    from boardzoo.envs.loa.rules import MOVE_CAP, State

    def bits(plane: np.ndarray) -> int:
        return sum(1 << i for i, v in enumerate(plane.reshape(-1)) if v)

    own, other = bits(obs[..., 0]), bits(obs[..., 1])
    black, white = (own, other) if player == 0 else (other, own)
    return State(black, white, player, round(float(obs[0, 0, 3]) * MOVE_CAP))


def test_loa_selfplay_records_replay_through_the_reference_rules():
    from boardzoo.envs.loa.batched import Engine
    from boardzoo.training.network import build_net

    cfg = load_config(TINY, ["selfplay.engine=batched", "selfplay.max_moves=10"])
    torch.manual_seed(0)
    engine = Engine()
    recs = play_games_batched(build_net(cfg, engine.action_game), engine, cfg, [1, 2, 3])
    for rec in recs:
        assert rec.length == len(rec.obs) == 10 and rec.capped
        states = [loa_state_of(o, p) for o, p in zip(rec.obs, rec.players, strict=True)]
        assert states[0].bb == states[0].start().bb
        for k, s in enumerate(states):
            assert rec.actions[k].tolist() == sorted(s.legal_moves())
            assert abs(float(rec.probs[k].sum()) - 1) < 1e-5
            if k + 1 < len(states):
                assert states[k + 1].side == rec.players[k + 1]
                assert states[k + 1].bb in {s.apply(m).bb for m in s.legal_moves()}
