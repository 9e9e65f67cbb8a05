"""An outside engine process: started in its own process group, read and written with deadlines,
and always ended (quit, then SIGTERM, then SIGKILL to the whole group).

Nothing here blocks without a deadline: reads wait in ``select`` and writes go through a
non-blocking pipe, so a silent engine, or one that stops reading its input, cannot hang the
arena. Every started process is also ended when its owner is garbage-collected, at
interpreter exit, and (Linux) by the kernel when the starting process dies
(``PR_SET_PDEATHSIG``), so no engine outlives an interrupted tournament.

What an engine starts is found by the mark in its environment (:data:`MARK`), which its
descendants inherit: ``RUN.ENGINE``, where RUN is shared by every engine of one
:func:`engine_run` (a tournament's, in its workers too), so that the run's end can find
whatever is left of all of them at once. SIGINT and SIGTERM wait while an engine starts (they
are blocked from before its fork until it is recorded): a signal that ended a tournament
worker inside ``Popen`` killed only the engines already recorded, and the one being started
had time to start children of its own in a new session before the kernel killed it.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import subprocess
import time
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from boardzoo.agents.processes import PRCTL

from .protocol import Quit

#: Longest line an engine may send; a longer one is dropped (why: a runaway engine must not
#: fill the arena's memory).
MAX_LINE = 1 << 20
#: Seconds an engine is given to exit after ``quit``, and again after SIGTERM.
QUIT_WAIT = 1.0


class EngineClosed(Exception):
    """The engine's output ended (it exited or closed its stdout) or its input is closed."""


class EngineSilent(Exception):
    """The engine did not answer (or read its input) before the deadline."""


#: Engines this process started and has not ended yet (:func:`kill_all`), with their marks.
_LIVE: dict[subprocess.Popen, str] = {}
#: The environment variable that marks an engine and everything it starts (:func:`_kill_marked`).
MARK = "BOARDZOO_ENGINE_MARK"
#: The run mark of the engines this process starts now (:func:`engine_run`, :func:`join_run`).
_run = uuid.uuid4().hex
#: The signals held back while an engine starts.
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def kill_all() -> None:
    """Kill every engine this process started and has not ended (each whole process group,
    and whatever else carries its mark), at once: for a process about to exit without
    running its clean-up."""
    for proc, mark in list(_LIVE.items()):
        _signal_group(proc.pid, signal.SIGKILL)
        _kill_marked(mark)


@contextmanager
def engine_run() -> Iterator[str]:
    """Give the engines started within one new run mark (yielded: worker processes pass it
    to :func:`join_run`), and at the end SIGKILL whatever still carries it: the leftovers of
    engines a killed worker could not end."""
    global _run
    outer, _run = _run, uuid.uuid4().hex
    try:
        yield _run
    finally:
        run, _run = _run, outer
        _kill_marked(run, whole=False)


def join_run(run: str) -> None:
    """In a worker process: mark the engines it starts with the run mark ``run``."""
    global _run
    _run = run


def _kill_marked(mark: str, passes: int = 5, whole: bool = True) -> None:
    """SIGKILL every process whose environment holds ``MARK=mark``, where ``mark`` is one
    engine's (``whole``) or a run's, the start of its engines' marks (Linux /proc; elsewhere
    nothing): the engine's descendants that left its process group (``setsid``, a double
    fork) still inherited its environment. Pass again until one finds nothing (a process may fork
    between the listing and its kill). Not reached: a descendant that clears or replaces
    its environment (``env -i``, ``sudo``), or one of another user."""
    needle = f"{MARK}={mark}".encode() + (b"\0" if whole else b".")
    for _ in range(passes):
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return
        killed = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    found = needle in f.read() + b"\0"
                if found and pid != os.getpid():
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            except (OSError, ValueError):
                continue  # gone, or not ours to read
        if not killed:
            return


