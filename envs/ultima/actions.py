"""Ultima's action encoding and observation planes (used by ``ultima_v0``).

Agents ``player_0`` (White, moves first) and ``player_1`` (Black).

Actions: ``Discrete(4096)``; ``action = 64 * origin + destination`` with squares
numbered ``8 * rank + file`` (a1 = 0, h8 = 63). Captures are automatic, so origin
and destination determine the whole move, captures included (spec 4, 10); the
action is exactly the rules engine's move int. ``action_mask`` is 1 exactly on
the legal moves (all zero once the game is over).

Observation ``(8, 8, 22)`` float32, indexed ``[rank, file, plane]`` (rank 0 is
rank 1, the board is not turned for Black), from the observing agent's view:

0-6. the agent's own king, pawns, leapers, chameleons, withdrawer, immobilizer,
     coordinator (one plane per kind, letters ``K P L C W I O``)
7-13. the opponent's pieces, same order
14. the agent's frozen pieces (next to an enemy immobilizer; an immobilizer
    also next to an enemy chameleon)
15. the opponent's frozen pieces
16. constant 1 if the agent is the side to move, else 0
17. constant 1 if the agent plays White (player_0), else 0
18. constant halfmove clock / 100 (no-capture draw at 1)
19. constant plies played / 400 (ply-cap draw at 1)
20. constant (occurrences of this position - 1) / 2 (threefold repetition at 1)
21. constant 1 (marks the board for convolutions with zero padding)

Rewards: +1 win, -1 loss, 0 draw, only when the game ends (no legal move loses;
bare kings, 100 plies without capture, threefold repetition and 400 plies draw).
``max_moves`` truncates after that many turns (both agents truncated, reward 0).
"""


from __future__ import annotations

import numpy as np

from ..core.actions import MoveActions
from ..core.game import MoveError
from .kernel import planes
from .rules import State

NUM_PLANES = 22
NUM_ACTIONS = 4096


class UltimaActions(MoveActions):
    """Ultima's action encoding (the move int is the action) and observation planes."""

    state_cls = State
    num_actions = NUM_ACTIONS
    observation_shape = (8, 8, NUM_PLANES)

    def action_mask(self, state: State) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[state.legal_arrays()[0]] = 1  # why not legal_moves(): an array indexes faster
        return mask

    def move_of(self, state: State, action: int) -> int:
        # captures() also knows the moves of a drawn position: refuse those here
        if state.is_terminal():
            raise MoveError(f"the game is over ({state.result()}): action {action} is not legal")
        if state.capture_mask(action) is None:
            raise MoveError(f"action {action} is not legal in {state.to_text()!r}")
        return action

    def str_to_action(self, state: State, text: str) -> int:
        if state.is_terminal():
            raise MoveError(f"the game is over ({state.result()}): no move is legal")
        return state.parse_move(text)

    def observation(self, state: State, player: int) -> np.ndarray:
        obs = np.empty(self.observation_shape, dtype=np.float32)
        planes(state.array(), player, state.to_move, state.halfmove, state.ply,
               state.occurrences(), obs)
        return obs
