"""No downloaded model runs code: ``sb3:PATH`` never unpickles the zip's pickled objects
(unless ``trust_code``), ``rllib:DIR`` (whose loader unpickles) needs ``trust_code``."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from boardzoo.agents import UnknownAgentError, make_agent
from boardzoo.cli import main


class _Marker:
    """Unpickling this creates the file ``path`` (stands for any code a pickle may run)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def payload(marker: Path) -> str:
    """Return the base64 pickle that creates ``marker`` when unpickled."""
    return base64.b64encode(pickle.dumps(_Marker(marker))).decode()


def rewrite_data(src: Path, dst: Path, change) -> None:
    """Copy the model zip ``src`` to ``dst`` with its ``data`` JSON passed through ``change``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            raw = zin.read(name)
            if name == "data":
                data = json.loads(raw)
                change(data)
                raw = json.dumps(data).encode()
            zout.writestr(name, raw)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A MaskablePPO with the PlanesCNN extractor and ReLU heads, trained for 64 steps."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from boardzoo.agents.sb3_policy import PlanesCNN
    from boardzoo.agents.single_agent import SingleAgentEnv

    torch.manual_seed(0)
    kwargs = {"features_extractor_class": PlanesCNN, "activation_fn": torch.nn.ReLU,
              "features_extractor_kwargs": {"channels": 4, "features_dim": 16}, "net_arch": [16]}
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("loa", "random", max_moves=20), n_steps=64,
                        batch_size=32, n_epochs=1, seed=0, policy_kwargs=kwargs, device="cpu")
    model.learn(total_timesteps=64)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return path


def test_a_model_loads_without_unpickling_and_plays_as_sb3s_own_load(trained: Path):
    from sb3_contrib import MaskablePPO

    from boardzoo.agents.arena.play import play_game
    from boardzoo.agents.sb3_policy import load_model
    from boardzoo.envs.core.registry import get_spec

    ours, theirs = load_model(trained, "loa"), MaskablePPO.load(trained, device="cpu")
    assert str(ours.policy) == str(theirs.policy)  # same layers, ReLU included
    a, b = ours.policy.state_dict(), theirs.policy.state_dict()
    assert a.keys() == b.keys() and all(torch_equal(a[k], b[k]) for k in a)
    actions, rng = get_spec("loa").actions, np.random.default_rng(0)
    obs = rng.integers(0, 2, size=(50, *actions.observation_shape)).astype(np.float32)
    masks = rng.random((50, actions.num_actions)) < 0.1
    masks[:, 0] = True
    for o, m in zip(obs, masks, strict=True):
        assert ours.predict(o, action_masks=m, deterministic=True)[0] == \
            theirs.predict(o, action_masks=m, deterministic=True)[0]
    games = [play_game("loa", [make_agent(f"sb3:{trained}{opt}", "loa", 0),
                               make_agent("random", "loa", 1)], max_moves=40)
             for opt in ("", ",trust_code")]
    assert games[0].moves == games[1].moves and len(games[0].moves) == 40


def torch_equal(x, y) -> bool:
    """Return whether two tensors are equal element by element."""
    return bool((x == y).all())


def test_pickled_payloads_never_run(trained: Path, tmp_path: Path, capsys):
    """A payload where SB3 would unpickle it: sb3:PATH refuses the file (one line, exit 2) or
    plays it without the payload; only trust_code lets SB3 run it."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.zip"
    # the policy class itself a payload: nothing to rebuild it from, refused
    rewrite_data(trained, evil, lambda d: d.update(
        policy_class={":type:": "<class 'abc.ABCMeta'>", ":serialized:": payload(marker)}))
    code = main(["play", "loa", "--agents", f"sb3:{evil}", "random", "--max-moves", "2"])
    err = capsys.readouterr().err
    assert not marker.exists()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "policy_class" in err and "trust_code" in err
    assert main(["tournament", "--game", "loa", "--agents", f"sb3:{evil},random",
                 "--games-per-pair", "1", "--out", str(tmp_path / "t"), "--no-progress"]) == 2
    assert not marker.exists()
    # a payload in policy_kwargs whose JSON view names an unknown class: refused
    rewrite_data(trained, evil, lambda d: d.update(policy_kwargs={
        ":type:": "<class 'dict'>", ":serialized:": payload(marker),
        "features_extractor_class": "<class 'evil.Extractor'>"}))
    with pytest.raises(UnknownAgentError, match="evil.Extractor"):
        make_agent(f"sb3:{evil}", "loa", 0)
    assert not marker.exists()
    # payloads in entries play does not need (a schedule, an extra key): never unpickled
    rewrite_data(trained, evil, lambda d: d.update(
        lr_schedule={":type:": "<class 'x'>", ":serialized:": payload(marker)},
        extra={":type:": "<class 'x'>", ":serialized:": payload(marker)}))
    make_agent(f"sb3:{evil}", "loa", 0)
    assert not marker.exists()
    # the same file through SB3's own unpickling, which trust_code asks for, runs the payload
    try:
        make_agent(f"sb3:{evil},trust_code", "loa", 0)
    except UnknownAgentError:
        pass  # whether SB3 then copes with what the payload returned does not matter here
    assert marker.exists()


