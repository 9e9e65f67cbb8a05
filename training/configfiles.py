"""The training configs shipped with boardzoo (package data of ``boardzoo.configs``), found by
name: ``boardzoo train --config loa`` and ``boardzoo config list|show|copy``.

An installed wheel has no ``configs/`` folder beside the user's files, so ``--config`` takes a
shipped config's name as well as a path; a file that exists wins over a name.
"""

from __future__ import annotations

import argparse
import importlib.resources
import os
import sys
from pathlib import Path

from boardzoo.envs.core.files import naming, write_atomic

from .config import ConfigError

#: The package whose ``<name>.yaml`` files are the shipped configs (the folder configs/).
CONFIGS_PACKAGE = "boardzoo.configs"


def configs_dir() -> Path:
    """Return the folder of the shipped configs, wherever the package is installed."""
    return Path(str(importlib.resources.files(CONFIGS_PACKAGE)))


def shipped_names() -> list[str]:
    """Return the names of the shipped configs, sorted (``loa``, ``tiny``, ...)."""
    return sorted(p.stem for p in configs_dir().glob("*.yaml"))


def _names_text() -> str:
    return ", ".join(shipped_names())


def shipped_config(name: str) -> Path:
    """Return the file of the shipped config ``name``; ConfigError naming the shipped ones."""
    if name not in shipped_names():
        raise ConfigError(f"unknown config {name!r}; shipped configs: {_names_text()}")
    return configs_dir() / f"{name}.yaml"


def resolve_config(text: str) -> tuple[Path, bool]:
    """Return (file, shipped) for ``--config TEXT``: an existing file, else a shipped config's
    name; neither is a ConfigError that lists the shipped names."""
    path = Path(text)
    if path.is_file():
        return path, False
    if text in shipped_names():
        return configs_dir() / f"{text}.yaml", True
    if path.exists():  # a folder or the like: load_config reports why it cannot be read
        return path, False
    raise ConfigError(f"config {text!r} is neither a file nor a shipped config name "
                      f"(shipped: {_names_text()}; see boardzoo config list)")


def copy_config(name: str, dest: str | None, force: bool = False) -> Path:
    """Write the shipped config ``name`` to ``dest`` (default ``./NAME.yaml``; a folder gets
    ``NAME.yaml`` inside) atomically; refuse to overwrite a file unless ``force``."""
    source = shipped_config(name)
    target = Path(dest) if dest else Path(f"{name}.yaml")
    if target.is_dir():
        target = target / f"{name}.yaml"
    elif dest and dest.endswith(("/", os.sep)):
        raise ConfigError(f"cannot copy to {dest!r}: no such folder")
    if not target.parent.is_dir():
        parent = str(target.parent)
        problem = (f"{parent!r} is a file, not a folder" if target.parent.exists() else
                   f"folder {parent!r} does not exist")
        raise ConfigError(f"cannot copy to {str(target)!r}: {problem}")
    if (target.exists() or target.is_symlink()) and not force:  # a dangling link too
        raise ConfigError(f"{str(target)!r} already exists; use --force to overwrite it")
    if target.exists() and not target.is_file():
        raise ConfigError(f"cannot copy to {str(target)!r}: not a regular file")
    text = source.read_text(encoding="utf-8")
    with naming(target):
        write_atomic(target, text)
    return target


def cmd_config(args: argparse.Namespace) -> int:
    """List, print or copy out the shipped configs."""
    if args.action == "list":
        import yaml

        rows = []
        for name in shipped_names():
            path = configs_dir() / f"{name}.yaml"
            game = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("game", "?")
            rows.append((name, str(game), path))
        # columns as wide as their longest entry (``whistling_long`` is longer than 10)
        width = [max((len(row[i]) for row in rows), default=0) for i in (0, 1)]
        for name, game, path in rows:
            print(f"{name:<{width[0]}}  {game:<{width[1]}}  {path}")
    elif args.action == "show":
        sys.stdout.write(shipped_config(args.name).read_text(encoding="utf-8"))
    else:
        target = copy_config(args.name, args.dest, force=args.force)
        print(f"wrote {target} (the shipped config {args.name}); edit it, then: "
              f"boardzoo train --config {target}")
    return 0


def _intermixed(base: type[argparse.ArgumentParser]) -> type[argparse.ArgumentParser]:
    """Return a subclass of ``base`` that reads options anywhere among the positionals (why:
    plain argparse leaves ``copy NAME --force DEST`` with DEST unrecognised)."""

    class Intermixed(base):  # type: ignore[misc, valid-type]
        _inside = False

        def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
            if self._inside:  # parse_known_intermixed_args calls back here (Python < 3.12)
                return super().parse_known_args(args, namespace)
            self._inside = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._inside = False

    return Intermixed


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``boardzoo config`` with its actions list, show and copy."""
    p = subparsers.add_parser("config", help="list, print or copy out the shipped training "
                                             "configs (for train --config NAME)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION",
                               parser_class=_intermixed(type(p)))
    actions.add_parser("list", help="the shipped configs: name, game, installed file")
    show = actions.add_parser("show", help="print a shipped config (YAML, comments included)")
    show.add_argument("name", metavar="NAME", help="a shipped config (see config list)")
    copy = actions.add_parser("copy", help="copy a shipped config out to edit it")
    copy.add_argument("name", metavar="NAME", help="a shipped config (see config list)")
    copy.add_argument("dest", metavar="DEST", nargs="?",
                      help="file or existing folder to write (default ./NAME.yaml)")
    copy.add_argument("--force", action="store_true", help="overwrite DEST if it exists")
    p.set_defaults(func=cmd_config)
