"""The training config, declared once: every key with its type, default, range or choices,
what it means, the settings it needs and the settings without which it does nothing.

A key is a dataclass field whose metadata is a :class:`Key` (made by :func:`key`):
:mod:`boardzoo.training.config` reads, checks and writes configs from these declarations,
and docs/training.md's config reference is :func:`reference_table` (tests/test_docs.py
checks it). Keys of older versions are :data:`MOVED` and :data:`REMOVED`.

This module imports no torch (the CLI checks configs before loading it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from boardzoo.agents.agent_spec import kind_of
from boardzoo.agents.base import AGENT_FACTORIES, INTERACTIVE_KINDS
from boardzoo.agents.processes import WORKERS_PER_CORE, worker_count_problem
from boardzoo.envs.core.actions import MoveActions
from boardzoo.envs.core.game import UnknownGameError, echo
from boardzoo.envs.core.registry import GameSpec, game_names, get_spec

from .search.roots import ROOT_RULES

#: A rule over the whole config: the phrase after the key that says what is wrong
#: (``must be at least train.batch_size``), or None when the config is fine.
Rule = Callable[["Config"], "str | None"]


@dataclass(frozen=True)
class Effect:
    """When a key has an effect: a key set where ``test`` is false does nothing, and is
    refused with ``why``; ``when`` is the docs' "only with" text."""

    test: Callable[[Config], bool]
    why: str | Callable[[Config], str]
    when: str

    def reason(self, cfg: Config) -> str:
        return self.why(cfg) if callable(self.why) else self.why


#: A marker, not a rule: the key is read by root rules, which declare where
#: (:class:`.search.roots.RootRule`); :func:`boardzoo.training.config.no_effect` asks them.
BY_ROOT = Effect(lambda cfg: True, "", "")


@dataclass(frozen=True)
class Key:
    """One key's declaration (the field's metadata); ``name`` is filled in by :data:`KEYS`."""

    doc: str
    #: Inclusive (low, high) of a number or of a list's each number; always finite.
    range: tuple[float, float] | None = None
    #: The low end itself is refused (``train.lr`` > 0).
    above: bool = False
    #: What special values of the range mean (``0: no limit``), shown with a range error.
    note: str = ""
    #: The allowed strings (a function: read when checked, e.g. the registered games).
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    #: Rules across keys that this key's value must meet.
    needs: tuple[Rule, ...] = ()
    effect: Effect | None = None
    name: str = ""
    default: Any = None

    def allowed(self) -> tuple[str, ...]:
        return self.choices() if callable(self.choices) else self.choices or ()


def key(default: Any, doc: str, **declared: Any) -> Any:
    """Declare a key: its default, its meaning and any :class:`Key` attribute."""
    meta = {"key": Key(doc, **declared)}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


def need(test: Callable[[Config], bool], what: str | Callable[[Config], str]) -> Rule:
    """Return the rule "the key must be ``what``" that holds where ``test`` does."""
    return lambda cfg: None if test(cfg) else f"must be {what(cfg) if callable(what) else what}"


def _spec(game: str) -> GameSpec | None:
    try:
        return get_spec(game)
    except UnknownGameError:
        return None  # the config's own check reports an unknown game


def _batched_priors(cfg: Config) -> bool:
    """Whether the game's priors exist for the batched engine, or it is not used."""
    spec = _spec(cfg.game)
    return cfg.selfplay.engine == "reference" or spec is None or \
        spec.batched_eval_module is not None


def _baselines(cfg: Config) -> str | None:
    for spec in cfg.eval.baselines:
        kind = kind_of(spec)
        if kind not in AGENT_FACTORIES or kind in INTERACTIVE_KINDS:
            return f"must be agent specs such as random, mcts:50, alphabeta:2 (got {echo(spec)})"
    return None


VALUE_TRAINED = Effect(lambda c: c.model.value != "static",
                       "the value is not trained with model.value: static",
                       "`model.value` not static")
WHOLE_MOVES = Effect(lambda c: (s := _spec(c.game)) is None or isinstance(s.actions, MoveActions),
                     lambda c: f"games whose actions are whole moves only (LOA, Ultima): a "
                               f"{c.game} action may be one hop of a turn", "LOA, Ultima")


