"""Sane ranges of every numeric config key, checked before anything is built or run.

A value outside its range (``model.channels=100000``, ``seed=-1``, ``train.lr=inf``) is
refused with one line instead of a traceback, a silent run of minutes or NaN weights:
:data:`BOUNDS` maps each dotted key to its inclusive ``(low, high)`` range and
:func:`check_bounds` checks a config's values against it (infinities and NaN are
always refused). The ranges are wide: they stop absurd values, not unusual ones.

This module imports no torch (the CLI checks configs before loading it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: Largest seed: numpy's legacy seeding and most tools take 32-bit seeds.
MAX_SEED = 2**32 - 1

#: Dotted config key -> inclusive (low, high). Every int and float field of the config
#: dataclasses (boardzoo.training.config), and list of them, has an entry (a list's each
#: item is checked); a test keeps it so.
BOUNDS: dict[str, tuple[float, float]] = {
    "seed": (0, MAX_SEED),
    "iterations": (1, 1_000_000),
    "time_limit_minutes": (0, 525_600),  # a year
    "threads": (0, 1024),
    "snapshot_cpu_hours": (0, 1_000_000),  # each entry
    "model.channels": (1, 1024),
    "model.blocks": (0, 64),
    "model.policy_channels": (1, 256),
    "model.bilinear_dim": (1, 1024),
    "model.value_hidden": (1, 4096),
    "model.cell_mask_plane": (-1, 255),
    "model.policy_prior": (0, 100),
    "mcts.simulations": (1, 100_000),
    "mcts.c_puct": (0, 1000),
    "mcts.dirichlet_alpha": (-100, 100),  # <= 0 turns the noise off
    "mcts.dirichlet_fraction": (0, 1),
    "mcts.fpu_reduction": (-10, 10),  # values are in [-1, 1]
    "mcts.gumbel_m": (1, 4096),
    "play.gumbel_m": (0, 4096),
    "play.policy_temperature": (0, 100),
    "mcts.gumbel_c_visit": (0, 1_000_000),
    "mcts.gumbel_c_scale": (0, 1000),
    "mcts.leaf_depth": (0, 8),
    "play.leaf_depth": (0, 8),
    "selfplay.games_per_iteration": (1, 1_000_000),
    "selfplay.parallel_games": (1, 4096),
    "selfplay.workers": (0, 1024),
    "selfplay.temperature_moves": (0, 100_000),
    "selfplay.max_moves": (1, 100_000),
    "selfplay.full_search_prob": (0.001, 1),
    "selfplay.fast_simulations": (0, 100_000),
    "train.batch_size": (1, 65_536),
    "train.steps_per_iteration": (0, 1_000_000),
    "train.replay_ratio": (0, 1000),
    "train.lr": (0, 10),
    "train.weight_decay": (0, 10),
    "train.buffer_size": (1, 10_000_000),
    "train.min_buffer": (0, 10_000_000),
    "train.value_loss_weight": (0, 1000),
    "train.value_target_q": (0, 1),
    "train.policy_loss_weight": (0, 1000),
    "train.prior_kl": (0, 1000),
    "eval.every": (0, 1_000_000),
    "eval.games": (0, 100_000),
    "eval.simulations": (0, 100_000),
    "eval.max_moves": (-1, 100_000),
    "eval.promote_threshold": (0, 1),
    "eval.opening_moves": (0, 1000),
}


#: Most values (mappings, lists and scalars, a shared one counted each time it is reached)
#: and deepest nesting of a config read from a model file: real configs have about 60 and 3.
MAX_VALUES, MAX_DEPTH = 10_000, 8


def check_file_config(config: Any) -> None:
    """Raise ConfigError unless a model file's config is a mapping of at most
    :data:`MAX_VALUES` values nested at most :data:`MAX_DEPTH` deep, with its numbers
    in :data:`BOUNDS` (why: a pickle can share one list ten times per level, so a few
    bytes stand for 10^9 items, and ``model.blocks=10**7`` builds for hours)."""
    from .config import ConfigError  # why here: config imports this module

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
    check_bounds(config)


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Return nested sections (``dataclasses.asdict(cfg)``) as one dict of dotted keys."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def check_bounds(flat: Mapping[str, Any]) -> None:
    """Raise ConfigError for the first value outside its range in :data:`BOUNDS` (``flat``:
    dotted keys, or nested sections as ``dataclasses.asdict`` gives them)."""
    from .config import ConfigError  # why here: config imports this module

    flat = flatten(flat)
    for key, (low, high) in BOUNDS.items():
        values = flat.get(key)
        for value in values if isinstance(values, list | tuple) else [values]:
            if value is None or isinstance(value, bool) or not isinstance(value, int | float):
                continue  # absent or not a number: the config's own type checks report it
            if not (math.isfinite(value) and low <= value <= high):
                raise ConfigError(f"{key} must be between {_number(low)} and "
                                  f"{_number(high)}, got {_number(value)}")


def _number(value: float) -> str:
    """Return a number as short text (an int of thousands of digits as its magnitude)."""
    if isinstance(value, int):
        if abs(value) < 10**15:
            return str(value)
        return f"about {'-' if value < 0 else ''}10^{int(value.bit_length() * math.log10(2))}"
    return f"{value:g}"
