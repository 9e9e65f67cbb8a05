"""Torch's intra-op threads: one for processes that play games, a scoped count for each call.

The networks behind ``checkpoint:`` agents are small and evaluate one position at a time,
and the batched engines step small tensors, where more intra-op threads only wait for each
other (21.6 s a move instead of 0.41 s for ``checkpoint:loa`` at load 6, issue 45) and
parallel game processes would oversubscribe the cores. So:

- a command that owns its process (``boardzoo play``, ``tournament``, the arena's worker
  processes) calls :func:`one_torch_thread`;
- library objects that run torch (agents that choose actions with a network, ``BatchedEnv``,
  the vector env) run each call under :func:`torch_threads` with the count they need, and
  give the caller's setting back when the call returns: a user's script is as fast as the
  CLI without its process-wide setting changed for good.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def one_torch_thread() -> None:
    """Give torch one intra-op thread in this process (now if torch is loaded, else when it
    is: through OMP_NUM_THREADS, unless the user set it), without importing torch."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads, then restore the caller's count
    (None, or torch not loaded: leave everything as it is; torch is never imported here)."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None and n is not None else None
    if before is None or before == n:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def scoped_threads(method: F) -> F:
    """Decorate a method to run under :func:`torch_threads` with its object's ``threads``."""
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with torch_threads(getattr(self, "threads", None)):
            return method(self, *args, **kwargs)
    return run  # type: ignore[return-value]
