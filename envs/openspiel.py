"""boardzoo's games as OpenSpiel Python games.

Needs the optional extra: ``pip install "boardzoo[openspiel]"`` (``open-spiel``).
Importing this module registers ``python_boardzoo_loa``, ``python_boardzoo_ultima`` and
``python_boardzoo_whistling`` with ``pyspiel`` (so ``pyspiel.load_game`` and OpenSpiel's
bots, evaluators and RL code work on them). Bots and agents in both directions
(``AgentBot``, the agent kind ``openspiel_mcts:N``) are :mod:`boardzoo.agents.openspiel_bots`.

One OpenSpiel action is one action of the game's ``Discrete`` space in the PettingZoo
env (``boardzoo.envs.<game>_v0``): a whole move in LOA and Ultima, one hop in
Whistling, where a capture chain is several actions in a row by the same
``current_player()``. The observation tensor is the env's observation planes,
shape (height, width, planes), from the observing player's view.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

try:
    import pyspiel
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ModuleNotFoundError as exc:  # the extra is optional: say how to get it
    raise ModuleNotFoundError(
        f"boardzoo.envs.openspiel needs OpenSpiel ({exc.name} is missing): "
        'pip install "boardzoo[openspiel]"', name=exc.name) from exc

from .core.actions import ActionGame, as_action
from .core.game import BoardzooError, GameState, MoveError
from .core.registry import game_names, get_spec
from .core.spec import GameSpec

PREFIX = "python_boardzoo_"


def short_name(game: str) -> str:
    """Return the OpenSpiel name of boardzoo game ``game`` (``"python_boardzoo_loa"``)."""
    return PREFIX + get_spec(game.removeprefix(PREFIX)).name


def max_game_length(game: str) -> int:
    """Return the most actions a game from the start position can last (its draw caps)."""
    return get_spec(game.removeprefix(PREFIX)).max_game_length


class _Shared:
    """Holds an immutable action state; ``deepcopy`` shares it (OpenSpiel clones Python
    states by deep-copying their attributes, and copying our states would waste time)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict) -> _Shared:
        return self

    def __getstate__(self) -> tuple[Any]:
        return (self.value,)  # a tuple: pickle skips __setstate__ for a false state

    def __setstate__(self, state: tuple[Any]) -> None:
        (self.value,) = state


class BoardzooState(pyspiel.State):
    """An OpenSpiel state over a boardzoo action state (see the module docstring)."""

    #: The game's action encoding (set on the per-game subclass).
    actions: ClassVar[ActionGame]

    def __init__(self, game: BoardzooGame, position: str | None = None) -> None:
        """Start at the game's start position, or at ``position`` text."""
        super().__init__(game)
        start = game.start if position is None else self.actions.initial_state(position)
        self._cur = _Shared(start)
        self._hops = 0  # actions played in the unfinished turn (Whistling chains)
        self._turn: str | None = None  # canonical text of the last finished turn

    # -- boardzoo views ----------------------------------------------------------
    @property
    def action_state(self) -> Any:
        """The boardzoo action state (``raw_env.actions`` works on it)."""
        return self._cur.value

    @property
    def game_state(self) -> GameState:
        """The rules state: the position before any unfinished turn."""
        return self.actions.game_state(self._cur.value)

    @property
    def mid_turn(self) -> bool:
        """True while a turn is unfinished (between the hops of a Whistling chain)."""
        return self._hops > 0

    @property
    def last_turn(self) -> str | None:
        """Canonical notation of the last finished turn, or None before the first."""
        return self._turn

    def set_action_state(self, action_state: Any) -> None:
        """Put the state at ``action_state``, which must be at the start of a turn."""
        self._cur = _Shared(action_state)
        self._hops = 0
        self._turn = None

    # -- OpenSpiel API -----------------------------------------------------------
    def current_player(self) -> int:
        s = self._cur.value
        if self.actions.is_terminal(s):
            return pyspiel.PlayerId.TERMINAL
        return self.actions.to_move(s)

    def _legal_actions(self, player: int) -> list[int]:
        return self.actions.legal_actions(self._cur.value)

    def _apply_action(self, action: int) -> None:
        new, turn = self.actions.apply_action(self._cur.value, as_action(action))
        self._cur = _Shared(new)
        if turn is None:
            self._hops += 1
        else:
            self._hops, self._turn = 0, turn

    def _action_to_string(self, player: int, action: int) -> str:
        try:
            return self.actions.action_to_str(self._cur.value, action)
        except MoveError:  # OpenSpiel may name actions of other states (e.g. in logs)
            return f"action {action} (not legal here)"

    def is_terminal(self) -> bool:
        return self.actions.is_terminal(self._cur.value)

    def returns(self) -> list[float]:
        return list(self.actions.returns(self._cur.value))

    def __str__(self) -> str:
        text = self.game_state.to_text()
        so_far = getattr(self.actions, "turn_so_far", None)  # only hop-level games have it
        if self._hops and so_far is not None:
            text += f" (turn so far: {so_far(self._cur.value)})"
        return text


