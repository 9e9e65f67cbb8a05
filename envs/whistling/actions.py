"""Monochromatic Whistling's action encoding and observation planes (used by ``whistling_v0``).

Agents ``player_0`` (X, moves first) and ``player_1`` (O). One action is ONE
HOP; a chained whistling capture takes several steps by the same agent
(``agent_selection`` does not change until the turn is complete).

Actions: ``Discrete(39720)``; ``action = (6 * cell + direction) * 20 + (distance - 1)``
with ``cell`` 0..330 in board order (k1 = 0, m1 = 1, ..., E21 = 330), direction
0..5 = E, SE, SW, W, NW, NE and distance 1..20 cells. A crush is the distance-1
hop onto the adjacent enemy stone. The mask allows exactly the hops that begin
a legal whole turn (at the start of a turn) or continue the turn in progress
towards the maximum capture (during a chain).

Observation ``(21, 41, 11)`` float32 on the board's grid, indexed ``[row - 1,
column, plane]`` (cells where ``column + row`` is even or outside the hexagon
are always 0 except in plane 10), from the observing agent's point of view,
showing the board as it is in the middle of a chain (stones captured by earlier
hops of this turn already removed, the moving stone on its current cell):

0. the agent's own stones
1. the opponent's stones
2. the stone that must continue the turn (only during a chain)
3-8. one-hot direction (E, SE, SW, W, NW, NE) of the last hop, on that stone's cell
9. constant quiet counter / 40 (the draw rule)
10. 1 on the 331 real cells

The board is not rotated for player_1. Rewards: +1 win, -1 loss, 0 draw, only
when the game ends. When a turn completes, ``infos[agent]["turn"]`` holds its
canonical notation. ``max_moves`` truncates after that many whole turns.
"""


from __future__ import annotations

import numpy as np

from ..core.actions import ActionGame
from ..core.game import GameState, MoveError
from .hexgrid import (
    BIT,
    CELL_NAMES,
    CELLS,
    DIRECTION_NAMES,
    HOPS,
    MAX_DISTANCE,
    NUM_CELLS,
    NUM_COLUMNS,
    NUM_ROWS,
    RAYS,
    cells_of,
)
from .notation import WHISTLE, fits, hop_to_str, spell, turn_to_str
from .rules import DRAW_QUIET, State, Turn

