"""The one atomic write (envs/core/files.py): all or nothing, and errors that name the file."""

from __future__ import annotations

import errno

import pytest

from boardzoo.envs.core.files import append_line, naming, write_atomic


def test_write_atomic_replaces_text_bytes_and_writer_output(tmp_path):
    path = tmp_path / "out.txt"
    write_atomic(path, "é\n")
    assert path.read_bytes() == "é\n".encode()
    write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    write_atomic(path, lambda f: f.write(b"abc"))
    assert path.read_bytes() == b"abc"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temp_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def full_disk(f):
        f.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError) as info:
        write_atomic(path, full_disk)
    assert info.value.filename == str(path) and info.value.errno == errno.ENOSPC
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_writer_bug_is_not_turned_into_a_file_error(tmp_path):
    with pytest.raises(ZeroDivisionError):
        write_atomic(tmp_path / "x", lambda f: 1 / 0)
    assert list(tmp_path.iterdir()) == []


def test_errors_name_the_file_and_keep_a_name_they_had(tmp_path):
    with pytest.raises(OSError) as info, naming("games.jsonl"):
        raise OSError(errno.EIO, "I/O error")
    assert info.value.filename == "games.jsonl"
    with pytest.raises(OSError) as info:
        write_atomic(tmp_path / "missing" / "x", "text")  # no such folder
    assert info.value.filename.startswith(str(tmp_path / "missing"))


def test_append_line_appends(tmp_path):
    path = tmp_path / "log"
    append_line(path, "a\n")
    append_line(path, "b\n")
    assert path.read_text() == "a\nb\n"
