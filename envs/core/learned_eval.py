"""A learned evaluation small enough to run at every leaf of a compiled alpha-beta search.

A network of self-play (``checkpoint:...``) judges a position far better than a hand-made
evaluation, but at about a millisecond an evaluation: a compiled alpha-beta searches a
thousand times more positions in the same time. This is the middle way chess engines took
with NNUE: one hidden layer over sparse inputs (which pieces stand where) and a few dense
ones (each game's hand-made terms), cheap enough for the search's leaves, fitted to a
network's value (``boardzoo fit-eval``, :mod:`boardzoo.training.eval_fit`).

The value of a position for its side to move is ``tanh(z)`` with
``z = w2 . relu(W1 x + b1) + b2``; the search scores ``scale * z`` (the game's
``eval_scale``), so that search values read as the hand-made evaluation's do
(``tanh(score / scale)``). The inputs ``x`` are each game's (``GameSpec.learned_eval``,
e.g. :mod:`boardzoo.envs.loa.learned_eval`): ``sparse`` 0/1 inputs, then ``dense`` ones.

The weights sit in one float64 array, the layout the compiled code reads (:func:`output`):
rows ``0 .. sparse + dense - 1`` are W1's columns by input, then b1, then w2, then
``[b2, 0, ...]``. A file is a NumPy ``.npz`` of plain arrays, read without pickle, so a
downloaded one cannot run code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import write_atomic
from .game import BoardzooError
from .jit import njit

#: The ``format`` entry of a learned-evaluation file.
FORMAT = "boardzoo-learned-eval-1"
#: Hidden units a file may have (the search's scratch row is this long at most).
MAX_HIDDEN = 1024
#: The most bytes one array of a file may unpack to (a zip entry that claims more, as a
#: compression bomb would, is refused before it is read).
MAX_ENTRY_BYTES = 64 << 20


class LearnedEvalError(BoardzooError):
    """A learned-evaluation file that cannot be used (missing, malformed, another game's)."""


@dataclass(frozen=True)
class LearnedEval:
    """A fitted evaluation: the game, its input counts and the packed weights."""

    game: str
    sparse: int
    dense: int
    #: (sparse + dense + 3, hidden) float64, C-contiguous: see the module's layout.
    weights: np.ndarray
    #: Facts of the fit for people (the network, positions, loss), stored with the weights.
    about: str = ""

    @property
    def hidden(self) -> int:
        return int(self.weights.shape[1])

    @classmethod
    def pack(cls, game: str, sparse: int, dense: int, w1: np.ndarray, b1: np.ndarray,
             w2: np.ndarray, b2: float, about: str = "") -> LearnedEval:
        """Return the evaluation of weights ``w1`` (inputs, hidden), ``b1``, ``w2`` (hidden)
        and ``b2``."""
        hidden = w1.shape[1]
        tail = np.zeros((3, hidden))
        tail[0], tail[1], tail[2, 0] = b1, w2, b2
        weights = np.ascontiguousarray(np.vstack([w1, tail]), dtype=np.float64)
        return cls(game, sparse, dense, weights, about)

    def scratch(self) -> np.ndarray:
        """Return a hidden-layer buffer for :func:`output` (one per search)."""
        return np.zeros(self.hidden)

    def save(self, path: str | Path) -> None:
        """Write the evaluation to ``path`` (``.npz``) atomically."""
        arrays = {"format": np.array(FORMAT), "game": np.array(self.game),
                  "sparse": np.array(self.sparse), "dense": np.array(self.dense),
                  "weights": self.weights, "about": np.array(self.about)}
        write_atomic(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, path: str | Path, game: str, sparse: int, dense: int) -> LearnedEval:
        """Read an evaluation for ``game`` with these input counts; LearnedEvalError if the
        file is missing, malformed, another game's or not finite."""
        where = f"learned evaluation {str(path)!r}"
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an .npz archive")
            with data:
                too_big = [i.filename for i in data.zip.infolist()
                           if i.file_size > MAX_ENTRY_BYTES]
                if too_big:
                    raise ValueError(f"entry {too_big[0][:40]!r} unpacks to more than "
                                     f"{MAX_ENTRY_BYTES >> 20} MiB")
                fields = {k: data[k] for k in ("format", "game", "sparse", "dense", "weights")}
                about = str(data["about"]) if "about" in data else ""
        except FileNotFoundError:
            raise LearnedEvalError(f"{where} does not exist") from None
        except (OSError, ValueError, KeyError, EOFError) as exc:
            why = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            raise LearnedEvalError(f"{where} is not a learned-evaluation file ({why})") from None
        if str(fields["format"]) != FORMAT:
            raise LearnedEvalError(f"{where} has format {str(fields['format'])[:40]!r}, "
                                   f"expected {FORMAT!r}")
        if str(fields["game"]) != game:
            raise LearnedEvalError(f"{where} is for {str(fields['game'])[:40]!r}, not {game}")
        w = fields["weights"]
        if (int(fields["sparse"]), int(fields["dense"])) != (sparse, dense):
            raise LearnedEvalError(f"{where} has {int(fields['sparse'])} + "
                                   f"{int(fields['dense'])} inputs, {game} has {sparse} + {dense}")
        if (w.ndim != 2 or w.dtype != np.float64 or w.shape[0] != sparse + dense + 3
                or not 1 <= w.shape[1] <= MAX_HIDDEN):
            raise LearnedEvalError(f"{where} has weights of shape {w.shape} ({w.dtype}), "
                                   f"expected ({sparse + dense + 3}, 1..{MAX_HIDDEN}) float64")
        if not np.isfinite(w).all():
            raise LearnedEvalError(f"{where} has weights that are not finite")
        return cls(game, sparse, dense, np.ascontiguousarray(w), about)


#: The empty weights a search takes for "the hand-made evaluation".
NO_WEIGHTS = np.zeros((0, 1))


# -- compiled pieces: a game's kernel adds its inputs, then asks for the output ---------------


@njit(cache=True)
def start_hidden(weights: np.ndarray, hidden: np.ndarray) -> None:
    """Set the hidden layer to b1."""
    row = weights.shape[0] - 3
    for j in range(hidden.shape[0]):
        hidden[j] = weights[row, j]


@njit(cache=True)
def add_input(weights: np.ndarray, hidden: np.ndarray, index: int, x: float) -> None:
    """Add input ``index`` with value ``x`` to the hidden layer."""
    for j in range(hidden.shape[0]):
        hidden[j] += weights[index, j] * x


@njit(cache=True)
def add_one(weights: np.ndarray, hidden: np.ndarray, index: int) -> None:
    """Add a sparse input that is 1 (one row added, no product)."""
    for j in range(hidden.shape[0]):
        hidden[j] += weights[index, j]


@njit(cache=True)
def output(weights: np.ndarray, hidden: np.ndarray) -> float:
    """Return ``z = w2 . relu(hidden) + b2``."""
    row = weights.shape[0] - 2
    z = weights[row + 1, 0]
    for j in range(hidden.shape[0]):
        if hidden[j] > 0.0:
            z += hidden[j] * weights[row, j]
    return z
