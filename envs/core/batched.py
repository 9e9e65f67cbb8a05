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

import numpy as np
import torch

from .actions import ActionGame
from .game import MoveError, echo
from .registry import batched_game
from .threads import scoped_threads

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

    def clone(self: S) -> S:
        """Return a copy that shares no tensor with this batch."""
        return dataclasses.replace(self, **{k: v.clone() for k, v in self.tensors().items()})

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

    def step_inplace(self, batch: BatchState, actions: torch.Tensor) -> BatchState:
        """Like :meth:`step`, but may overwrite ``batch``'s tensors (for callers that drop it).

        Engines with large history tensors override this to skip copying them.
        """
        return self.step(batch, actions)

    def reset_where(self, batch: BatchState, done: torch.Tensor) -> BatchState:
        """Return ``batch`` with the games where ``done`` (N,) is True back at the start.

        The result may share tensors with ``batch``; pair it with :meth:`step_inplace`
        only when ``batch`` is dropped too.
        """
        return batch.where(done, self.initial(batch.size))

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


_BYTE_ONES = 0x0101010101010101


def _mask_words(mask: torch.Tensor) -> torch.Tensor:
    """Return the bool mask as int64 words of 8 bytes, zero-padded to whole words."""
    n, a = mask.shape
    width = -(-a // 8) * 8
    row = mask.stride(0)
    if (mask.stride(1) == 1 and row % 8 == 0 and mask.storage_offset() % 8 == 0 and row >= width
            and mask.untyped_storage().nbytes() >= mask.storage_offset() + n * row):
        # rows already start on word boundaries: read them in place if the padding is zero
        full = torch.as_strided(mask.view(torch.uint8), (n, width), (row, 1))
        if width == a or not bool(full[:, a:].any()):
            return full.view(torch.int64)
    padded = torch.zeros(n, width, dtype=torch.uint8, device=mask.device)
    padded[:, :a] = mask
    return padded.view(torch.int64)


def random_legal_actions(mask: torch.Tensor,
                         generator: torch.Generator | None = None) -> torch.Tensor:
    """Return one uniformly drawn legal action per row of the (N, A) bool ``mask`` (0 if none).

    One random number per game: the k-th legal action is found through words of 8
    mask bytes, so the cost is a few passes over (N, A / 8) int64s, not (N, A) floats.
    """
    n = mask.shape[0]
    words = _mask_words(mask)  # (N, ceil(A / 8)); each byte is 0 or 1
    per_word = (words * _BYTE_ONES) >> 56  # top byte: the word's legal actions (at most 8)
    before = per_word.cumsum(1)
    total = before[:, -1]
    r = torch.rand(n, generator=generator, dtype=torch.float64, device=mask.device)
    k = (r * total).long()  # uniform in [0, total)
    w = (before <= k[:, None]).sum(1).clamp(max=words.shape[1] - 1)[:, None]
    k = k - (before.gather(1, w)[:, 0] - per_word.gather(1, w)[:, 0])
    prefix = words.gather(1, w) * _BYTE_ONES  # byte i: legal actions among bytes 0..i
    shifts = torch.arange(0, 64, 8, device=mask.device)
    pos = (((prefix >> shifts) & 0xFF) <= k[:, None]).sum(1)
    return torch.where(total > 0, 8 * w[:, 0] + pos, 0)


def integer_actions(actions: Any) -> torch.Tensor:
    """Return ``actions`` (a tensor, array or sequence) as an int64 tensor; MoveError unless
    they are integers (why: a cast would quietly play 8 for 8.9 and 1 for True)."""
    if isinstance(actions, torch.Tensor):
        dtype = actions.dtype
        if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
            raise MoveError(f"actions must be integers, got a tensor of {dtype}")
        return actions.long()
    array = np.asarray(actions)
    if array.dtype.kind not in "iu":
        raise MoveError(f"actions must be integers, got {echo(actions)} ({array.dtype})")
    return torch.as_tensor(array.astype(np.int64))


class BatchedEnv:
    """N games of one batched engine played step by step, with optional auto-reset.

    ``step`` returns, per game, the rewards of a game that ended on this step (the
    ``(N, 2)`` returns, 0 elsewhere) and ``terminated``. With ``auto_reset`` a game
    that ends is replaced by a fresh one in the same step: its reward and
    ``terminated`` report the finished game, the observation and mask the new one.
    Without it, a finished game stays finished (``terminated`` stays True, its
    actions are ignored) until :meth:`reset`.

    The env owns ``batch`` and overwrites its tensors in place (``step_inplace``);
    use ``batch.clone()`` for a copy that outlives the next step.
    ``final_batch`` is the batch right after the last step, before the auto-reset:
    the games that just ended in their final positions (valid until the next step).
    Each call runs with ``threads`` torch intra-op threads and restores the caller's count
    after it (:mod:`.threads`).
    """

    def __init__(self, game: BatchedGame | str, n: int, device: torch.device | str | None = None,
                 auto_reset: bool = True, check_actions: bool = False,
                 threads: int | None = 1) -> None:
        """Create ``n`` games of ``game`` (an engine or a registry name) at the start, on
        ``device`` (default CPU; an engine's own device, which ``device`` must then match).
        ``threads``: torch threads for each call (default 1: the games' tensors are small
        and more threads only wait for each other, 6.5x slower on a loaded 2-core machine;
        None: the caller's setting)."""
        if isinstance(game, str):
            game = batched_game(game, "cpu" if device is None else device)
        elif device is not None:  # why: the engine decides, so a different device would be ignored
            want, have = torch.device(device), game.device
            if want.type != have.type or None not in (want.index, have.index) \
                    and want.index != have.index:
                raise ValueError(f"device {str(want)!r} differs from the engine's device "
                                 f"{str(have)!r}; build the engine on that device instead")
        if n < 1:
            raise ValueError(f"a BatchedEnv needs at least one game, got n={n}")
        self.game = game
        self.num_envs = n
        self.device = game.device
        self.auto_reset = auto_reset
        self.check_actions = check_actions
        self.threads = threads
        self.generator = torch.Generator(device=self.device)
        self.batch = game.initial(n)
        self.final_batch = self.batch
        self._mask: torch.Tensor | None = None

    @scoped_threads
    def reset(self, seed: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Start all games afresh; ``seed`` seeds :meth:`random_actions`. Returns (obs, mask)."""
        if seed is not None:
            self.generator.manual_seed(seed)
        self.batch = self.game.initial(self.num_envs)
        self._mask = None
        return self.observation(), self.legal_mask()

    @scoped_threads
    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Play one action per game; return (obs, rewards (N, 2), terminated (N,))."""
        actions = integer_actions(actions).to(self.device)
        if actions.shape != (self.num_envs,):
            raise MoveError(f"expected {self.num_envs} actions, got shape {tuple(actions.shape)}")
        was_over = self.game.terminated(self.batch)
        if self.check_actions:
            self._check(actions, was_over)
        batch = self.game.step_inplace(self.batch, actions)
        over = self.game.terminated(batch)
        ended = over & ~was_over
        rewards = self.game.returns(batch) * ended[:, None]
        self.final_batch = batch
        if self.auto_reset and bool(over.any()):
            batch = self.game.reset_where(batch, over)
        self.batch = batch
        self._mask = None
        return self.observation(), rewards, (ended if self.auto_reset else over)

    @scoped_threads
    def restart(self, where: torch.Tensor) -> torch.Tensor:
        """Replace the games marked in ``where`` (N,) by new ones (e.g. cut off by a move
        cap); return the observations."""
        self.batch = self.game.reset_where(self.batch, where)
        self._mask = None
        return self.observation()

    @scoped_threads
    def legal_mask(self) -> torch.Tensor:
        """Return the (N, A) bool mask of the current games (cached until the next step)."""
        if self._mask is None:
            self._mask = self.game.legal_mask(self.batch)
        return self._mask

    @scoped_threads
    def observation(self) -> torch.Tensor:
        """Return the (N, H, W, C) float32 observations from the view of each player to move."""
        return self.game.observation(self.batch)

    def to_move(self) -> torch.Tensor:
        """Return the (N,) int64 player to move in each game."""
        return self.game.to_move(self.batch)

    @scoped_threads
    def random_actions(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """Return a uniformly random legal action per game (0 for a finished game).

        Uses the engine's own ``random_actions(batch, generator)`` when it has one (Ultima
        draws from its destination bitboards, far cheaper than scanning a 4096-wide mask).
        """
        sample = getattr(self.game, "random_actions", None)
        if sample is not None:
            return sample(self.batch, generator or self.generator)
        return random_legal_actions(self.legal_mask(), generator or self.generator)

    def _check(self, actions: torch.Tensor, over: torch.Tensor) -> None:
        if bool(((actions < 0) | (actions >= self.game.num_actions)).any()):
            raise MoveError(f"actions must lie in [0, {self.game.num_actions})")
        legal = self.legal_mask().gather(1, actions[:, None])[:, 0] | over
        if not bool(legal.all()):
            bad = (~legal).nonzero()[:, 0][:5].tolist()
            raise MoveError(f"illegal action in game(s) {bad}: "
                            f"{[int(actions[i]) for i in bad]}")
