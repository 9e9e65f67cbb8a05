"""Training configuration: dataclasses, YAML loading with validation, ``--set`` overrides.

A config file is YAML with the sections below; every key is checked on load, so
a typo (``simulation: 32``) is an error naming the key and the allowed ones
rather than a silent default. ``--set section.key=value`` overrides one value
(the value is read as YAML: ``--set mcts.root=gumbel``, ``--set train.lr=1e-3``).

This module imports no torch, so the CLI stays fast.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import math
import typing
from pathlib import Path
from typing import Any

import yaml

from boardzoo.agents.agent_spec import kind_of, spec_list
from boardzoo.agents.base import AGENT_FACTORIES, INTERACTIVE_KINDS
from boardzoo.agents.processes import worker_count_problem
from boardzoo.envs.core.game import ECHO_LIMIT, BoardzooError, echo
from boardzoo.envs.core.registry import game_names, get_spec

from . import safe_yaml
from .config_bounds import check_bounds
from .config_keys import flat_keys, migrate_saved, no_effect, old_key_message, refused_keys
from .config_schema import (
    SECTIONS,
    Config,
    EvalConfig,
    MCTSConfig,
    ModelConfig,
    PlayConfig,
    SelfPlayConfig,
    TrainConfig,
)
from .search.roots import ROOT_RULES

__all__ = ["SECTIONS", "Config", "ConfigError", "EvalConfig", "MCTSConfig", "ModelConfig",
           "PlayConfig", "SelfPlayConfig", "TrainConfig", "from_dict", "from_saved",
           "load_config", "play_search", "dump_config"]


class ConfigError(BoardzooError):
    """A config file or ``--set`` override with an unknown key or a bad value."""


class UselessKeyError(ConfigError):
    """A key that has no effect under the config's settings."""


#: ``model.value``: the value head alone, the static evaluation plus a correction, or the
#: evaluation alone.
VALUE_KINDS = ("learned", "prior", "static")
ROOTS = tuple(ROOT_RULES)


def _names(values: tuple[str, ...]) -> str:
    """Return ``'a', 'b' or 'c'`` for the allowed values of a key."""
    quoted = [repr(v) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


# -- building from dicts --------------------------------------------------------------------
def _coerce(where: str, value: Any, typ: Any) -> Any:
    """Return ``value`` as type ``typ`` or raise ConfigError naming ``where``."""
    if typ is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {echo(value)}")
    if typ is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(f"{where}: expected an integer, got {echo(value)}")
    if typ is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):  # PyYAML reads 1e-3 (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{where}: expected a number, got {echo(value)}")
    if typ is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected a string, got {echo(value)}")
    if typing.get_origin(typ) is list:
        (item,) = typing.get_args(typ)
        if isinstance(value, str):  # a list of agent specs keeps each spec's options
            value = spec_list(value) if item is str else [v.strip() for v in value.split(",")
                                                           if v.strip()]
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {echo(value)}")
        return [_coerce(f"{where}[{i}]", v, item) for i, v in enumerate(value)]
    raise AssertionError(f"unsupported config type {typ!r}")  # pragma: no cover


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{where.rstrip('.') or 'config'}: expected a mapping of keys, "
                          f"got {echo(data)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        shown = ", ".join(f"{where}{k}"[:ECHO_LIMIT] for k in unknown[:10])  # input: cut
        raise ConfigError(f"unknown config key(s) {shown}; "
                          f"allowed{' in ' + where.rstrip('.') if where else ''}: "
                          f"{', '.join(names)}")
    kwargs = {}
    for name, value in data.items():
        typ = hints[name]
        if dataclasses.is_dataclass(typ):
            kwargs[name] = _build(typ, value, f"{where}{name}.")
        else:
            kwargs[name] = _coerce(f"{where}{name}", value, typ)
    return cls(**kwargs)


