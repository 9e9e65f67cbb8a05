"""The table of boardzoo games: a name maps to the game's descriptor (:class:`GameSpec`).

Built-in games are the folders of ``boardzoo.envs`` that hold a ``spec.py``;
each one's descriptor is imported on first use, and that module registers it
with :func:`register_game`. Other packages (and tests) register their own games
the same way, so nothing here names a game.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from .game import GameState, UnknownGameError, echo
from .spec import GameSpec

#: The package that holds the built-in game folders (``boardzoo.envs``).
_GAMES_PACKAGE = __name__.rsplit(".", 2)[0]
_GAMES_DIR = Path(__file__).resolve().parent.parent

_SPECS: dict[str, GameSpec] = {}
__all__ = ["GAMES", "UnknownGameError", "action_game", "batched_game", "game_names", "get_spec",
           "load_state", "register_game", "state_class"]


def _builtin_names() -> list[str]:
    """Return the names of the built-in game folders (those with a ``spec.py``), sorted."""
    shared = Path(__file__).resolve().parent.name  # this folder: shared pieces, not a game
    return sorted(p.parent.name for p in _GAMES_DIR.glob("*/spec.py") if p.parent.name != shared)


#: Names of the built-in games, in a stable order (``game_names()`` adds registered ones).
GAMES: tuple[str, ...] = tuple(_builtin_names())


def register_game(spec: GameSpec) -> GameSpec:
    """Add ``spec`` to the table (a game's ``spec.py`` calls this); return it."""
    known = _SPECS.get(spec.name)
    if known is not None and known is not spec:
        raise ValueError(f"a different game is already registered as {spec.name!r}")
    _SPECS[spec.name] = spec
    return spec


def game_names() -> list[str]:
    """Return the names of every game: the built-in ones, then those registered since."""
    return [*GAMES, *sorted(set(_SPECS) - set(GAMES))]


def get_spec(name: str) -> GameSpec:
    """Return the descriptor of game ``name``; raise UnknownGameError otherwise."""
    spec = _SPECS.get(name)
    if spec is not None:
        return spec
    if isinstance(name, str) and name in GAMES:
        importlib.import_module(f"{_GAMES_PACKAGE}.{name}.spec")  # registers itself
        return _SPECS[name]
    raise UnknownGameError(f"unknown game {echo(name)}; choose one of: {', '.join(game_names())}")


def state_class(name: str) -> type[GameState]:
    """Return the GameState subclass of game ``name``."""
    return get_spec(name).state_cls


def load_state(name: str, position: str | None = None) -> GameState:
    """Return the start position of ``name``, or the state parsed from ``position``."""
    return get_spec(name).load_state(position)


def action_game(name: str) -> Any:  # -> ActionGame
    """Return the ActionGame (action encoding, masks, observations) of game ``name``."""
    return get_spec(name).actions


def batched_game(name: str, device: str = "cpu") -> Any:  # -> BatchedGame (torch not imported)
    """Return game ``name``'s batched torch engine on ``device``."""
    return get_spec(name).batched_engine(device)
