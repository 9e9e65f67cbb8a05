"""Openings for matches: where each game pair starts, so deterministic agents play new games.

An opening is a list of moves from the standard start (played before the agents think and
kept in the game record's ``moves``) or a position text (the record's ``start``). The arena
plays each opening twice, colours swapped (a game pair); pair ``i`` of every match uses
opening ``i``. The ``--openings`` spec chooses them:

- ``suite`` (the default): the game's shipped suite, ``agents/arena/openings/GAME.txt`` (how
  it was made: docs/arena.md#openings, ``bench/make_openings.py``);
- ``random:N``: N uniformly random plies, drawn from the tournament seed; an opening already
  drawn is drawn again, so none repeats while distinct ones can still be found;
- ``none``: every game from the start position (deterministic agents repeat their games);
- a file (``file:PATH`` or a path): one opening per line, a position text or moves from the
  start separated by spaces; blank lines and ``#`` comments are skipped.

A suite or file with fewer openings than the match has pairs starts over (:attr:`OpeningBook.
note` says so: the arena prints it, and the repeated games are flagged in the report).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from pathlib import Path

from boardzoo.envs.core.game import BoardzooError, GameState, echo
from boardzoo.envs.core.registry import load_state

#: Where the shipped suites live (one ``GAME.txt`` per game; package data).
SUITE_DIR = Path(__file__).with_name("openings")
DEFAULT = "suite"
#: Draws tried for a new random opening before saying that distinct ones ran out.
RANDOM_TRIES = 200
MAX_RANDOM_PLIES = 40


class OpeningError(BoardzooError):
    """An ``--openings`` spec or file that cannot be used."""


@dataclass(frozen=True)
class Opening:
    """Where one game pair starts: ``moves`` from ``position`` (None: the standard start);
    ``label`` names it in records (``random:2#3``, ``loa.txt:17``)."""

    label: str
    moves: tuple[str, ...] = ()
    position: str | None = None


NO_OPENING = Opening("none")


class OpeningBook:
    """The openings of a match, by pair index (random ones drawn lazily, in order)."""

    def __init__(self, spec: str, openings: list[Opening] | None = None,
                 game: str = "", plies: int = 0, seed: int = 0) -> None:
        self.spec = spec
        self._fixed = openings  # a suite or file; None: random or none
        self._game, self._plies = game, plies
        self._rng = random.Random(f"openings|{seed}")
        self._drawn: list[Opening] = []
        self._seen: set[tuple[str, ...]] = set()
        self._ran_out_at: int | None = None

    def __getitem__(self, index: int) -> Opening:
        if self._fixed is not None:
            return self._fixed[index % len(self._fixed)]
        if self._plies == 0:
            return NO_OPENING
        while len(self._drawn) <= index:
            self._drawn.append(self._draw(len(self._drawn)))
        return self._drawn[index]

    def _draw(self, index: int) -> Opening:
        moves: tuple[str, ...] = ()
        for _ in range(RANDOM_TRIES):
            moves = random_line(self._game, self._plies, self._rng)
            if moves not in self._seen:
                break
        else:  # every draw was an opening already played: say so, go on with repeats
            if self._ran_out_at is None:
                self._ran_out_at = index
        self._seen.add(moves)
        return Opening(f"{self.spec}#{index}", moves)

    def longest(self) -> int:
        """Return the most moves an opening of this book plays before the agents move."""
        if self._fixed is not None:
            return max((len(o.moves) for o in self._fixed), default=0)
        return self._plies

    def capacity(self) -> int | None:
        """Return how many distinct openings there are (None: as many as random draws find)."""
        if self._fixed is not None:
            return len(self._fixed)
        return 1 if self._plies == 0 else None

    def note(self, pairs: int) -> str | None:
        """Return a warning when ``pairs`` game pairs must repeat an opening, else None."""
        have = self.capacity()
        if self._ran_out_at is not None:
            return (f"--openings {self.spec}: only {self._ran_out_at} distinct openings found; "
                    "later pairs repeat them")
        if have is not None and pairs > have and (self._fixed is not None or pairs > 1):
            what = "no opening" if self._fixed is None else f"{have} openings"
            return (f"--openings {self.spec} has {what} for {pairs} game pairs: openings "
                    "repeat, and deterministic agents may replay games (flagged in the report)")
        return None


def random_line(game: str, plies: int, rng: random.Random) -> tuple[str, ...]:
    """Return ``plies`` uniformly random moves from the start (fewer if the game ends)."""
    state = load_state(game)
    moves = []
    for _ in range(plies):
        if state.is_terminal():
            break
        move = rng.choice(list(state.legal_moves()))
        moves.append(state.move_to_str(move))
        state = state.apply(move)
    return tuple(moves)


def parse_line(game: str, line: str, where: str) -> Opening:
    """Return the opening of one file line: a position text, or moves from the start."""
    try:
        return Opening(where, (), load_state(game, line).to_text())
    except BoardzooError:
        pass
    state: GameState = load_state(game)
    moves = []
    for k, text in enumerate(line.split()):
        if state.is_terminal():
            raise OpeningError(f"{where}: the game is over before move {k + 1} ({echo(text)})")
        try:
            move = state.parse_move(text)
        except BoardzooError as exc:
            raise OpeningError(f"{where}: neither a {game} position nor legal moves from the "
                               f"start (move {k + 1} {echo(text)}: {exc})") from None
        moves.append(state.move_to_str(move))  # canonical, as records hold moves
        state = state.apply(move)
    if state.is_terminal():
        raise OpeningError(f"{where}: the game is over after these moves")
    return Opening(where, tuple(moves))


def read_file(game: str, path: Path) -> list[Opening]:
    """Return the openings of a file (one a line); OpeningError on a bad line or none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpeningError(f"--openings: cannot read {echo(str(path))}: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append(parse_line(game, line, f"{path.name}:{n}"))
    if not out:
        raise OpeningError(f"--openings: {echo(str(path))} holds no opening")
    return out


def suite_path(game: str) -> Path:
    """Return the shipped suite of ``game``."""
    return SUITE_DIR / f"{game}.txt"


def book(spec: str | None, game: str, seed: int = 0) -> OpeningBook:
    """Return the openings that ``spec`` names for ``game`` (see the module docstring)."""
    spec = (spec or DEFAULT).strip()
    if spec == "none":
        return OpeningBook(spec)
    if spec == "suite":
        path = suite_path(game)
        if not path.is_file():
            raise OpeningError(f"no opening suite is shipped for {game}; use --openings "
                               "random:N or a file")
        return OpeningBook(spec, read_file(game, path))
    if spec.startswith("random:"):
        try:
            plies = int(spec.partition(":")[2])
        except ValueError:
            plies = -1
        if not 0 <= plies <= MAX_RANDOM_PLIES:
            raise OpeningError(f"--openings {echo(spec)}: random:N needs N from 0 to "
                               f"{MAX_RANDOM_PLIES}")
        load_state(game)  # an unknown game fails here, not at the first draw
        return OpeningBook(spec, game=game, plies=plies, seed=seed)
    path = Path(spec.removeprefix("file:"))
    if not path.is_file():
        raise OpeningError(f"--openings {echo(spec)}: not suite, none, random:N or a file")
    return OpeningBook(spec, read_file(game, path))


def add_option(p: argparse.ArgumentParser, default: str = DEFAULT) -> None:
    """Add ``--openings`` to a command that plays game pairs."""
    p.add_argument("--openings", default=default, metavar="SPEC",
                   help=f"where each game pair starts, both colours (default {default}): "
                   "suite (the game's shipped balanced openings), random:N (N random plies), "
                   "a file of positions or move lines, or none (docs/arena.md#openings)")
