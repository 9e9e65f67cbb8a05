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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from boardzoo.agents.base import AGENT_FACTORIES, INTERACTIVE_KINDS
from boardzoo.envs.core.game import ECHO_LIMIT, BoardzooError, echo
from boardzoo.envs.core.registry import game_names, get_spec

from . import safe_yaml
from .config_bounds import check_bounds


class ConfigError(BoardzooError):
    """A config file or ``--set`` override with an unknown key or a bad value."""


@dataclass
class ModelConfig:
    """The residual conv net (see :mod:`boardzoo.training.network`)."""

    #: Channels of every residual block.
    channels: int = 32
    #: Number of residual blocks.
    blocks: int = 3
    #: Channels of the policy head's first 1x1 conv.
    policy_channels: int = 4
    #: ``linear``, ``conv`` (one logit per action from the cell where it starts; needs the
    #: game's action layout), ``bilinear`` (logit = <query of the from cell, key of the to
    #: cell> + a bias per action kind; needs the game's pair layout: Ultima, Whistling) or
    #: ``auto`` (conv for action spaces over 1024, else linear).
    policy_head: str = "auto"
    #: Query/key dimension of the bilinear policy head.
    bilinear_dim: int = 32
    #: Hidden units of the value head.
    value_hidden: int = 64
    #: Observation plane that marks real cells (1) of an irregular board on its grid, or -1
    #: for none. -1 also lets the game say (``ActionGame.cell_mask_plane``, e.g. Whistling).
    cell_mask_plane: int = -1
    #: Run the trunk on the game's internal grid (Whistling: axial hex coordinates, 21 x 21,
    #: 3 x 3 kernels masked to the 6 hex neighbours) instead of the observation grid.
    internal_grid: bool = False
    #: Value = tanh(static evaluation / scale + the head's output): the game's evaluation
    #: (boardzoo.agents.evaluation) as a prior the network corrects (reference engine only).
    value_prior: bool = False
    #: Policy logits = the head's output + ``policy_prior`` x the game's action prior
    #: (``GameSpec.action_prior``; Ultima: the material a capture takes, pawn = 1): the
    #: network learns a correction to "take the most valuable piece" (reference engine
    #: only). 0: off.
    policy_prior: float = 0.0
    #: Start the value head's last layer and the policy head's output at zero: a network
    #: with priors then starts as exactly its priors (value tanh(evaluation / scale),
    #: logits ``policy_prior`` x the action prior), one without as value 0, uniform policy.
    zero_init_heads: bool = False
    #: A model file (``boardzoo.training.distill`` output, a run's ``best.pt``) whose weights
    #: start a new run (ignored on --resume); its model config must match this one.
    init_from: str = ""


@dataclass
class MCTSConfig:
    """Search used in self-play (and, with ``eval.simulations``, in evaluation)."""

    #: ``puct`` (AlphaZero: PUCT, Dirichlet noise, visit-count targets) or ``gumbel``
    #: (Gumbel MuZero root: Gumbel top-k sampling and sequential halving, improved-policy targets).
    root: str = "puct"
    #: Simulations (network evaluations) per action.
    simulations: int = 32
    #: PUCT exploration constant.
    c_puct: float = 1.5
    #: Dirichlet noise at the root (puct only); alpha <= 0 turns it off.
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    #: Value of an unvisited child = parent's value minus this (first-play urgency).
    fpu_reduction: float = 0.0
    #: Keep the chosen child's subtree as the next root (puct only).
    reuse_tree: bool = True
    #: Gumbel: number of root actions sampled (halved each phase) in self-play (with noise).
    gumbel_m: int = 16
    #: Gumbel: root candidates when the search plays without noise (evaluation, the
    #: ``checkpoint:`` agent): the policy's top ``play_gumbel_m`` moves (at most the legal
    #: moves and the simulations). 0: ``gumbel_m``. A young policy often ranks the move
    #: the search would pick outside its top 16: Ultima has 32 moves at the start,
    #: Whistling 306, so their configs play with 64.
    play_gumbel_m: int = 0
    #: Root when the search plays without noise (evaluation, ``checkpoint:`` agents):
    #: ``puct`` or ``gumbel``; empty: ``root``. Self-play can then learn from Gumbel's
    #: improved-policy targets while play uses PUCT's visit counts (Ultima).
    play_root: str = ""
    #: Policy softmax temperature when the search plays without noise (evaluation,
    #: ``checkpoint:`` agents): the search's prior is softmax(logits / T). Above 1 it widens
    #: a policy that self-play made too sure of itself (as Leela Chess Zero plays with
    #: about 1.6); self-play and training never use it.
    play_policy_temperature: float = 1.0
    #: Gumbel: sigma(q) = (c_visit + max N) * c_scale * q.
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0


