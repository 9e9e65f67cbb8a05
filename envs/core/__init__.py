"""Pieces shared by all boardzoo games: the game protocol, action encodings, descriptors,
the registry, symmetries, boards, drawing and the batched-engine interface."""

from .game import BoardzooError, GameState, MoveError, PositionError, divide, perft

__all__ = ["BoardzooError", "GameState", "MoveError", "PositionError", "divide", "perft"]
