"""boardzoo's games as OpenSpiel Python games, and OpenSpiel's MCTS as a boardzoo agent.

Needs the optional extra: ``pip install "boardzoo[openspiel]"`` (``open-spiel``).
Importing this module registers ``python_boardzoo_loa``, ``python_boardzoo_ultima`` and
``python_boardzoo_whistling`` with ``pyspiel`` (so ``pyspiel.load_game`` and OpenSpiel's
bots, evaluators and RL code work on them) and the agent kind ``openspiel_mcts:N``.

One OpenSpiel action is one action of the game's ``Discrete`` space in the PettingZoo
env (``boardzoo.envs.<game>.env``): a whole move in LOA and Ultima, one hop in
Whistling, where a capture chain is several actions in a row by the same
``current_player()``. The observation tensor is the env's observation planes,
shape (height, width, planes), from the observing player's view.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

try:
    import pyspiel
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ModuleNotFoundError as exc:  # the extra is optional: say how to get it
    raise ModuleNotFoundError(
        f"boardzoo.envs.openspiel needs OpenSpiel ({exc.name} is missing): "
        'pip install "boardzoo[openspiel]"', name=exc.name) from exc

from boardzoo.agents.base import Agent, UnknownAgentError, register_agent
from boardzoo.agents.env_adapter import EnvAgent
from boardzoo.agents.evaluation import get_evaluator, get_scale
from boardzoo.agents.mcts import parse_options
from boardzoo.envs.core.actions import ActionGame
from boardzoo.envs.core.game import BoardzooError, GameState, Move, MoveError
from boardzoo.envs.core.registry import GAMES, UnknownGameError, action_game

PREFIX = "python_boardzoo_"
LONG_NAMES = {"loa": "Lines of Action", "ultima": "Ultima", "whistling": "Monochromatic Whistling"}


def short_name(game: str) -> str:
    """Return the OpenSpiel name of boardzoo game ``game`` (``"python_boardzoo_loa"``)."""
    name = game.removeprefix(PREFIX)
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {game!r}; choose one of: {', '.join(GAMES)}")
    return PREFIX + name


def max_game_length(game: str) -> int:
    """Return the most actions a game from the start position can last (its draw caps)."""
    if game == "loa":
        from boardzoo.envs.loa.rules import MOVE_CAP
        return MOVE_CAP  # plies, one action each
    if game == "ultima":
        from boardzoo.envs.ultima.rules import PLY_CAP
        return PLY_CAP
    if game == "whistling":
        from boardzoo.envs.whistling.rules import DRAW_QUIET, State
        # Every hop of a capturing turn captures, and a side left without stones has
        # lost, so at most (all stones - 1) capturing hops; before each capturing turn
        # at most DRAW_QUIET - 1 quiet one-hop turns, and DRAW_QUIET after the last one.
        captures = sum(s.bit_count() for s in State.start().stones) - 1
        return captures + captures * (DRAW_QUIET - 1) + DRAW_QUIET
    raise UnknownGameError(f"unknown game {game!r}; choose one of: {', '.join(GAMES)}")


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
        new, turn = self.actions.apply_action(self._cur.value, int(action))
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
    actions = action_game(game)
    game_type = pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"Python boardzoo {LONG_NAMES.get(game, game)}",
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
        max_game_length=max_game_length(game))
    title = game.capitalize()
    state_cls = type(f"{title}OpenSpielState", (BoardzooState,), {"actions": actions})
    return type(f"{title}OpenSpielGame", (BoardzooGame,), {
        "name": game, "actions": actions, "game_type": game_type, "game_info": game_info,
        "state_cls": state_cls})


def register(game: str) -> str:
    """Register boardzoo game ``game`` with pyspiel (once) and return its OpenSpiel name."""
    name = short_name(game)
    if name not in pyspiel.registered_names():
        cls = _game_class(name.removeprefix(PREFIX))
        pyspiel.register_game(cls.game_type, cls)
    return name


def register_all() -> list[str]:
    """Register every boardzoo game with pyspiel; return their OpenSpiel names."""
    return [register(game) for game in GAMES]


def load(game: str) -> BoardzooGame:
    """Return the OpenSpiel game of ``game`` (``"loa"`` or ``"python_boardzoo_loa"``)."""
    return pyspiel.load_game(register(game))


# -- bots and agents in both directions ---------------------------------------------------
class AgentBot(pyspiel.Bot):
    """An OpenSpiel bot that plays a boardzoo Agent's whole-turn moves, hop by hop."""

    def __init__(self, agent: Agent) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self._driver = EnvAgent(agent)  # plans the whole turn, returns one action a call

    def restart_at(self, state: BoardzooState) -> None:
        self._driver = EnvAgent(self.agent)
        self.agent.reset()

    def step(self, state: BoardzooState) -> int:
        if state.mid_turn and not self._driver.planned:
            raise BoardzooError("AgentBot cannot take over a turn another player started")
        return self._driver.act_on(state.actions, state.action_state)


