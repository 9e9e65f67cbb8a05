"""The Ray backend: tournament games and self-play chunks as Ray tasks, streamed back as they end.

:func:`connect` starts a local Ray instance (``address`` None), listening on 127.0.0.1
only, or joins a running cluster (``"HOST:PORT"`` of its head, or ``"auto"``: RAY_ADDRESS or
the cluster ``ray start`` recorded on this machine, never another program's instance).
:meth:`RayConnection.stream` submits one Ray task per call and yields each result as soon as
it finishes (``ray.wait``). Ray re-runs a task whose worker process or node died up to
``max_retries`` times, so a lost worker's game is played again and its result
still arrives exactly once; an exception raised by the game code itself is not
retried (the same seed would raise it again). :func:`ray_games` is the
tournament's entry point (see ``run_tournament(..., backend="ray")``); the
self-play pool lives in :mod:`boardzoo.training.selfplay`.

Every task computes exactly what the local backend computes for the same input,
so results do not depend on the backend. Ray is optional: ``pip install
'boardzoo[ray]'``; without it every entry point raises :class:`BackendError`.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from boardzoo.envs.core.game import BoardzooError

BACKENDS = ("local", "ray")
#: Object store of a local instance (why: Ray's default takes 30% of the RAM; game records
#: and small networks need a few MB).
LOCAL_OBJECT_STORE = 128 * 2**20
#: Times Ray re-runs a task whose worker process or node died.
MAX_RETRIES = 3
#: Seconds to wait for a TCP connection to a cluster address (why: ray.init itself retries an
#: unreachable address for minutes before failing).
CONNECT_TIMEOUT = 5.0


class BackendError(BoardzooError):
    """Ray is missing, a cluster is unreachable, or a task was lost more often than retried."""


def require_ray() -> Any:
    """Return the ``ray`` module, or raise BackendError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError("the ray backend needs Ray: pip install 'boardzoo[ray]'") from None
    return ray


def check_backend(backend: str, address: str | None = None) -> None:
    """Raise BackendError for an unknown backend, a stray address, or ray not installed."""
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if address and backend != "ray":
        raise BackendError(f"a Ray address ({address!r}) needs the ray backend")
    if backend == "ray":
        require_ray()


def _host_port(address: str) -> tuple[str, int]:
    """Split ``HOST:PORT`` or ``ray://HOST:PORT``; raise BackendError if it is neither."""
    rest = address.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise BackendError(f"bad Ray address {address!r}: expected auto, HOST:PORT "
                           "(e.g. 10.0.0.5:6379) or ray://HOST:PORT")
    return host.strip("[]"), int(port)


def _reachable(address: str) -> None:
    """Raise BackendError unless a TCP connection to the address opens within the timeout."""
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise BackendError(f"cannot reach a Ray cluster at {address!r} ({why}); start one with "
                           "'ray start --head' or check --address") from None


def _auto_address() -> str:
    """Return the cluster ``auto`` names: RAY_ADDRESS, else the address the last ``ray start``
    on this machine recorded; BackendError if there is neither.

    Why not Ray's own ``auto``: it also joins any Ray instance it finds running on the
    machine (by its processes), e.g. one another program started for itself.
    """
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env not in ("auto", "local"):
        return env
    try:  # where `ray start` records its address (a private helper of Ray's: on any
        # failure, no recorded cluster)
        from ray._common.utils import get_ray_address_file

        path = Path(get_ray_address_file(None))
        recorded = path.read_text().strip() if path.is_file() else ""
    except Exception:
        recorded = ""
    if not recorded:
        raise BackendError("Ray address auto: no cluster to join (RAY_ADDRESS is not set and "
                           "no 'ray start' cluster is recorded on this machine); start one with "
                           "'ray start --head', or give --address HOST:PORT")
    return recorded


