"""Action-level view of a game: the fixed ``Discrete`` encoding and observation planes.

An :class:`ActionGame` is a stateless object whose methods take an
*action state*: the PettingZoo env holds one, and AlphaZero-style training and
MCTS step copies of it directly, without an env. For games where one action is
one whole move (LOA, Ultima) the action state *is* the rules
:class:`~boardzoo.envs.core.game.GameState` (:class:`MoveActions`); a game whose
turn takes several actions (Whistling's hops) keeps the turn in progress in its
own action state.

Action states are immutable: ``apply_action`` returns a new one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from .game import GameState, MoveError, PositionError, echo


def as_action(action: object) -> int:
    """Return ``action`` as an ``int`` if it is an integer: a Python int, a NumPy integer or
    a 0-d NumPy integer array (a policy's output); MoveError otherwise, bools included (why:
    ``int(8.9)``, ``int("8")`` and ``int(True)`` would quietly play some other action)."""
    if type(action) is int:  # the common case, first (a bool's type is bool)
        return action
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise MoveError(f"an action is an integer (a Python or NumPy int), got {echo(action)} "
                        f"of type {type(action).__name__}")
    return int(action)


class ActionGame(ABC):
    """A game's fixed action space, masks and observations over immutable action states."""

    #: The rules-level state class.
    state_cls: ClassVar[type[GameState]]
    #: Size of the ``Discrete`` action space.
    num_actions: ClassVar[int]
    #: Shape (height, width, channels) of the float32 observation planes.
    observation_shape: ClassVar[tuple[int, ...]]

    def initial_state(self, position: str | None = None) -> Any:
        """Return the action state of the start position or of ``position`` text."""
        cls = self.state_cls
        if position is not None and not isinstance(position, str):
            raise PositionError(f"a position is text, got {echo(position)} of type "
                                f"{type(position).__name__}")
        return self.from_game_state(cls.start() if position is None else cls.from_text(position))

    @abstractmethod
    def from_game_state(self, game: GameState) -> Any:
        """Return the action state at the start of the turn in rules state ``game``."""

    @abstractmethod
    def game_state(self, state: Any) -> GameState:
        """Return the rules-level state (the position before any unfinished turn)."""

    @abstractmethod
    def to_move(self, state: Any) -> int:
        """Return the player (0 or 1) who must act in ``state``."""

    @abstractmethod
    def legal_actions(self, state: Any) -> list[int]:
        """Return the legal actions (sorted); empty once the game is over."""

    def action_mask(self, state: Any) -> np.ndarray:
        """Return an int8 vector, 1 exactly on the legal actions."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        mask[self.legal_actions(state)] = 1
        return mask

    @abstractmethod
    def apply_action(self, state: Any, action: int) -> tuple[Any, str | None]:
        """Return (new state, canonical turn text if this action ended the turn, else None).

        Raises MoveError for an action that is not legal.
        """

    @abstractmethod
    def observation(self, state: Any, player: int) -> np.ndarray:
        """Return the float32 observation planes of ``state`` from ``player``'s view."""

    def is_terminal(self, state: Any) -> bool:
        """Return True when the game is over."""
        return self.game_state(state).is_terminal()

    def returns(self, state: Any) -> tuple[float, float]:
        """Return +1/-1/0 per player (0 for both while unfinished)."""
        return self.game_state(state).returns()

    @abstractmethod
    def action_to_str(self, state: Any, action: int) -> str:
        """Return notation for a legal ``action`` (a whole move, or one hop of a turn)."""

    @abstractmethod
    def str_to_action(self, state: Any, text: str) -> int:
        """Return the action for move text (any accepted spelling); MoveError if not legal."""


class MoveActions(ActionGame):
    """Action encoding where every action is one whole move and a move is an ``int`` that
    is its own action number (LOA, Ultima); the action state is the GameState itself.
    Subclasses define the observation planes."""

    def from_game_state(self, game: GameState) -> GameState:
        return game

    def game_state(self, state: GameState) -> GameState:
        return state

    def to_move(self, state: GameState) -> int:
        return state.to_move

    def legal_actions(self, state: GameState) -> list[int]:
        return sorted(state.legal_moves())

    def action_mask(self, state: GameState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        mask[state.legal_moves()] = 1  # empty once the game is over
        return mask

    def is_terminal(self, state: GameState) -> bool:
        return state.is_terminal()

    def returns(self, state: GameState) -> tuple[float, float]:
        return state.returns()

    def move_of(self, state: GameState, action: int) -> int:
        """Return the legal move of ``action``; MoveError if the action is not legal."""
        if action not in state.legal_moves():
            raise MoveError(f"action {action} is not legal in {state.to_text()!r}")
        return action

    def apply_action(self, state: GameState, action: int) -> tuple[GameState, str]:
        move = self.move_of(state, action)
        return state.apply(move), state.move_to_str(move)

    def action_to_str(self, state: GameState, action: int) -> str:
        return state.move_to_str(self.move_of(state, action))

    def str_to_action(self, state: GameState, text: str) -> int:
        return state.parse_move(text)