@dataclass
class SelfPlayConfig:
    games_per_iteration: int = 32
    #: Games advanced together in one process; their leaves are evaluated as one batch.
    parallel_games: int = 16
    #: Worker processes for self-play (0 or 1: in this process).
    workers: int = 1
    #: ``reference`` (per-game Python trees over the ActionGame) or ``batched`` (the game's
    #: batched engine, trees in tensors, all games searched at once; one process).
    engine: str = "reference"
    #: Actions sampled in proportion to visit counts for the first this many actions, then argmax.
    temperature_moves: int = 20
    #: A game longer than this many actions is stopped and scored as a draw...
    max_moves: int = 200
    #: ...or, with ``adjudicate``, scored tanh(evaluation / scale) by the game's static
    #: evaluation (boardzoo.agents.evaluation, as MCTS playouts use at their cut-off): a
    #: value signal for games whose early self-play rarely finishes (Ultima, Whistling).
    adjudicate: bool = False
    #: ``local`` (this process or ``workers`` processes) or ``ray`` (``workers`` Ray tasks per
    #: iteration, the same games; docs/distributed.md).
    backend: str = "local"
    #: Ray cluster to join (``auto`` or ``HOST:PORT``); empty: start a local Ray instance.
    #: Only with the ray backend (set with ``local``, it is an error, not silently ignored).
    ray_address: str = ""


@dataclass
class TrainConfig:
    batch_size: int = 128
    #: Gradient steps per iteration (with ``replay_ratio``: at most this many).
    steps_per_iteration: int = 100
    #: Steps follow the data when positive: ceil(replay_ratio x new positions / batch_size)
    #: steps (each new position is sampled about ``replay_ratio`` times while it is new),
    #: capped at ``steps_per_iteration``. 0: always ``steps_per_iteration`` steps.
    replay_ratio: float = 0.0
    lr: float = 2e-3
    weight_decay: float = 1e-4
    #: Positions kept in the replay buffer (oldest dropped first).
    buffer_size: int = 20000
    #: Skip training until the buffer holds this many positions.
    min_buffer: int = 256
    #: Apply a random board symmetry to every sampled position.
    augment: bool = True
    #: Weight of the value loss (policy loss weight is 1).
    value_loss_weight: float = 1.0
    #: Value target = (1 - w) x the game's outcome + w x the root search's value at that
    #: position (for the player to act): w > 0 damps the noise of one game's result.
    value_target_q: float = 0.0


@dataclass
class EvalConfig:
    #: Evaluate every this many iterations (0: never; the last iteration is always evaluated).
    every: int = 5
    #: Games per opponent (colours alternate).
    games: int = 10
    #: Simulations of the network's own search in evaluation (0: raw policy, argmax).
    simulations: int = 32
    #: Moves (whole turns) after which an evaluation game stops as a draw: -1 uses
    #: ``selfplay.max_moves``, 0 only the rules' own end (and draw rules).
    max_moves: int = -1
    #: Fixed opponents as agent specs (``random``, ``mcts:50``, ``alphabeta:2``); the raw
    #: policy (no search) also plays ``random`` when ``raw_vs_random`` is true.
    baselines: list[str] = field(default_factory=lambda: ["random", "mcts:50"])
    raw_vs_random: bool = True
    #: Play the previous best network and promote the new one when it scores at least this.
    vs_best: bool = True
    promote_threshold: float = 0.55
    #: Each pair of evaluation games opens with this many random moves (then colours swap),
    #: so that deterministic players do not replay the same game.
    opening_moves: int = 2


@dataclass
class Config:
    #: Game name (a registered game: boardzoo.envs.core.registry); every config names it.
    game: str = ""
    seed: int = 0
    #: Self-play + training iterations.
    iterations: int = 20
    #: Stop after the iteration in progress once this many minutes have passed (0: no limit).
    time_limit_minutes: float = 0.0
    #: torch intra-op threads in the main process (0: leave torch's default). 1 is fastest for
    #: this small net's small batches, and far faster when other jobs share the cores.
    threads: int = 1
    #: Write TensorBoard event files too, if tensorboard is installed.
    tensorboard: bool = True
    model: ModelConfig = field(default_factory=ModelConfig)
    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def to_dict(self) -> dict[str, Any]:
        """Return the config as plain dicts/lists/scalars (YAML- and checkpoint-safe)."""
        return dataclasses.asdict(self)