def _in_child(mask: set[int]) -> None:
    """In the child before exec: the parent's signal mask as it was before the engine
    started, and (Linux) death by SIGKILL when the parent dies."""
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if PRCTL is not None:
        PRCTL(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG; best effort, its result is not needed


class EngineProcess:
    """One running engine: ``send`` a line, ``read_line`` with a deadline, ``close``."""

    def __init__(self, argv: Sequence[str], stderr_path: Path | None = None) -> None:
        self.argv = list(argv)
        self.mark = f"{_run}.{uuid.uuid4().hex}"
        # held back until the engine is recorded, so a handler that ends the process (a
        # worker's kill_all) or raises (KeyboardInterrupt) finds it in _LIVE or its finalizer
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
        try:
            self._start(stderr_path, mask)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def _start(self, stderr_path: Path | None, mask: set[int]) -> None:
        log = open(stderr_path, "ab") if stderr_path is not None else None  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env={**os.environ, MARK: self.mark},
                start_new_session=True,  # its own group: one signal reaches its children too
                preexec_fn=functools.partial(_in_child, mask))
        finally:
            if log is not None:
                log.close()  # the child has its own copy of the descriptor
        _LIVE[self.proc] = self.mark
        # why a finalizer that holds the Popen, not self: it must run when self is collected
        self._finalizer = weakref.finalize(self, _end, self.proc, self.mark)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        self._buffer = b""
        self._eof = False

    @property
    def pid(self) -> int:
        """The engine's process id (also its process group id)."""
        return self.proc.pid

    def send(self, line: str, deadline: float) -> None:
        """Write one line; EngineClosed if the engine's input is closed, EngineSilent if it
        does not read it before ``deadline`` (time.monotonic())."""
        data = (line + "\n").encode()
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineSilent("it stopped reading its input")
            try:
                _, writable, _ = select.select([], [self._in], [], left)
                if writable:
                    data = data[os.write(self._in, data):]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
                raise EngineClosed(f"its input is closed ({type(exc).__name__})") from None

    def read_line(self, deadline: float) -> str:
        """Return the next line (without its end); EngineClosed at the end of its output,
        EngineSilent when no whole line came before ``deadline``."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1:]
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                raise EngineClosed("its output ended")
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineSilent("no answer in time")
            readable, _, _ = select.select([self._out], [], [], left)
            if not readable:
                continue
            chunk = os.read(self._out, 65536)
            if not chunk:
                self._eof = True
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE and b"\n" not in self._buffer:
                self._buffer = b""  # a runaway line: drop it rather than grow without end

    def exit_status(self, wait: float = 0.2) -> int | None:
        """Return the exit status if the engine exits within ``wait`` seconds, else None."""
        try:
            return self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            return None

    def close(self, polite: bool = True) -> None:
        """End the engine: ``quit`` (if ``polite``), then SIGTERM, then SIGKILL to its group."""
        if polite and self.proc.poll() is None:
            try:
                self.send(Quit().format(), time.monotonic() + 0.2)
            except (EngineClosed, EngineSilent):
                pass
        self._finalizer()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left in the group


def _wait_exit(proc: subprocess.Popen, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``proc`` to exit, without reaping it; True if it exited.

    Why not reaped: while the leader is a zombie its process-group id cannot be reused, so
    the final SIGKILL to the group can only reach the engine's own leftovers."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True  # already reaped
        except (AttributeError, OSError):  # no waitid: reap instead
            return proc.poll() is not None
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _end(proc: subprocess.Popen, mark: str) -> None:
    """Make sure ``proc``, everything in its process group and everything else with its
    ``mark`` have ended; reap it."""
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()  # EOF on its input: a well-behaved engine quits
        except OSError:
            pass
    pgid = proc.pid
    if proc.returncode is None and not _wait_exit(proc, QUIT_WAIT):
        _signal_group(pgid, signal.SIGTERM)
        _wait_exit(proc, QUIT_WAIT)
    _signal_group(pgid, signal.SIGKILL)  # what is left: the engine or its own children
    _kill_marked(mark)  # and those that left its group
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
    _LIVE.pop(proc, None)
