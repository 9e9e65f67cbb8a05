"""``njit`` for boardzoo's compiled code: numba's, with an on-disk cache that knows when any of
the game code changed, not only the decorated function's own file.

Why: numba keys a cached function on its own source file alone. The compiled searches call the
kernels, and every compiled function bakes in the module-level tables it reads (the Whistling
kernel's from ``hexgrid.py``, LOA's from ``board8.py``), so after an edit or a ``git pull``
that touched only those modules, numba loaded stale machine code and searched with the old rules.
Here each cached function's freshness stamp also carries one digest of every source file the
compiled code can depend on (:data:`SOURCE_GLOBS`); any change there recompiles once, in place.

The cache stays where numba puts it (``__pycache__`` beside the module, ``NUMBA_CACHE_DIR``, or
numba's user cache); only the stamp changes, through numba's documented locator hook
(``NUMBA_CACHE_LOCATOR_CLASSES``), set just while boardzoo's own functions are decorated so
that a user's numba code is untouched.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numba
from numba.core import caching, config

PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
# Every file whose code or tables compiled functions can reach: the rules' shared core, the three
# game folders and the compiled searches (imports run downward, so nothing else feeds them).
SOURCE_GLOBS = ("envs/core/*.py", "envs/loa/*.py", "envs/ultima/*.py", "envs/whistling/*.py",
                "agents/alphabeta*.py")


@cache
def source_digest() -> str:
    """Return the SHA-256 of the names and contents of every file in :data:`SOURCE_GLOBS`."""
    h = hashlib.sha256()
    for pattern in SOURCE_GLOBS:
        for path in sorted(PACKAGE_ROOT.glob(pattern)):
            h.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


class _DigestStamp:
    """Locator mixin: numba's own stamp of the function's file, plus :func:`source_digest`."""

    def get_source_stamp(self) -> tuple:  # type: ignore[override]
        return (super().get_source_stamp(), source_digest())  # type: ignore[misc]


class UserProvidedLocator(_DigestStamp, caching.UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR``, when set, with the digest stamp."""


class InTreeLocator(_DigestStamp, caching.InTreeCacheLocator):
    """``__pycache__`` beside the module, with the digest stamp."""


class UserWideLocator(_DigestStamp, caching.UserWideCacheLocator):
    """numba's user cache directory (a read-only install), with the digest stamp."""


_LOCATORS = ",".join(f"{__name__}.{cls.__name__}"
                     for cls in (UserProvidedLocator, InTreeLocator, UserWideLocator))


def njit(*args: Any, **kwargs: Any) -> Any:
    """``numba.njit`` with the same arguments; ``cache=True`` caches with the digest stamp.

    Used as ``@njit``, ``@njit(cache=True)`` or ``@njit(signature, cache=True)``.
    """
    if len(args) == 1 and not kwargs and inspect.isfunction(args[0]):
        return numba.njit(args[0])
    if not kwargs.get("cache"):
        return numba.njit(*args, **kwargs)

    def decorate(func: Callable) -> Any:
        saved = config.CACHE_LOCATOR_CLASSES
        config.CACHE_LOCATOR_CLASSES = _LOCATORS
        try:
            return numba.njit(*args, **kwargs)(func)
        finally:
            config.CACHE_LOCATOR_CLASSES = saved

    return decorate