def test_a_model_for_other_spaces_is_refused(trained: Path, tmp_path: Path):
    with pytest.raises(UnknownAgentError, match=r"observations \(8, 8, 5\), ultima"):
        make_agent(f"sb3:{trained}", "ultima", 0)
    other = tmp_path / "other.zip"
    rewrite_data(trained, other, lambda d: d["action_space"].update(n="99"))
    with pytest.raises(UnknownAgentError, match="'99' actions"):
        make_agent(f"sb3:{other}", "loa", 0)


def test_rllib_folders_need_trust_code(tmp_path: Path, capsys):
    """RLlib unpickles a module folder's files, so rllib:DIR is refused before RLlib (or the
    folder) is even looked at; the rllib venv's tests load one with trust_code."""
    code = main(["play", "loa", "--agents", f"rllib:{tmp_path}", "random"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unpickles" in err and "trust_code" in err
    with pytest.raises(UnknownAgentError, match="unpickles"):
        make_agent(f"rllib:{tmp_path},stochastic", "loa", 0)


def test_a_model_spec_with_options_but_no_path_is_refused():
    """``sb3:,stochastic`` names no file: one clear error, not the current folder."""
    from boardzoo.agents import make_agent
    from boardzoo.agents.base import UnknownAgentError

    with pytest.raises(UnknownAgentError, match="needs a model file"):
        make_agent("sb3:,stochastic", "loa", 0)


def test_policy_kwargs_that_ask_for_a_huge_network_are_refused(trained: Path, tmp_path: Path):
    """Layer sizes are data too: a crafted net_arch is refused before SB3 allocates it."""
    huge = tmp_path / "huge.zip"
    rewrite_data(trained, huge, lambda d: d["policy_kwargs"].update(net_arch=[100_000] * 8))
    with pytest.raises(UnknownAgentError, match="too large to build"):
        make_agent(f"sb3:{huge}", "loa", 0)
    deep = tmp_path / "deep.zip"
    nested: list = [16]
    for _ in range(20):
        nested = [nested]
    rewrite_data(trained, deep, lambda d: d["policy_kwargs"].update(net_arch=nested))
    with pytest.raises(UnknownAgentError, match="too large to build"):
        make_agent(f"sb3:{deep}", "loa", 0)


def test_a_training_baseline_that_needs_trust_code_stops_before_the_first_game(
        trained: Path, tmp_path: Path, capsys):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.zip"
    rewrite_data(trained, evil, lambda d: d.update(
        policy_class={":type:": "<class 'abc.ABCMeta'>", ":serialized:": payload(marker)}))
    tiny = Path(__file__).resolve().parent.parent / "configs" / "tiny.yaml"
    code = main(["train", "--config", str(tiny), "--set", "iterations=1", "--set",
                 f"eval.baselines=['sb3:{evil}']", "--out", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "eval.baselines: " in err, err
    assert "trust_code" in err and not (tmp_path / "run").exists() and not marker.exists()