@dataclass
class ModelConfig:
    """The residual conv net (see :mod:`boardzoo.training.network`)."""

    channels: int = key(32, "channels of every residual block (trunk width)", range=(1, 1024))
    blocks: int = key(3, "residual blocks (trunk depth)", range=(0, 64))
    policy_channels: int = key(
        4, "channels of the linear and conv policy heads' first 1x1 conv", range=(1, 256),
        effect=Effect(lambda c: c.model.policy_head != "bilinear",
                      "the linear and conv policy heads only, and model.policy_head "
                      "is bilinear", "`model.policy_head` not bilinear"))
    policy_head: str = key(
        "auto", "`linear`, `conv` (one logit per action from the cell where it starts; needs "
        "the game's action layout), `bilinear` (logit = <query of the from cell, key of the to "
        "cell> + a bias per action kind; needs the game's pair layout: Ultima, Whistling) or "
        "`auto` (conv for action spaces over 1024, else linear)",
        choices=("auto", "linear", "conv", "bilinear"))
    bilinear_dim: int = key(
        32, "query/key size of the bilinear policy head", range=(1, 1024),
        effect=Effect(lambda c: c.model.policy_head == "bilinear",
                      "model.policy_head bilinear only", "`model.policy_head: bilinear`"))
    value_hidden: int = key(64, "hidden units of the value head", range=(1, 4096))
    cell_mask_plane: int = key(
        -1, "observation plane that marks the real cells (1) of an irregular board on its grid; "
        "-1: none, or the game says (`ActionGame.cell_mask_plane`, e.g. Whistling)",
        range=(-1, 255), note="-1: none")
    internal_grid: bool = key(
        False, "run the trunk on the game's internal grid (Whistling: axial hex coordinates, "
        "21 x 21, 3 x 3 kernels masked to the 6 hex neighbours) instead of the observation grid")
    value: str = key(
        "learned", "`learned` (the value head alone), `prior` (tanh(the game's static "
        "evaluation / scale + the head's output): a correction of the evaluation) or `static` "
        "(the evaluation alone: the head stays at zero and the value is not trained); with "
        "`selfplay.engine: batched` only for games with a batched evaluation (Ultima, Whistling)",
        choices=("learned", "prior", "static"),
        needs=(need(lambda c: c.model.value == "learned" or _batched_priors(c),
                    lambda c: f"learned with selfplay.engine batched ({c.game} has no batched "
                              f"evaluation)"),))
    policy_prior: float = key(
        0.0, "logits = the head's output + this x the game's action prior "
        "(`GameSpec.action_prior`; Ultima: the material a capture takes, pawn = 1): the network "
        "learns a correction to \"take the most valuable piece\"; 0: off; with "
        "`selfplay.engine: batched` only for games with a batched evaluation",
        range=(0, 100), note="0: off",
        needs=(need(lambda c: c.model.policy_prior == 0 or (s := _spec(c.game)) is None
                    or s.action_prior is not None,
                    lambda c: f"0: {c.game} has no action prior (GameSpec.action_prior)"),
               need(lambda c: c.model.policy_prior == 0 or _batched_priors(c),
                    lambda c: f"0 with selfplay.engine batched ({c.game} has no batched "
                              f"evaluation)")))

    @property
    def value_prior(self) -> bool:
        """Whether the value adds the game's static evaluation (``value`` prior or static)."""
        return self.value != "learned"

    @property
    def zero_init_heads(self) -> bool:
        """A network with a prior starts as exactly its prior: its value head's last layer
        and its policy output start at zero."""
        return self.value_prior or self.policy_prior > 0


ROOTS = tuple(ROOT_RULES)


