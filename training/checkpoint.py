"""Checkpoint files: atomic saves, safe loads, clear errors.

Two kinds, both plain ``torch.save`` dicts of tensors, numbers, strings, lists
and dicts, so that :func:`torch.load` runs with ``weights_only=True`` (a
checkpoint can never run code):

* a **training checkpoint** (``RUN/checkpoint.pt``): format, game, config,
  model and optimiser state dicts, iteration, replay buffer (contents and
  pointer), RNG states, best-model weights and elapsed time: everything
  ``--resume`` needs;
* a **model file** (``RUN/best.pt``, ``RUN/model.pt``, the shipped nets):
  format, game, config, observation shape, action count, model state dict and
  a note of how it was made. This is what ``checkpoint:PATH`` plays, and what
  ``boardzoo train --init-from`` starts a new run from (:func:`load_initial_weights`).

Saves write ``NAME.tmp`` in the same folder, flush it to disk and
``os.replace`` it over ``NAME``, so a kill at any moment leaves either the old
or the new file, never half of one.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any, BinaryIO

import torch

from boardzoo.envs.core.files import write_atomic
from boardzoo.envs.core.game import BoardzooError

from .config import ConfigError, check_file_config, from_saved, model_differences

FORMAT = "boardzoo-checkpoint-v1"
MODEL_FORMAT = "boardzoo-model-v1"


class CheckpointError(BoardzooError):
    """A checkpoint that is missing, corrupt, or does not match what it is used for."""


def save_atomic(obj: dict[str, Any], path: str | Path) -> None:
    """Write ``obj`` with torch.save to a temp file, fsync it, then rename over ``path``.

    A failed write (a full disk) removes the temp file, leaves ``path`` as it was and raises
    OSError naming ``path`` (torch reports it as a RuntimeError "unexpected pos" whose
    context is the OSError)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def save(f: BinaryIO) -> None:
        try:
            torch.save(obj, f)
        except RuntimeError as exc:  # torch's report of a failed write: raise its OSError
            if not isinstance(exc.__context__, OSError):
                raise
            raise exc.__context__ from None

    write_atomic(path, save)


def load(path: str | Path, kinds: tuple[str, ...] = (FORMAT, MODEL_FORMAT)) -> dict[str, Any]:
    """Load a checkpoint or model file safely; raise CheckpointError with the reason."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a folder; name a file in it "
                              f"(a run's best.pt, model.pt or checkpoint.pt)")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} not found")
    try:
        with warnings.catch_warnings():  # a plain pickle makes torch warn: one line is enough
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # corrupt zip, truncated file, a pickle that wants code, ...
        # torch's own text advises weights_only=False, which must never be followed for a
        # file from elsewhere, so only the kind of failure is reported
        raise CheckpointError(
            f"checkpoint {str(path)!r} is corrupt or not a boardzoo checkpoint "
            f"({type(exc).__name__}; it is only ever loaded with weights_only=True)"
        ) from None
    if not isinstance(data, dict) or data.get("format") not in kinds:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CheckpointError(f"{str(path)!r} is not a boardzoo checkpoint of the expected kind "
                              f"(format {found!r}; expected {' or '.join(kinds)})")
    for key in ("game", "config", "model"):
        if key not in data:
            raise CheckpointError(f"checkpoint {str(path)!r} is incomplete: no {key!r}")
    try:  # a small config with sane sizes before anything reads it or builds its network
        check_file_config(data["config"])
    except ConfigError as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has an invalid config: {exc}") from None
    return data


def model_file(game: str, cfg_dict: dict[str, Any], obs_shape: tuple[int, ...],
               num_actions: int, state_dict: dict[str, torch.Tensor],
               note: str = "") -> dict[str, Any]:
    """Return the dict of a model file (see module docstring)."""
    return {"format": MODEL_FORMAT, "game": game, "config": cfg_dict,
            "obs_shape": list(obs_shape), "num_actions": int(num_actions),
            "model": {k: v.detach().clone() for k, v in state_dict.items()}, "note": note}


def load_initial_weights(net: torch.nn.Module, cfg: Any, path: str | Path,
                         any_value: bool = False) -> None:
    """Load the weights of the model file ``path`` into ``net`` (``boardzoo train
    --init-from``); CheckpointError if they do not fit (another game, another model config,
    other shapes). ``any_value``: the file's model may differ in ``model.value`` (the kinds
    share their weights' shapes: a ``static`` value's head, never trained, can start a
    ``prior`` one that learns)."""
    data = load(path)
    if data["game"] != cfg.game:
        raise CheckpointError(f"--init-from {str(path)!r} is a network for {data['game']}, "
                              f"not {cfg.game}")
    try:
        saved = from_saved(data["config"]).model
    except ConfigError as exc:
        raise CheckpointError(f"--init-from {str(path)!r} has an invalid config: {exc}") \
            from None
    if any_value:
        saved = dataclasses.replace(saved, value=cfg.model.value)
    if saved != cfg.model:
        raise CheckpointError(f"--init-from {str(path)!r} has another model: "
                              f"{model_differences(saved, cfg.model)} (file -> config)")
    try:
        net.load_state_dict(data["model"])
    except (RuntimeError, KeyError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else repr(exc)
        raise CheckpointError(f"--init-from {str(path)!r} does not fit the network "
                              f"({first})") from None
