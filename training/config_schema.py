"""The training config's sections as dataclasses: every key, its default and what it means.

docs/training.md's config reference lists exactly these keys (tests/test_docs.py checks it);
:mod:`boardzoo.training.config` reads, checks and writes them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


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
    #: The value output: ``learned`` (the value head alone), ``prior`` (tanh(the game's
    #: static evaluation / scale + the head's output): a correction of the evaluation,
    #: boardzoo.agents.evaluation) or ``static`` (the evaluation alone: the head stays at
    #: zero and the value is not trained, so ``train.value_loss_weight`` has no effect).
    value: str = "learned"
    #: Policy logits = the head's output + ``policy_prior`` x the game's action prior
    #: (``GameSpec.action_prior``; Ultima: the material a capture takes, pawn = 1): the
    #: network learns a correction to "take the most valuable piece". 0: off.
    policy_prior: float = 0.0

    @property
    def value_prior(self) -> bool:
        """Whether the value adds the game's static evaluation (``value`` prior or static)."""
        return self.value != "learned"

    @property
    def zero_init_heads(self) -> bool:
        """A network with a prior starts as exactly its prior: its value head's last layer
        and its policy output start at zero."""
        return self.value_prior or self.policy_prior > 0


@dataclass
class MCTSConfig:
    """The search of self-play; play (evaluation, ``checkpoint:`` agents) uses it with the
    ``play`` section's changes (:func:`play_search`)."""

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
    #: Gumbel: number of root actions sampled (halved each phase).
    gumbel_m: int = 16
    #: Gumbel: sigma(q) = (c_visit + max N) * c_scale * q.
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0
    #: Self-play: value every search leaf by an alpha-beta search of this many turns (the
    #: ``alphabeta:D`` agent's search, tanh(score / the game's eval scale), a forced result
    #: +-1) instead of the network's value; the network still gives the priors. 0: off.
    #: Games whose actions are whole moves (LOA, Ultima).
    leaf_depth: int = 0


@dataclass
class PlayConfig:
    """How the network plays without noise (evaluation, ``checkpoint:`` agents, export):
    changes to the self-play search (``mcts``) that hold only when it plays."""

    #: ``puct`` or ``gumbel``; empty: ``mcts.root``. Self-play can then learn from Gumbel's
    #: improved-policy targets while play uses PUCT's visit counts (Ultima).
    root: str = ""
    #: Gumbel root candidates in play: the policy's top ``gumbel_m`` moves (at most the legal
    #: moves and the simulations); 0: ``mcts.gumbel_m``. A young policy often ranks the move
    #: the search would pick outside its top 16: Whistling has 306 moves at the start, so its
    #: config plays with 64.
    gumbel_m: int = 0
    #: Policy softmax temperature in play: the search's prior is softmax(logits / T). Above 1
    #: it widens a policy that self-play made too sure of itself (as Leela Chess Zero plays
    #: with about 1.6); self-play and training never use it.
    policy_temperature: float = 1.0
    #: Below the root, a position with one legal action (a hop a Whistling chain must make)
    #: is played through when its edge is first taken: no simulation or network evaluation
    #: is spent on it, and the network only values positions with a choice, the kind
    #: self-play trains it on (forced positions are never examples). Self-play searches them.
    skip_forced: bool = False
    #: Below the root, a position whose player can win at once (the game's
    #: ``winning_move``: Ultima's checkmates in one) is valued as won without the network,
    #: and the root plays such a move: a search never misses a mate in one, nor walks into
    #: one it has looked at. Refused for games without the check (LOA, Whistling).
    win_in_one: bool = False
    #: ``mcts.leaf_depth`` in play: each leaf of the network's search valued by an alpha-beta
    #: search of this many turns instead of the network's value. 0: off.
    leaf_depth: int = 0
    #: Stop a search once the simulations it has left (its budget, and under a time limit
    #: what it runs by the deadline at its rate so far) cannot change the move it plays:
    #: with the PUCT root, when the most visited move leads every other by more than that.
    #: The move is the one the whole search would play; only its time is saved (a fixed
    #: budget) or the deadline's estimate trusted (a time limit). Gumbel's sequential
    #: halving has no such test.
    stop_early: bool = True


@dataclass
class SelfPlayConfig:
    games_per_iteration: int = 32
    #: Games advanced together in one process; their leaves are evaluated as one batch.
    parallel_games: int = 16
    #: Worker processes for self-play (0 or 1: in this process).
    workers: int = 1
    #: ``reference`` (per-game Python trees over the ActionGame) or ``batched`` (the game's
    #: batched engine, trees in tensors, all of a process's games searched at once).
    engine: str = "reference"
    #: Actions sampled in proportion to visit counts for the first this many actions, then argmax.
    temperature_moves: int = 20
    #: A game longer than this many actions is stopped and scored as a draw...
    max_moves: int = 200
    #: ...or, with ``adjudicate``, scored tanh(evaluation / scale) by the game's static
    #: evaluation (boardzoo.agents.evaluation, as MCTS playouts use at their cut-off): a
    #: value signal for games whose early self-play rarely finishes (Ultima, Whistling).
    adjudicate: bool = False
    #: Playout-cap randomisation (KataGo, Wu 2019): each searched move gets the full search
    #: (``mcts.simulations``, root noise) with this probability and becomes a training
    #: example; the others get a fast search of ``fast_simulations`` (PUCT: without root
    #: noise) and are played but not kept. More games per CPU second for the value, full-strength
    #: policy targets. 1: every move gets the full search (off).
    full_search_prob: float = 1.0
    #: Simulations of a fast search (``full_search_prob`` < 1 only).
    fast_simulations: int = 0
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
    #: Weight of the value loss.
    value_loss_weight: float = 1.0
    #: Weight of the policy loss (0: the policy head stays as it is, only the value learns).
    policy_loss_weight: float = 1.0
    #: Weight of KL(the action prior's policy || the network's policy), a
    #: ``model.policy_prior`` network only: holds the learnt policy near its prior.
    prior_kl: float = 0.0
    #: Value target = (1 - w) x the game's outcome + w x the root search's value at that
    #: position (for the player to act): w > 0 damps the noise of one game's result.
    value_target_q: float = 0.0
    #: Train the value on games stopped at ``selfplay.max_moves`` too (on their adjudicated
    #: result, or a draw); false: only games the rules ended give value targets.
    value_capped_games: bool = True


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
    #: Also write TensorBoard event files (needs the ``tensorboard`` extra; off by default so
    #: that the default install runs without a note). metrics.csv and ``boardzoo plot`` need
    #: nothing more.
    tensorboard: bool = False
    #: Keep a copy of the latest network as ``snapshots/cpu_<h>h.pt`` in the run folder when
    #: the run's CPU-hours (self-play and training, metrics.csv ``cpu_s`` / 3600) first reach
    #: each of these: a learning curve by compute (docs/training.md). Empty: none.
    snapshot_cpu_hours: list[float] = field(default_factory=list)
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