@dataclass
class MCTSConfig:
    """The search of self-play; play (evaluation, ``checkpoint:`` agents) uses it with the
    ``play`` section's changes (:func:`boardzoo.training.config.play_search`)."""

    root: str = key("puct", "self-play's root: `puct` (AlphaZero: PUCT, Dirichlet noise, "
                    "visit-count targets) or `gumbel` (Gumbel MuZero: Gumbel top-k sampling and "
                    "sequential halving, improved-policy targets)", choices=ROOTS)
    simulations: int = key(32, "network evaluations per action in self-play",
                           range=(1, 100_000))
    c_puct: float = key(1.5, "PUCT exploration constant", range=(0, 1000), above=True,
                        effect=BY_ROOT)
    dirichlet_alpha: float = key(0.3, "Dirichlet noise at the root of self-play; <= 0: off",
                                 range=(-100, 100), note="<= 0: off", effect=BY_ROOT)
    dirichlet_fraction: float = key(0.25, "weight of the root noise in the prior",
                                    range=(0, 1), effect=BY_ROOT)
    fpu_reduction: float = key(0.0, "value of an unvisited child = its parent's value minus "
                               "this (first-play urgency)", range=(-10, 10), effect=BY_ROOT)
    reuse_tree: bool = key(True, "keep the chosen child's subtree as the next root (self-play)",
                           effect=BY_ROOT)
    gumbel_m: int = key(16, "Gumbel root candidates in self-play (halved each phase)",
                        range=(1, 4096), effect=BY_ROOT)
    gumbel_c_visit: float = key(50.0, "sigma(q) = (c_visit + max N) x c_scale x q",
                                range=(0, 1_000_000), effect=BY_ROOT)
    gumbel_c_scale: float = key(1.0, "see `gumbel_c_visit`", range=(0, 1000), effect=BY_ROOT)
    leaf_depth: int = key(
        0, "self-play: every search leaf valued by an alpha-beta search of this many turns "
        "(`alphabeta:D`'s search, tanh(score / the game's eval scale), a forced result +-1) "
        "instead of the network's value; the network still gives the priors; 0: off",
        range=(0, 8), note="0: off", effect=WHOLE_MOVES)


@dataclass
class PlayConfig:
    """How the network plays without noise (evaluation, ``checkpoint:`` agents, export):
    changes to the self-play search (``mcts``) that hold only when it plays."""

    root: str = key("", "root when the network plays: `puct` or `gumbel`; empty: `mcts.root` "
                    "(self-play can learn from Gumbel's improved-policy targets while play uses "
                    "PUCT's visit counts: Ultima)", choices=("", *ROOTS))
    gumbel_m: int = key(
        0, "Gumbel root candidates in play: the policy's top N moves (at most the legal moves "
        "and the simulations); 0: `mcts.gumbel_m`. A young policy often ranks the move the "
        "search would pick outside its top 16: Whistling has 306 moves at the start, so its "
        "config plays with 64", range=(0, 4096), note="0: mcts.gumbel_m", effect=BY_ROOT)
    policy_temperature: float = key(
        1.0, "policy softmax temperature in play (`ptemp=T` overrides it): the search's prior "
        "is softmax(logits / T); above 1 it widens a policy that self-play made too sure of "
        "itself (Leela Chess Zero plays with about 1.6); self-play never uses it",
        range=(0, 100), above=True)
    skip_forced: bool = key(
        False, "in play, a position below the root with one legal action (a hop a Whistling "
        "chain must make) is played through when its edge is first taken: no simulation or "
        "network evaluation is spent on it (`forced=skip` or `forced=search` overrides it); "
        "self-play searches such positions")
    win_in_one: bool = key(
        False, "in play, a position below the root whose player can win at once (the game's "
        "`winning_move`: Ultima's checkmates in one; stalemates are not looked for) is valued "
        "as won without the network, and the root plays such a move without searching "
        "(`win1=on` or `win1=off` overrides it)",
        effect=Effect(lambda c: (s := _spec(c.game)) is None or s.winning_move is not None,
                      lambda c: f"games with a win-in-one check only (Ultima); {c.game} has "
                                f"none", "Ultima"))
    leaf_depth: int = key(0, "`mcts.leaf_depth` in play (`leaf=D` overrides it)", range=(0, 8),
                          note="0: off", effect=WHOLE_MOVES)
    stop_early: bool = key(
        True, "in play, the search stops once the simulations it has left (its budget; under a "
        "time limit, at most what it runs by the deadline at its rate so far) cannot change its "
        "move: with the PUCT root, once the most visited move leads every other by more than "
        "that (Leela Chess Zero's \"smart pruning\"). At a fixed budget the move is the whole "
        "search's, only sooner; `stop=on` or `stop=off` overrides it", effect=BY_ROOT)


