"""Monochromatic Whistling's descriptor: what the other layers need to know, registered on
import."""

from __future__ import annotations

import numpy as np

from ..core.layout import ActionLayout, InternalGrid, PairLayout
from ..core.registry import register_game
from ..core.spec import GameSpec
from .actions import WhistlingActions, hop_cells
from .axial import HEX_KERNEL, SIZE, axial_source
from .board_view import board_view
from .evaluation import whistling_eval
from .hexgrid import CELLS, MAX_DISTANCE, NUM_COLUMNS
from .layout import NUM_KINDS, action_cells, action_kinds
from .render import PICTURE_CELLS, render_rgb, render_text
from .rules import DRAW_QUIET, State
from .symmetry import whistling_symmetries


def max_game_length() -> int:
    """Return the most hops a game from the start can last.

    Every hop of a capturing turn captures, and a side left without stones has lost, so at
    most (all stones - 1) capturing hops; before each capturing turn at most DRAW_QUIET - 1
    quiet one-hop turns, and DRAW_QUIET after the last one.
    """
    captures = sum(s.bit_count() for s in State.start().stones) - 1
    return captures + captures * (DRAW_QUIET - 1) + DRAW_QUIET


#: Flat 21 x 41 grid index of each cell, in board order.
CELL_GRID = np.array([(r - 1) * NUM_COLUMNS + c for c, r in CELLS])


def pair_layout() -> PairLayout:
    """Return every hop action as its (from cell, landing cell or -1) pair."""
    return PairLayout(action_cells(), CELL_GRID, action_kinds(), NUM_KINDS)


SPEC = register_game(GameSpec(
    name="whistling",
    long_name="Monochromatic Whistling",
    state_cls=State,
    actions=WhistlingActions(),
    max_game_length=max_game_length(),
    evaluate=whistling_eval,
    eval_scale=3.0,
    playout_cap=8,
    symmetries=whistling_symmetries,
    # (6 * cell + direction) * 20 + distance - 1, cells in board order on the 21 x 41 grid
    action_layout=ActionLayout(CELL_GRID, 6 * MAX_DISTANCE, 0),
    pair_layout=pair_layout,
    # axial hex coordinates: a 3 x 3 kernel minus two opposite corners is the 6 neighbours
    internal_grid=InternalGrid(SIZE, SIZE, axial_source(), HEX_KERNEL),
    cell_mask_plane=10,
    render_rgb=render_rgb,
    picture_cells=PICTURE_CELLS,
    action_cells=hop_cells,
    board_view=board_view,
    render_text=render_text,
    batched_module=f"{__package__}.batched",
    batched_eval_module=f"{__package__}.batched_eval",
    learned_eval_module=f"{__package__}.learned_eval",
))
