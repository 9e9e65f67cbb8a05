"""The compiled code's on-disk cache follows every source it depends on (envs/core/jit.py)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

from boardzoo.envs.core import jit  # noqa: E402

ROOT = jit.PACKAGE_ROOT
PACKAGE_DIRS = ("envs", "agents", "training")


def _package_files() -> list[Path]:
    return [p for d in PACKAGE_DIRS for p in (ROOT / d).rglob("*.py")]


def _imports(path: Path) -> set[Path]:
    """The package files a module imports (relative and ``boardzoo.`` imports)."""
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            parts = node.module.split(".") if node.module else []
        elif node.module and node.module.startswith("boardzoo."):
            base, parts = ROOT, node.module.split(".")[1:]
        else:
            continue
        target = base.joinpath(*parts)
        for name in [None, *(a.name for a in node.names)]:
            stem = target / name if name else target
            out |= {f for f in (stem.with_suffix(".py"), stem / "__init__.py") if f.exists()}
    return out


def _compiled(path: Path) -> bool:
    return "@njit" in path.read_text()


def test_every_compiled_module_uses_the_stamped_njit() -> None:
    """A module that took numba's own njit would cache without the dependency stamp."""
    offenders = []
    for path in _package_files():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "numba" and any(
                    a.name in ("njit", "jit") for a in node.names):
                offenders.append(str(path.relative_to(ROOT)))
            if isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and isinstance(
                    node.value, ast.Name) and node.value.id == "numba" and path.name != "jit.py":
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
    compiled = [p for p in _package_files() if _compiled(p)]
    assert len(compiled) >= 7  # three kernels, the shared search and three game searches


def test_digest_covers_what_compiled_code_can_read() -> None:
    """Every compiled module, what it imports, and (inside envs/) what those import in turn are
    in the digest: their tables and constants are baked into the machine code."""
    covered = {p for pattern in jit.SOURCE_GLOBS for p in ROOT.glob(pattern)}
    todo = [p for p in _package_files() if _compiled(p)]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if _compiled(path) or path.relative_to(ROOT).parts[0] == "envs":
            todo.extend(_imports(path) - seen)
    missing = sorted(str(p.relative_to(ROOT)) for p in seen - covered)
    assert missing == []


def test_digest_changes_with_any_covered_file(tmp_path: Path, monkeypatch) -> None:
    """The digest reads names and contents: a copy of the tree with one byte changed differs."""
    for pattern in jit.SOURCE_GLOBS:
        for path in ROOT.glob(pattern):
            dest = tmp_path / path.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    monkeypatch.setattr(jit, "PACKAGE_ROOT", tmp_path)
    jit.source_digest.cache_clear()
    try:
        same = jit.source_digest()
        board8 = tmp_path / "envs/core/board8.py"
        board8.write_bytes(board8.read_bytes() + b"\n")
        jit.source_digest.cache_clear()
        changed = jit.source_digest()
    finally:
        monkeypatch.undo()
        jit.source_digest.cache_clear()
    assert same == jit.source_digest()
    assert changed != same


def test_a_new_digest_recompiles_a_cached_function(tmp_path: Path) -> None:
    """Cached under one digest, loaded under the same, compiled again under another."""
    (tmp_path / "compiled_probe.py").write_text(textwrap.dedent("""
        from boardzoo.envs.core.jit import njit

        @njit(cache=True)
        def plus_seven(x):
            return x + 7
    """))
    script = textwrap.dedent("""
        import sys
        import boardzoo.envs.core.jit as jit
        if sys.argv[1] != "real":
            jit.source_digest = lambda: sys.argv[1]
        import compiled_probe
        assert compiled_probe.plus_seven(1) == 8
        stats = compiled_probe.plus_seven.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}

    def run(digest: str) -> str:
        done = subprocess.run([sys.executable, "-c", script, digest], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert run("real") == ["0", "1"]  # compiled and saved
    assert run("real") == ["1", "0"]  # loaded
    assert run("edited") == ["0", "1"]  # stale: compiled again
    assert run("edited") == ["1", "0"]
