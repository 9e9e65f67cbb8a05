"""The policy/value network: a small residual conv net over a game's observation planes.

Input: the ActionGame's float32 ``(H, W, C)`` observation (from the view of the
player to act), moved to ``(C, H, W)``. Trunk: a 3x3 conv stem and ``blocks``
residual blocks of ``channels`` (batch norm, ReLU). Heads:

* policy, one logit per action of the game's ``Discrete`` space, either
  ``linear`` (1x1 conv to ``policy_channels`` planes, then a linear layer: fine
  for LOA's 513 actions) or ``conv`` (for action spaces laid out per board cell,
  the game descriptor's :mod:`~boardzoo.envs.core.layout`: a 1x1 conv gives each
  cell one logit per action that starts there, e.g. Ultima's 64 destinations per origin or
  Whistling's 120 hops per cell, so the head stays small; extra actions such
  as LOA's pass come from a linear layer on the pooled features).
  :func:`masked_log_softmax` sets illegal logits to ``-inf`` before the
  softmax, so illegal actions get exactly zero probability (nothing is
  renormalised after sampling);
* value: 1x1 conv, linear, ReLU, linear, ``tanh``: the expected outcome in
  [-1, 1] for the player to act.

Irregular boards drawn on a rectangular grid (Whistling's hex board on 21 x 41)
give the index of their real-cell plane: the trunk's features are multiplied by
that mask after every layer, so off-board grid points stay exactly zero and the
convolutions see the hex board's edge as an edge.

Options (all off by default, so default configs build the same network):

* ``model.policy_head: bilinear``: logit(from, to) = <q_from, k_to> / sqrt(d) +
  bias[kind], with d-dimensional query and key embeddings of every board cell
  (linear maps of the trunk's features) and the game's :class:`PairLayout`: a
  full-rank from x to score instead of the conv head's few planes per cell;
* ``model.internal_grid``: the trunk runs on the game's :class:`InternalGrid`
  (Whistling: 21 x 21 axial hex coordinates) gathered from the observation, its
  3 x 3 kernels multiplied by the grid's kernel mask (the 6 hex neighbours) and
  its off-board cells kept at zero after every layer;
* ``model.value`` ``prior`` or ``static``: value = tanh(prior + head output), ``prior`` being the
  game's static evaluation / scale of each position (:mod:`.prior`), passed to
  :meth:`PolicyValueNet.forward`; the pre-activation is clipped to +-8 so the
  value stays strictly inside (-1, 1);
* ``model.policy_prior``: logits = head output + ``policy_prior`` x the game's action
  prior (:meth:`.knowledge.Knowledge.reference`), passed to :meth:`PolicyValueNet.forward`;
* a network with a prior starts with its value head's last layer and its policy
  head's output at zero, so that it starts as exactly its priors.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from boardzoo.envs.core.layout import ActionLayout, InternalGrid, PairLayout
from boardzoo.envs.core.registry import get_spec

from .config import ConfigError, ModelConfig

#: |tanh argument| limit of the value prior path: tanh(8) < 1 in float32.
PRIOR_CLIP = 8.0

#: Bytes of one trunk layer's float32 activations (rows x channels x grid cells x 4) that
#: an inference call (eval mode) keeps together: a larger batch runs through the trunk in
#: near-equal chunks of at most that size, since a batch whose activations outgrow the
#: core's cache costs more per row (``bench/net_inference.py``, one thread: Whistling's
#: 32 channels on the 21 x 21 grid, 56 KiB a row, cost 0.82 ms a position at a batch of
#: 8 and 1.03 ms at 16 in one call, 0.90 ms in chunks of 8). Each row's features are bit
#: for bit those of one call with the whole batch (tests/test_net_inference.py): the
#: convolutions compute each row alone at any batch size but one row.
TRUNK_CHUNK_BYTES = 512 * 1024


class MaskedConv2d(nn.Conv2d):
    """A 3 x 3 convolution whose kernel is multiplied by a fixed mask (hex neighbourhoods)."""

    def __init__(self, cin: int, cout: int, kernel_mask: np.ndarray) -> None:
        """Build a bias-free conv with ``kernel_mask`` (k x k, 1 = used) as its support."""
        k = kernel_mask.shape[0]
        super().__init__(cin, cout, k, padding=k // 2, bias=False)
        self.register_buffer("kernel_mask", torch.as_tensor(kernel_mask, dtype=torch.float32),
                             persistent=False)
        with torch.no_grad():
            self.weight.mul_(self.kernel_mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Convolve with the masked kernel."""
        return self._conv_forward(x, self.weight * self.kernel_mask, self.bias)


