"""Lines of Action's action encoding and observation planes (used by ``loa_v0``).

Actions: ``Discrete(513)``; ``action = 8 * origin + direction`` with
``origin = 8 * rank + file`` (a1 = 0, h8 = 63) and direction 0..7 = N, NE, E,
SE, S, SW, W, NW; ``512`` = pass. The distance is implied by the line count,
so each (origin, direction) is at most one move. ``action_mask`` is 1 exactly
on the legal moves; pass only when nothing else is legal.

Observation ``(8, 8, 5)`` float32, indexed ``[rank, file, plane]`` (rank 0 is
rank 1), from the point of view of the observing agent:

0. the agent's own pieces
1. the opponent's pieces
2. constant 1 if the agent plays Black, else 0
3. constant ply / 400 (how close the move-cap draw is)
4. constant 1 (marks the board for convolutions with zero padding)
"""

from __future__ import annotations

import numpy as np

from ..core.actions import MoveActions
from ..core.game import MoveError
from .kernel import mark_legal, planes
from .rules import MOVE_CAP, PASS, State

NUM_PLANES = 5


def move_cells(state: State, action: int) -> tuple[int, int]:
    """Return the (origin, destination) squares of a legal action, (-1, -1) for the pass."""
    if action == PASS:
        return -1, -1
    return action >> 3, state.destination(action)


class LoaActions(MoveActions):
    """LOA's observation planes; the move int is the action (see MoveActions)."""

    state_cls = State
    num_actions = 513
    observation_shape = (8, 8, NUM_PLANES)

    def action_mask(self, state: State) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if not state.is_terminal():  # none once the game is over
            mark_legal(state.bb[0], state.bb[1], state.side, mask)
        return mask

    def apply_action(self, state: State, action: int) -> tuple[State, str]:
        played = state.play(action)
        if played is None:
            raise MoveError(f"action {action} is not legal in {state.to_text()!r}")
        return played

    def move_of(self, state: State, action: int) -> int:
        if not state.is_legal(action):
            raise MoveError(f"action {action} is not legal in {state.to_text()!r}")
        return action

    def observation(self, state: State, player: int) -> np.ndarray:
        obs = np.empty(self.observation_shape, dtype=np.float32)
        bb = state.bb
        planes(bb[player], bb[1 - player], player == 0, min(state.ply, MOVE_CAP), obs)
        return obs
