"""A CI-sized fuzz campaign (bench/fuzz.py): every entry point answers mutated input with its
documented error or exit 2 and one line, never a traceback, never a hang."""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import fuzz  # noqa: E402

from boardzoo.envs.core.registry import GAMES  # noqa: E402


@pytest.mark.parametrize("game", GAMES)
def test_fuzz_campaign_has_no_tracebacks_or_hangs(game):
    outcomes: Counter[str] = Counter()
    bad = []
    # the game-independent entry points run with the first game only
    for entry, outcome, detail in fuzz.campaign(200, seed=GAMES.index(game), timeout=20.0,
                                                games=[game]):
        outcomes[outcome] += 1
        if outcome in ("traceback", "hang"):
            bad.append(f"{entry}: {outcome}\n{detail}")
    assert not bad, "\n".join(bad[:3])
    assert outcomes["clean"] > 0 and outcomes["ok"] > 0  # both paths were exercised


def test_crafted_sb3_zips_run_no_code():
    pytest.importorskip("sb3_contrib")
    rng = random.Random(0)
    outcomes = Counter(fuzz.classify(fuzz.case_sb3_zip("loa", rng, []), 20.0)[0]
                       for _ in range(20))
    assert outcomes["code_run"] == 0 and outcomes["traceback"] == 0, outcomes
