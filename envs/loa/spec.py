"""Lines of Action's descriptor: what the other layers need to know, registered on import."""

from __future__ import annotations

import numpy as np

from ..core.draw import BOARD8_CELLS
from ..core.layout import ActionLayout
from ..core.registry import register_game
from ..core.spec import GameSpec
from .actions import LoaActions, move_cells
from .board_view import board_view
from .evaluation import loa_eval
from .render import render_rgb
from .rules import MOVE_CAP, State
from .symmetry import loa_symmetries

SPEC = register_game(GameSpec(
    name="loa",
    long_name="Lines of Action",
    state_cls=State,
    actions=LoaActions(),
    max_game_length=MOVE_CAP,  # plies, one action each
    evaluate=loa_eval,
    eval_scale=4.0,
    # why short: long random LOA playouts measured weaker, 0/6 against greedy at 40 plies
    # vs 2/6 at 8, and cost 4x more
    playout_cap=8,
    symmetries=loa_symmetries,
    action_layout=ActionLayout(np.arange(64), 8, 1),  # 8 * square + direction, pass = 512
    render_rgb=render_rgb,
    picture_cells=BOARD8_CELLS,
    action_cells=move_cells,
    board_view=board_view,
    batched_module=f"{__package__}.batched",
    learned_eval_module=f"{__package__}.learned_eval",
))
