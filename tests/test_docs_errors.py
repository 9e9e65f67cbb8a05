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
    samples = []
    for block in re.findall(r"^```\n(.*?)^```", CLI_DOC.read_text(), re.S | re.M):
        lines = block.splitlines()
        for command, answer in zip(lines, lines[1:], strict=False):
            if (command.startswith("$ boardzoo ") and answer.startswith("boardzoo: error:")
                    and NEEDS_FILES not in command and "|" not in command):
                samples.append((command[2:], answer))
    return samples


def test_the_page_has_error_samples() -> None:
    commands = [c for c, _ in error_samples()]
    assert len(commands) >= 7  # guards the regex: the samples of "Errors and exit statuses"
    assert any(c.startswith("boardzoo train") for c in commands)
    assert any(c.startswith("boardzoo export") for c in commands)


@pytest.mark.parametrize(("command", "error"), error_samples(),
                         ids=[c for c, _ in error_samples()])
def test_error_sample_is_what_the_command_prints(command: str, error: str) -> None:
    # a fresh process: other tests register games and agents that the page does not list;
    # run in the repository, whose files the samples name (configs/tiny.yaml)
    run = subprocess.run([sys.executable, "-m", "boardzoo", *shlex.split(command)[1:]],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 2 and run.stderr.strip() == error


def test_help_summary_names_every_subcommand(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    summary = out.split("The boardzoo command line: ")[1].split(".")[0]
    listed = re.search(r"\{([a-z,]+)\}", out).group(1).split(",")
    assert "export" in listed and summary.split(", ") == listed
