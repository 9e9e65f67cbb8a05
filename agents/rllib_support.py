"""RLlib (new API stack) pieces for boardzoo games (needs the ``rllib`` extra).

- :func:`register_env`: a game as an RLlib multi-agent env, through RLlib's own
  ``PettingZooEnv`` wrapper around the AEC env (only the agent to move gets an
  observation; both get their reward at the end).
- :class:`MaskedPlanesModule`: a PPO-ready torch ``RLModule`` (conv trunk, policy and
  value heads) that sets the logits of illegal actions to the float minimum before any
  distribution is built, in every forward pass (inference, exploration, training).
- :class:`MaskedRandomModule`: a non-learning opponent, uniform over the legal actions.
- :class:`SeatMapping`: the agent-to-module mapping (self-play of one shared module,
  with some episodes against an opponent module).
- :class:`MaskCheckCallback`: checks every action of every training episode against
  the mask it was chosen under, and logs the learner's results per opponent.
- :class:`RLlibAgent`: a trained module as a boardzoo agent (arena, ``play``), also the
  agent spec ``rllib:PATH,trust_code`` (a module checkpoint folder written by
  ``save_to_path``). RLlib loads such a folder by unpickling its files, which runs any code
  they hold, so the spec must say ``trust_code`` (:data:`~boardzoo.agents.base.TRUST_OPTION`;
  checked before this module is imported).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env as _ray_register_env
from torch import nn

from boardzoo.envs.aec import BoardGameEnv, wrap
from boardzoo.envs.core.registry import get_spec

from .agent_spec import AgentSpec
from .base import UnknownAgentError
from .policy import ActionAgent, check_observation_shape, model_kind

MAIN = "main"  # the learning module's id
RANDOM = "random"  # the masked-random opponent's id
SEATS = ("player_0", "player_1")


def make_env(game: str, max_moves: int | None = None) -> PettingZooEnv:
    """Return ``game``'s AEC env (PettingZoo's standard wrappers) in RLlib's PettingZooEnv."""
    return PettingZooEnv(wrap(BoardGameEnv(get_spec(game), max_moves=max_moves)))


def env_name(game: str, max_moves: int | None = None) -> str:
    """Return the name :func:`register_env` registers ``game`` under."""
    return f"boardzoo_{game}" + (f"_m{max_moves}" if max_moves else "")


