"""Shared test fixtures: where the rule specs and test vectors live."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# CI and developers keep the shared folder (rules, seeds, vectors) beside the clone.
SHARED = Path(os.environ.get("BOARDZOO_SHARED", REPO.parent / "shared"))
VECTORS = SHARED / "vectors"


def load_vector(game: str, name: str) -> dict:
    """Return one JSON test vector from ``shared/vectors/<game>/<name>``."""
    path = VECTORS / game / name
    if not path.exists():
        pytest.fail(f"test vector {path} is missing: set BOARDZOO_SHARED to the shared folder")
    return json.loads(path.read_text())
