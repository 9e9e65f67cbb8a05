"""Writing files so that a crash or a full disk never leaves a half-written one: the one atomic
write of the package (run folders, checkpoints, tournament records, copied configs).

Every error raised here is an ``OSError`` that names the file, so the CLI can say which file
failed (a failed ``write`` on its own carries no name, and would read as a failure of the CLI's
own output).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Give an ``OSError`` raised inside the block ``path`` as its file name, if it has none."""
    try:
        yield
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


def write_atomic(path: str | Path, data: str | bytes | Callable[[BinaryIO], None]) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8, bytes, or what a writer function writes
    to a binary file) atomically: a temp file beside it, forced to disk, renamed over it. On a
    failure the temp file is removed and the old file stays."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with naming(path), open(tmp, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        with naming(path):
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def append_line(path: str | Path, line: str) -> None:
    """Append ``line`` (ending in a newline) and force it to disk: a crash must not lose it."""
    with naming(path), open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())
