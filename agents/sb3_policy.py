"""Stable-Baselines3 policies as boardzoo agents (needs the ``sb3`` extra).

``sb3:PATH`` loads a saved sb3-contrib ``MaskablePPO`` model (a ``.zip``) and plays
it as an agent anywhere an agent spec goes (``play``, ``tournament``, a
:class:`~boardzoo.agents.single_agent.SingleAgentEnv` opponent, hence SB3
self-play against a frozen copy). ``sb3:PATH,stochastic`` samples instead of
taking the most likely action (:class:`~boardzoo.agents.policy.PolicyAgent` plays it).

A model zip holds the weights (``policy.pth``, read by torch with ``weights_only=True``)
and a JSON ``data`` file in which SB3 stores each object that JSON cannot hold as a
cloudpickle (``:serialized:``), which runs code when loaded. :func:`load_model` never
unpickles those: it rebuilds each of them from the plain JSON next to it (the policy and
buffer classes and the features extractor from a short list of known names, the spaces
from the game) and hands them to SB3 as ``custom_objects``. ``sb3:PATH,trust_code`` loads
the file with SB3's own unpickling instead (only for files one trusts as one trusts code).

:class:`PlanesCNN` is the features extractor for the planes (channels last) that
the example ``training/examples/sb3_maskable_ppo.py`` trains with ``--policy cnn``;
it lives here so that saved models load wherever boardzoo is installed.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, FlattenExtractor
from torch import nn

from boardzoo.envs.core.registry import get_spec

from .agent_spec import AgentSpec
from .base import TRUST_OPTION as TRUST
from .base import UnknownAgentError
from .policy import PolicyAgent, check_observation_shape, model_kind

MAX_DATA_BYTES = 10_000_000  # SB3's data file is a few KB; a bigger one is not a model


class PlanesCNN(BaseFeaturesExtractor):
    """Two 3x3 conv layers over (height, width, planes) observations, then a linear layer."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 128,
                 channels: int = 32) -> None:
        super().__init__(observation_space, features_dim)
        h, w, c = observation_space.shape
        self.net = nn.Sequential(
            nn.Conv2d(c, channels, 3, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(channels * h * w, features_dim), nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Map a batch of channels-last planes to features."""
        return self.net(observations.permute(0, 3, 1, 2))


def _known(*classes: type) -> dict[str, type]:
    """Map the text SB3 writes for each class (``str(cls)``) to the class."""
    return {str(c): c for c in classes}


#: Most weights the layer sizes of a file's policy_kwargs may ask for (about 256 MB of
#: float32; SB3's default MLP asks for about 8,000 and boardzoo's PlanesCNN tens of thousands).
MAX_KWARGS_WEIGHT = 1 << 26

#: Classes a policy_kwargs value may name without unpickling (SB3 writes ``str(cls)``).
KNOWN_CLASSES = _known(PlanesCNN, FlattenExtractor, nn.ReLU, nn.Tanh, nn.LeakyReLU, nn.ELU,
                       nn.GELU, nn.SiLU, torch.optim.Adam, torch.optim.AdamW,
                       torch.optim.RMSprop, torch.optim.SGD)
#: The classes a MaskablePPO's policy_class / rollout_buffer_class may be, by SB3's JSON view
#: of them (their module and the qualified name in their ``__init__``'s text).
POLICIES = {("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"):
            MaskableActorCriticPolicy}
BUFFERS = {("sb3_contrib.common.maskable.buffers", "MaskableRolloutBuffer"):
           MaskableRolloutBuffer}


def _named_class(item: Any, known: dict[tuple[str, str], type], key: str) -> type:
    """Return the class that SB3's JSON view ``item`` of a pickled class names in ``known``."""
    view = item if isinstance(item, dict) else {}
    init = view.get("__init__")
    match = re.match(r"<function (\w+)\.__init__ ", init if isinstance(init, str) else "")
    name = (view.get("__module__"), match.group(1) if match else None)
    if name not in known:
        raise ValueError(f"its {key} is not one boardzoo knows ({'.'.join(map(str, name))})")
    return known[name]


def _policy_kwargs(item: Any) -> dict[str, Any]:
    """Return policy_kwargs rebuilt from their JSON view: plain values as they are, classes
    only from :data:`KNOWN_CLASSES`."""
    if not isinstance(item, dict):
        raise ValueError("its policy_kwargs are not a dict")
    if ":serialized:" in item and item.get(":type:") != "<class 'dict'>":
        raise ValueError(f"its policy_kwargs are a {item.get(':type:')}")
    out = {}
    for key, value in item.items():
        if key in (":type:", ":serialized:"):
            continue
        if isinstance(value, str) and value.startswith("<class "):
            if value not in KNOWN_CLASSES:
                raise ValueError(f"its policy_kwargs name {value[:100]} for {key!r}")
            value = KNOWN_CLASSES[value]
        out[key] = value
    if _size_weight(out) > MAX_KWARGS_WEIGHT:
        raise ValueError("its policy_kwargs ask for a network too large to build "
                         f"(layer sizes allow over {MAX_KWARGS_WEIGHT:,} weights)")
    return out


def _size_weight(value: Any, depth: int = 0) -> int:
    """Return the sum of squares of the integers in ``value`` (nested lists and dicts): a
    bound on the weights of the layers these sizes build (a layer a -> b has a x b <=
    (a^2 + b^2) / 2), so that a crafted file cannot make SB3 allocate without limit."""
    if depth > 8:
        return MAX_KWARGS_WEIGHT + 1
    if isinstance(value, dict):
        return sum(_size_weight(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_size_weight(v, depth + 1) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return min(abs(value), MAX_KWARGS_WEIGHT + 1) ** 2
    return 0


def safe_objects(data: dict[str, Any], game: str, where: str) -> dict[str, Any]:
    """Return SB3 ``custom_objects`` that replace every pickled entry of the ``data`` of the
    model at ``where`` (so that SB3 unpickles none); ValueError naming one that cannot be
    rebuilt, UnknownAgentError if the model was made for other observations."""
    env = get_spec(game).actions
    objects: dict[str, Any] = {
        "observation_space": gymnasium.spaces.Box(0.0, 1.0, shape=env.observation_shape,
                                                  dtype="float32"),
        "action_space": gymnasium.spaces.Discrete(env.num_actions),
        "policy_class": _named_class(data.get("policy_class"), POLICIES, "policy_class"),
        "policy_kwargs": _policy_kwargs(data.get("policy_kwargs", {})),
    }
    obs = data.get("observation_space")
    shape = tuple(obs.get("_shape") or ()) if isinstance(obs, dict) else ()
    check_observation_shape("sb3", where, shape, game)
    act = data.get("action_space")
    if not isinstance(act, dict) or str(act.get("n")) != str(env.num_actions):
        n = act.get("n") if isinstance(act, dict) else None
        raise ValueError(f"it has {n!r} actions, {game} has {env.num_actions}")
    for key, item in data.items():
        if key in objects or not (isinstance(item, dict) and ":serialized:" in item):
            continue
        if key == "rollout_buffer_class":
            objects[key] = _named_class(item, BUFFERS, key)
        elif key in ("lr_schedule", "clip_range", "clip_range_vf"):
            value = re.search(r"val=([0-9.eE+-]+)\)", str(item.get("value_schedule", "")))
            objects[key] = float(value.group(1)) if value else 0.0  # training only
        else:
            objects[key] = None  # training state (last observations, episode buffers)
    return objects


def load_model(path: str | Path, game: str, trust_code: bool = False) -> Any:
    """Load a saved MaskablePPO model on the CPU without unpickling anything from it (unless
    ``trust_code``); UnknownAgentError if it cannot be read or rebuilt."""
    path = Path(path)
    if not path.is_file():
        raise UnknownAgentError(f"sb3: no model file at {str(path)!r}")
    try:
        raw = path.read_bytes()
        if trust_code:
            return MaskablePPO.load(io.BytesIO(raw), device="cpu")
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            if archive.getinfo("data").file_size > MAX_DATA_BYTES:
                raise ValueError("its data file is too large")
            data = json.loads(archive.read("data"))
        if not isinstance(data, dict):
            raise ValueError("its data file is not a JSON object")
        objects = safe_objects(data, game, str(path))
        return MaskablePPO.load(io.BytesIO(raw), device="cpu", custom_objects=objects)
    except UnknownAgentError:
        raise
    except Exception as exc:  # a zip SB3 cannot read: say so in one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        hint = "" if trust_code else (f"; sb3:PATH,{TRUST} would let SB3 unpickle it, which "
                                      "runs any code the file holds")
        what = "a MaskablePPO model" + ("" if trust_code else " boardzoo can load safely")
        raise UnknownAgentError(f"sb3: {str(path)!r} is not {what} ({first}){hint}") from None


#: ``sb3:PATH[,stochastic][,trust_code]``.
AGENT_KIND = model_kind("sb3", "a model file", "let SB3 unpickle the file, which runs any code "
                        "it holds")


def from_spec(spec: AgentSpec, game: str, seed: int | None) -> PolicyAgent:
    """Build ``sb3:PATH[,stochastic][,trust_code]`` for ``game``."""
    opts = AGENT_KIND.bind(spec)
    where = opts["path"]
    model = load_model(where, game, trust_code=opts[TRUST])
    if seed is not None:
        model.set_random_seed(seed)
    check_observation_shape("sb3", where, tuple(model.observation_space.shape or ()), game)
    return PolicyAgent(model, game, deterministic=not opts["stochastic"])
