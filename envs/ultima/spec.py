"""Ultima's descriptor: what the other layers need to know, registered on import."""

from __future__ import annotations

import numpy as np

from ..core.draw import BOARD8_CELLS
from ..core.layout import ActionLayout, PairLayout
from ..core.registry import register_game
from ..core.spec import GameSpec
from .actions import UltimaActions
from .board_view import board_view
from .evaluation import capture_values, ultima_eval, winning_move
from .layout import NUM_KINDS, NUM_SQUARES, action_cells, action_kinds, move_cells
from .render import render_rgb
from .rules import PLY_CAP, State


def pair_layout() -> PairLayout:
    """Return every action as its (origin, destination) squares, kinds = displacements."""
    return PairLayout(action_cells(), np.arange(NUM_SQUARES), action_kinds(), NUM_KINDS)


SPEC = register_game(GameSpec(
    name="ultima",
    long_name="Ultima",
    state_cls=State,
    actions=UltimaActions(),
    max_game_length=PLY_CAP,  # plies, one action each
    evaluate=ultima_eval,
    eval_scale=3.0,
    # Ultima's action is its rules move, so the action state is the rules state.
    action_prior=capture_values,
    winning_move=winning_move,  # a checkmate in one
    playout_cap=8,
    # No symmetries: the only candidate is the left-right mirror, and Abbott's array is not
    # mirror-symmetric (I/O and K/W trade places).
    symmetries=None,
    action_layout=ActionLayout(np.arange(64), 64, 0),  # 64 * origin + destination
    pair_layout=pair_layout,
    render_rgb=render_rgb,
    picture_cells=BOARD8_CELLS,
    action_cells=move_cells,
    board_view=board_view,
    batched_module=f"{__package__}.batched",
    batched_eval_module=f"{__package__}.batched_eval",
    learned_eval_module=f"{__package__}.learned_eval",
))