NUM_PLANES = 11
NUM_ACTIONS = NUM_CELLS * 6 * MAX_DISTANCE
#: HOP_ACTION[a * NUM_CELLS + b]: the action of the hop from cell a to cell b.
HOP_ACTION: dict[int, int] = {
    key: (6 * (key // NUM_CELLS) + d) * MAX_DISTANCE + k - 1 for key, (d, k) in HOPS.items()
}
_ROWS = np.array([r - 1 for _, r in CELLS])
_COLS = np.array([c for c, _ in CELLS])
_BASE = np.zeros((NUM_ROWS, NUM_COLUMNS, NUM_PLANES), dtype=np.float32)
_BASE[_ROWS, _COLS, 10] = 1.0

Candidate = tuple[Turn, tuple[int, ...]]  # a legal turn and its hop actions


def encode(cell: int, direction: int, distance: int) -> int:
    """Return the action of the hop of ``distance`` cells from ``cell`` along ``direction``."""
    return (6 * cell + direction) * MAX_DISTANCE + distance - 1


def decode(action: int) -> tuple[int, int, int]:
    """Return (cell, direction, distance) of an action number."""
    rest, k = divmod(int(action), MAX_DISTANCE)
    cell, d = divmod(rest, 6)
    return cell, d, k + 1


def hop_cells(state: object, action: int) -> tuple[int, int]:
    """Return the (from cell, landing cell) of a legal hop action (in any position)."""
    cell, d, k = decode(action)
    return cell, RAYS[cell][d][k - 1]


def describe(action: int) -> str:
    """Return a hop's cells and direction for messages (``"w19-G19 (E 5)"``)."""
    if not 0 <= action < NUM_ACTIONS:
        return f"action {action} (out of range 0..{NUM_ACTIONS - 1})"
    cell, d, k = decode(action)
    ray = RAYS[cell][d]
    dest = CELL_NAMES[ray[k - 1]] if k <= len(ray) else "off the board"
    return f"action {action} = {CELL_NAMES[cell]}-{dest} ({DIRECTION_NAMES[d]} {k})"


class HopState:
    """Action state: a rules position plus the hops already played in the current turn."""

    __slots__ = ("game", "done", "cands", "firsts")

    def __init__(self, game: State, done: tuple[int, ...] = (),
                 cands: tuple[Candidate, ...] = ()) -> None:
        """``done``: actions played this turn; ``cands``: legal turns that begin with them."""
        self.game = game
        self.done = done
        self.cands = cands
        #: First-hop action of each legal turn, aligned with ``game.legal_moves()``; filled on
        #: first use (why: every step of a random or MCTS rollout needs them).
        self.firsts: list[int] | None = None

    def __repr__(self) -> str:
        return f"HopState({self.game.to_text()!r}, done={self.done})"


def _firsts(state: HopState) -> list[int]:
    """Return the first hop's action of each legal turn of ``state.game``, cached on ``state``."""
    firsts = state.firsts
    if firsts is None:
        n = NUM_CELLS
        firsts = state.firsts = [HOP_ACTION[t[0][0] * n + t[0][1]]
                                 for t in state.game.legal_moves()]
    return firsts


def _hop_actions(turn: Turn) -> tuple[int, ...]:
    """Return the action of every hop of a turn."""
    p = turn.path
    return tuple(HOP_ACTION[a * NUM_CELLS + b] for a, b in zip(p, p[1:], strict=False))


class WhistlingActions(ActionGame):
    """Whistling's hop-level action encoding, masks and observation planes."""

    state_cls = State
    num_actions = NUM_ACTIONS
    observation_shape = (NUM_ROWS, NUM_COLUMNS, NUM_PLANES)

    def from_game_state(self, game: GameState) -> HopState:
        return HopState(game)  # type: ignore[arg-type]

    def game_state(self, state: HopState) -> State:
        return state.game

    def to_move(self, state: HopState) -> int:
        return state.game.side

    def candidates(self, state: HopState) -> list[Candidate]:
        """Return the legal whole turns (with their hop actions) that extend the turn so far."""
        if state.done:
            return list(state.cands)
        return [(t, _hop_actions(t)) for t in state.game.legal_moves()]

    def legal_actions(self, state: HopState) -> list[int]:
        if state.done:
            n = len(state.done)
            return sorted({acts[n] for _, acts in state.cands})
        return sorted(set(_firsts(state)))

    def action_mask(self, state: HopState) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        legal = _firsts(state) if not state.done else self.legal_actions(state)
        if legal:
            mask[legal] = 1
        return mask

    def _group(self, state: HopState, action: int) -> list[Candidate]:
        """Return the candidates whose next hop is ``action``; MoveError if there are none."""
        n = len(state.done)
        if n:
            group = [c for c in state.cands if c[1][n] == action]
        else:
            firsts = _firsts(state)
            try:
                i = firsts.index(action)
            except ValueError:
                group = []
            else:
                moves = state.game.legal_moves()
                if len(moves[i].path) == 2:  # a one-hop turn: no other turn starts with it
                    group = [(moves[i], (action,))]
                else:
                    group = [(moves[j], _hop_actions(moves[j]))
                             for j in range(i, len(firsts)) if firsts[j] == action]
        if not group:
            raise MoveError(f"{describe(action)} is not a legal hop here ({self._hint(state)})")
        return group

    def apply_action(self, state: HopState, action: int) -> tuple[HopState, str | None]:
        action = int(action)
        group = self._group(state, action)
        n = len(state.done) + 1
        for turn, acts in group:
            if len(acts) == n:  # a legal turn ends here, so no longer one shares this prefix
                return HopState(state.game.play(turn)), turn_to_str(turn)
        return HopState(state.game, state.done + (action,), tuple(group)), None

    def board(self, state: HopState) -> tuple[int, int, int, int]:
        """Return (X stones, O stones, moving stone or -1, last hop direction or -1) as on the
        board in the middle of the turn (captured stones gone, the mover on its current cell)."""
        game = state.game
        x, o = game.stones
        n = len(state.done)
        if not n:
            return x, o, -1, -1
        turn = state.cands[0][0]
        cell = turn.path[n]
        captured = 0
        for c in turn.caps[:n]:
            captured |= c
        own = game.stones[game.side] ^ BIT[turn.path[0]] | BIT[cell]
        enemy = game.stones[1 - game.side] & ~captured
        x, o = (own, enemy) if game.side == 0 else (enemy, own)
        return x, o, cell, decode(state.done[-1])[1]

    def observation(self, state: HopState, player: int) -> np.ndarray:
        x, o, cell, d = self.board(state)
        own, enemy = (x, o) if player == 0 else (o, x)
        obs = _BASE.copy()
        cells = cells_of(own)
        obs[_ROWS[cells], _COLS[cells], 0] = 1.0
        cells = cells_of(enemy)
        obs[_ROWS[cells], _COLS[cells], 1] = 1.0
        if cell >= 0:
            r, c = _ROWS[cell], _COLS[cell]
            obs[r, c, 2] = 1.0
            obs[r, c, 3 + d] = 1.0
        obs[:, :, 9] = min(state.game.quiet, DRAW_QUIET) / DRAW_QUIET
        return obs

    def action_to_str(self, state: HopState, action: int) -> str:
        turn, _ = self._group(state, int(action))[0]
        n = len(state.done)
        caps = turn.caps[n] if turn.kind == WHISTLE else 0
        return hop_to_str(turn.path[n], turn.path[n + 1], caps, turn.kind)

    def str_to_action(self, state: HopState, text: str) -> int:
        """Return the action of the next hop written as text: one hop (``w19-G19``, ``e15:f16``),
        or several hops from the moving stone (the first one is returned)."""
        spelled = spell(text)
        n = len(state.done)
        reason = ""
        for turn, acts in self.candidates(state):
            why = fits(spelled, turn, n, prefix=True)
            if why is None:
                return acts[n]
            reason = reason or why
        if not reason:
            reason = "it begins no legal turn" if not n else (
                f"the turn in progress continues from {CELL_NAMES[state.cands[0][0].path[n]]}")
            reason += f"; {self._hint(state)}"
        raise MoveError(f"illegal hop {text!r}: {reason}")

    def _hint(self, state: HopState, limit: int = 8) -> str:
        """Return the legal hops for error messages."""
        legal = [self.action_to_str(state, a) for a in self.legal_actions(state)]
        if not legal:
            return "the game is over"
        more = f", ... ({len(legal)} in all)" if len(legal) > limit else ""
        return "legal hops: " + ", ".join(legal[:limit]) + more

    def turn_so_far(self, state: HopState) -> str:
        """Return the notation of the hops played in the unfinished turn ('' at a turn's start)."""
        n = len(state.done)
        if not n:
            return ""
        path, caps = state.cands[0][0].path, state.cands[0][0].caps
        return CELL_NAMES[path[0]] + "".join(
            f"-{CELL_NAMES[path[i + 1]]}:" + "".join(CELL_NAMES[j] for j in cells_of(caps[i]))
            for i in range(n))


