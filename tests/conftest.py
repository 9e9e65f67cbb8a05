"""Shared test fixtures: where the rule specs and test vectors live."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from boardzoo.envs.core.registry import action_game

# Windows (render_mode="human", the gui agent) open on no screen in tests.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

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


def random_action_states(name: str, n: int, seed: int, max_plies: int = 30) -> list:
    """Return ``n`` non-terminal action states of game ``name`` reached by seeded random play."""
    game = action_game(name)
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = game.initial_state()
        for _ in range(rng.randint(0, max_plies)):
            if game.is_terminal(s):
                break
            s, _ = game.apply_action(s, rng.choice(game.legal_actions(s)))
        if not game.is_terminal(s):
            out.append(s)
    return out
