"""The table of boardzoo games, used by the CLI, the agents and the registry."""

from __future__ import annotations

import importlib
from types import ModuleType

from .game import BoardzooError, GameState

#: Game name -> package that implements it (``rules.State``, ``env.raw_env``/``env.env``).
GAMES: dict[str, str] = {
    "loa": "boardzoo.envs.loa",
    "ultima": "boardzoo.envs.ultima",
    "whistling": "boardzoo.envs.whistling",
}


class UnknownGameError(BoardzooError):
    """A game name that boardzoo does not know or cannot load."""


def game_package(name: str) -> ModuleType:
    """Import and return the package of game ``name``; raise UnknownGameError otherwise."""
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r}; choose one of: {', '.join(GAMES)}")
    try:
        return importlib.import_module(GAMES[name])
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(GAMES[name]):
            raise UnknownGameError(f"game {name!r} is not yet available") from exc
        raise


def state_class(name: str) -> type[GameState]:
    """Return the GameState subclass of game ``name``."""
    pkg = game_package(name)
    if not hasattr(pkg, "State"):
        raise UnknownGameError(f"game {name!r} is not yet available")
    return pkg.State


def load_state(name: str, position: str | None = None) -> GameState:
    """Return the start position of ``name``, or the state parsed from ``position``."""
    cls = state_class(name)
    return cls.start() if position is None else cls.from_text(position)


def env_module(name: str) -> ModuleType:
    """Return ``boardzoo.envs.<name>.env`` (with ``raw_env``, ``env`` and ``raw_env.actions``)."""
    game_package(name)
    try:
        return importlib.import_module(GAMES[name] + ".env")
    except ModuleNotFoundError as exc:
        raise UnknownGameError(f"game {name!r} has no environment yet") from exc


def action_game(name: str):  # -> ActionGame (import kept local to avoid a cycle)
    """Return the ActionGame (action encoding, masks, observations) of game ``name``."""
    return env_module(name).raw_env.actions


def batched_game(name: str, device: str = "cpu"):  # -> BatchedGame (torch not imported here)
    """Return game ``name``'s batched torch engine (``envs/<name>/batched.py``) on ``device``."""
    game_package(name)
    try:
        module = importlib.import_module(GAMES[name] + ".batched")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(GAMES[name]):
            raise UnknownGameError(f"game {name!r} has no batched engine yet") from exc
        raise
    return module.Engine(device)
