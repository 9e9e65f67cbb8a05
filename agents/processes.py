"""Processes on this machine: how many workers it makes sense to start, and containing what
outside engines start.

Worker counts: ``--workers 100000`` or ``selfplay.workers: 1000`` would start that many
processes on a 2-core machine; a count beyond :func:`max_workers` (4 per usable core, at
least 8) is refused with one line.
"""

from __future__ import annotations

import os

#: Worker processes allowed per usable core (more only wait for each other).
WORKERS_PER_CORE = 4


def usable_cores() -> int:
    """Return the cores this process may run on (its affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def max_workers() -> int:
    """Return the most local worker processes boardzoo starts."""
    return max(8, WORKERS_PER_CORE * usable_cores())


def worker_count_problem(workers: int) -> str | None:
    """Return why ``workers`` local processes are too many for this machine, or None."""
    limit = max_workers()
    if workers > limit:
        return (f"must be at most {limit} on this machine ({WORKERS_PER_CORE} per usable core, "
                f"{usable_cores()} cores), got {workers}")
    return None