class PlanesObserver:
    """OpenSpiel Python observer whose tensor is the env's observation planes."""

    def __init__(self, actions: ActionGame) -> None:
        self.actions = actions
        self.tensor = np.zeros(int(np.prod(actions.observation_shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(actions.observation_shape)}

    def set_from(self, state: BoardzooState, player: int) -> None:
        """Write ``state``'s planes from ``player``'s view (player 0 for the default id)."""
        self.dict["observation"][...] = self.actions.observation(state.action_state,
                                                                 max(player, 0))

    def string_from(self, state: BoardzooState, player: int) -> str:
        """Return the position text (the game has perfect information)."""
        return str(state)


class BoardzooGame(pyspiel.Game):
    """An OpenSpiel game over a boardzoo ActionGame (built per game by :func:`register`)."""

    name: ClassVar[str]
    actions: ClassVar[ActionGame]
    game_type: ClassVar[pyspiel.GameType]
    game_info: ClassVar[pyspiel.GameInfo]
    state_cls: ClassVar[type[BoardzooState]]

    def __init__(self, params: dict | None = None) -> None:
        super().__init__(self.game_type, self.game_info, params or {})
        self.start = self.actions.initial_state()  # immutable, so every state shares it

    def new_initial_state(self, position: str | None = None) -> BoardzooState:
        """Return the start state, or the state at ``position`` text."""
        if position is not None and not isinstance(position, str):
            raise BoardzooError(f"{self.name}: new_initial_state takes position text, "
                                f"got {type(position).__name__}")
        return self.state_cls(self, position)

    def state_from(self, game_state: GameState) -> BoardzooState:
        """Return a state at boardzoo rules state ``game_state`` (its OpenSpiel history empty)."""
        state = self.state_cls(self)
        state.set_action_state(self.actions.from_game_state(game_state))
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> Any:
        """Return the planes observer (or OpenSpiel's generic one for perfect recall)."""
        if params:
            raise BoardzooError(f"{self.name}: observer parameters are not supported: {params}")
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(self.actions)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


def _game_class(game: str) -> type[BoardzooGame]:
    """Build the BoardzooGame subclass (with its type, info and state class) of ``game``."""
    spec: GameSpec = get_spec(game)
    actions = spec.actions
    game_type = pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"Python boardzoo {spec.long_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={})
    game_info = pyspiel.GameInfo(
        num_distinct_actions=actions.num_actions,
        max_chance_outcomes=0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=spec.max_game_length)
    title = game.capitalize()
    state_cls = type(f"{title}OpenSpielState", (BoardzooState,), {"actions": actions})
    game_cls = type(f"{title}OpenSpielGame", (BoardzooGame,), {
        "name": game, "actions": actions, "game_type": game_type, "game_info": game_info,
        "state_cls": state_cls})
    # Module attributes, so that pickle finds the classes by name (games and states go to
    # worker processes and Ray tasks); registering a game here recreates them on import.
    for cls in (state_cls, game_cls):
        globals()[cls.__name__] = cls
    return game_cls


def register(game: str) -> str:
    """Register boardzoo game ``game`` with pyspiel (once) and return its OpenSpiel name."""
    name = short_name(game)
    if name not in pyspiel.registered_names():
        cls = _game_class(name.removeprefix(PREFIX))
        pyspiel.register_game(cls.game_type, cls)
    return name


def register_all() -> list[str]:
    """Register every boardzoo game with pyspiel; return their OpenSpiel names."""
    return [register(game) for game in game_names()]


def load(game: str) -> BoardzooGame:
    """Return the OpenSpiel game of ``game`` (``"loa"`` or ``"python_boardzoo_loa"``)."""
    return pyspiel.load_game(register(game))


register_all()