def conv3x3(cin: int, cout: int, kernel_mask: np.ndarray | None) -> nn.Conv2d:
    """Return a bias-free 3 x 3 conv, masked when ``kernel_mask`` is given."""
    if kernel_mask is None:
        return nn.Conv2d(cin, cout, 3, padding=1, bias=False)
    return MaskedConv2d(cin, cout, kernel_mask)


class ResBlock(nn.Module):
    def __init__(self, channels: int, kernel_mask: np.ndarray | None = None) -> None:
        super().__init__()
        self.conv1 = conv3x3(channels, channels, kernel_mask)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = conv3x3(channels, channels, kernel_mask)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        if mask is not None:
            y = y * mask
        y = self.bn2(self.conv2(y))
        out = F.relu(x + y)
        return out if mask is None else out * mask


class PolicyHead(nn.Module):
    """A policy head: trunk features ``(B, C, H, W)`` and the cell mask to logits ``(B, A)``."""

    #: Whether :meth:`logits_at` of the legal actions alone costs much less than every
    #: action's logits, so that training and search should ask for those alone.
    cheaper_at_legal_actions: ClassVar[bool] = False

    def logits_at(self, x: torch.Tensor, mask: torch.Tensor | None, rows: torch.Tensor,
                  actions: torch.Tensor) -> torch.Tensor:
        """Return the logits ``(K,)`` of actions ``actions`` of batch rows ``rows``."""
        return self(x, mask)[rows, actions]

    def outputs(self) -> list[nn.Module]:
        """The layers that make the logits (zeroed where the network starts as its priors)."""
        raise NotImplementedError