@dataclass
class SelfPlayConfig:
    games_per_iteration: int = key(32, "self-play games per iteration", range=(1, 1_000_000))
    parallel_games: int = key(16, "games advanced together in one process; their leaves are "
                              "evaluated as one batch", range=(1, 4096))
    workers: int = key(
        1, "self-play processes (0 or 1: this process; Ray tasks with `backend: ray`)",
        range=(0, 1024), note=f"at most {WORKERS_PER_CORE} per usable core with backend local",
        needs=(
            lambda c: worker_count_problem(c.selfplay.workers)
            if c.selfplay.backend == "local" else None,))
    engine: str = key("reference", "`reference` (a Python tree per game over the `ActionGame`) "
                      "or `batched` (the game's batched engine, all games' trees in tensors; "
                      "one batch per process, `workers` processes)",
                      choices=("reference", "batched"))
    temperature_moves: int = key(20, "actions sampled in proportion to visits for the first "
                                 "this many actions, then the most visited",
                                 range=(0, 100_000), effect=BY_ROOT)
    max_moves: int = key(200, "a game longer than this many actions is stopped and scored as a "
                         "draw, or adjudicated", range=(1, 100_000))
    adjudicate: bool = key(
        False, "score a stopped game tanh(evaluation / scale) by the game's static evaluation "
        "(as MCTS playouts do at their cut-off): a value signal for games whose early "
        "self-play rarely finishes (Ultima, Whistling)")
    full_search_prob: float = key(
        1.0, "playout-cap randomisation (KataGo): the probability that a move gets the full "
        "`mcts.simulations` search (with root noise) and becomes a training example; the other "
        "moves get a fast search and are played, not kept; 1: off",
        range=(0.001, 1), note="1: off")
    fast_simulations: int = key(
        0, "simulations of a fast search (PUCT: no root noise; Gumbel keeps its noise, which "
        "samples the move)", range=(0, 100_000),
        needs=(need(lambda c: c.selfplay.full_search_prob >= 1
                    or 1 <= c.selfplay.fast_simulations < c.mcts.simulations,
                    lambda c: "between 1 and mcts.simulations - 1 with selfplay.full_search_prob "
                              f"below 1 (got {c.selfplay.fast_simulations})"),),
        effect=Effect(lambda c: c.selfplay.full_search_prob < 1,
                      "playout-cap randomisation only, and selfplay.full_search_prob "
                      "is 1 (every move gets the full search)",
                      "`selfplay.full_search_prob` < 1"))
    backend: str = key(
        "local", "`local` (this process or `workers` processes) or `ray` (`workers` Ray tasks "
        "per iteration, the same games; [distributed.md](distributed.md))",
        choices=("local", "ray"),
        needs=(need(lambda c: c.selfplay.backend == "local" or c.selfplay.engine == "reference",
                    "local with selfplay.engine batched (the Ray pool plays the reference "
                    "engine)"),))
    ray_address: str = key(
        "", "the Ray cluster to join (`auto` or `HOST:PORT`); empty: start a local one. Set "
        "with `backend: local`, it is an error", needs=(
            need(lambda c: not c.selfplay.ray_address or c.selfplay.backend == "ray",
                 lambda c: f"empty unless selfplay.backend is ray (got "
                           f"{echo(c.selfplay.ray_address)})"),))


