"""Processes on this machine: how many workers it makes sense to start, and how they end
(what an outside engine starts is contained in :mod:`boardzoo.agents.engine.process`).

Worker counts: ``--workers 100000`` or ``selfplay.workers: 1000`` would start that many
processes on a 2-core machine; a count beyond :func:`max_workers` (4 per usable core, at
least 8) is refused with one line.

Signals: :func:`sigterm_as_interrupt` lets a command stop on SIGTERM as on Ctrl-C, and
:func:`die_with_parent` makes a worker end when the arena is killed outright.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout`` and service managers send), raised in the main thread so
    that a command stops as cleanly as on Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:  # noqa: ARG001 - handler signature
    raise Terminated


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main
    thread, so the clean-up that follows Ctrl-C runs for it too; the old handler after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _libc_prctl() -> Callable[..., int] | None:
    """Return libc's prctl on Linux, else None (looked up once, in the parent: a child
    between fork and exec must not load libraries)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None


PRCTL = _libc_prctl()


def die_with_parent(parent: int) -> None:
    """In a worker process (Linux): get SIGTERM when ``parent`` dies (``PR_SET_PDEATHSIG``),
    and exit now if it already has, so a SIGKILL of the arena leaves no worker running."""
    if PRCTL is None:
        return
    PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the call above
        os.kill(os.getpid(), signal.SIGTERM)


def start_quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (if not yet running) with its leak warning
    off: after a SIGKILL of the arena it would otherwise print that the pool's semaphores
    leaked (it cleans them up all the same)."""
    from multiprocessing import resource_tracker

    flag = "ignore::UserWarning"
    sys.warnoptions.append(flag)  # what the tracker's interpreter is started with
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(flag)
