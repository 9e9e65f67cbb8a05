"""Value targets: the replay buffer keeps each position's outcome, root search value and
move-cap flag, and mixes the targets when a batch is drawn (``train.value_target_q``,
``train.value_capped_games``), for the positions already stored as for new ones."""

from __future__ import annotations

import math

import numpy as np
import torch

from boardzoo.training.buffer import ReplayBuffer, value_targets
from boardzoo.training.selfplay import GameRecord


def _stored(*records: GameRecord) -> ReplayBuffer:
    """A buffer holding the records' positions, position k's observation the number k (so a
    drawn batch tells which positions it holds)."""
    n = sum(len(r.players) for r in records)
    buf = ReplayBuffer(n, (1, 1, 1), 3)
    k = 0
    for rec in records:
        m = len(rec.players)
        rec.obs = [np.full((1, 1, 1), k + j, np.float32) for j in range(m)]
        rec.actions = [np.array([0, 2], np.int32)] * m
        rec.probs = [np.array([0.5, 0.5], np.float32)] * m
        buf.add_game(rec)
        k += m
    return buf


def _targets(buf: ReplayBuffer, **settings) -> list[float]:
    """Each stored position's value target in batches drawn with ``settings``."""
    batch = buf.sample(64, np.random.default_rng(5), **settings)
    got: dict[int, float] = {}
    for k, v in zip(batch["obs"][:, 0, 0, 0].tolist(), batch["value"].tolist(), strict=True):
        assert got.setdefault(int(k), v) == v or (math.isnan(v) and math.isnan(got[int(k)]))
    assert sorted(got) == list(range(len(buf)))  # every position was drawn
    return [got[k] for k in range(len(buf))]


def _same(got: list[float], want: list[float]) -> bool:
    """Equal lists, NaN equal to NaN."""
    return np.array_equal(np.array(got), np.array(want), equal_nan=True)


def test_value_target_mixes_outcome_and_root_value():
    rec = GameRecord(0, players=[0, 1, 0], outcome=1.0, root_values=[0.2, -0.6, 0.0])
    z, root, capped = rec.outcomes(), np.float32(rec.root_values), np.zeros(3, bool)
    assert z.tolist() == [1.0, -1.0, 1.0] and z.dtype == np.float32
    assert value_targets(z, root, capped).tolist() == [1.0, -1.0, 1.0]
    assert np.allclose(value_targets(z, root, capped, 0.5), [0.6, -0.8, 0.5])
    assert np.allclose(value_targets(z, root, capped, 1.0), [0.2, -0.6, 0.0])
    # no root value (a record not made by a search): the outcome alone
    none = GameRecord(0, players=[1], outcome=0.5)
    assert _targets(_stored(none), value_target_q=0.5) == [-0.5]


def test_changing_value_target_q_changes_the_stored_games_targets():
    # numbers whose mixes are exact in float32: (1 - q) x outcome + q x root value by hand
    won = GameRecord(0, players=[0, 1, 0], outcome=1.0, root_values=[0.25, -0.5, 0.75])
    lost = GameRecord(1, players=[1, 0], outcome=1.0, root_values=[-0.25, 0.5])
    buf = _stored(won, lost)
    assert _targets(buf) == [1.0, -1.0, 1.0, -1.0, 1.0]
    assert _targets(buf, value_target_q=0.5) == [0.625, -0.75, 0.875, -0.625, 0.75]
    assert _targets(buf, value_target_q=0.25) == [0.8125, -0.875, 0.9375, -0.8125, 0.875]
    assert _targets(buf, value_target_q=1.0) == [0.25, -0.5, 0.75, -0.25, 0.5]
    assert _targets(buf) == [1.0, -1.0, 1.0, -1.0, 1.0]  # nothing was overwritten


def test_capped_games_give_no_value_target_when_asked_at_sampling():
    capped = GameRecord(0, players=[0, 1], outcome=0.5, root_values=[0.25, -0.5], capped=True)
    ended = GameRecord(0, players=[0, 1], outcome=-1.0, root_values=[0.25, -0.5])
    buf = _stored(capped, ended)
    assert _targets(buf) == [0.5, -0.5, -1.0, 1.0]  # the adjudicated result, as before
    assert _same(_targets(buf, value_capped_games=False), [math.nan, math.nan, -1.0, 1.0])
    assert _same(_targets(buf, value_target_q=0.5, value_capped_games=False),
                 [math.nan, math.nan, -0.375, 0.25])
    assert _targets(buf, value_target_q=0.5) == [0.375, -0.5, -0.375, 0.25]  # back again
    other = ReplayBuffer(4, (1, 1, 1), 3)
    other.load_state_dict(buf.state_dict())  # outcome, root value and flag survive it
    assert other.capped.tolist() == [True, True, False, False]
    for settings in ({}, {"value_target_q": 0.5, "value_capped_games": False}):
        assert _same(_targets(other, **settings), _targets(buf, **settings))


def test_buffer_saved_by_the_old_code_loads_with_its_targets_as_they_were():
    # the old checkpoint's keys: one mixed value target per position ("value", NaN: none)
    old = {"capacity": 4, "ptr": 3, "size": 3, "added": 3,
           "obs": torch.arange(3, dtype=torch.float16).reshape(3, 1, 1, 1) + 0.5,
           "value": torch.tensor([0.6, math.nan, -0.8]),
           "lengths": torch.tensor([2, 2, 2]),
           "actions": torch.tensor([0, 2] * 3, dtype=torch.int32),
           "probs": torch.full((6,), 0.5)}
    for capacity in (4, 2):  # the same buffer size, and a smaller one that keeps the newest
        buf = ReplayBuffer(capacity, (1, 1, 1), 3)
        buf.load_state_dict(old)
        keep = 3 - len(buf)
        assert (buf.size, buf.ptr, buf.added) == ((3, 3, 3) if capacity == 4 else (2, 0, 3))
        assert np.isnan(buf.root_value[:len(buf)]).all() and not buf.capped.any()
        want = np.float32([0.6, math.nan, -0.8])[keep:].tolist()
        for settings in ({}, {"value_target_q": 0.5}, {"value_target_q": 1.0},
                         {"value_capped_games": False}):
            batch = buf.sample(32, np.random.default_rng(1), **settings)
            k = (batch["obs"][:, 0, 0, 0] - 0.5).long() - keep
            assert _same(batch["value"].tolist(), [want[i] for i in k.tolist()])
        buf.add(np.zeros((1, 1, 1), np.float32), np.array([0], np.int32), np.ones(1, np.float32),
                1.0, root_value=0.5)  # and new positions go on beside them
        state = buf.state_dict()
        assert "value" not in state and 1.0 in state["outcome"].tolist()