def register_env(game: str, max_moves: int | None = None) -> str:
    """Register ``game`` with Ray's env registry (for ``config.environment(name)``); return
    the name."""
    name = env_name(game, max_moves)
    _ray_register_env(name, lambda _config: make_env(game, max_moves))
    return name


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return ``logits`` with every action the mask forbids set to the dtype's minimum.

    The minimum rather than -inf: a softmax, log-prob, entropy or KL over it stays finite
    (an all-zero mask, as on a finished game's last observation, gives a uniform
    distribution instead of NaN), and its probability is exactly 0 next to any legal one.
    """
    return torch.where(mask.bool(), logits, torch.finfo(logits.dtype).min)


class MaskedPlanesModule(TorchRLModule, ValueFunctionAPI):
    """Conv trunk over the planes, a masked policy head and a value head (PPO).

    Observations are the AEC env's dicts ``{"observation": planes (H, W, C),
    "action_mask": (A,)}``. ``model_config`` keys: ``channels`` (32), ``hidden`` (128),
    ``head`` (64).
    """

    def setup(self) -> None:
        """Build the layers from the observation space and ``model_config``."""
        cfg = {"channels": 32, "hidden": 128, "head": 64, **(self.model_config or {})}
        h, w, c = self.observation_space["observation"].shape
        ch, hidden, head = int(cfg["channels"]), int(cfg["hidden"]), int(cfg["head"])
        self.trunk = nn.Sequential(
            nn.Conv2d(c, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(ch * h * w, hidden), nn.ReLU(),
        )
        self.pi = nn.Sequential(nn.Linear(hidden, head), nn.ReLU(),
                                nn.Linear(head, self.action_space.n))
        self.vf = nn.Sequential(nn.Linear(hidden, head), nn.ReLU(), nn.Linear(head, 1))

    def _embed(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Return the trunk's features of a batch of channels-last planes."""
        return self.trunk(obs["observation"].float().permute(0, 3, 1, 2))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Return masked logits (and the features, reused by the value head in training)."""
        obs = batch[Columns.OBS]
        emb = self._embed(obs)
        logits = mask_logits(self.pi(emb), obs["action_mask"])
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: emb}

    def compute_values(self, batch: dict[str, Any],
                       embeddings: torch.Tensor | None = None) -> torch.Tensor:
        """Return the value estimate per observation (features recomputed if not given)."""
        if embeddings is None:
            embeddings = self._embed(batch[Columns.OBS])
        return self.vf(embeddings).squeeze(-1)


class MaskedRandomModule(RLModule):
    """Uniform over the legal actions; never trained (keep it out of ``policies_to_train``).

    A plain ``RLModule`` without parameters, as RLlib's own random module: the learner
    builds optimizers only for torch modules. It returns actions, not logits, so the env
    runner samples nothing itself. ``model_config={"seed": S}`` seeds it.
    """

    def setup(self) -> None:
        """Create the module's random generator."""
        self.rng = np.random.default_rng((self.model_config or {}).get("seed"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Return one uniformly drawn legal action per observation."""
        masks = np.asarray(batch[Columns.OBS]["action_mask"])
        return {Columns.ACTIONS: np.array([self.rng.choice(np.flatnonzero(m)) if m.any() else 0
                                           for m in masks])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Refuse: this module has nothing to learn."""
        raise NotImplementedError("MaskedRandomModule is not trainable")


class SeatMapping:
    """Maps the two seats to modules, per episode: a share ``opponent_share`` of episodes
    put ``opponent`` in one seat (which one alternates, by the episode id), the rest are
    self-play with :data:`MAIN` in both seats (picklable, for remote env runners)."""

    def __init__(self, opponent_share: float = 0.0, opponent: str = RANDOM) -> None:
        """Remember the share of episodes against ``opponent`` (0: pure self-play)."""
        self.opponent_share = float(opponent_share)
        self.opponent = opponent

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        """Return the module id that plays ``agent_id`` in ``episode``."""
        h = zlib.crc32(str(episode.id_).encode())
        if (h >> 1) % 1000 >= self.opponent_share * 1000:
            return MAIN
        return MAIN if SEATS.index(agent_id) == h % 2 else self.opponent


def check_new_actions(episode: Any, next_t: dict[str, int]) -> tuple[int, int]:
    """Check the actions ``episode`` (a multi-agent episode chunk) recorded since the last
    call against the ``action_mask`` of the observation each was chosen on; return
    (actions checked, actions the mask forbade). ``next_t`` maps each agent to the first
    episode step not yet checked and is updated (steps count across chunks)."""
    checked = illegal = 0
    for aid, sa in episode.agent_episodes.items():
        for i in range(max(next_t.get(aid, 0) - sa.t_started, 0), len(sa)):
            mask = np.asarray(sa.get_observations(i)["action_mask"])
            checked += 1
            illegal += int(mask[int(sa.get_actions(i))] == 0)
        next_t[aid] = max(next_t.get(aid, 0), sa.t_started + len(sa))
    return checked, illegal


class MaskCheckCallback(RLlibCallback):
    """Checks every action of every training episode against the mask it was chosen under,
    as it is sampled, and logs per finished episode: ``actions_checked`` and
    ``illegal_actions`` (totals since the start) and the learner's score against each
    opponent (``score_vs_<module>``: 1 win, 0.5 draw, 0 loss; mean over 100 episodes).

    Why while sampling: the episode chunks an env runner returns may be changed in place
    afterwards (the learner's connectors add a bootstrap step to each when the learner
    shares the process), so a finished episode's earlier chunks are no record of play.
    """

    def __init__(self) -> None:
        """Start with no episode in progress."""
        super().__init__()
        self.progress: dict[str, tuple[dict[str, int], list[int]]] = {}

    def _check(self, episode: Any) -> list[int]:
        """Check ``episode``'s new actions; return its running [checked, illegal] counts."""
        next_t, counts = self.progress.setdefault(episode.id_, ({}, [0, 0]))
        checked, illegal = check_new_actions(episode, next_t)
        counts[0] += checked
        counts[1] += illegal
        return counts

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        """Check the action(s) the last env step recorded."""
        self._check(episode)

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None,
                       **kwargs: Any) -> None:
        """Check the last actions, log the episode's counts and the result of its game."""
        checked, illegal = self._check(episode)
        del self.progress[episode.id_]
        metrics_logger.log_value("actions_checked", checked, reduce="lifetime_sum")
        metrics_logger.log_value("illegal_actions", illegal, reduce="lifetime_sum")
        modules = {aid: episode.module_for(aid) for aid in SEATS}
        if list(modules.values()).count(MAIN) != 1:
            return  # self-play: one module's win is its own loss
        main = next(a for a, m in modules.items() if m == MAIN)
        other = modules[SEATS[1 - SEATS.index(main)]]
        # the reward comes only at the end, so the last chunk holds the result
        ret = episode.agent_episodes[main].get_return()
        metrics_logger.log_value(f"score_vs_{other}", (np.sign(ret) + 1) / 2, reduce="mean",
                                 window=100)


class RLlibAgent(ActionAgent):
    """A (masked) RLlib module as a boardzoo agent: the most likely legal action, or a
    sample from the masked distribution with ``deterministic=False``."""

    def __init__(self, module: RLModule, game: str, deterministic: bool = True,
                 seed: int | None = None) -> None:
        """Wrap ``module`` (observations as in :func:`make_env`) for ``game``."""
        self.module = module
        self.actions = get_spec(game).actions
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.counters = {"actions": 0, "illegal": 0}

    def select_action(self, state: Any) -> int:
        """Return the module's action in action state ``state`` (always a legal one)."""
        actions = self.actions
        mask = actions.action_mask(state)
        obs = {"observation": torch.from_numpy(actions.observation(state, actions.to_move(state)))
               [None], "action_mask": torch.from_numpy(mask)[None]}
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        logits = out[Columns.ACTION_DIST_INPUTS][0].double().numpy()
        if self.deterministic:
            action = int(np.argmax(logits))
        else:
            p = np.exp(logits - logits.max())
            action = int(self.rng.choice(len(p), p=p / p.sum()))
        self.counters["actions"] += 1
        if mask[action]:
            return action
        self.counters["illegal"] += 1  # an unmasked module: play the first legal action
        return int(np.flatnonzero(mask)[0])

    def stats(self) -> dict[str, float]:
        """Return the counts of actions chosen and of illegal ones replaced."""
        return dict(self.counters)


def load_module(path: str | Path) -> RLModule:
    """Load an RLModule checkpoint folder (``module.save_to_path``) on the CPU (RLlib
    unpickles its files: only for folders trusted as code)."""
    path = Path(path)
    if not path.is_dir():
        raise UnknownAgentError(f"rllib: no module checkpoint folder at {str(path)!r}")
    try:
        return RLModule.from_checkpoint(str(path.resolve()))
    except Exception as exc:  # not an RLModule checkpoint: say so in one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UnknownAgentError(f"rllib: {str(path)!r} is not an RLModule checkpoint "
                                f"({first})") from None


#: ``rllib:PATH,trust_code[,stochastic]`` (the factory refuses a spec without trust_code).
AGENT_KIND = model_kind("rllib", "a module folder", "let RLlib unpickle the folder's files, "
                        "which runs any code they hold (required)")


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> RLlibAgent:
    """Build ``rllib:PATH,trust_code[,stochastic]`` for ``game``."""
    opts = AGENT_KIND.bind(spec)
    where = opts["path"]
    module = load_module(where)
    check_observation_shape("rllib", where, module.observation_space["observation"].shape, game)
    return RLlibAgent(module, game, deterministic=not opts["stochastic"], seed=seed)
