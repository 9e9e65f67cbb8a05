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
from ..core.bits import indices_of
from ..core.game import MoveError
from .movegen import BLACK, CODE_OF, LETTERS, WHITE, frozen_pieces
from .rules import NO_CAPTURE_LIMIT, PLY_CAP, REPETITIONS, State

NUM_PLANES = 22
NUM_ACTIONS = 4096


def _piece_table(player: int) -> np.ndarray:
    """Return the (16, NUM_PLANES) rows of the observation per piece code from ``player``'s
    view: a one on the piece's plane (0-6 own kinds, 7-13 the opponent's) and on plane 21."""
    table = np.zeros((16, NUM_PLANES), dtype=np.float32)
    table[:, 21] = 1.0
    for letter, code in CODE_OF.items():
        own = (code & 8) == (BLACK if player else WHITE)
        table[code, LETTERS.index(letter.upper()) + (0 if own else 7)] = 1.0
    return table


PIECE_TABLE = (_piece_table(0), _piece_table(1))


class UltimaActions(MoveActions):
    """Ultima's action encoding (the move int is the action) and observation planes."""

    state_cls = State
    num_actions = NUM_ACTIONS
    observation_shape = (8, 8, NUM_PLANES)

    def move_of(self, state: State, action: int) -> int:
        # captures() also knows the moves of a drawn position: refuse those here
        if state.is_terminal():
            raise MoveError(f"the game is over ({state.result()}): action {action} is not legal")
        if state.captures(action) is None:
            raise MoveError(f"action {action} is not legal in {state.to_text()!r}")
        return action

    def str_to_action(self, state: State, text: str) -> int:
        if state.is_terminal():
            raise MoveError(f"the game is over ({state.result()}): no move is legal")
        return state.parse_move(text)

    def observation(self, state: State, player: int) -> np.ndarray:
        board = state.board
        codes = np.frombuffer(board, dtype=np.uint8).astype(np.intp)
        obs = PIECE_TABLE[player].take(codes, axis=0)  # (64, planes), faster than [codes]
        mine, theirs = (WHITE, BLACK) if player == 0 else (BLACK, WHITE)
        for colour, plane in ((mine, 14), (theirs, 15)):
            frozen = frozen_pieces(board, colour)
            if frozen:
                obs[indices_of(frozen), plane] = 1.0
        seen = state.history.count(state.history[-1])
        obs[:, 16:21] = (
            1.0 if state.to_move == player else 0.0,
            1.0 if player == 0 else 0.0,
            min(state.halfmove, NO_CAPTURE_LIMIT) / NO_CAPTURE_LIMIT,
            min(state.ply, PLY_CAP) / PLY_CAP,
            min(seen - 1, REPETITIONS - 1) / (REPETITIONS - 1),
        )
        return obs.reshape(self.observation_shape)


