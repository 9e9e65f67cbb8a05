"""Toy games with a reference ActionGame and a BatchedGame each, for the batched search tests.

* tic-tac-toe: the reference is ``tests/toygames.TicTacToe`` behind ``MoveActions``;
* Bonus Nim: one pile, take 1-3 stones, taking the last stone wins, and taking
  exactly 2 (with stones left) gives the same player another action, so a
  player may act twice in a row as in a Whistling capture chain.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence

import numpy as np
import torch
from toygames import LINES, TicTacToe

from boardzoo.envs.core.actions import MoveActions
from boardzoo.envs.core.batched import BatchedGame, BatchState


class TicTacToeActions(MoveActions):
    """Tic-tac-toe's actions (the cell) and planes (own marks, opponent's marks)."""

    state_cls = TicTacToe
    num_actions = 9
    observation_shape = (3, 3, 2)

    def observation(self, state: TicTacToe, player: int) -> np.ndarray:
        cells = np.array([".xo".index(c) for c in state.cells]).reshape(3, 3)
        return np.stack([cells == 1 + player, cells == 2 - player], -1).astype(np.float32)


@dataclasses.dataclass(frozen=True)
class CellsBatch(BatchState):
    cells: torch.Tensor  # (N, 9) int8: 0 empty, 1 x, 2 o


class BatchedTicTacToe(BatchedGame):
    name = "tictactoe"
    action_game = TicTacToeActions()

    def __init__(self, device: torch.device | str = "cpu") -> None:
        super().__init__(device)
        self.lines = torch.tensor(LINES, device=self.device)

    def initial(self, n: int) -> CellsBatch:
        return CellsBatch(torch.zeros(n, 9, dtype=torch.int8, device=self.device))

    def from_states(self, states: Sequence[TicTacToe]) -> CellsBatch:
        rows = [[".xo".index(c) for c in s.cells] for s in states]
        return CellsBatch(torch.tensor(rows, dtype=torch.int8, device=self.device))

    def to_states(self, batch: CellsBatch) -> list[TicTacToe]:
        return [TicTacToe("".join(".xo"[v] for v in row)) for row in batch.cells.tolist()]

    def _lines(self, batch: CellsBatch, mark: int) -> torch.Tensor:
        return (batch.cells[:, self.lines] == mark).all(-1).any(-1)

    def terminated(self, batch: CellsBatch) -> torch.Tensor:
        full = (batch.cells != 0).all(1)
        return full | self._lines(batch, 1) | self._lines(batch, 2)

    def to_move(self, batch: CellsBatch) -> torch.Tensor:
        x, o = (batch.cells == 1).sum(1), (batch.cells == 2).sum(1)
        return (x != o).to(torch.int64)

    def legal_mask(self, batch: CellsBatch) -> torch.Tensor:
        return (batch.cells == 0) & ~self.terminated(batch)[:, None]

    def step(self, batch: CellsBatch, actions: torch.Tensor) -> CellsBatch:
        cells = batch.cells.clone()
        rows = torch.arange(len(cells), device=cells.device)
        mark = (self.to_move(batch) + 1).to(torch.int8)
        cells[rows, actions] = torch.where(self.terminated(batch), cells[rows, actions], mark)
        return CellsBatch(cells)

    def returns(self, batch: CellsBatch) -> torch.Tensor:
        r = self._lines(batch, 1).float() - self._lines(batch, 2).float()
        return torch.stack([r, -r], 1)

    def observation(self, batch: CellsBatch) -> torch.Tensor:
        me = (self.to_move(batch) + 1)[:, None]
        planes = [batch.cells == me, (batch.cells != 0) & (batch.cells != me)]
        return torch.stack(planes, -1).view(-1, 3, 3, 2).float()


class BonusNimActions:
    """Reference Bonus Nim over states ``(pile, side to move)``; action k takes k + 1 stones.

    When the pile is empty, ``side`` is the loser (the player who did not take the last stone).
    """

    num_actions = 3
    observation_shape = (1, 1, 2)

    def initial_state(self, pile: int = 9) -> tuple[int, int]:
        return (pile, 0)

    def to_move(self, s: tuple[int, int]) -> int:
        return s[1]

    def is_terminal(self, s: tuple[int, int]) -> bool:
        return s[0] == 0

    def returns(self, s: tuple[int, int]) -> tuple[float, float]:
        if s[0]:
            return (0.0, 0.0)
        return (1.0, -1.0) if s[1] == 1 else (-1.0, 1.0)

    def legal_actions(self, s: tuple[int, int]) -> list[int]:
        return [a for a in range(3) if a < s[0]]

    def apply_action(self, s: tuple[int, int], a: int) -> tuple[tuple[int, int], None]:
        pile = s[0] - (a + 1)
        again = a == 1 and pile > 0
        return (pile, s[1] if again else 1 - s[1]), None

    def observation(self, s: tuple[int, int], player: int) -> np.ndarray:
        return np.array([[[s[0] / 10, float(player)]]], dtype=np.float32)


@dataclasses.dataclass(frozen=True)
class PileBatch(BatchState):
    pile: torch.Tensor  # (N,) int64
    side: torch.Tensor  # (N,) int64


class BatchedBonusNim(BatchedGame):
    name = "bonusnim"
    action_game = BonusNimActions()  # type: ignore[assignment]

    def initial(self, n: int, pile: int = 9) -> PileBatch:
        z = torch.zeros(n, dtype=torch.int64, device=self.device)
        return PileBatch(z + pile, z)

    def from_states(self, states: Sequence[tuple[int, int]]) -> PileBatch:
        t = torch.tensor(list(states), dtype=torch.int64, device=self.device).view(-1, 2)
        return PileBatch(t[:, 0].clone(), t[:, 1].clone())

    def to_states(self, batch: PileBatch) -> list[tuple[int, int]]:
        return list(zip(batch.pile.tolist(), batch.side.tolist(), strict=True))

    def terminated(self, batch: PileBatch) -> torch.Tensor:
        return batch.pile == 0

    def to_move(self, batch: PileBatch) -> torch.Tensor:
        return batch.side

    def legal_mask(self, batch: PileBatch) -> torch.Tensor:
        return torch.arange(3, device=self.device)[None, :] < batch.pile[:, None]

    def step(self, batch: PileBatch, actions: torch.Tensor) -> PileBatch:
        over = self.terminated(batch)
        pile = torch.where(over, batch.pile, batch.pile - actions - 1)
        again = (actions == 1) & (pile > 0)
        side = torch.where(over | again, batch.side, 1 - batch.side)
        return PileBatch(pile, side)

    def returns(self, batch: PileBatch) -> torch.Tensor:
        r = torch.where(self.terminated(batch), 1.0 - 2.0 * (batch.side == 0).float(), 0.0)
        return torch.stack([r, -r], 1)

    def observation(self, batch: PileBatch) -> torch.Tensor:
        return torch.stack([batch.pile / 10, batch.side.float()], -1).view(-1, 1, 1, 2).float()


def fake_eval(num_actions: int, states: list, key=repr) -> tuple[np.ndarray, np.ndarray]:
    """Pseudo-random (logits, values) that depend only on each state's key: a fake network
    that both search implementations can be given."""
    logits = np.empty((len(states), num_actions), np.float32)
    values = np.empty(len(states), np.float32)
    for i, s in enumerate(states):
        rng = np.random.default_rng(zlib.crc32(str(key(s)).encode()))
        logits[i] = rng.normal(size=num_actions)
        values[i] = rng.uniform(-0.9, 0.9)
    return logits, values


def batched_fake_eval(engine: BatchedGame, uniform: bool = False):
    """The evaluator of :func:`fake_eval` (or uniform priors and zero values) on batches."""

    def evaluate(batch: BatchState) -> tuple[torch.Tensor, torch.Tensor]:
        if uniform:
            return (torch.zeros(batch.size, engine.num_actions), torch.zeros(batch.size))
        states = engine.to_states(batch)
        logits, values = fake_eval(engine.num_actions, states, _key(states))
        return torch.from_numpy(logits), torch.from_numpy(values)

    return evaluate


def _key(states: list):
    return (lambda s: s.cells) if states and isinstance(states[0], TicTacToe) else repr