class BilinearPolicy(PolicyHead):
    """Policy logits <q_from, k_to> / sqrt(d) + bias[kind] over a :class:`PairLayout`."""

    cheaper_at_legal_actions = True

    def __init__(self, channels: int, dim: int, layout: PairLayout,
                 cell_feature: np.ndarray) -> None:
        """``cell_feature[i]``: flat index of board cell ``i`` in the trunk's feature map."""
        super().__init__()
        n = len(cell_feature)
        pairs = np.asarray(layout.pairs, dtype=np.int64)
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.max() >= n or pairs.min() < -1:
            raise ValueError(f"pair layout must be (A, 2) cells in -1..{n - 1}")
        self.query = nn.Linear(channels, dim)
        self.key = nn.Linear(channels, dim)
        self.kind_bias = nn.Parameter(torch.zeros(layout.num_kinds))
        self.scale = dim ** -0.5
        both = (pairs[:, 0] >= 0) & (pairs[:, 1] >= 0)
        # an action without both cells scores 0 (it reads score 0 and is zeroed)
        index = np.where(both, pairs[:, 0] * n + pairs[:, 1], 0)
        self.register_buffer("cell_feature", torch.as_tensor(cell_feature, dtype=torch.long),
                             persistent=False)
        self.register_buffer("pair_index", torch.as_tensor(index), persistent=False)
        self.register_buffer("no_pair", torch.as_tensor(~both) if not both.all() else None,
                             persistent=False)
        self.register_buffer("kinds", torch.as_tensor(np.asarray(layout.kinds, dtype=np.int64)),
                             persistent=False)
        # each action's two cells (0 where it has none: its score is zeroed), for logits_at
        self.register_buffer("pair_from", torch.as_tensor(np.where(both, pairs[:, 0], 0)),
                             persistent=False)
        self.register_buffer("pair_to", torch.as_tensor(np.where(both, pairs[:, 1], 0)),
                             persistent=False)
        # an 8x8 board's cells and pairs are already in order (Ultima): skip two copies a call
        self.cells_in_order = bool(np.array_equal(cell_feature, np.arange(n)))
        self.pairs_in_order = bool(both.all() and np.array_equal(index, np.arange(n * n)))

    def _cells(self, x: torch.Tensor) -> torch.Tensor:
        """Return the board cells' features ``(B, N, C)`` of trunk features ``(B, C, H, W)``."""
        cells = x.flatten(2)
        if not self.cells_in_order:
            cells = cells[:, :, self.cell_feature]
        return cells.transpose(1, 2)

    def logits_at(self, x: torch.Tensor, mask: torch.Tensor | None, rows: torch.Tensor,
                  actions: torch.Tensor) -> torch.Tensor:
        """Return the logits ``(K,)`` of actions ``actions`` of batch rows ``rows``: those of
        :meth:`forward` up to rounding. A search needs only the legal actions, a few hundred
        of Whistling's 39,720, and the full (cell x cell) product costs most of a forward."""
        cells = self._cells(x)
        q = self.query(cells)[rows, self.pair_from[actions]]
        k = self.key(cells)[rows, self.pair_to[actions]]
        scores = (q * k).sum(1) * self.scale
        if self.no_pair is not None:
            scores = scores.masked_fill(self.no_pair[actions], 0.0)
        return scores + self.kind_bias[self.kinds[actions]]

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Map trunk features ``(B, C, H, W)`` to logits ``(B, A)`` (off-board grid points
        are never read: the cells are gathered)."""
        cells = self._cells(x)  # (B, N, C)
        scores = torch.bmm(self.query(cells), self.key(cells).transpose(1, 2)) * self.scale
        # (no copy of the n x n scores with a zero appended: a large copy per call)
        logits = scores.flatten(1)
        if not self.pairs_in_order:
            logits = logits.index_select(1, self.pair_index)
        if self.no_pair is not None:
            logits = logits.masked_fill(self.no_pair, 0.0)
        return logits + self.kind_bias[self.kinds]

    def outputs(self) -> list[nn.Module]:
        # the key at zero scores <q, k> = 0, and q still gets gradients
        return [self.key]


def policy_planes(channels: int, planes: int) -> nn.Sequential:
    """Return the 1x1 conv (batch norm, ReLU) to ``planes`` planes that the linear and conv
    policy heads start with."""
    return nn.Sequential(nn.Conv2d(channels, planes, 1, bias=False), nn.BatchNorm2d(planes),
                         nn.ReLU())


class LinearPolicy(PolicyHead):
    """A 1x1 conv to ``policy_channels`` planes, then one linear layer from all of them to
    every action's logit: fine for LOA's 513 actions."""

    def __init__(self, channels: int, cfg: ModelConfig, cells: int, num_actions: int) -> None:
        """``cells``: the trunk's grid points (height x width)."""
        super().__init__()
        self.conv = policy_planes(channels, cfg.policy_channels)
        self.fc = nn.Linear(cfg.policy_channels * cells, num_actions)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Map trunk features ``(B, C, H, W)`` (and the cell mask) to logits ``(B, A)``."""
        p = self.conv(x)
        if mask is not None:
            p = p * mask
        return self.fc(p.flatten(1))

    def outputs(self) -> list[nn.Module]:
        return [self.fc]


class CellPolicy(PolicyHead):
    """A 1x1 conv gives each board cell one logit per action that starts there (the game's
    :class:`ActionLayout`: Ultima's 64 destinations per origin, Whistling's 120 hops per cell);
    extra actions (LOA's pass) come from a linear layer on the pooled features."""

    def __init__(self, channels: int, cfg: ModelConfig, layout: ActionLayout,
                 feature_of: np.ndarray, num_actions: int) -> None:
        """``feature_of[i]``: flat index of observation grid point ``i`` in the trunk's grid."""
        super().__init__()
        self.conv = policy_planes(channels, cfg.policy_channels)
        if layout.num_actions != num_actions:
            raise ValueError(f"action layout covers {layout.num_actions} actions, the game "
                             f"has {num_actions}")
        self.cells = nn.Conv2d(cfg.policy_channels, layout.per_cell, 1)
        cell_grid = feature_of[np.asarray(layout.cell_grid)]
        if (cell_grid < 0).any():
            raise ValueError("a board cell of the action layout is off the internal grid")
        self.register_buffer("cell_grid", torch.as_tensor(cell_grid), persistent=False)
        self.extra = nn.Linear(channels, layout.extra) if layout.extra else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Map trunk features ``(B, C, H, W)`` (and the cell mask) to logits ``(B, A)``."""
        p = self.conv(x)
        if mask is not None:
            p = p * mask
        # (B, per_cell, H*W) -> the board cells -> (B, cells * per_cell), cell-major
        cells = self.cells(p).flatten(2)[:, :, self.cell_grid]
        logits = cells.transpose(1, 2).flatten(1)
        if self.extra is not None:
            pooled = x.mean(dim=(2, 3))
            logits = torch.cat([logits, self.extra(pooled)], dim=1)
        return logits

    def outputs(self) -> list[nn.Module]:
        return [self.cells] + ([self.extra] if self.extra is not None else [])


def policy_head(channels: int, cfg: ModelConfig, num_actions: int, cells: int,
                feature_of: np.ndarray, layout: ActionLayout | None,
                pairs: PairLayout | None) -> nn.Module:
    """Return the policy head: bilinear over the game's (from, to) ``pairs``, conv over its
    per-cell ``layout``, or linear (neither given); see :func:`policy_layout`."""
    if pairs is not None:
        if pairs.num_actions != num_actions:
            raise ValueError(f"pair layout covers {pairs.num_actions} actions, the game "
                             f"has {num_actions}")
        feature = feature_of[np.asarray(pairs.cell_grid)]
        if (feature < 0).any():
            raise ValueError("a board cell of the pair layout is off the internal grid")
        return BilinearPolicy(channels, cfg.bilinear_dim, pairs, feature)
    if layout is not None:
        return CellPolicy(channels, cfg, layout, feature_of, num_actions)
    return LinearPolicy(channels, cfg, cells, num_actions)


#: State-dict key prefixes of networks saved before the heads were modules of their own
#: (2026-12-06) -> today's: such files (the shipped networks among them) load unchanged.
_OLD_HEAD_KEYS = (("policy_conv.", "policy.conv."), ("policy_fc.", "policy.fc."),
                  ("policy_cells.", "policy.cells."), ("policy_extra.", "policy.extra."),
                  ("bilinear.", "policy."))


def _rename_old_head_keys(module: nn.Module, state_dict: dict, prefix: str, *_: object) -> None:
    """Load-state-dict pre-hook: rename an older file's policy head keys to today's."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        rest = key[len(prefix):]
        for old, new in _OLD_HEAD_KEYS:
            if rest.startswith(old):
                state_dict[prefix + new + rest[len(old):]] = state_dict.pop(key)
                break


class PolicyValueNet(nn.Module):
    """Residual conv net with a masked policy head and a tanh value head."""

    def __init__(self, obs_shape: tuple[int, int, int], num_actions: int, cfg: ModelConfig,
                 cell_mask_plane: int | None = None, layout: ActionLayout | None = None,
                 pairs: PairLayout | None = None, grid: InternalGrid | None = None,
                 game_name: str = "") -> None:
        super().__init__()
        h, w, c = obs_shape
        self.obs_shape = tuple(obs_shape)
        self.num_actions = int(num_actions)
        self.cell_mask_plane = cell_mask_plane if grid is None else None
        #: Game whose static evaluation feeds the value prior (see :mod:`.prior`).
        self.game_name = game_name
        self.value_prior = bool(cfg.value_prior)
        #: Weight of the game's action prior in the logits (``model.policy_prior``; 0: none).
        self.policy_prior = float(cfg.policy_prior)
        if (self.value_prior or self.policy_prior) and not game_name:
            raise ValueError("model.value and model.policy_prior priors need the game's name")
        self.grid = grid
        kernel_mask = None
        feature_of = np.arange(h * w)  # observation grid index -> trunk feature index
        if grid is not None:
            if len(grid.source) != grid.height * grid.width or grid.source.max() >= h * w:
                raise ValueError("internal grid does not fit the observation grid")
            src = np.where(grid.source >= 0, grid.source, h * w)  # h * w: an appended zero
            self.register_buffer("grid_source", torch.as_tensor(src), persistent=False)
            self.register_buffer("grid_mask", torch.as_tensor(
                (grid.source >= 0).astype(np.float32)).view(1, 1, grid.height, grid.width),
                persistent=False)
            kernel_mask = np.asarray(grid.kernel_mask, dtype=np.float32)
            feature_of = grid.inverse(h * w)
            h, w = grid.height, grid.width
        ch = cfg.channels
        #: Rows of one trunk call in eval mode (:meth:`_trunk`); the bench
        #: ``bench/net_inference.py`` measures other values.
        self.trunk_rows = max(2, TRUNK_CHUNK_BYTES // (4 * ch * h * w))
        self.stem = nn.Sequential(conv3x3(c, ch, kernel_mask), nn.BatchNorm2d(ch), nn.ReLU())
        self.blocks = nn.ModuleList(ResBlock(ch, kernel_mask) for _ in range(cfg.blocks))
        self.policy = policy_head(ch, cfg, num_actions, h * w, feature_of, layout, pairs)
        self.value_conv = nn.Sequential(nn.Conv2d(ch, 1, 1, bias=False), nn.BatchNorm2d(1),
                                        nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(h * w, cfg.value_hidden), nn.ReLU(),
                                      nn.Linear(cfg.value_hidden, 1))
        self.register_load_state_dict_pre_hook(_rename_old_head_keys)
        if cfg.zero_init_heads:
            self._zero_heads()

    def _zero_heads(self) -> None:
        """Zero the value head's last layer and the policy head's output (see the options)."""
        with torch.no_grad():
            for layer in [self.value_fc[-1], *self.policy.outputs()]:
                for param in layer.parameters():
                    param.zero_()

    def forward(self, obs: torch.Tensor, prior: torch.Tensor | None = None,
                action_prior: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Map a batch ``(B, H, W, C)`` of observations to (logits ``(B, A)``, value ``(B,)``).

        The logits are raw: mask them with :func:`masked_log_softmax` before use. ``prior``
        ``(B,)`` (static evaluation / scale, :class:`boardzoo.training.knowledge.Knowledge`) is
        required by a ``value_prior`` network and ignored by others; ``action_prior``
        ``(B, A)`` (:class:`boardzoo.training.knowledge.Knowledge`) likewise by a
        ``policy_prior`` network.
        """
        x, mask = self._trunk(obs)
        logits = self.policy(x, mask)
        if self.policy_prior:
            logits = logits + self.prior_logits(self._need(action_prior).to(logits.dtype))
        return logits, self._value(x, mask, prior)

    def forward_at(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor,
                   prior: torch.Tensor | None = None,
                   action_prior: torch.Tensor | None = None,
                   ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (the logits ``(K,)`` of actions ``actions`` of rows ``rows``, values
        ``(B,)``): :meth:`forward`'s ``logits[rows, actions]`` and values, up to rounding,
        without scoring every action (the bilinear head; other heads gather)."""
        x, mask = self._trunk(obs)
        logits = self.policy.logits_at(x, mask, rows, actions)
        if self.policy_prior:
            at = self._need(action_prior)[rows, actions]
            logits = logits + self.prior_logits(at.to(logits.dtype))
        return logits, self._value(x, mask, prior)

    @staticmethod
    def _need(action_prior: torch.Tensor | None) -> torch.Tensor:
        """Return the action prior a ``policy_prior`` network was given, or refuse."""
        if action_prior is None:
            raise ValueError("this network has model.policy_prior: pass the action prior "
                             "(boardzoo.training.knowledge.Knowledge) to forward")
        return action_prior

    def _trunk(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Return the trunk's features ``(B, C, H, W)`` of observations and the cell mask;
        in eval mode a batch of more than :attr:`trunk_rows` rows goes through the layers
        in near-equal chunks (see :data:`TRUNK_CHUNK_BYTES`)."""
        x = obs.permute(0, 3, 1, 2)
        mask = None
        if self.grid is not None:
            b, c = x.shape[:2]
            flat = torch.cat([x.flatten(2), x.new_zeros(b, c, 1)], dim=2)
            x = flat[:, :, self.grid_source].view(b, c, self.grid.height, self.grid.width)
            mask = self.grid_mask
        elif self.cell_mask_plane is not None:
            mask = x[:, self.cell_mask_plane : self.cell_mask_plane + 1]
        # near-equal chunks, none of one row: a one-row convolution takes another
        # algorithm, whose results differ in the last bits from the same row's in a batch
        rows = len(x)
        parts = 1 if self.training else min(-(-rows // self.trunk_rows), rows // 2)
        if parts <= 1:
            return self._layers(x, mask), mask
        if mask is None or mask.shape[0] == 1:
            chunks = [self._layers(part, mask) for part in torch.tensor_split(x, parts)]
        else:
            chunks = [self._layers(part, m) for part, m in
                      zip(torch.tensor_split(x, parts), torch.tensor_split(mask, parts),
                          strict=True)]
        return torch.cat(chunks), mask

    def _layers(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Return the stem's and the residual blocks' features of trunk inputs ``x``."""
        x = self.stem(x)
        if mask is not None:
            x = x * mask
        for block in self.blocks:
            x = block(x, mask)
        return x

    def _value(self, x: torch.Tensor, mask: torch.Tensor | None,
               prior: torch.Tensor | None) -> torch.Tensor:
        """Return the value head's values ``(B,)`` (with the value prior where it has one)."""
        v = self.value_conv(x)
        if mask is not None:
            v = v * mask
        if not self.value_prior:
            return torch.tanh(self.value_fc(v.flatten(1))).squeeze(1)
        if prior is None:
            raise ValueError("this network has a value prior (model.value): pass the static "
                             "evaluation prior (boardzoo.training.knowledge.Knowledge) to forward")
        z = self.value_fc(v.flatten(1)).squeeze(1) + prior.to(v.dtype)
        return torch.tanh(z.clamp(-PRIOR_CLIP, PRIOR_CLIP))

    def prior_logits(self, action_prior: torch.Tensor) -> torch.Tensor:
        """Return the action prior's logits, ``policy_prior`` x ``action_prior``: what the
        fresh network's policy is, and what ``train.prior_kl`` pulls the learnt one toward."""
        return self.policy_prior * action_prior


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return log-probabilities over the legal actions (``mask`` true) and ``-inf`` elsewhere.

    Every row must have at least one legal action.
    """
    return torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return probabilities over the legal actions; illegal actions get exactly 0."""
    return torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def cell_mask_plane(cfg) -> int | None:
    """The real-cell plane: the config's ``model.cell_mask_plane``, else the game
    descriptor's (irregular boards), else None."""
    if cfg.model.cell_mask_plane >= 0:
        return cfg.model.cell_mask_plane
    return get_spec(cfg.game).cell_mask_plane


def policy_layout(cfg, game) -> ActionLayout | None:
    """The action layout of the conv policy head, or None for the linear or bilinear head."""
    head = cfg.model.policy_head
    layout = get_spec(cfg.game).action_layout if head not in ("linear", "bilinear") else None
    if head == "conv" and layout is None:
        raise ConfigError(f"model.policy_head: conv needs an action layout, and {cfg.game} "
                          f"has none; use linear")
    if head == "auto" and game.num_actions <= 1024:
        return None  # small action space: the linear head is cheap
    return layout


def policy_pairs(cfg, game) -> PairLayout | None:
    """The pair layout of the bilinear policy head, or None for the other heads."""
    if cfg.model.policy_head != "bilinear":
        return None
    spec = get_spec(cfg.game)
    pairs = spec.pair_layout() if spec.pair_layout is not None else None
    if pairs is None:
        raise ConfigError(f"model.policy_head: bilinear needs the game's actions as "
                          f"(from, to) cell pairs, and {cfg.game} has none; use linear or conv")
    return pairs


def trunk_grid(cfg, game) -> InternalGrid | None:
    """The internal grid of the trunk (``model.internal_grid``), or None."""
    if not cfg.model.internal_grid:
        return None
    grid = get_spec(cfg.game).internal_grid
    if grid is None:
        raise ConfigError(f"model.internal_grid: {cfg.game} has no internal grid; set it false")
    return grid


def build_net(cfg, game) -> PolicyValueNet:
    """Return a fresh network for ``game`` (an ActionGame) as ``cfg`` (a Config) describes."""
    return PolicyValueNet(tuple(game.observation_shape), game.num_actions, cfg.model,
                          cell_mask_plane(cfg), policy_layout(cfg, game),
                          policy_pairs(cfg, game), trunk_grid(cfg, game), cfg.game)