@dataclass
class TrainConfig:
    batch_size: int = key(128, "positions per gradient step", range=(1, 65_536))
    steps_per_iteration: int = key(100, "gradient steps per iteration (with `replay_ratio`: at "
                                   "most this many)", range=(0, 1_000_000))
    replay_ratio: float = key(
        0.0, "> 0: ceil(replay_ratio x new positions / batch_size) steps per iteration, so each "
        "new position is sampled about this often while it is new; 0: always "
        "`steps_per_iteration`", range=(0, 1000), note="0: fixed steps")
    lr: float = key(2e-3, "AdamW learning rate", range=(0, 10), above=True)
    weight_decay: float = key(1e-4, "AdamW weight decay", range=(0, 10))
    buffer_size: int = key(
        20000, "positions kept in the replay buffer (oldest dropped first)",
        range=(1, 10_000_000),
        needs=(need(lambda c: c.train.buffer_size >= c.train.batch_size,
                    "at least train.batch_size"),))
    min_buffer: int = key(256, "skip training until the buffer holds this many positions",
                          range=(0, 10_000_000))
    augment: bool = key(True, "a random board symmetry per sampled position")
    value_loss_weight: float = key(1.0, "weight of the value loss", range=(0, 1000),
                                   effect=VALUE_TRAINED)
    policy_loss_weight: float = key(1.0, "weight of the policy loss (0: a zero-started policy "
                                    "head stays its prior; only the value learns)",
                                    range=(0, 1000))
    prior_kl: float = key(
        0.0, "weight w of KL(prior, net): the divergence of the net's policy from the prior's "
        "own, softmax(`policy_prior` x action prior), over the legal actions: holds the learnt "
        "policy near its prior. With the policy loss it is the same as training on the target "
        "(search + w x prior) / (1 + w) (tested)", range=(0, 1000),
        effect=Effect(lambda c: c.model.policy_prior > 0,
                      "a network with an action prior only, and model.policy_prior "
                      "is 0", "`model.policy_prior` > 0"))
    value_target_q: float = key(
        0.0, "value target = (1 - w) x the game's result + w x the root search's value of the "
        "position (for the player to act): w > 0 damps the noise of one game's result; "
        "mixed when a batch is drawn, so a new w applies to the stored positions too",
        range=(0, 1), effect=VALUE_TRAINED)
    value_capped_games: bool = key(
        True, "games stopped at `selfplay.max_moves` give value targets too (their adjudicated "
        "result, or a draw); false: only games the rules ended train the value (the others' "
        "positions still train the policy); applied when a batch is drawn, to the stored "
        "positions too", effect=VALUE_TRAINED)


@dataclass
class EvalConfig:
    every: int = key(5, "evaluate every this many iterations (0: never; the last iteration is "
                     "always evaluated)", range=(0, 1_000_000), note="0: never")
    games: int = key(10, "games per opponent (colours alternate)", range=(0, 100_000))
    simulations: int = key(32, "simulations of the network's own search in evaluation (0: raw "
                           "policy, argmax)", range=(0, 100_000), note="0: raw policy")
    max_moves: int = key(-1, "moves (whole turns) after which an evaluation game is a draw: -1 "
                         "`selfplay.max_moves`, 0 the rules only", range=(-1, 100_000),
                         note="-1: selfplay.max_moves, 0: the rules only")
    baselines: list[str] = key(["random", "mcts:50"], "fixed opponents as agent specs "
                               "(`random`, `mcts:50`, `alphabeta:2`)", needs=(_baselines,))
    raw_vs_random: bool = key(True, "the raw policy (no search) also plays `random`")
    vs_best: bool = key(True, "play the previous best network and promote the new one when it "
                        "scores at least `promote_threshold`")
    promote_threshold: float = key(
        0.55, "score against the best network that promotes the new one", range=(0, 1),
        effect=Effect(lambda c: c.eval.vs_best,
                      "the gate against the best network only, and eval.vs_best is "
                      "false", "`eval.vs_best: true`"))
    opening_moves: int = key(2, "each pair of evaluation games opens with this many random "
                             "moves (then colours swap), so that deterministic players do not "
                             "replay the same game", range=(0, 1000))


#: Largest seed: numpy's legacy seeding and most tools take 32-bit seeds.
MAX_SEED = 2**32 - 1


