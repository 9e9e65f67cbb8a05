"""Per-move time limits: parse ``0.5s``, ``0.5`` or ``500ms`` and hand an agent its limit.

Every agent gets its limit one way, :meth:`Agent.set_move_time` (:func:`limit_agents` calls it
for the agents of a game). An agent kind opts in by reading ``self.move_time`` (seconds, or
None for no limit) when it chooses a move; agents that do not search ignore it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable

from boardzoo.envs.core.game import echo

from .base import Agent, UnknownAgentError

#: The longest time limit anything takes (a day): longer ones are typos or hostile, and
#: ``select`` and ``time.sleep`` overflow on times near 1e10 s.
MAX_SECONDS = 86_400.0


class MoveTimeError(UnknownAgentError):
    """A per-move time that is not a positive number of seconds or milliseconds."""


def parse_seconds(text: str, what: str = "--movetime must be") -> float:
    """Return the seconds of ``0.5s``, ``0.5`` (seconds) or ``500ms``; MoveTimeError otherwise."""
    raw = text.strip().lower()
    scale = 1.0
    if raw.endswith("ms"):
        raw, scale = raw[:-2], 0.001
    elif raw.endswith("s"):
        raw = raw[:-1]
    try:
        seconds = float(raw) * scale
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        raise MoveTimeError(f"{what} a positive time such as 0.5s, 0.5 or 500ms, "
                            f"got {echo(text)}")
    if seconds > MAX_SECONDS:
        raise MoveTimeError(f"{what} at most {MAX_SECONDS:g} seconds (a day), got {echo(text)}")
    return seconds


def limit_agents(agents: Iterable[Agent], seconds: float | None) -> None:
    """Give every agent the per-move limit ``seconds`` (None leaves them unlimited)."""
    if seconds is None:
        return  # no call at all: an unlimited game runs exactly the code it always ran
    for agent in agents:
        agent.set_move_time(seconds)


def _option(text: str) -> float:
    """argparse type of ``--movetime``: its own message, not argparse's generic one."""
    try:
        return parse_seconds(text, "must be")
    except MoveTimeError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--movetime`` to a command that plays games (``play``, ``tournament``)."""
    parser.add_argument("--movetime", type=_option, default=None, metavar="T",
                        help="per-move time limit of every agent: 0.5s, 0.5 (seconds) or 500ms; "
                        "searching agents (mcts, alphabeta, checkpoint) stop there, fast "
                        "ones are unaffected (default: no limit)")
