"""Shared test fixtures: where the rule specs and test vectors live."""

from __future__ import annotations

import hashlib
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


def assert_recorded_facts(played: list, placed: list, fact_hash, recorded: list[str],
                          digest: str) -> None:
    """Check sampled positions (two halves: played and placed) against the facts a removed
    Python engine recorded for them: the listed hashes (the first of each half), and with
    the full 100,000 positions the digest of all of them."""
    hashes = [fact_hash(s) for s in played] + [fact_hash(s) for s in placed]
    k = min(len(played), len(recorded) // 2)
    expected = recorded[:k] + recorded[len(recorded) // 2:][:k]
    got = hashes[:k] + hashes[len(played):][:k]
    bad = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
    assert not bad, f"{len(bad)} of {len(got)} positions differ, first at sample index {bad[0]}"
    if len(hashes) == 100_000:
        assert hashlib.sha256("\n".join(hashes).encode()).hexdigest() == digest


def defined_priors(name: str, states: list) -> tuple:
    """The priors a network with priors takes, straight from the game's descriptor (the
    definitions, not the code that serves them): evaluation / scale of each action state for its
    player to act (0 when finished) and the action prior as a dense row, both float32."""
    import numpy as np

    from boardzoo.envs.core.registry import get_spec

    spec, game = get_spec(name), action_game(name)
    value = np.zeros(len(states), dtype=np.float32)
    dense = np.zeros((len(states), game.num_actions), dtype=np.float32)
    for i, s in enumerate(states):
        g = game.game_state(s)
        if not g.is_terminal():
            v = spec.evaluate(g) / spec.eval_scale
            value[i] = v if g.to_move == game.to_move(s) else -v
        if spec.action_prior is not None:
            scored, scores = spec.action_prior(s)
            dense[i, scored] = scores
    return value, dense
