"""The descriptor of a game: every per-game fact the layers above need, in one object.

Each game states its facts in ``envs/<game>/spec.py`` and registers itself
there (:func:`boardzoo.envs.core.registry.register_game`), as OpenSpiel's games
do. The envs, agents, training, integrations and CLI ask the descriptor and
never name a game. See docs/protocol.md for the fields and how to add a game.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .actions import ActionGame
from .draw import PictureCells
from .game import GameState, Move, UnknownGameError
from .layout import ActionLayout, InternalGrid, PairLayout
from .symmetry import Symmetry, identity

#: Static evaluation of a non-terminal state from the side to move's view (about one unit
#: per piece); search agents squash it with the descriptor's ``eval_scale``.
Evaluator = Callable[[GameState], float]
#: ``action_prior(action_state)``: (actions, scores) of the legal actions a static rule of
#: thumb rates above 0 (e.g. the material a capture takes), in evaluation units; the
#: others score 0. Search networks may add it to their policy logits (``model.policy_prior``).
ActionPrior = Callable[[Any], "tuple[np.ndarray, np.ndarray]"]
#: ``render_rgb(action_state, last_move, caption)``: a picture of the position.
RgbRenderer = Callable[[Any, "str | None", str], np.ndarray]
#: ``action_cells(action_state, action)``: the (from cell, to cell) of a legal action,
#: (-1, -1) for an action on no cell (LOA's pass).
ActionCells = Callable[[Any, int], "tuple[int, int]"]



#: MCTS playout cap of a game without its own (no evaluation: play out further).
DEFAULT_PLAYOUT_CAP = 40


def zero_evaluation(state: GameState) -> float:
    """Return 0: the evaluation of a game that has none (search then plays out to the end)."""
    return 0.0


@dataclass(frozen=True)
class GameSpec:
    """What a game is: rules, encoding, evaluation, geometry and limits, named in one place."""

    #: Short name used by the CLI, configs and registries (``loa``).
    name: str
    #: Name for people (``"Lines of Action"``).
    long_name: str
    #: The rules-level state class (the GameState protocol).
    state_cls: type[GameState]
    #: The action encoding and observation planes (stateless).
    actions: ActionGame
    #: The most actions (env steps) a game from the start can last: the draw caps' bound.
    max_game_length: int
    #: Static evaluation for greedy, alpha-beta, MCTS cut-offs and adjudication.
    evaluate: Evaluator = zero_evaluation
    #: Evaluation that search squashes to tanh(1) = 0.76 (about "clearly winning").
    eval_scale: float = 1.0
    #: Static score of the legal actions of an action state (None: the game has none).
    action_prior: ActionPrior | None = None
    #: ``winning_move(state)``: a legal move that wins at once, or None (None: the game has no
    #: such check). Network searches with ``play.win_in_one`` value a position where one
    #: exists as won without asking the network, and play it at the root.
    winning_move: Callable[[GameState], Move | None] | None = None
    #: ``perft(state, depth)``: the count of ``state.perft(depth)`` (history and draw rules
    #: included), computed faster, e.g. on a compiled kernel (None: ``state.perft``).
    perft: Callable[[GameState, int], int] | None = None
    #: MCTS playout length cap (short where an evaluation scores the cut-off).
    playout_cap: int = DEFAULT_PLAYOUT_CAP
    #: Board symmetries for training augmentation, identity first (computed on first use).
    symmetries: Callable[[], list[Symmetry]] | None = None
    #: How the actions sit on the observation grid (for the conv policy head), if they do.
    action_layout: ActionLayout | None = None
    #: The actions as (from, to) board-cell pairs (for a bilinear policy head), built on
    #: first use; None where an action's destination is not fixed by the action (LOA).
    pair_layout: Callable[[], PairLayout] | None = None
    #: The array a network's trunk may run on instead of the observation grid (hex boards).
    internal_grid: InternalGrid | None = None
    #: Observation plane that is 1 on the real cells of an irregular board, else None.
    cell_mask_plane: int | None = None
    #: Picture of a position for ``rgb_array`` rendering (None: no picture).
    render_rgb: RgbRenderer | None = None
    #: Where the cells are in that picture (None: no clicking on it).
    picture_cells: PictureCells | None = None
    #: The (from, to) cells of a legal action (None: the game cannot be played by clicks).
    action_cells: ActionCells | None = None
    #: The board as vector geometry for the HTML replay viewer
    #: (``() -> envs.core.board_view.BoardView``), built on first use; None: no viewer board.
    board_view: Callable[[], Any] | None = None
    #: Text board of an action state (None: the rules state's ``render_text()``).
    render_text: Callable[[Any], str] | None = None
    #: Module with the batched torch engine (``Engine(device)``), imported on first use.
    batched_module: str | None = None
    #: Module whose ``priors(engine, batch, value, actions)`` computes ``evaluate`` and
    #: ``action_prior`` on the batched engine's states in torch (training's priors on the
    #: batched engine; None: the game has none).
    batched_eval_module: str | None = None
    #: Module with the game's inputs to a learned evaluation for its compiled alpha-beta
    #: (``SPARSE``, ``DENSE``, ``inputs(states, symmetric)``; envs/core/learned_eval.py),
    #: imported on first use; None: the game has none.
    learned_eval_module: str | None = None
    #: Version of the env (``loa_v0``); bumped when observations or rewards change.
    env_version: int = 0

    @property
    def env_name(self) -> str:
        """The PettingZoo env name (``"loa_v0"``)."""
        return f"{self.name}_v{self.env_version}"

    def start(self) -> GameState:
        """Return the start position."""
        return self.state_cls.start()

    def load_state(self, position: str | None = None) -> GameState:
        """Return the start position, or the state parsed from ``position`` text."""
        return self.start() if position is None else self.state_cls.from_text(position)

    def all_symmetries(self) -> list[Symmetry]:
        """Return the augmentation symmetries, identity first (identity alone if none)."""
        if self.symmetries is not None:
            return self.symmetries()
        h, w = self.actions.observation_shape[:2]
        return [identity(h, w, self.actions.num_actions)]

    def learned_eval_inputs(self) -> Any:
        """Return the module of the game's learned-evaluation inputs (UnknownGameError if the
        game has none)."""
        if self.learned_eval_module is None:
            raise UnknownGameError(f"game {self.name!r} has no learned evaluation for its "
                                   "alpha-beta (eval=hand only)")
        return importlib.import_module(self.learned_eval_module)

    def batched_engine(self, device: str = "cpu") -> Any:
        """Return the batched torch engine on ``device`` (torch is imported only here)."""
        if self.batched_module is None:
            raise UnknownGameError(f"game {self.name!r} has no batched engine")
        return importlib.import_module(self.batched_module).Engine(device)
