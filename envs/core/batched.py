"""Batched engines: many games held as torch tensors and stepped together (pgx-style).

A :class:`BatchedGame` is stateless and functional, like :class:`ActionGame`: its
methods take a :class:`BatchState` (a dataclass whose fields are tensors with
the games along dimension 0) and return new ones. The encoding is the AEC
env's: the same ``Discrete`` action numbers, the same legal masks and the same
observation planes, so a network trained on one drives the other. The readable
per-game rules engines stay the reference; ``from_states``/``to_states``
convert between the two for the differential tests.

Conventions every engine follows:

- ``step`` leaves a finished game exactly as it is, whatever its action; for an
  unfinished game the action must be legal (``step`` does not check it: the
  hot path stays free of checks; :class:`BatchedEnv` checks when asked).
- ``returns`` is ``(N, 2)`` float32: +1/-1/0 per player once a game is over,
  0 while it runs.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import torch

from .actions import ActionGame

S = TypeVar("S", bound="BatchState")


@dataclasses.dataclass(frozen=True)
class BatchState:
    """Base of a game's batched state: every field is a tensor with N rows."""

    def tensors(self) -> dict[str, torch.Tensor]:
        """Return the fields by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def size(self) -> int:
        """Number of games held."""
        return next(iter(self.tensors().values())).shape[0]

    @property
    def device(self) -> torch.device:
        """The device the tensors live on."""
        return next(iter(self.tensors().values())).device

    def index(self: S, idx: torch.Tensor | slice) -> S:
        """Return the games picked by ``idx`` (an index tensor, bool mask or slice)."""
        return dataclasses.replace(self, **{k: v[idx] for k, v in self.tensors().items()})

    def where(self: S, mask: torch.Tensor, other: S) -> S:
        """Return ``other``'s game where ``mask`` (N,) is True, this one's elsewhere."""
        out = {}
        for name, mine in self.tensors().items():
            theirs = getattr(other, name)
            m = mask.view(-1, *([1] * (mine.dim() - 1)))
            out[name] = torch.where(m, theirs, mine)
        return dataclasses.replace(self, **out)

    def to(self: S, device: torch.device | str) -> S:
        """Return a copy on ``device``."""
        return dataclasses.replace(self, **{k: v.to(device) for k, v in self.tensors().items()})

    @classmethod
    def cat(cls: type[S], parts: Sequence[S]) -> S:
        """Return the games of ``parts`` one after another."""
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{n: torch.cat([getattr(p, n) for p in parts]) for n in names})


class BatchedGame(ABC):
    """N games of one kind as tensors: masks, steps, results and observations in bulk."""

    #: Registry name of the game (``loa``, ``ultima``, ``whistling``).
    name: ClassVar[str]
    #: The reference action encoding this engine reproduces.
    action_game: ClassVar[ActionGame]

    def __init__(self, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)

    @property
    def num_actions(self) -> int:
        """Size of the ``Discrete`` action space (the AEC env's)."""
        return self.action_game.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        """Shape (H, W, C) of one game's observation planes (the AEC env's)."""
        return self.action_game.observation_shape

    @abstractmethod
    def initial(self, n: int) -> BatchState:
        """Return ``n`` games at the start position."""

    @abstractmethod
    def from_states(self, states: Sequence[Any]) -> BatchState:
        """Return the batch holding the reference action states ``states``."""

    @abstractmethod
    def to_states(self, batch: BatchState) -> list[Any]:
        """Return the reference action state of each game in ``batch``."""

    @abstractmethod
    def legal_mask(self, batch: BatchState) -> torch.Tensor:
        """Return an (N, num_actions) bool tensor, True exactly on the legal actions."""

    @abstractmethod
    def step(self, batch: BatchState, actions: torch.Tensor) -> BatchState:
        """Return the games after each plays its action (finished games unchanged)."""

    @abstractmethod
    def to_move(self, batch: BatchState) -> torch.Tensor:
        """Return the (N,) int64 player (0 or 1) who acts next in each game."""

    @abstractmethod
    def terminated(self, batch: BatchState) -> torch.Tensor:
        """Return the (N,) bool tensor of finished games."""

    @abstractmethod
    def returns(self, batch: BatchState) -> torch.Tensor:
        """Return (N, 2) float32: +1/-1/0 per player for finished games, 0 otherwise."""

    @abstractmethod
    def observation(self, batch: BatchState) -> torch.Tensor:
        """Return (N, H, W, C) float32 planes from the view of each game's player to move."""