def validate(cfg: Config) -> Config:
    """Check value ranges; raise ConfigError naming the first bad value."""
    def need(ok: bool, key: str, what: str) -> None:
        if not ok:
            raise ConfigError(f"{key} must be {what}")

    games = game_names()
    need(cfg.game in games, "game", f"one of {', '.join(games)} (got {echo(cfg.game)})")
    need(cfg.iterations >= 1, "iterations", "at least 1")
    need(cfg.time_limit_minutes >= 0, "time_limit_minutes", "0 (no limit) or positive")
    need(cfg.threads >= 0, "threads", "0 or more")
    m = cfg.model
    need(m.channels >= 1, "model.channels", "at least 1")
    need(m.blocks >= 0, "model.blocks", "0 or more")
    need(m.policy_channels >= 1, "model.policy_channels", "at least 1")
    need(m.value_hidden >= 1, "model.value_hidden", "at least 1")
    need(m.policy_head in ("auto", "linear", "conv", "bilinear"), "model.policy_head",
         f"auto, linear, conv or bilinear (got {echo(m.policy_head)})")
    need(m.bilinear_dim >= 1, "model.bilinear_dim", "at least 1")
    need(m.cell_mask_plane >= -1, "model.cell_mask_plane", "-1 (none) or a plane index")
    need(m.value in VALUE_KINDS, "model.value",
         f"{', '.join(VALUE_KINDS)} (got {echo(m.value)})")
    s = cfg.mcts
    need(s.root in ROOTS, "mcts.root", f"{_names(ROOTS)} (got {echo(s.root)})")
    need(s.simulations >= 1, "mcts.simulations", "at least 1")
    need(s.c_puct > 0, "mcts.c_puct", "positive")
    need(0 <= s.dirichlet_fraction <= 1, "mcts.dirichlet_fraction", "between 0 and 1")
    need(s.gumbel_m >= 1, "mcts.gumbel_m", "at least 1")
    need(s.gumbel_c_visit >= 0 and s.gumbel_c_scale >= 0, "mcts.gumbel_c_visit/c_scale",
         "0 or more")
    pl = cfg.play
    need(pl.root in ("", *ROOTS), "play.root", f"{_names(('', *ROOTS))} (got {echo(pl.root)})")
    need(pl.gumbel_m >= 0, "play.gumbel_m", "0 (= mcts.gumbel_m) or more")
    need(0 < pl.policy_temperature < math.inf, "play.policy_temperature", "a number > 0")
    p = cfg.selfplay
    need(p.games_per_iteration >= 1, "selfplay.games_per_iteration", "at least 1")
    need(p.parallel_games >= 1, "selfplay.parallel_games", "at least 1")
    need(p.workers >= 0, "selfplay.workers", "0 or more")
    too_many = worker_count_problem(p.workers) if p.backend == "local" else None
    if too_many:
        raise ConfigError(f"selfplay.workers {too_many}")
    need(p.engine in ("reference", "batched"), "selfplay.engine",
         f"'reference' or 'batched' (got {echo(p.engine)})")
    need(p.temperature_moves >= 0, "selfplay.temperature_moves", "0 or more")
    need(p.full_search_prob >= 1 or 1 <= p.fast_simulations < cfg.mcts.simulations,
         "selfplay.fast_simulations", "between 1 and mcts.simulations - 1 with "
         f"selfplay.full_search_prob below 1 (got {p.fast_simulations})")
    need(p.max_moves >= 1, "selfplay.max_moves", "at least 1")
    need(p.backend in ("local", "ray"), "selfplay.backend", f"local or ray (got {echo(p.backend)})")
    torch_priors = get_spec(cfg.game).batched_eval_module is not None
    need(not m.value_prior or p.engine == "reference" or torch_priors, "model.value",
         f"learned with selfplay.engine batched ({cfg.game} has no batched evaluation)")
    need(m.policy_prior >= 0, "model.policy_prior", "0 (off) or more")
    need(m.policy_prior == 0 or get_spec(cfg.game).action_prior is not None,
         "model.policy_prior", f"0: {cfg.game} has no action prior (GameSpec.action_prior)")
    need(m.policy_prior == 0 or p.engine == "reference" or torch_priors, "model.policy_prior",
         f"0 with selfplay.engine batched ({cfg.game} has no batched evaluation)")
    need(p.backend == "local" or p.engine == "reference", "selfplay.backend",
         "local with selfplay.engine batched (the Ray pool plays the reference engine)")
    need(not p.ray_address or p.backend == "ray", "selfplay.ray_address",
         f"empty unless selfplay.backend is ray (got {echo(p.ray_address)})")
    t = cfg.train
    need(t.batch_size >= 1, "train.batch_size", "at least 1")
    need(t.steps_per_iteration >= 0, "train.steps_per_iteration", "0 or more")
    need(t.replay_ratio >= 0, "train.replay_ratio", "0 (fixed steps) or positive")
    need(t.lr > 0, "train.lr", "positive")
    need(t.weight_decay >= 0, "train.weight_decay", "0 or more")
    need(t.buffer_size >= t.batch_size, "train.buffer_size", "at least train.batch_size")
    need(t.min_buffer >= 0, "train.min_buffer", "0 or more")
    need(t.value_loss_weight >= 0, "train.value_loss_weight", "0 or more")
    need(0 <= t.value_target_q <= 1, "train.value_target_q", "between 0 and 1")
    need(t.policy_loss_weight >= 0, "train.policy_loss_weight", "0 or more")
    need(t.prior_kl >= 0, "train.prior_kl", "0 or more")
    e = cfg.eval
    need(e.every >= 0, "eval.every", "0 or more")
    need(e.games >= 0, "eval.games", "0 or more")
    need(e.simulations >= 0, "eval.simulations", "0 or more")
    need(e.max_moves >= -1, "eval.max_moves", "-1 (selfplay.max_moves), 0 (rules only) or more")
    need(0 <= e.promote_threshold <= 1, "eval.promote_threshold", "between 0 and 1")
    need(e.opening_moves >= 0, "eval.opening_moves", "0 or more")
    for spec in e.baselines:
        kind = kind_of(spec)
        need(kind in AGENT_FACTORIES and kind not in INTERACTIVE_KINDS, "eval.baselines",
             f"agent specs such as random, mcts:50, alphabeta:2 (got {echo(spec)})")
    check_bounds(dataclasses.asdict(cfg))  # every numeric key in a sane range, finite
    return cfg


