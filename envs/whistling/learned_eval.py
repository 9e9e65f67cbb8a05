"""Monochromatic Whistling's inputs to a learned evaluation
(:mod:`boardzoo.envs.core.learned_eval`).

From the side to move's view: 331 sparse inputs for its stones by cell, 331 for the
opponent's, then 5 dense ones, the hand-made evaluation's terms (:mod:`.kernel`): each
side's stones / 20, the capture the mover must make now / 4, the capture the opponent would
have if it were to move / 4, and the quiet-turn counter / 40 (the draw comes at 40). The
terms are what the search's leaf computes anyway; the cells a row each.

The images for the fit (``inputs(..., symmetric=True)``) are the position turned by 0, 120
and 240 degrees, the symmetries that fix both sides' start stones (:mod:`.symmetry`): the
rules are the same under all twelve of the hexagon, but play from the start never meets
the other nine's images.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit
from ..core.jit_bits import lowest_square
from ..core.learned_eval import add_input, add_one, output, start_hidden
from .hexgrid import cells_of
from .kernel import DRAW_QUIET, NC, ONGOING, WORDS, _mover, judge_terms, leaf_workspace, words
from .rules import State
from .symmetry import start_fixing_maps

SPARSE = 2 * NC
DENSE = 5


@njit(cache=True)
def _dense(n_own: int, n_enemy: int, now: int, exposed: int, quiet: int,
           out: np.ndarray) -> None:
    """Write the 5 dense inputs from the hand-made terms."""
    out[0], out[1] = n_own / 20.0, n_enemy / 20.0
    out[2], out[3] = now / 4.0, exposed / 4.0
    out[4] = quiet / DRAW_QUIET


@njit(cache=True)
def judged_learned(x: np.ndarray, o: np.ndarray, side: int, quiet: int, lw: tuple,
                   weights: np.ndarray, hidden: np.ndarray) -> tuple[int, float, int]:
    """Return (the kernel's result, the learned ``z`` for the side to move, or 0.0 once the
    game is over, status): ``kernel.judge`` of a leaf with the learned evaluation."""
    r, n_own, n_enemy, now, exposed, status = judge_terms(x, o, side, quiet, True, lw)
    if r != ONGOING:
        return r, 0.0, status
    own, enemy = _mover(x, o, side)
    start_hidden(weights, hidden)
    for w in range(WORDS):
        rest = own[w]
        while rest:
            add_one(weights, hidden, 64 * w + lowest_square(rest))
            rest &= rest - np.uint64(1)
        rest = enemy[w]
        while rest:
            add_one(weights, hidden, NC + 64 * w + lowest_square(rest))
            rest &= rest - np.uint64(1)
    dense = np.empty(DENSE)
    _dense(n_own, n_enemy, now, exposed, quiet, dense)
    for k in range(DENSE):
        add_input(weights, hidden, SPARSE + k, dense[k])
    return r, output(weights, hidden), status


def inputs(states: list[State], symmetric: bool = False) -> np.ndarray:
    """Return the inputs of unfinished ``states`` as float32 rows (SPARSE + DENSE columns);
    with ``symmetric``, each state's 3 images, image by image (3 * len(states) rows)."""
    maps = [np.array(m, dtype=np.int64) for _, m, _ in start_fixing_maps()]
    maps = maps if symmetric else maps[:1]
    lw = leaf_workspace()
    out = np.zeros((len(maps) * len(states), SPARSE + DENSE), dtype=np.float32)
    dense = np.empty(DENSE)
    for i, s in enumerate(states):
        x, o = words(s.stones[0]), words(s.stones[1])
        _, n_own, n_enemy, now, exposed, _ = judge_terms(x, o, s.side, s.quiet, True, lw)
        _dense(n_own, n_enemy, now, exposed, s.quiet, dense)
        own_cells = np.array(cells_of(s.stones[s.side]), dtype=np.int64)
        enemy_cells = np.array(cells_of(s.stones[1 - s.side]), dtype=np.int64)
        for k, image in enumerate(maps):
            row = out[k * len(states) + i]
            row[image[own_cells]] = 1.0
            row[NC + image[enemy_cells]] = 1.0
            row[SPARSE:] = dense
    return out
