"""Lines of Action's inputs to a learned evaluation (:mod:`boardzoo.envs.core.learned_eval`).

From the side to move's view: 64 sparse inputs for its pieces by square, 64 for the
opponent's, then 6 dense ones, the hand-made evaluation's terms for each side (groups
beyond one, excess spread, pieces / 12; :mod:`.kernel`). The squares let the fit learn
what the hand-made terms miss (centralisation, blocked pieces, walls); the terms give it
connectedness, which one hidden layer over squares cannot count.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit
from ..core.jit_bits import lowest_square, popcount
from ..core.learned_eval import add_input, add_one, output, start_hidden
from .kernel import BLACK, ONE, excess_spread, groups
from .rules import State
from .symmetry import loa_symmetries

SPARSE = 128
DENSE = 6


@njit("UniTuple(float64, 3)(uint64)", cache=True)
def side_terms(pieces: np.uint64) -> tuple[float, float, float]:
    """Return one side's dense inputs: (groups - 1, excess spread, pieces / 12)."""
    n = popcount(pieces)
    if n <= 1:
        return 0.0, 0.0, n / 12.0
    return float(groups(pieces) - 1), excess_spread(pieces, n), n / 12.0


@njit(cache=True)
def evaluate(black: np.uint64, white: np.uint64, side: int, weights: np.ndarray,
             hidden: np.ndarray) -> float:
    """Return ``z`` of the learned evaluation for the side to move (value ``tanh(z)``)."""
    own = black if side == BLACK else white
    other = white if side == BLACK else black
    start_hidden(weights, hidden)
    rest = own
    while rest:
        add_one(weights, hidden, lowest_square(rest))
        rest &= rest - ONE
    rest = other
    while rest:
        add_one(weights, hidden, 64 + lowest_square(rest))
        rest &= rest - ONE
    g, e, c = side_terms(own)
    add_input(weights, hidden, SPARSE, g)
    add_input(weights, hidden, SPARSE + 1, e)
    add_input(weights, hidden, SPARSE + 2, c)
    g, e, c = side_terms(other)
    add_input(weights, hidden, SPARSE + 3, g)
    add_input(weights, hidden, SPARSE + 4, e)
    add_input(weights, hidden, SPARSE + 5, c)
    return output(weights, hidden)


@njit(cache=True)
def _fill(own: np.ndarray, other: np.ndarray, squares: np.ndarray, out: np.ndarray) -> None:
    """Write the inputs of positions (own[i], other[i]) with square s read at squares[s]."""
    for i in range(own.shape[0]):
        a = np.uint64(0)
        b = np.uint64(0)
        for s in range(64):
            if (own[i] >> np.uint64(squares[s])) & ONE:
                a |= ONE << np.uint64(s)
                out[i, s] = 1.0
            if (other[i] >> np.uint64(squares[s])) & ONE:
                b |= ONE << np.uint64(s)
                out[i, 64 + s] = 1.0
        out[i, SPARSE], out[i, SPARSE + 1], out[i, SPARSE + 2] = side_terms(a)
        out[i, SPARSE + 3], out[i, SPARSE + 4], out[i, SPARSE + 5] = side_terms(b)


def inputs(states: list[State], symmetric: bool = False) -> np.ndarray:
    """Return the inputs of ``states`` as float32 rows (SPARSE + DENSE columns); with
    ``symmetric``, each state's 8 symmetric images, image by image (8 * len(states) rows)."""
    sides = np.array([s.to_move for s in states], dtype=np.int64)
    black = np.array([s.bb[0] for s in states], dtype=np.uint64)
    white = np.array([s.bb[1] for s in states], dtype=np.uint64)
    own = np.where(sides == BLACK, black, white)
    other = np.where(sides == BLACK, white, black)
    # a symmetry's cell_src[k]: the square whose piece lands on k (squares are cells)
    maps = [sym.cell_src for sym in loa_symmetries()][:8 if symmetric else 1]
    out = np.zeros((len(maps) * len(states), SPARSE + DENSE), dtype=np.float32)
    for k, squares in enumerate(maps):
        _fill(own, other, squares, out[k * len(states):(k + 1) * len(states)])
    return out