SECTIONS = {"model": ModelConfig, "mcts": MCTSConfig, "selfplay": SelfPlayConfig,
            "train": TrainConfig, "eval": EvalConfig}


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
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
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
    s = cfg.mcts
    need(s.root in ("puct", "gumbel"), "mcts.root", f"'puct' or 'gumbel' (got {echo(s.root)})")
    need(s.play_root in ("", "puct", "gumbel"), "mcts.play_root",
         f"'', 'puct' or 'gumbel' (got {echo(s.play_root)})")
    need(s.simulations >= 1, "mcts.simulations", "at least 1")
    need(s.c_puct > 0, "mcts.c_puct", "positive")
    need(0 <= s.dirichlet_fraction <= 1, "mcts.dirichlet_fraction", "between 0 and 1")
    need(s.gumbel_m >= 1, "mcts.gumbel_m", "at least 1")
    need(s.play_gumbel_m >= 0, "mcts.play_gumbel_m", "0 (= gumbel_m) or more")
    need(0 < s.play_policy_temperature < math.inf, "mcts.play_policy_temperature",
         "a number > 0")
    need(s.gumbel_c_visit >= 0 and s.gumbel_c_scale >= 0, "mcts.gumbel_c_visit/c_scale",
         "0 or more")
    p = cfg.selfplay
    need(p.games_per_iteration >= 1, "selfplay.games_per_iteration", "at least 1")
    need(p.parallel_games >= 1, "selfplay.parallel_games", "at least 1")
    need(p.workers >= 0, "selfplay.workers", "0 or more")
    need(p.engine in ("reference", "batched"), "selfplay.engine",
         f"'reference' or 'batched' (got {echo(p.engine)})")
    need(p.engine == "reference" or p.workers <= 1, "selfplay.workers",
         "0 or 1 with selfplay.engine batched (it plays all games in one process)")
    need(p.temperature_moves >= 0, "selfplay.temperature_moves", "0 or more")
    need(p.max_moves >= 1, "selfplay.max_moves", "at least 1")
    need(p.backend in ("local", "ray"), "selfplay.backend", f"local or ray (got {echo(p.backend)})")
    need(not m.value_prior or p.engine == "reference", "model.value_prior",
         "false with selfplay.engine batched (the prior is computed on reference states)")
    need(m.policy_prior >= 0, "model.policy_prior", "0 (off) or more")
    need(m.policy_prior == 0 or get_spec(cfg.game).action_prior is not None,
         "model.policy_prior", f"0: {cfg.game} has no action prior (GameSpec.action_prior)")
    need(m.policy_prior == 0 or p.engine == "reference", "model.policy_prior",
         "0 with selfplay.engine batched (the prior is computed on reference states)")
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
    e = cfg.eval
    need(e.every >= 0, "eval.every", "0 or more")
    need(e.games >= 0, "eval.games", "0 or more")
    need(e.simulations >= 0, "eval.simulations", "0 or more")
    need(e.max_moves >= -1, "eval.max_moves", "-1 (selfplay.max_moves), 0 (rules only) or more")
    need(0 <= e.promote_threshold <= 1, "eval.promote_threshold", "between 0 and 1")
    need(e.opening_moves >= 0, "eval.opening_moves", "0 or more")
    for spec in e.baselines:
        kind = spec.partition(":")[0].lower()
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


def from_dict(data: dict[str, Any] | None) -> Config:
    """Build and validate a Config from a (YAML) mapping."""
    return validate(_build(Config, data or {}, ""))


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


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """Read a YAML config file (None: all defaults), apply overrides, validate."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read config {str(p)!r}: {exc.strerror or exc}") from None
        try:
            data = safe_yaml.load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"config {str(p)!r} is not valid YAML: {yaml_error(exc)}") \
                from None
        if data is None:
            raise ConfigError(f"config {str(p)!r} is empty; a config names at least its game "
                              f"(e.g. game: loa)")
        if not isinstance(data, dict):
            raise ConfigError(f"config {str(p)!r} must be a mapping of keys")
    return from_dict(apply_overrides(data, overrides or []))


def dump_config(cfg: Config) -> str:
    """Return the config as YAML text (how a run records what it used)."""
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False)
