"""Per-move time limits: parse ``0.5s``, ``0.5`` or ``500ms`` and hand an agent its limit.

Every agent gets its limit one way, :meth:`Agent.set_move_time` (:func:`limit_agents` calls it
for the agents of a game). An agent kind opts in by reading ``self.move_time`` (seconds, or
None for no limit) when it chooses a move; agents that do not search ignore it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from boardzoo.envs.core.game import echo

from .agent_spec import Parser
from .base import Agent, UnknownAgentError

#: The longest time limit anything takes (a day): longer ones are typos or hostile, and
#: ``select`` and ``time.sleep`` overflow on times near 1e10 s.
MAX_SECONDS = 86_400.0


class MoveTimeError(UnknownAgentError):
    """A per-move time that is not a positive number of seconds or milliseconds."""


def to_seconds(text: str, allow_zero: bool = False) -> float:
    """Return the seconds of ``0.5s``, ``0.5`` (seconds) or ``500ms``, above 0 (or 0 too,
    with ``allow_zero``) and at most :data:`MAX_SECONDS`; ValueError otherwise."""
    raw = text.strip().lower()
    scale = 1.0
    if raw.endswith("ms"):
        raw, scale = raw[:-2], 0.001
    elif raw.endswith("s"):
        raw = raw[:-1]
    seconds = float(raw) * scale
    if not (0 <= seconds <= MAX_SECONDS if allow_zero else 0 < seconds <= MAX_SECONDS):
        raise ValueError(text)  # nan and inf fail both comparisons
    return seconds


def seconds(allow_zero: bool = False) -> Parser:
    """An agent option that is a time (``t=0.5s``, an engine's ``movetime=0.5``)."""
    least = "a time of 0 or more" if allow_zero else "a positive time"
    return Parser(lambda text: to_seconds(text, allow_zero),
                  f"{least} such as 0.5s, 0.5 or 500ms, at most {MAX_SECONDS:g} "
                  "seconds (a day)", "S")


def parse_seconds(text: str, what: str = "--movetime must be") -> float:
    """Return the seconds of ``0.5s``, ``0.5`` (seconds) or ``500ms``; MoveTimeError otherwise."""
    try:
        return to_seconds(text)
    except ValueError:
        raise MoveTimeError(f"{what} {seconds().allowed}, got {echo(text)}") from None


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
