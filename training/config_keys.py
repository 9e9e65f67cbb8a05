"""Which config keys mean something: keys that moved or went, and keys without effect.

A config a user writes must only hold keys that change the run: a key that has no effect
under the settings it chose (``mcts.c_puct`` with Gumbel roots everywhere) is refused with
the reason, and a key of an older boardzoo that moved or went is refused with its
replacement. Configs saved by older runs and model files (their ``config`` dict) are
migrated instead, silently: :func:`migrate_saved`.
"""

from __future__ import annotations

import copy
from typing import Any

from boardzoo.envs.core.actions import MoveActions
from boardzoo.envs.core.game import UnknownGameError
from boardzoo.envs.core.registry import get_spec

from .config_schema import Config
from .search.roots import ROOT_RULES

#: Old key -> its new name (same meaning).
MOVED = {
    "mcts.play_root": "play.root",
    "mcts.play_gumbel_m": "play.gumbel_m",
    "mcts.play_policy_temperature": "play.policy_temperature",
}

#: Old key -> what replaces it (the end of "KEY was removed: ...").
REMOVED = {
    "model.value_prior": "use model.value: prior (the static evaluation plus a learnt "
                         "correction) or static (the evaluation alone, not trained); false is "
                         "model.value: learned",
    "model.zero_init_heads": "drop it: a network with a prior (model.value prior or static, "
                             "model.policy_prior > 0) now starts as exactly its prior",
    "model.init_from": "use the start-up option boardzoo train --init-from PATH (it is not "
                       "part of the model)",
}


def flat_keys(data: dict[str, Any]) -> list[str]:
    """Return the dotted keys of a config mapping (``game``, ``mcts.root``, ...)."""
    keys = []
    for key, value in data.items():
        if isinstance(value, dict):
            keys.extend(f"{key}.{sub}" for sub in value)
        else:
            keys.append(str(key))
    return keys


def old_key_message(key: str) -> str | None:
    """Return the one-line error for an old key, or None if ``key`` is not one."""
    if key in MOVED:
        return f"{key} is now {MOVED[key]} (same meaning): rename it"
    if key in REMOVED:
        return f"{key} was removed: {REMOVED[key]}"
    return None


def migrate_saved(data: dict[str, Any]) -> dict[str, Any]:
    """Return a saved config mapping (an older run's or model file's) with old keys moved
    or replaced by what they meant."""
    out = copy.deepcopy(data)
    sections = {name: out.get(name) for name in ("model", "mcts", "play", "train")}
    mcts, model = sections["mcts"], sections["model"]
    if isinstance(mcts, dict):
        for old, new in MOVED.items():
            sub = old.split(".")[1]
            if sub in mcts:  # (a file holding both names keeps the new one)
                out.setdefault("play", {}).setdefault(new.split(".")[1], mcts.pop(sub))
    if isinstance(model, dict):
        if "value_prior" in model:
            train = sections["train"] if isinstance(sections["train"], dict) else {}
            static = train.get("value_loss_weight", 1.0) == 0
            if model.pop("value_prior"):
                model["value"] = "static" if static else "prior"
        model.pop("zero_init_heads", None)
        model.pop("init_from", None)
    return out


def _without_win_check(game: str) -> bool:
    """Return True when ``game`` is a known game without a win-in-one check."""
    try:
        return get_spec(game).winning_move is None
    except UnknownGameError:
        return False  # an unknown game is reported by the config's own check


def _without_whole_moves(game: str) -> bool:
    """Return True when ``game`` is a known game whose actions are not whole moves."""
    try:
        return not isinstance(get_spec(game).actions, MoveActions)
    except UnknownGameError:
        return False


def no_effect(cfg: Config) -> dict[str, str]:
    """Return ``{key: why}`` for every key that has no effect under ``cfg``'s settings."""
    roots = {cfg.mcts.root, cfg.play.root or cfg.mcts.root}
    play_root = cfg.play.root or cfg.mcts.root
    out: dict[str, str] = {}

    def none(keys: str, why: str) -> None:
        out.update({key: why for key in keys.split()})

    for name, rule in ROOT_RULES.items():
        if name not in roots:
            none(" ".join(rule.keys), f"the {name} root only, and neither self-play "
                 f"(mcts.root) nor play (play.root) uses it")
        if name != cfg.mcts.root:
            none(" ".join(rule.selfplay_keys), f"self-play's {name} root only, and mcts.root "
                 f"is {cfg.mcts.root}")
        if name != play_root:
            none(" ".join(rule.play_keys), f"the {name} root in play only, and the network "
                 f"plays with {play_root} (play.root, else mcts.root)")
    if cfg.model.value == "static":
        none("train.value_loss_weight train.value_target_q train.value_capped_games",
             "the value is not trained with model.value: static")
    if cfg.model.policy_prior <= 0:
        none("train.prior_kl", "a network with an action prior only, and model.policy_prior "
             "is 0")
    if cfg.model.policy_head != "bilinear":
        none("model.bilinear_dim", "model.policy_head bilinear only")
    else:
        none("model.policy_channels", "the linear and conv policy heads only, and "
             "model.policy_head is bilinear")
    if cfg.selfplay.full_search_prob >= 1:
        none("selfplay.fast_simulations", "playout-cap randomisation only, and "
             "selfplay.full_search_prob is 1 (every move gets the full search)")
    if _without_whole_moves(cfg.game):
        none("mcts.leaf_depth play.leaf_depth", f"games whose actions are whole moves only "
             f"(LOA, Ultima): a {cfg.game} action may be one hop of a turn")
    if _without_win_check(cfg.game):
        none("play.win_in_one", f"games with a win-in-one check only (Ultima); {cfg.game} "
             "has none")
    if not cfg.eval.vs_best:
        none("eval.promote_threshold", "the gate against the best network only, and "
             "eval.vs_best is false")
    return out


def refused_keys(cfg: Config, given: list[str]) -> str | None:
    """Return the error for the first of the ``given`` keys without effect, or None."""
    useless = no_effect(cfg)
    for key in given:
        if key in useless:
            return f"{key} has no effect here ({useless[key]}): remove it"
    return None