@contextmanager
def _loopback_node() -> Iterator[None]:
    """Make a local instance started in the block take 127.0.0.1 as its node address, so that
    its GCS, raylet and workers listen on the loopback interface only.

    Why: Ray binds its servers to the node address, which on Linux is the machine's network
    address (every interface, in practice); on macOS and Windows Ray itself uses the loopback
    address, through the constant set here (a private one: without it, Ray's default stays).
    """
    try:
        from ray._private import ray_constants
    except ImportError:
        yield
        return
    old = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = old


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` in a Ray worker (one remote function serves every kind of job)."""
    return fn(*args)


class RayConnection:
    """This process's link to Ray; :meth:`close` shuts down only an instance it started."""

    def __init__(self, ray: Any, owned: bool) -> None:
        self.ray = ray
        self.owned = owned

    def cpus(self) -> int:
        """CPUs the cluster has now (at least 1)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def stream(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
               describe: Callable[[int], str] = lambda i: f"task {i}",
               max_retries: int = MAX_RETRIES,
               window: int | None = None) -> Iterator[tuple[int, Any]]:
        """Run ``fn(*args)`` for each call as a Ray task; yield ``(index, result)`` as each ends.

        At most ``window`` tasks are in flight (default: 4 per cluster CPU, at least 64).
        Leaving the loop early cancels the tasks still pending.
        """
        ray = self.ray
        remote = ray.remote(_call).options(max_retries=max_retries, retry_exceptions=False)
        window = window or max(64, 4 * self.cpus())
        todo = iter(enumerate(calls))
        pending: dict[Any, int] = {}
        try:
            while True:
                for i, args in todo:
                    pending[remote.remote(fn, *args)] = i
                    if len(pending) >= window:
                        break
                if not pending:
                    return
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    yield i, self._get(ref, describe(i), max_retries)
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref)
                except Exception:  # already finished, or the cluster is gone
                    pass

    def _get(self, ref: Any, what: str, max_retries: int) -> Any:
        """Return a finished task's result; turn a lost worker into one BackendError line."""
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, BoardzooError):
                raise exc.cause from None  # a user error raised in the worker: one clean line
            raise  # a bug in the task: keep Ray's remote traceback
        except ray.exceptions.RayError as exc:
            raise BackendError(f"{what} was lost on Ray {max_retries + 1} time(s) "
                               f"({type(exc).__name__}: {_first_line(exc)})") from None

    def close(self) -> None:
        """Shut down the local instance if :func:`connect` started it (a cluster stays up)."""
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()
        self.owned = False


def connect(address: str | None = None, num_cpus: int = 1) -> RayConnection:
    """Join Ray: a new local instance with ``num_cpus`` CPUs (address None or "") or a cluster.

    A process that already called ``ray.init`` keeps that connection (an explicit address
    must still be reachable).
    """
    ray = require_ray()
    # "auto" too: a stale address left by a stopped `ray start` makes ray.init retry for minutes
    target = _auto_address() if address == "auto" else address
    if target:
        _reachable(target)
    if ray.is_initialized():
        return RayConnection(ray, owned=False)
    quiet = {"logging_level": logging.ERROR, "include_dashboard": False}
    try:
        if address:  # "auto" as such: Ray resolves it as checked above (RAY_ADDRESS, or the
            # recorded cluster, which Ray prefers to any other instance it finds)
            ray.init(address=address, **quiet)
        else:
            with _loopback_node():
                ray.init(address="local", num_cpus=max(1, num_cpus),
                         object_store_memory=LOCAL_OBJECT_STORE, **quiet)
    except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
        if not address:
            raise BackendError(f"cannot start a local Ray instance: {_first_line(exc)}") from None
        # why the hint: Ray 2.60's `ray start --head` turns token authentication on, and a
        # driver that joins by HOST:PORT without it fails only with "Failed to connect".
        raise BackendError(f"cannot join the Ray cluster at {address!r}: {_first_line(exc)} "
                           "(a cluster with token authentication also needs RAY_AUTH_MODE=token "
                           "and its token: see docs/distributed.md)") from None
    return RayConnection(ray, owned=True)


def ray_games(game: Any, tasks: Sequence[Any], max_plies: int, address: str | None = None,
              num_cpus: int = 1, *, play: Callable[..., dict]) -> Iterator[dict]:
    """Yield the records of tournament games played as Ray tasks, in finishing order.

    ``tasks`` are :class:`~boardzoo.agents.arena.Pairing`; ``play`` (the arena passes
    ``arena.play_game``) is called as ``play(game, pairing, max_plies)`` in a worker,
    so ``game`` (a name, or a state class) and ``play`` must be importable there.
    Connects eagerly (errors surface at the call); nothing to play starts nothing.
    """
    if not tasks:
        return iter(())
    conn = connect(address, num_cpus)
    return _games(conn, play, game, list(tasks), max_plies)


def _games(conn: RayConnection, play: Callable[..., dict], game: Any, tasks: list[Any],
           max_plies: int) -> Iterator[dict]:
    try:
        for _, record in conn.stream(play, [(game, p, max_plies) for p in tasks],
                                     describe=lambda i: f"game {tasks[i].id}"):
            yield record
    finally:
        conn.close()