@dataclass
class Config:
    game: str = key("", "required: a registered game (loa, ultima, whistling: "
                    "boardzoo.envs.core.registry)", choices=lambda: tuple(game_names()))
    seed: int = key(0, "all randomness derives from it", range=(0, MAX_SEED))
    iterations: int = key(20, "self-play + training rounds", range=(1, 1_000_000))
    time_limit_minutes: float = key(0.0, "stop after the iteration that passes this wall time",
                                    range=(0, 525_600), note="0: no limit")
    threads: int = key(1, "torch intra-op threads of the `boardzoo train` process; see "
                       "below", range=(0, 1024), note="0: torch's default")
    tensorboard: bool = key(False, "also write TensorBoard events (`pip install "
                            "'boardzoo[tensorboard]'`; `tensorboard: true` without it prints a "
                            "note)")
    snapshot_cpu_hours: list[float] = key(
        [], "keep the network as `snapshots/cpu_<h>h.pt` when the run's CPU-hours (self-play "
        "and training, metrics.csv `cpu_s` / 3600) first reach each of these",
        range=(0, 1_000_000))
    model: ModelConfig = field(default_factory=ModelConfig)
    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    play: PlayConfig = field(default_factory=PlayConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def to_dict(self) -> dict[str, Any]:
        """Return the config as plain dicts/lists/scalars (YAML- and checkpoint-safe)."""
        return dataclasses.asdict(self)


SECTIONS = {"model": ModelConfig, "mcts": MCTSConfig, "play": PlayConfig,
            "selfplay": SelfPlayConfig, "train": TrainConfig, "eval": EvalConfig}


def _declared(cls: type, prefix: str = "") -> Iterator[Key]:
    for f in dataclasses.fields(cls):
        if f.name in SECTIONS and prefix == "":
            yield from _declared(SECTIONS[f.name], f"{f.name}.")
        else:
            default = f.default_factory() if callable(f.default_factory) else f.default
            yield dataclasses.replace(f.metadata["key"], name=prefix + f.name, default=default)


#: Every key by its dotted name (``game``, ``mcts.root``), in the order of the config.
KEYS: dict[str, Key] = {k.name: k for k in _declared(Config)}

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


def flatten(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return a config mapping (sections nested, as written or ``Config.to_dict()``) as one
    dict of dotted keys (``{"mcts.root": "puct", ...}``); dotted keys stay as they are."""
    flat: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Mapping):
            flat.update({f"{name}.{sub}": v for sub, v in value.items()})
        else:
            flat[str(name)] = value
    return flat


def value_of(cfg: Config, name: str) -> Any:
    """Return the value of the dotted key ``name`` in ``cfg``."""
    section, _, attr = name.rpartition(".")
    return getattr(getattr(cfg, section) if section else cfg, attr)


def root_effects() -> dict[str, list[tuple[str, str]]]:
    """Return ``{key: [(root name, where)]}``: where (``both``, ``selfplay``, ``play``) each
    root rule reads the keys it declares (:class:`.search.roots.RootRule`)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name, rule in ROOT_RULES.items():
        for where, keys in (("both", rule.keys), ("selfplay", rule.selfplay_keys),
                            ("play", rule.play_keys)):
            for k in keys:
                out.setdefault(k, []).append((name, where))
    return out


def _shown(value: Any) -> str:
    """Return a default as the docs show it (YAML-like: true, "", [random, mcts:50])."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(map(_shown, value)) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) if value != "" else '""'


def _allowed_text(k: Key) -> str:
    """Return a key's range or choices as the docs show them."""
    if callable(k.choices):
        return "a registered game"
    if k.choices is not None:
        return ", ".join(c or '""' for c in k.choices)
    if k.range is None:
        return ""
    low, high = (f"{v:,}" if isinstance(v, int) else f"{v:g}" for v in k.range)
    text = f"> {low} to {high}" if k.above else f"{low} to {high}"
    return text + (f" ({k.note})" if k.note else "")


def _when(k: Key) -> str:
    """Return when a key has an effect, as the docs' "only with" text."""
    if k.effect is BY_ROOT:
        where = {"both": "a {} root (self-play or play)", "selfplay": "`mcts.root: {}`",
                 "play": "a {} root in play"}
        return ", ".join(where[w].format(root) for root, w in root_effects()[k.name])
    return k.effect.when if k.effect else ""


def reference_table() -> str:
    """Return docs/training.md's config reference: one row per key, from its declaration."""
    rows = ["| key | default | allowed | meaning | only with |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| `{k.name}` | {_shown(k.default)} | {_allowed_text(k)} | {k.doc} | {_when(k)} |"
             for k in KEYS.values()]
    return "\n".join(rows) + "\n"
