"""Torch threads for processes that play games, set by whoever owns the process.

The networks behind ``checkpoint:`` agents are small and evaluate one position at a
time, where more intra-op threads only wait for each other (and parallel game
processes would oversubscribe the cores). A command that plays games (``boardzoo play``,
``tournament``, the arena's worker processes) calls :func:`one_torch_thread`; library
calls never change the process's threads.
"""

from __future__ import annotations

import os
import sys


def one_torch_thread() -> None:
    """Give torch one intra-op thread in this process (now if torch is loaded, else when it
    is: through OMP_NUM_THREADS, unless the user set it), without importing torch."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
