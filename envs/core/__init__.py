"""Pieces shared by all boardzoo games: the game protocol, the AEC env base, the registry."""

from .game import BoardzooError, GameState, MoveError, PositionError, divide, perft

__all__ = ["BoardzooError", "GameState", "MoveError", "PositionError", "divide", "perft"]
