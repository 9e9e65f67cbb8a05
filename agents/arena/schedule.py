"""The round robin's schedule: which games a tournament plays, their ids and seeds.

Every pair of agents plays ``games_per_pair`` games in game pairs: pair ``k`` (games ``2k``
and ``2k + 1``) starts both games from opening ``k`` of the tournament's
:class:`~.openings.OpeningBook`, the first-listed agent moving first in the even game and
second in the odd one. Each game has a stable id (:func:`game_id`: ``"A|B|g"``, the specs
escaped so that no two games share one) and a seed derived from the tournament seed and
that id alone, so the set of results does not depend on the number of workers or on
interruptions. The schedule is generated lazily.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from .openings import NO_OPENING, Opening, OpeningBook
from .records import ArenaError

#: Most games one tournament may schedule (a typo such as 10**9 games per pair is refused
#: before anything is written, not after the folder filled up).
MAX_GAMES = 1_000_000


@dataclass(frozen=True)
class Pairing:
    """One scheduled game: its id, the agents in move order and its seed (and the seed of its
    random opening moves, when it has some: by default ``seed``; the agents' per-move time
    limit in seconds, when there is one; the index of its game pair and the opening both
    games of that pair start from)."""

    id: str
    first: str
    second: str
    seed: int
    opening_seed: int | None = None
    movetime: float | None = None
    pair: int | None = None
    opening: Opening = NO_OPENING


def game_seed(seed: int, game_id: str) -> int:
    """Return the seed of one game from the tournament seed and the game id (stable hash)."""
    digest = hashlib.sha256(f"{seed}|{game_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def game_id(a: str, b: str, g: int) -> str:
    """Return the id of game ``g`` between agents ``a`` and ``b``: ``"a|b|g"``, with ``%`` and
    ``|`` inside a spec written ``%25`` and ``%7C`` (percent-encoding is one-to-one, so two
    games never share an id or a seed whatever their specs hold; specs without those
    characters keep the readable ids of older tournaments)."""
    return f"{quote(a, safe=_KEEP)}|{quote(b, safe=_KEEP)}|{g}"


#: Every printable ASCII character but ``%`` and ``|`` stays as it is in an id.
_KEEP = "".join(chr(c) for c in range(32, 127) if chr(c) not in "%|")


def check_count(agents: Sequence[str], games_per_pair: int) -> None:
    """Raise ArenaError for a count below 1, or a schedule of more than MAX_GAMES games."""
    if games_per_pair < 1:
        raise ArenaError(f"--games-per-pair must be at least 1, got {games_per_pair}")
    pairs = len(agents) * (len(agents) - 1) // 2
    if games_per_pair * pairs > MAX_GAMES:
        raise ArenaError(f"--games-per-pair {games_per_pair} with {len(agents)} agents is "
                         f"{games_per_pair * pairs:,} games; a tournament plays at most "
                         f"{MAX_GAMES:,}")


def schedule(agents: Sequence[str], games_per_pair: int, seed: int = 0,
             openings: OpeningBook | None = None) -> Iterator[Pairing]:
    """Yield every game of the round robin, round by round so partial runs stay balanced;
    games ``2k`` and ``2k + 1`` of each pair of agents share opening ``k`` (none without
    ``openings``), colours swapped."""
    check_count(agents, games_per_pair)
    pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:]]
    for g in range(games_per_pair):
        opening = NO_OPENING if openings is None else openings[g // 2]
        for a, b in pairs:
            gid = game_id(a, b, g)
            first, second = (a, b) if g % 2 == 0 else (b, a)
            yield Pairing(gid, first, second, game_seed(seed, gid), pair=g // 2,
                          opening=opening)


