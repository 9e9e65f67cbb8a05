"""The config surface: sections that each mean one thing, keys without effect refused, older
keys named with their replacement, older saved configs migrated, threads left to commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from boardzoo.training.agent import load_net, shipped_net
from boardzoo.training.config import (
    ConfigError,
    dump_config,
    from_dict,
    from_saved,
    load_config,
    play_search,
)

REPO = Path(__file__).resolve().parent.parent
TINY = str(REPO / "configs" / "tiny.yaml")


@pytest.mark.parametrize("sets, key", [
    (["mcts.root=gumbel", "play.root=gumbel", "mcts.c_puct=2"], "mcts.c_puct"),
    (["mcts.root=gumbel", "mcts.dirichlet_alpha=0.1"], "mcts.dirichlet_alpha"),
    (["mcts.root=gumbel", "mcts.reuse_tree=false"], "mcts.reuse_tree"),
    (["mcts.root=gumbel", "selfplay.temperature_moves=3"], "selfplay.temperature_moves"),
    (["mcts.root=puct", "mcts.gumbel_m=8"], "mcts.gumbel_m"),
    (["mcts.root=puct", "mcts.gumbel_c_scale=0.5"], "mcts.gumbel_c_scale"),
    (["mcts.root=gumbel", "play.root=puct", "play.gumbel_m=64"], "play.gumbel_m"),
    (["game=ultima", "model.value=static", "train.value_loss_weight=1"],
     "train.value_loss_weight"),
    (["model.bilinear_dim=8"], "model.bilinear_dim"),
    (["eval.vs_best=false", "eval.promote_threshold=0.6"], "eval.promote_threshold"),
])
def test_a_key_without_effect_is_refused_with_the_reason(sets, key):
    with pytest.raises(ConfigError) as info:
        load_config(TINY, sets)
    message = str(info.value)
    assert message.startswith(f"{key} has no effect here (") and "\n" not in message


def test_keys_with_effect_are_accepted_in_every_combination():
    # PUCT play keeps c_puct useful even with Gumbel self-play (Ultima's shipped setting)
    cfg = load_config(TINY, ["mcts.root=gumbel", "play.root=puct", "mcts.c_puct=2"])
    assert play_search(cfg).root == "puct" and play_search(cfg).c_puct == 2
    cfg = load_config(TINY, ["mcts.root=gumbel", "play.gumbel_m=40"])
    assert play_search(cfg).gumbel_m == 40 and cfg.mcts.gumbel_m == 16
    assert play_search(load_config(TINY, ["mcts.root=gumbel"])).gumbel_m == 16


def test_a_file_key_that_an_override_makes_useless_is_accepted(tmp_path):
    # configs/loa.yaml sets mcts.gumbel_m; trying PUCT from the command line still works
    cfg = load_config(REPO / "configs" / "loa.yaml", ["mcts.root=puct"])
    assert cfg.mcts.root == "puct"
    # but a useless key in the file itself is refused
    path = tmp_path / "bad.yaml"
    path.write_text("game: loa\nmcts: {root: gumbel, c_puct: 2}\n")
    with pytest.raises(ConfigError, match="mcts.c_puct has no effect"):
        load_config(path, ["iterations=3"])


@pytest.mark.parametrize("key, replacement", [
    ("mcts.play_root=puct", "play.root"),
    ("mcts.play_gumbel_m=64", "play.gumbel_m"),
    ("mcts.play_policy_temperature=2", "play.policy_temperature"),
    ("model.value_prior=true", "model.value"),
    ("model.zero_init_heads=true", "starts as exactly its prior"),
    ("model.init_from=x.pt", "--init-from"),
])
def test_an_older_key_names_its_replacement(key, replacement, tmp_path):
    with pytest.raises(ConfigError, match=replacement):
        load_config(TINY, [key])
    section, _, rest = key.partition(".")
    name, _, value = rest.partition("=")
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump({"game": "loa", section: {name: yaml.safe_load(value)}}))
    with pytest.raises(ConfigError, match=replacement):
        load_config(path)


def test_older_saved_configs_are_migrated():
    old = {"game": "ultima", "model": {"value_prior": True, "zero_init_heads": True,
                                       "init_from": "a.pt", "policy_prior": 2.0},
           "mcts": {"root": "gumbel", "play_root": "puct", "play_gumbel_m": 64,
                    "play_policy_temperature": 2.0},
           "train": {"value_loss_weight": 0.0}}
    cfg = from_saved(old)
    assert cfg.model.value == "static" and cfg.model.policy_prior == 2
    assert (cfg.play.root, cfg.play.gumbel_m, cfg.play.policy_temperature) == ("puct", 64, 2)
    old["train"]["value_loss_weight"] = 1.0
    assert from_saved(old).model.value == "prior"


@pytest.mark.parametrize("game, value, root", [("loa", "learned", "gumbel"),
                                               ("ultima", "static", "puct"),
                                               ("whistling", "prior", "gumbel")])
def test_shipped_networks_load_with_their_play_settings(game, value, root):
    _, cfg, _ = load_net(shipped_net(game), game)
    assert cfg.model.value == value and play_search(cfg).root == root
    if game == "ultima":
        assert cfg.play.policy_temperature == 2


@pytest.mark.parametrize("name", ["loa", "ultima", "whistling", "tiny"])
def test_a_runs_written_config_loads_again_as_a_config(name):
    cfg = load_config(REPO / "configs" / f"{name}.yaml")
    assert from_dict(yaml.safe_load(dump_config(cfg))) == cfg


def test_commands_set_torch_threads_not_the_library():
    code = ("import torch; from boardzoo.agents import make_agent; "
            "torch.set_num_threads(2); make_agent('checkpoint:loa', 'loa', 0); "
            "a = torch.get_num_threads(); "
            "from boardzoo.envs.core.threads import one_torch_thread; one_torch_thread(); "
            "print(a, torch.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["2", "1"]
    # before torch is imported: through OMP_NUM_THREADS (unless the user set it)
    code = ("import os; os.environ.pop('OMP_NUM_THREADS', None); "
            "from boardzoo.envs.core.threads import one_torch_thread; one_torch_thread(); "
            "import torch; print(torch.get_num_threads())")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "1"


def test_the_keys_the_root_rules_read_are_the_keys_declared_by_root():
    from boardzoo.training.config_schema import BY_ROOT, KEYS
    from boardzoo.training.search.roots import ROOT_RULES

    read = {k for rule in ROOT_RULES.values()
            for k in (*rule.keys, *rule.selfplay_keys, *rule.play_keys)}
    assert read == {name for name, k in KEYS.items() if k.effect is BY_ROOT}
    assert len(read) == 11


def test_the_config_modules_import_without_a_cycle_or_torch():
    code = ("import sys; import boardzoo.training.config_schema; "
            "import boardzoo.training.config; print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr
