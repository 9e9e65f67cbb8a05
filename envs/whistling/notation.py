"""Whistling move notation (spec section 11): canonical output and the accepted input forms.

Canonical: plain ``s1-q1``, whistling capture ``w19-G19:D20-o1:r2s3`` (each hop's
captures in board order), crush ``e15:f16``. Input may also drop or abbreviate
each hop's capture list (``w19-G19-o1``, ``q1-i9:-c9:``, ``L8-D16:2-o1:2``,
captures in any order) and carry ``(f)``, ``!`` or ``?`` at the end.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import TYPE_CHECKING, NamedTuple

from ..core.game import COUNT_DIGITS, MoveError, echo
from .hexgrid import CELL_NAMES, NEIGHBOURS, cells_of, parse_cell

if TYPE_CHECKING:
    from .rules import State, Turn

PLAIN, WHISTLE, CRUSH = 0, 1, 2  # Turn.kind (re-exported by .rules)
_MARKERS = ("(f)", "!", "?")
_CELL_RE = re.compile(r"[a-zA-O][0-9]+")
#: Annotation meaning "this hop captures, stones not listed" (empty or colons only).
ANY = "any"


class Spelled(NamedTuple):
    """Move text split into cells: start, hop destinations and each hop's annotation."""

    path: tuple[int, ...]
    #: Per hop: None (left out), ANY, a count (int) or a frozenset of cells.
    notes: tuple[object, ...]
    crush: bool


def hop_to_str(start: int, dest: int, caps: int, kind: int) -> str:
    """Return the notation of one hop: ``a-b``, ``a-b:CAPS`` or the crush ``a:b``."""
    if kind == CRUSH:
        return f"{CELL_NAMES[start]}:{CELL_NAMES[dest]}"
    text = f"{CELL_NAMES[start]}-{CELL_NAMES[dest]}"
    if caps:
        text += ":" + "".join(CELL_NAMES[i] for i in cells_of(caps))
    return text


def turn_to_str(turn: Turn) -> str:
    """Return the canonical notation of a turn."""
    try:
        path, caps, kind = turn
    except (TypeError, ValueError):
        raise MoveError(f"not a Whistling turn: {echo(turn)}") from None
    if kind == PLAIN:
        return f"{CELL_NAMES[path[0]]}-{CELL_NAMES[path[1]]}"
    if kind == CRUSH:
        return f"{CELL_NAMES[path[0]]}:{CELL_NAMES[path[1]]}"
    return CELL_NAMES[path[0]] + "".join(
        f"-{CELL_NAMES[dest]}:" + "".join(CELL_NAMES[i] for i in cells_of(c))
        for dest, c in zip(path[1:], caps, strict=True)
    )


def _clean(text: str) -> str:
    """Strip surrounding whitespace and trailing ``(f)``, ``!`` and ``?`` markers."""
    out = text.strip()
    while True:
        for marker in _MARKERS:
            if out.endswith(marker):
                out = out[: -len(marker)].rstrip()
                break
        else:
            return out


def _note(text: str, original: str) -> object:
    """Parse one hop annotation (the text after the destination's first ':')."""
    if set(text) <= {":"}:
        return ANY
    if text.isascii() and text.isdigit():
        return int(text[:COUNT_DIGITS + 1])  # a count that long matches no move anyway
    names = _CELL_RE.findall(text)
    if "".join(names) != text:
        raise MoveError(f"malformed capture list {echo(text)} in {echo(original)}: expected "
                        "cell names back to back (e.g. 'r2s3'), a count or nothing")
    cells = [parse_cell(n, MoveError) for n in names]
    if len(set(cells)) != len(cells):
        raise MoveError(f"capture list {echo(text)} in {echo(original)} names a cell twice")
    return frozenset(cells)


def spell(text: str) -> Spelled:
    """Split move text into its cells and annotations; MoveError if it is malformed."""
    if not isinstance(text, str):
        raise MoveError(f"move text must be a string, got {type(text).__name__}")
    body = _clean(text)
    if not body:
        raise MoveError(f"empty move {echo(text)}")
    if "-" not in body:
        parts = body.split(":")
        if len(parts) != 2:
            raise MoveError(f"malformed move {echo(text)}: expected a plain move 'FROM-TO', a "
                            "whistling capture 'FROM-TO:CAPS...' or a crush 'FROM:TO'")
        a, b = (parse_cell(p, MoveError) for p in parts)
        return Spelled((a, b), (None,), True)
    segments = body.split("-")
    if ":" in segments[0]:
        raise MoveError(f"malformed move {echo(text)}: a crush 'FROM:TO' ends the turn and cannot "
                        "be followed by hops")
    path = [parse_cell(segments[0], MoveError)]
    notes: list[object] = []
    for seg in segments[1:]:
        dest, colon, note = seg.partition(":")
        if not dest:
            raise MoveError(f"malformed move {echo(text)}: a hop destination is missing")
        path.append(parse_cell(dest, MoveError))
        notes.append(_note(note, text) if colon else None)
    return Spelled(tuple(path), tuple(notes), False)


def note_mismatch(note: object, caps: int) -> str | None:
    """Return why annotation ``note`` does not fit a hop capturing ``caps``, or None if it does."""
    if note is None:
        return None
    count = caps.bit_count()
    if not count:
        return "captures nothing, but a capture annotation ':' is given"
    if note is ANY:
        return None
    real = "".join(CELL_NAMES[i] for i in cells_of(caps))
    if isinstance(note, int):
        return None if note == count else f"captures {count} ({real}), not {note}"
    if note != frozenset(cells_of(caps)):
        given = "".join(CELL_NAMES[i] for i in sorted(note))
        return f"captures {real}, not {given}"
    return None


def legal_hint(state: State, limit: int = 8) -> str:
    """Return a short list of the legal turns for error messages."""
    moves = list(islice(state.iter_legal_move_strs(), limit + 1))  # why: the list can be huge
    if not moves:
        return f"the game is over ({state.result()})"
    if len(moves) <= limit:
        return "legal: " + ", ".join(moves)
    return f"{state.legal_count()} legal turns, e.g. " + ", ".join(moves[:limit]) + ", ..."


def fits(spelled: Spelled, turn: Turn, offset: int = 0, prefix: bool = False) -> str | None:
    """Return None if ``spelled`` matches ``turn`` from hop ``offset`` on, else why not.

    The spelled hops must be the whole rest of the turn (or, with ``prefix``, its next
    hops); the reason names an annotation that disagrees with the real captures (other
    mismatches give ``""``).
    """
    path, caps, kind = turn
    size = len(spelled.path)
    if spelled.crush != (kind == CRUSH) or path[offset:offset + size] != spelled.path:
        return ""
    if not prefix and len(path) - offset != size:
        return ""
    for i, note in enumerate(spelled.notes):
        if kind == PLAIN and note is not None:
            return "is a plain move (it captures nothing), but a capture annotation ':' is given"
        why = note_mismatch(note, caps[offset + i]) if kind == WHISTLE else None
        if why:
            hop = f"{CELL_NAMES[path[offset + i]]}-{CELL_NAMES[path[offset + i + 1]]}"
            return f"hop {i + 1} ({hop}) {why}" if len(spelled.notes) > 1 else why
    return None


def parse_turn(state: State, text: str) -> Turn:
    """Return the legal turn written as ``text`` (any accepted form); MoveError otherwise."""
    spelled = spell(text)
    if state.is_terminal():
        raise MoveError(f"illegal move {echo(text)}: the game is over ({state.result()})")
    reason = ""
    for turn in state.iter_legal_moves():
        why = fits(spelled, turn)
        if why is None:
            return turn
        reason = reason or why
    if reason:
        raise MoveError(f"illegal move {echo(text)}: {reason}")
    raise MoveError(f"illegal move {echo(text)}: {_explain(state, spelled)}; {legal_hint(state)}")


def _explain(state: State, spelled: Spelled) -> str:
    """Return which rule keeps a spelled turn that matches no legal turn from being legal."""
    a, b = spelled.path[0], spelled.path[1]
    n = state.max_capture()
    if spelled.crush:
        own, enemy = state.stones[state.side], state.stones[1 - state.side]
        if not own & (1 << a):
            return f"{CELL_NAMES[a]} holds no stone of the side to move"
        if not enemy & (1 << b):
            return f"a crush must land on an enemy stone, and {CELL_NAMES[b]} holds none"
        if b not in NEIGHBOURS[a]:
            return f"a crush is a one-step move, and {CELL_NAMES[b]} is not next to {CELL_NAMES[a]}"
        return f"a crush takes 1 stone, but capturing is compulsory and the maximum here is {n}"
    try:
        caps = state.trace(spelled.path)
    except MoveError as exc:
        return str(exc)
    total = sum(c.bit_count() for c in caps)
    if n == 0:
        return "it does not match any legal turn"
    if total == 0:
        return f"capturing is compulsory here (the maximum capture is {n})"
    return (f"it captures {total} stone{'s' * (total != 1)}, but the maximum capture here is "
            f"{n} and must be taken")

