"""docs/cli.md's error samples are the errors the commands give today (run here, compared)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from boardzoo.cli import main

REPO = Path(__file__).resolve().parent.parent
CLI_DOC = REPO / "docs" / "cli.md"
#: Samples that need the files an earlier sample made (a tournament folder); skipped here.
NEEDS_FILES = "/tmp/doc_arena"


def error_samples() -> list[tuple[str, str]]:
    """Return (command, error line) for each ``$ boardzoo ...`` sample answered by an error."""
    return [(command, error) for command, error, _ in samples_with_setup()]


def samples_with_setup() -> list[tuple[str, str, list[str]]]:
    """Return (command, error line, setup) per error sample: setup lists the commands before
    it in its block that the page shows writing a file (answered ``wrote ...``), which the
    error may depend on (``config copy loa`` twice: the second finds the first's file)."""
    samples = []
    for block in re.findall(r"^```\n(.*?)^```", CLI_DOC.read_text(), re.S | re.M):
        lines = block.splitlines()
        writers: list[str] = []
        for command, answer in zip(lines, lines[1:], strict=False):
            if (command.startswith("$ boardzoo ") and answer.startswith("boardzoo: error:")
                    and NEEDS_FILES not in command and "|" not in command):
                samples.append((command[2:], answer, list(writers)))
            elif command.startswith("$ boardzoo ") and answer.startswith("wrote "):
                writers.append(command[2:])
    return samples


def test_the_page_has_error_samples() -> None:
    commands = [c for c, _ in error_samples()]
    assert len(commands) >= 7  # guards the regex: the samples of "Errors and exit statuses"
    assert any(c.startswith("boardzoo train") for c in commands)
    assert any(c.startswith("boardzoo export") for c in commands)


@pytest.mark.parametrize(("command", "error", "setup"), samples_with_setup(),
                         ids=[c for c, _, _ in samples_with_setup()])
def test_error_sample_is_what_the_command_prints(command: str, error: str, setup: list[str],
                                                 tmp_path: Path) -> None:
    # a fresh process: other tests register games and agents that the page does not list;
    # run in a folder of its own (a sample may write files: never into the repository)
    # that sees the repository's files the samples name (configs/tiny.yaml)
    (tmp_path / "configs").symlink_to(REPO / "configs")

    def boardzoo(line: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "boardzoo", *shlex.split(line)[1:]],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)

    for line in setup:
        assert boardzoo(line).returncode == 0, line
    run = boardzoo(command)
    assert run.returncode == 2 and run.stderr.strip() == error


def test_help_summary_names_every_subcommand(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    summary = out.split("The boardzoo command line: ")[1].split(".")[0]
    listed = re.search(r"\{([a-z,-]+)\}", out).group(1).split(",")
    assert "export" in listed and summary.split(", ") == listed
