"""Ultima evaluation: material with piece values, frozen pieces discounted, mobility, threats."""

from __future__ import annotations

import numpy as np

from ..core.game import GameState
from .board import KING
from .check import attacked
from .movegen import make_move, pseudo_moves

# Pawn = 1. The immobilizer paralyses whole regions; the queen-movers are worth a few pawns.
# Index = piece kind: -, K, P, L, C, W, I, O (the king is never captured: checkmate decides).
VALUES = (0.0, 0.0, 1.0, 3.0, 3.0, 3.5, 5.0, 3.5)
FROZEN_FACTOR = 0.6  # a frozen piece keeps some value: it may be freed later
W_MOBILITY = 0.03
W_THREAT = 0.5  # share of the best capture available to the side to move (it moves first)
_COLOURS = (0, 8)  # player -> colour bit of the board's piece codes (White 0, Black 8)


def _side(board: bytes, colour: int, frozen: int) -> tuple[float, int, float]:
    """Return (material, pseudo-legal move count, best capture value) of one colour."""
    material = 0.0
    for s, code in enumerate(board):
        if code and (code & 8) == colour:
            v = VALUES[code & 7]
            material += v * FROZEN_FACTOR if frozen >> s & 1 else v
    moves = pseudo_moves(board, colour)
    best = 0.0
    for _, _, caps in moves:
        if caps:
            best = max(best, sum(VALUES[board[c] & 7] for c in caps))
    return material, len(moves), best


def ultima_eval(state: GameState) -> float:
    """Return the Ultima evaluation for the side to move."""
    board = state.board  # type: ignore[attr-defined]
    frozen = state.frozen()  # type: ignore[attr-defined]
    me = _COLOURS[state.to_move]
    m1, n1, threat = _side(board, me, frozen)
    m2, n2, _ = _side(board, me ^ 8, frozen)
    return m1 - m2 + W_MOBILITY * (n1 - n2) + W_THREAT * threat


def capture_values(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """Return the legal moves that capture and the material each takes (pawn = 1).

    The policy prior of Ultima networks (``model.policy_prior``): a capture's worth, the
    rule of thumb that orders captures first (most valuable victims first) in a search.
    """
    board = state.board  # type: ignore[attr-defined]
    moves, values = [], []
    for move in state.legal_moves():
        caps = state.captures(move)  # type: ignore[attr-defined]
        if caps:
            moves.append(move)
            values.append(sum(VALUES[board[c] & 7] for c in caps))
    return np.asarray(moves, dtype=np.int64), np.asarray(values, dtype=np.float32)


def winning_move(state: GameState) -> int | None:
    """Return a legal move that wins at once (the opponent is left without a legal move), or
    None.

    Only checking moves are tried: a move that does not attack the enemy king could win
    only by stalemate (every enemy piece frozen or blocked), which this does not look for.
    """
    if state.is_terminal():
        return None
    board = state.board  # type: ignore[attr-defined]
    me = _COLOURS[state.to_move]
    king = board.find((me ^ 8) | KING)
    for move in state.legal_moves():
        caps = state.captures(move)  # type: ignore[attr-defined]
        # the enemy king stays where it is: moves that leave the own king attacked are
        # illegal, so no legal position has a king that can be taken
        if attacked(make_move(board, move, caps), king, me) and \
                state.apply(move).winner() == state.to_move:
            return move
    return None