def check_extras(cfg: Config) -> list[str]:
    """Raise ConfigError if the config needs an optional package that is missing; return
    notes about optional outputs that will be skipped (checked before a run creates files)."""
    if cfg.selfplay.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("selfplay.backend: ray needs Ray, which is not installed: "
                          "pip install 'boardzoo[ray]'")
    notes = []
    if cfg.tensorboard and importlib.util.find_spec("tensorboard") is None:
        notes.append("tensorboard: true, but TensorBoard is not installed, so no event files "
                     "are written (pip install 'boardzoo[tensorboard]'; metrics.csv and "
                     "boardzoo plot need nothing more)")
    return notes


def from_dict(data: dict[str, Any] | None, check: list[str] | None = None) -> Config:
    """Build and validate a Config from a mapping a user wrote (a YAML file and ``--set``):
    old keys are refused, and so are keys without effect under its settings (of ``check``
    only, when given: the keys an override set)."""
    data = data or {}
    given = flat_keys(data) if isinstance(data, dict) else []
    for key in given:
        message = old_key_message(key)
        if message:
            raise ConfigError(message)
    cfg = validate(_build(Config, data, ""))
    message = refused_keys(cfg, given if check is None else check)
    if message:
        raise UselessKeyError(message)
    return cfg


def from_saved(data: dict[str, Any]) -> Config:
    """Build and validate the Config saved by a run or in a model file (older keys are
    migrated; a saved config holds every key, used or not)."""
    if not isinstance(data, dict):
        raise ConfigError(f"config: expected a mapping of keys, got {type(data).__name__}")
    return validate(_build(Config, migrate_saved(data), ""))


