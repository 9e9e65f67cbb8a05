"""Training configuration: reading, checking and writing configs by the keys' declarations
(:mod:`.config_schema`), ``--set`` overrides, old keys.

A config file is YAML with the sections of the schema; every key is checked on load, so
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from boardzoo.agents.agent_spec import spec_list
from boardzoo.envs.core.game import ECHO_LIMIT, BoardzooError, echo

from . import safe_yaml
from .config_schema import (
    BY_ROOT,
    KEYS,
    MOVED,
    REMOVED,
    SECTIONS,
    Config,
    EvalConfig,
    Key,
    MCTSConfig,
    ModelConfig,
    PlayConfig,
    SelfPlayConfig,
    TrainConfig,
    flatten,
    root_effects,
    value_of,
)

__all__ = ["SECTIONS", "Config", "ConfigError", "EvalConfig", "MCTSConfig", "ModelConfig",
           "PlayConfig", "SelfPlayConfig", "TrainConfig", "from_dict", "from_saved",
           "load_config", "play_search", "dump_config"]


class ConfigError(BoardzooError):
    """A config file or ``--set`` override with an unknown key or a bad value."""


class UselessKeyError(ConfigError):
    """A key that has no effect under the config's settings."""


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


def _number(value: float) -> str:
    """Return a number as short text (an int of thousands of digits as its magnitude)."""
    if isinstance(value, int):
        if abs(value) < 10**15:
            return str(value)
        return f"about {'-' if value < 0 else ''}10^{int(value.bit_length() * math.log10(2))}"
    return f"{value:g}"


def range_problem(k: Key, value: Any) -> str | None:
    """Return the error for a number (or a list's number) outside ``k``'s range, or None;
    anything else is left to the type checks."""
    assert k.range is not None
    low, high = k.range
    for v in value if isinstance(value, list | tuple) else [value]:
        if v is None or isinstance(v, bool) or not isinstance(v, int | float):
            continue
        if math.isfinite(v) and (low < v if k.above else low <= v) and v <= high:
            continue
        ends = (f"above {_number(low)} and at most" if k.above else
                f"between {_number(low)} and")
        note = f" ({k.note})" if k.note else ""
        return f"{k.name} must be {ends} {_number(high)}{note}, got {_number(v)}"
    return None


def validate(cfg: Config) -> Config:
    """Check each key's range or choices, then the rules across keys; raise ConfigError
    naming the first bad value."""
    for k in KEYS.values():
        value = value_of(cfg, k.name)
        problem = range_problem(k, value) if k.range else None
        if k.choices is not None and value not in k.allowed():
            problem = (f"{k.name} must be one of {', '.join(map(repr, k.allowed()))} "
                       f"(got {echo(value)})")
        if problem:
            raise ConfigError(problem)
    for k in KEYS.values():
        for rule in k.needs:
            problem = rule(cfg)
            if problem:
                raise ConfigError(f"{k.name} {problem}")
    return cfg


#: Most values (mappings, lists and scalars, a shared one counted each time it is reached)
#: and deepest nesting of a config read from a model file: real configs have about 60 and 3.
MAX_VALUES, MAX_DEPTH = 10_000, 8


def check_file_config(config: Any) -> None:
    """Raise ConfigError unless a model file's config is a mapping of at most
    :data:`MAX_VALUES` values nested at most :data:`MAX_DEPTH` deep, with its numbers in
    their ranges (why: a pickle can share one list ten times per level, so a few bytes stand
    for 10^9 items, and ``model.blocks=10**7`` builds for hours)."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"the config is a {type(config).__name__}, not a mapping")
    count, todo = 0, [(config, 1)]
    while todo:
        value, depth = todo.pop()
        count += 1
        if count > MAX_VALUES or depth > MAX_DEPTH:
            raise ConfigError(f"the config holds more than {MAX_VALUES:,} values or nests "
                              f"deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            if not all(isinstance(k, str) for k in value):
                raise ConfigError("the config has a key that is not text")
            todo.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list | tuple):
            todo.extend((v, depth + 1) for v in value)
    check_ranges(config)


def check_ranges(values: Mapping[str, Any]) -> None:
    """Raise ConfigError for the first number outside its key's range (``values``: a config
    mapping, nested or dotted, not yet built: what is not a number is skipped)."""
    flat = flatten(values)
    for k in KEYS.values():
        problem = range_problem(k, flat.get(k.name)) if k.range else None
        if problem:
            raise ConfigError(problem)


# -- keys that moved or went, and keys without effect -----------------------------------------
def old_key_message(name: str) -> str | None:
    """Return the one-line error for an old key, or None if ``name`` is not one."""
    if name in MOVED:
        return f"{name} is now {MOVED[name]} (same meaning): rename it"
    if name in REMOVED:
        return f"{name} was removed: {REMOVED[name]}"
    return None


def migrate_saved(data: dict[str, Any]) -> dict[str, Any]:
    """Return a saved config mapping (an older run's or model file's) with old keys moved
    (:data:`~.config_schema.MOVED`) or replaced by what they meant (``REMOVED``)."""
    out = copy.deepcopy(data)
    model, train = out.get("model"), out.get("train")
    if isinstance(model, dict) and model.get("value_prior"):  # what the removed key meant
        static = (train if isinstance(train, dict) else {}).get("value_loss_weight", 1) == 0
        model["value"] = "static" if static else "prior"
    for old in (*MOVED, *REMOVED):
        section, _, name = old.partition(".")
        where = out.get(section)
        if isinstance(where, dict) and name in where:
            value = where.pop(name)
            if old in MOVED:  # (a file holding both names keeps the new one)
                new_section, _, new_name = MOVED[old].partition(".")
                out.setdefault(new_section, {}).setdefault(new_name, value)
    return out


def _unused_root(cfg: Config, root: str, where: str) -> str | None:
    """Return why a key that ``root`` reads (``where``: both, selfplay, play) does nothing
    under ``cfg``, or None if it is read."""
    play = cfg.play.root or cfg.mcts.root
    if where == "both" and root not in (cfg.mcts.root, play):
        return (f"the {root} root only, and neither self-play (mcts.root) nor play "
                f"(play.root) uses it")
    if where == "selfplay" and root != cfg.mcts.root:
        return f"self-play's {root} root only, and mcts.root is {cfg.mcts.root}"
    if where == "play" and root != play:
        return (f"the {root} root in play only, and the network plays with {play} "
                f"(play.root, else mcts.root)")
    return None


def no_effect(cfg: Config) -> dict[str, str]:
    """Return ``{key: why}`` for every key that has no effect under ``cfg``'s settings (its
    declared :class:`~.config_schema.Effect`; for ``BY_ROOT`` keys, the root rules')."""
    out: dict[str, str] = {}
    for k in KEYS.values():
        if k.effect is BY_ROOT:
            reasons = [_unused_root(cfg, root, where) for root, where in root_effects()[k.name]]
            if all(reasons):
                out[k.name] = str(reasons[-1])
        elif k.effect is not None and not k.effect.test(cfg):
            out[k.name] = k.effect.reason(cfg)
    return out


def refused_keys(cfg: Config, given: list[str]) -> str | None:
    """Return the error for the first of the ``given`` keys without effect, or None."""
    useless = no_effect(cfg)
    for name in given:
        if name in useless:
            return f"{name} has no effect here ({useless[name]}): remove it"
    return None


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
    given = list(flatten(data)) if isinstance(data, dict) else []
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