class HeuristicEvaluator(mcts.Evaluator):
    """OpenSpiel MCTS leaf evaluator from boardzoo's static evaluation (no rollouts):
    tanh(evaluation / scale) for the side to move, uniform priors."""

    def __init__(self, game: str) -> None:
        self.evaluate_position = get_evaluator(game)
        self.scale = get_scale(game)

    def evaluate(self, state: BoardzooState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        game = state.game_state  # mid-chain: the position before the turn, same mover
        value = float(np.tanh(self.evaluate_position(game) / self.scale))
        return np.array([value, -value] if game.to_move == 0 else [-value, value])

    def prior(self, state: BoardzooState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's MCTSBot as a boardzoo agent: ``openspiel_mcts:N`` (N simulations with
    OpenSpiel's random rollouts) or ``openspiel_mcts:N,leaf=eval`` (boardzoo's evaluation at
    the leaves); ``c=`` sets the UCT constant. In Whistling each hop gets its own search."""

    def __init__(self, game: str, simulations: int = 100, seed: int | None = None,
                 leaf: str = "rollout", uct_c: float = 2.0) -> None:
        if simulations < 1 or leaf not in ("rollout", "eval") or not uct_c >= 0:
            raise UnknownAgentError(f"openspiel_mcts needs simulations >= 1, leaf=rollout or "
                                    f"leaf=eval and c >= 0, got {simulations}, {leaf!r}, {uct_c}")
        self.game = load(game)
        self.simulations = simulations
        rng = np.random.RandomState(None if seed is None else seed % 2**32)
        evaluator = (HeuristicEvaluator(game) if leaf == "eval"
                     else mcts.RandomRolloutEvaluator(1, rng))
        self.bot = mcts.MCTSBot(self.game, uct_c, simulations, evaluator, random_state=rng)
        self._searches = 0
        self._seconds = 0.0

    def select_move(self, state: GameState) -> Move:
        started = time.perf_counter()
        spiel = self.game.state_from(state)
        spiel.apply_action(self.bot.step(spiel))
        self._searches += 1
        while spiel.mid_turn:
            spiel.apply_action(self.bot.step(spiel))
            self._searches += 1
        self._seconds += time.perf_counter() - started
        return state.parse_move(spiel.last_turn)

    def stats(self) -> dict[str, float]:
        return {"searches": self._searches, "simulations": self._searches * self.simulations,
                "seconds": round(self._seconds, 4)}


def mcts_agent(arg: str | None, game: str, seed: int | None) -> OpenSpielMCTSAgent:
    """Agent factory of ``openspiel_mcts[:N][,leaf=rollout|eval][,c=2.0]`` (N = 100)."""
    sims, opts = parse_options("openspiel_mcts", arg, "simulations")
    usage = "use openspiel_mcts:N[,leaf=rollout|eval][,c=2.0]"
    unknown = set(opts) - {"leaf", "c"}
    if unknown:
        raise UnknownAgentError(f"agent openspiel_mcts: unknown option(s) {sorted(unknown)}; "
                                + usage)
    try:
        simulations, uct_c = int(sims or 100), float(opts.get("c", 2.0))
    except ValueError:
        raise UnknownAgentError(f"agent openspiel_mcts:{arg}: N and c must be numbers; "
                                + usage) from None
    return OpenSpielMCTSAgent(game, simulations, seed, opts.get("leaf", "rollout"), uct_c)


register_all()
register_agent("openspiel_mcts", mcts_agent)