def play_search(cfg: Config) -> MCTSConfig:
    """Return the search the network plays with (evaluation, ``checkpoint:`` agents): the
    self-play search with the ``play`` section's root and Gumbel candidates."""
    root = cfg.play.root or cfg.mcts.root
    return dataclasses.replace(cfg.mcts, root=root, gumbel_m=cfg.play.gumbel_m or cfg.mcts.gumbel_m,
                               leaf_depth=cfg.play.leaf_depth)


def yaml_error(exc: yaml.YAMLError) -> str:
    """Return a YAML error as one short phrase with its line and column."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + " ".join(str(problem).split())


def model_differences(saved: ModelConfig, wanted: ModelConfig) -> str:
    """Return the model keys whose values differ, as ``key saved -> wanted`` (for errors)."""
    pairs = [(f.name, getattr(saved, f.name), getattr(wanted, f.name))
             for f in dataclasses.fields(saved)]
    return ", ".join(f"model.{name} {a!r} -> {b!r}" for name, a, b in pairs if a != b)


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``section.key=value`` into the key path and the YAML-read value."""
    key, eq, raw = text.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"--set expects key=value (e.g. mcts.simulations=64), got {echo(text)}")
    try:
        value = safe_yaml.load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {echo(text)}: value is not valid YAML "
                          f"({yaml_error(exc)})") from None
    return key.strip().split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of the config mapping with each ``section.key=value`` applied."""
    out = copy.deepcopy(data)
    for text in overrides:
        path, value = parse_override(text)
        message = old_key_message(".".join(path))
        if message:
            raise ConfigError(f"--set {echo(text)}: {message}")
        node = out
        if len(path) > 2 or not all(path):
            raise ConfigError(f"--set {echo(text)}: a key is KEY or SECTION.KEY "
                              f"(e.g. iterations=5, mcts.simulations=64)")
        for part in path[:-1]:
            if part not in SECTIONS:
                raise ConfigError(f"--set {echo(text)}: unknown section {echo(part)}; "
                                  f"sections: {', '.join(SECTIONS)}")
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {echo(text)}: {part} is not a section")
        node[path[-1]] = value
    return out


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Return the mapping of a YAML config file; ConfigError if it is unreadable or not one."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {str(p)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {str(p)!r} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = safe_yaml.load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {str(p)!r} is not valid YAML: {yaml_error(exc)}") from None
    if data is None:
        raise ConfigError(f"config {str(p)!r} is empty; a config names at least its game "
                          f"(e.g. game: loa)")
    if not isinstance(data, dict):
        raise ConfigError(f"config {str(p)!r} must be a mapping of keys")
    return data


def load_config(path: str | Path | None, overrides: list[str] | None = None,
                saved: bool = False) -> Config:
    """Read a YAML config file (None: all defaults), apply overrides, validate. ``saved``:
    the file is a run's own config.yaml (older keys migrated, see :func:`from_saved`).

    A key of the file that an override makes useless (``--set mcts.root=puct`` on a file
    that sets ``mcts.gumbel_m``) is accepted; a useless key in the file itself, or set by an
    override, is refused."""
    overrides = overrides or []
    data = read_yaml(path) if path is not None else {}
    if saved:
        return from_saved(apply_overrides(migrate_saved(data), overrides))
    if path is None or not overrides:
        return from_dict(apply_overrides(data, overrides))
    keys = [".".join(parse_override(text)[0]) for text in overrides]
    cfg = from_dict(apply_overrides(data, overrides), check=keys)
    try:
        from_dict(data)  # the file alone
    except UselessKeyError:
        raise
    except ConfigError:
        pass  # a file completed by its overrides (no game of its own, ...)
    return cfg


def dump_config(cfg: Config) -> str:
    """Return the config as YAML text (how a run records what it used), without the keys
    that have no effect under its settings (so that it loads as a config again)."""
    data = cfg.to_dict()
    for key in no_effect(cfg):
        section, _, name = key.rpartition(".")
        (data[section] if section else data).pop(name, None)
    return yaml.safe_dump(data, sort_keys=False)
