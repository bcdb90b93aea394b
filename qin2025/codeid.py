"""Name the code that produces a cached result: the sha256 of the engine's source files.

The engine is every module a stored result depends on: the modules that compute results
(``ENGINE_ROOTS``: the cache, which trains and measures through ``train``, ``batched`` and the
model protocol; the fine-tuning of C6; the spectral measurements; the data loaders) and every
``claimcheck`` module they import, found by reading their ``import`` statements (the import
graph, not a hand-kept list). The walk stops at ``NOT_RESULTS``: modules that decide where or how
a result is stored, or whether data is accepted, never a result's value. Editing any engine file, say
``h = 3.0 * f + gamma * z`` in ``model.py``, changes the identity, and with it every cache key.

The same modules are the engine a claim's code fingerprint stops at (``engine_module_names``,
handed to ``claimcheck.fingerprint`` by the plugin): what decides a verdict from the measurements
(``checks``, ``curves``, the claim modules) is hashed by the fingerprint, what measures is named by
this identity. A few statistics live among the measurements (``DECIDES``): the fingerprint
follows those anyway.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = "qin2025"
ENGINE_ROOTS = ("qin2025.trainer", "qin2025.finetune", "qin2025.spectral", "qin2025.data")
NOT_RESULTS = {
    "qin2025.data.known": "compares a file's sha256 with the published one; it changes no data",
    "qin2025.data.jena_sanity": "accepts or refuses a record; it changes no data",
    "qin2025.data.sst2_sanity": "accepts or refuses a split; it changes no data",
}
# Statistics that decide verdicts but sit in an engine module (beside the measures they read); a
# claim's fingerprint covers them, and whatever of their own module they use.
DECIDES = (
    "qin2025.spectral.mean_rate",
    "qin2025.spectral.loglog_slope",
    "qin2025.spectral.partial_rank_correlation",
    "qin2025.spectral.rank_deficit",
)
CALIBRATION = (f"{PACKAGE}.calibration",)  # labelled cases for calibrating decisions: in no claim's fingerprint


@dataclass(frozen=True)
class CodeIdentity:
    """The sha256 over the engine's source files and the files it covers (package-relative paths)."""

    digest: str
    files: tuple[str, ...]

    def describe(self) -> str:
        """Return e.g. ``3f2a9c01b4de over 16 engine files in claimcheck/: batched, cache, ...``."""
        names = [f.removeprefix(f"{PACKAGE}/").removesuffix(".py") for f in self.files]
        return f"{self.digest[:12]} over {len(self.files)} engine files in {PACKAGE}/: {', '.join(names)}"


def module_file(name: str, root: Path) -> Path | None:
    """Return the source file of module ``name`` (``qin2025.x.y``) under ``root``, the folder above the package."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_imports(path: Path, name: str) -> set[str]:
    """Return the ``claimcheck`` modules that the module ``name`` in ``path`` imports (with their packages)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                parts = name.split(".")
                anchor = parts[: len(parts) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # ``from pkg import module``
    mods: set[str] = set()
    for mod in found:
        parts = mod.split(".")
        if parts[0] == PACKAGE:
            mods.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # a module runs its packages
    return mods


def import_closure(root: Path, roots: tuple[str, ...], stop: frozenset[str] = frozenset()) -> dict[str, Path]:
    """Return ``roots`` (a package with all its modules) and every ``qin2025`` module they import,
    transitively, with their files under ``root``; the walk neither enters nor lists ``stop``.
    """
    todo: list[str] = []
    for name in roots:
        todo.append(name)
        path = module_file(name, root)
        if path is not None and path.name == "__init__.py":
            todo.extend(f"{name}.{p.stem}" for p in sorted(path.parent.glob("*.py")) if p.name != "__init__.py")
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen or name in stop:
            continue
        path = module_file(name, root)
        if path is None:
            continue  # ``from claimcheck.x import name`` where name is not a module
        seen[name] = path
        todo.extend(_package_imports(path, name))
    return dict(sorted(seen.items()))


def engine_modules(root: Path) -> dict[str, Path]:
    """Return the engine's modules and their files under ``root``: the import closure of ``ENGINE_ROOTS``."""
    return import_closure(root, ENGINE_ROOTS, frozenset(NOT_RESULTS))


def identity_of(root: Path) -> CodeIdentity:
    """Return the sha256 over the engine modules' paths and bytes under ``root`` (the folder above the package)."""
    h = hashlib.sha256()
    files = []
    for path in engine_modules(root).values():
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
        files.append(rel)
    return CodeIdentity(h.hexdigest(), tuple(files))


def _digest(files: dict[str, Path], root: Path) -> str:
    """Return the sha256 over each file's path (relative to ``root``, else its module name), size and bytes."""
    h = hashlib.sha256()
    for name, path in files.items():
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else name
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@cache
def module_identity(module: str, file: str, root: Path | None = None) -> str:
    """Return the sha256 over ``file`` (module ``module``) and every ``qin2025`` module it imports, transitively.

    This is a computation's own code in its cache key (the ``function`` namespace of
    ``claimcheck.keys.Key``): editing the module that defines it, or any module of the package it
    reaches, changes the key; editing a module it does not reach does not. Read once per process.
    ``root`` is the folder above the package (default: this one's).
    """
    root = root or Path(__file__).resolve().parent.parent
    path = Path(file).resolve()
    reached = {module: path}
    todo = sorted(_package_imports(path, module))
    while todo:
        name = todo.pop()
        found = module_file(name, root)
        if name in reached or name in NOT_RESULTS or found is None:
            continue
        reached[name] = found
        todo.extend(_package_imports(found, name))
    return _digest(dict(sorted(reached.items())), root)


@cache
def code_identity() -> CodeIdentity:
    """Return the identity of the engine this process imported (read once: the source of a running process is fixed)."""
    return identity_of(Path(__file__).resolve().parent.parent)


@cache
def engine_module_names() -> tuple[str, ...]:
    """Return the engine's module names for a claim's fingerprint to stop at (the package itself holds no engine)."""
    return tuple(m for m in engine_modules(Path(__file__).resolve().parent.parent) if m != PACKAGE)
