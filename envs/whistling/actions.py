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
from ..core.game import GameState, MoveError, echo
from . import kernel
from .hexgrid import (
    BIT,
    CELL_NAMES,
    DIRECTION_NAMES,
    MAX_DISTANCE,
    NUM_CELLS,
    NUM_COLUMNS,
    NUM_ROWS,
    RAYS,
    ZONES,
    cells_of,
)
from .notation import CRUSH, PLAIN, WHISTLE, fits, hop_to_str, spell, turn_to_str
from .rules import HOP_ACTION, State, Turn

NUM_PLANES = 11
NUM_ACTIONS = NUM_CELLS * 6 * MAX_DISTANCE

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
    """Action state: a rules position plus the hops already played in the current turn.

    Mid-chain it keeps the board as it stands (``board``: X's and O's stones, the moving
    stone's cell and its last hop's direction), which is all the kernel needs for the next
    hops, never the list of whole turns, which can be huge (docs/whistling.md).
    """

    __slots__ = ("game", "done", "path", "caps", "board", "hops", "hop_array", "words")

    def __init__(self, game: State, done: tuple[int, ...] = (), path: tuple[int, ...] = (),
                 caps: tuple[int, ...] = (),
                 board: tuple[int, int, int, int] | None = None,
                 words: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """``done``: actions played this turn; ``path``/``caps``: the cells visited and each
        hop's captures; ``board``: (x, o, moving stone, last direction) mid-chain; ``words``:
        the board's X and O stones as the kernel's words, if known."""
        self.game = game
        self.done = done
        self.path = path
        self.caps = caps
        self.board = board if board is not None else (*game.stones, -1, -1)
        #: The legal next hops' actions, ascending, as a list and as an int64 array (the
        #: mask's indices); filled on first use (why: every step of a random or MCTS rollout
        #: needs them).
        self.hops: list[int] | None = None
        self.hop_array: np.ndarray | None = None
        #: X's and O's stones as the kernel's uint64 words (do not write to them); made once
        #: (why: the hops, the next hop and the observation each need them).
        self.words = words

    def __repr__(self) -> str:
        return f"HopState({self.game.to_text()!r}, done={self.done})"


def _words(state: HopState) -> tuple[np.ndarray, np.ndarray]:
    """Return X's and O's stones of ``state`` as the kernel's words (cached on ``state``)."""
    words = state.words
    if words is None:
        x, o, _, _ = state.board
        words = state.words = (kernel.words(x), kernel.words(o))
    return words


def _hops(state: HopState) -> list[int]:
    """Return the legal next hops of ``state`` as actions, ascending (cached on ``state``)."""
    hops = state.hops
    if hops is None:
        game = state.game
        array = state.hop_array = kernel.hop_array(*_words(state), game.side, game.quiet,
                                                   *state.board[2:])
        hops = state.hops = array.tolist()
    return hops


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
        """Return the legal whole turns (with their hop actions) that extend the turn so far
        (all of them: in chain positions this list can be huge)."""
        path = state.path
        turns = state.game.iter_legal_moves()
        if state.done:
            turns = (t for t in turns if t.path[:len(path)] == path)
        return [(t, _hop_actions(t)) for t in turns]

    def legal_actions(self, state: HopState) -> list[int]:
        return list(_hops(state))

    def is_terminal(self, state: HopState) -> bool:
        # no legal hop exactly when the game is over (spec 9; mid-chain a hop always remains),
        # and the env asks for the hops anyway: one kernel call, not two
        return not _hops(state)

    def action_mask(self, state: HopState) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        _hops(state)
        mask[state.hop_array] = 1
        return mask

    def _check(self, state: HopState, action: int) -> None:
        """Raise MoveError unless ``action`` is a legal next hop."""
        if action not in _hops(state):
            raise MoveError(f"{describe(action)} is not a legal hop here ({self._hint(state)})")

    def apply_action(self, state: HopState, action: int) -> tuple[HopState, str | None]:
        after = self._step(state, int(action))
        if isinstance(after, HopState):
            return after, None
        turn, following = after
        return following, turn_to_str(turn)

    def _step(self, state: HopState, action: int) -> HopState | tuple[Turn, HopState]:
        """Return the mid-chain state after a legal hop, or the whole turn it completes with
        the state that starts the next turn (the kernel's board after the hop, words and all)."""
        self._check(state, action)
        game = state.game
        _, _, mover, last = state.board
        enemy = state.board[1 - game.side]
        a, b, side, quiet, mover, last = kernel.apply_hop(*_words(state), game.side, game.quiet,
                                                          mover, last, action)
        x, o = kernel.mask_of(a), kernel.mask_of(b)
        cell, d, k = decode(action)
        path = (state.path or (cell,)) + (RAYS[cell][d][k - 1],)
        c = enemy & ~(x, o)[1 - game.side]
        if mover >= 0:  # the turn goes on
            return HopState(game, state.done + (action,), path, state.caps + (c,),
                            (x, o, mover, last), (a, b))
        if len(path) == 2 and not c:
            turn = Turn(path, (0,), PLAIN)
        else:
            turn = Turn(path, state.caps + (c,), CRUSH if len(path) == 2 and k == 1 else WHISTLE)
        return turn, HopState(State(x, o, side, quiet, game.ply + 1), words=(a, b))

    def board(self, state: HopState) -> tuple[int, int, int, int]:
        """Return (X stones, O stones, moving stone or -1, last hop direction or -1) as on the
        board in the middle of the turn (captured stones gone, the mover on its current cell)."""
        return state.board

    def observation(self, state: HopState, player: int) -> np.ndarray:
        _, _, cell, d = state.board
        x, o = _words(state)
        own, enemy = (x, o) if player == 0 else (o, x)
        obs = np.zeros(self.observation_shape, dtype=np.float32)
        kernel.planes(own, enemy, cell, d, state.game.quiet, obs)
        return obs

    def action_to_str(self, state: HopState, action: int) -> str:
        action = int(action)
        self._check(state, action)
        cell, d, k = decode(action)
        dest = RAYS[cell][d][k - 1]
        enemy = state.board[1 - state.game.side]
        if k == 1 and enemy & BIT[dest]:  # onto an enemy stone: a crush (spec section 6)
            return hop_to_str(cell, dest, 0, CRUSH)
        return hop_to_str(cell, dest, ZONES[cell][d][k] & enemy, WHISTLE)  # no capture: a-b

    def str_to_action(self, state: HopState, text: str) -> int:
        """Return the action of the next hop written as text: one hop (``w19-G19``, ``e15:f16``),
        or several hops from the moving stone (the first one is returned)."""
        spelled = spell(text)
        n = len(state.done)
        turn = self._follow(state, spelled.path)
        reason = ""
        if turn is not None:
            why = fits(spelled, turn, n, prefix=True)
            if why is None:
                return HOP_ACTION[spelled.path[0] * NUM_CELLS + spelled.path[1]]
            reason = why
        if not reason:
            reason = "it begins no legal turn" if not n else (
                f"the turn in progress continues from {CELL_NAMES[state.path[-1]]}")
            reason += f"; {self._hint(state)}"
        raise MoveError(f"illegal hop {echo(text)}: {reason}")

    def _follow(self, state: HopState, cells: tuple[int, ...]) -> Turn | None:
        """Return the turn so far extended by the hops along ``cells`` (from the current cell)
        when they all begin or continue a legal turn, else None."""
        turn = None
        for a, b in zip(cells, cells[1:], strict=False):
            action = HOP_ACTION.get(a * NUM_CELLS + b)
            if turn is not None or action not in _hops(state):
                return None  # past the end of the turn, or no legal hop
            after = self._step(state, action)
            if isinstance(after, HopState):
                state = after
            else:
                turn = after[0]
        if turn is None and state.done:
            turn = Turn(state.path, state.caps, WHISTLE)
        return turn

    def _hint(self, state: HopState, limit: int = 8) -> str:
        """Return the legal hops for error messages."""
        legal = [self.action_to_str(state, a) for a in self.legal_actions(state)]
        if not legal:
            return "the game is over"
        more = f", ... ({len(legal)} in all)" if len(legal) > limit else ""
        return "legal hops: " + ", ".join(legal[:limit]) + more

    def turn_so_far(self, state: HopState) -> str:
        """Return the notation of the hops played in the unfinished turn ('' at a turn's start)."""
        if not state.done:
            return ""
        path, caps = state.path, state.caps
        return CELL_NAMES[path[0]] + "".join(
            f"-{CELL_NAMES[path[i + 1]]}:" + "".join(CELL_NAMES[j] for j in cells_of(caps[i]))
            for i in range(len(caps)))

