"""Lines of Action as a PettingZoo AEC environment (``boardzoo.envs.loa_v0``).

Agents ``player_0`` (Black, moves first) and ``player_1`` (White).

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

Rewards: +1 win, -1 loss, 0 draw, only when the game ends. ``max_moves``
truncates after that many turns (both agents truncated, reward 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.actions import MoveActions
from ..core.aec import BoardGameEnv, wrap
from ..core.board8 import parse_square
from ..core.draw import Glyph, draw_board8
from .rules import MOVE_CAP, PASS, State

NUM_PLANES = 5


def bitboard_planes(*boards: int) -> np.ndarray:
    """Return a (len(boards), 8, 8) uint8 array with 1 on the squares of each bitboard."""
    raw = np.frombuffer(b"".join(bb.to_bytes(8, "little") for bb in boards), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little").reshape(len(boards), 8, 8)


class LoaActions(MoveActions):
    """LOA's observation planes; the move int is the action (see MoveActions)."""

    state_cls = State
    num_actions = 513
    observation_shape = (8, 8, NUM_PLANES)

    def observation(self, state: State, player: int) -> np.ndarray:
        obs = np.empty(self.observation_shape, dtype=np.float32)
        obs[:, :, :2] = bitboard_planes(state.bb[player], state.bb[1 - player]).transpose(1, 2, 0)
        obs[:, :, 2] = 1.0 if player == 0 else 0.0
        obs[:, :, 3] = min(state.ply, MOVE_CAP) / MOVE_CAP
        obs[:, :, 4] = 1.0
        return obs


GLYPHS = {
    "b": Glyph(fill=(20, 20, 20), outline=(200, 200, 200)),
    "w": Glyph(fill=(250, 250, 250), outline=(30, 30, 30)),
}


class raw_env(BoardGameEnv):  # noqa: N801 - PettingZoo's naming convention
    """Lines of Action AEC env without wrappers (see the module docstring)."""

    metadata: dict[str, Any] = {**BoardGameEnv.metadata, "name": "loa_v0"}
    actions = LoaActions()

    def render_rgb(self) -> np.ndarray:
        game: State = self.game
        marked: list[int] = []
        if self.last_move not in (None, "pass"):
            marked = [parse_square(self.last_move[:2]), parse_square(self.last_move[3:])]
        caption = self._status_line()
        if self.last_move:
            caption += f"   last move: {self.last_move}"
        return draw_board8(game.cells(), GLYPHS, highlight=marked,
                           legend={"b": "black", "w": "white"}, caption=caption)


def env(**kwargs: Any) -> Any:
    """Return the LOA env with PettingZoo's standard wrappers (see :func:`raw_env`)."""
    return wrap(raw_env(**kwargs))


__all__ = ["PASS", "LoaActions", "env", "raw_env"]
