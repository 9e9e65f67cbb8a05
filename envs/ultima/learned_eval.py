"""Ultima's inputs to a learned evaluation (:mod:`boardzoo.envs.core.learned_eval`).

From the side to move's view: 448 sparse inputs for its pieces by kind and square (7 kinds x
64 squares), 448 for the opponent's, then 7 dense ones, the hand-made evaluation's terms
(:mod:`.kernel`): each side's material (frozen pieces discounted) / 10 and pseudo-legal
move count / 50, the best capture the mover has, and each side's frozen pieces / 4. The
terms cost what the hand-made evaluation costs (both sides' moves), the squares a row each.

The images for the fit (``inputs(..., symmetric=True)``) are the position and its mirror
across the d/e line: the rules treat every direction alike, but play from Abbott's array
never turns the board a quarter, so the other six images would teach positions that do not
occur.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit
from ..core.jit_bits import popcount
from ..core.learned_eval import add_input, add_one, output, start_hidden
from .kernel import COLOUR, MAX_MOVES, ONGOING, _side, frozen_pieces, judged_side, owned
from .rules import State

SPARSE = 2 * 7 * 64
DENSE = 7
#: The piece kinds of each side's sparse block, in order (``kind - 1`` of :mod:`.board`).
KIND_NAMES = ("king", "pawn", "leaper", "chameleon", "withdrawer", "immobilizer",
              "coordinator")
#: The dense inputs that count things and carry no hand-made value (each side's moves and
#: frozen pieces; material and the best capture weigh pieces by hand): what an evaluation
#: learned from self-play alone may read (:mod:`boardzoo.training.eval_scratch`).
COUNT_INPUTS = {2: "moves", 3: "opponent's moves", 5: "frozen", 6: "opponent's frozen"}


@njit(cache=True)
def _dense(me: int, frozen: int, b: np.ndarray, m1: float, n1: int, threat: float,
           m2: float, n2: int, out: np.ndarray) -> None:
    """Write the 7 dense inputs of a position whose hand-made terms are given."""
    own = 0
    for s in range(64):
        if owned(b[s], me):
            own |= 1 << s
    out[0], out[1] = m1 / 10.0, m2 / 10.0
    out[2], out[3] = n1 / 50.0, n2 / 50.0
    out[4] = threat
    out[5], out[6] = popcount(frozen & own) / 4.0, popcount(frozen & ~own) / 4.0


@njit(cache=True)
def _output(b: np.ndarray, me: int, dense: np.ndarray, weights: np.ndarray,
            hidden: np.ndarray) -> float:
    """Return ``z`` from the board (sparse inputs) and the dense inputs."""
    start_hidden(weights, hidden)
    for s in range(64):
        q = b[s]
        if q != 0:
            base = 0 if owned(q, me) else 448
            add_one(weights, hidden, base + 64 * ((q & 7) - 1) + s)
    for k in range(DENSE):
        add_input(weights, hidden, SPARSE + k, dense[k])
    return output(weights, hidden)


@njit(cache=True)
def judged_learned(b: np.ndarray, side: int, halfmove: int, ply: int, occurrences: int,
                   moves: np.ndarray, caps: np.ndarray, weights: np.ndarray,
                   hidden: np.ndarray) -> tuple[int, float]:
    """Return (the kernel's ``judge`` result, the learned ``z`` for the side to move, or 0.0
    once the game is over): ``kernel.judged_evaluation`` with the learned evaluation."""
    result, frozen, m1, n1, threat = judged_side(b, side, halfmove, ply, occurrences, moves,
                                                 caps)
    if result != ONGOING:
        return result, 0.0
    me = COLOUR[side]
    m2, n2, _ = _side(b, me ^ 8, frozen, moves, caps)
    dense = np.empty(DENSE)
    _dense(me, frozen, b, m1, n1, threat, m2, n2, dense)
    return result, _output(b, me, dense, weights, hidden)


@njit(cache=True)
def _fill(boards: np.ndarray, sides: np.ndarray, mirror: bool, out: np.ndarray) -> None:
    """Write the inputs of each (board, side to move), mirrored across the d/e line or not."""
    moves = np.empty(MAX_MOVES, np.int64)
    caps = np.empty(MAX_MOVES, np.int64)
    for i in range(boards.shape[0]):
        b = boards[i]
        me = COLOUR[sides[i]]
        frozen = frozen_pieces(b, me) | frozen_pieces(b, me ^ 8)
        m1, n1, threat = _side(b, me, frozen, moves, caps)
        m2, n2, _ = _side(b, me ^ 8, frozen, moves, caps)
        dense = np.empty(DENSE)
        _dense(me, frozen, b, m1, n1, threat, m2, n2, dense)
        for k in range(DENSE):
            out[i, SPARSE + k] = dense[k]
        for s in range(64):
            q = b[s]
            if q != 0:
                square = (s ^ 7) if mirror else s
                base = 0 if owned(q, me) else 448
                out[i, base + 64 * ((q & 7) - 1) + square] = 1.0


def inputs(states: list[State], symmetric: bool = False) -> np.ndarray:
    """Return the inputs of ``states`` as float32 rows (SPARSE + DENSE columns); with
    ``symmetric``, the states then their mirror images (2 * len(states) rows)."""
    boards = np.stack([np.frombuffer(s.board, dtype=np.uint8) for s in states])
    sides = np.array([s.side for s in states], dtype=np.int64)
    images = 2 if symmetric else 1
    out = np.zeros((images * len(states), SPARSE + DENSE), dtype=np.float32)
    for k in range(images):
        _fill(boards, sides, k == 1, out[k * len(states):(k + 1) * len(states)])
    return out
