"""Name the code that produces a cached result: the sha256 of the engine's source files.

The engine is every module a stored result depends on: the modules that compute results
(``ENGINE_ROOTS``: the trainer, which trains and measures through ``train``, ``batched`` and the
model protocol, its results cached by ``claimcheck.store.cache``; the fine-tuning of C6; the spectral
measurements; the data loaders) and every ``qin2025`` module they import, found by reading their
``import`` statements (``claimcheck.files.import_closure``: the import graph, not a hand-kept
list); the digest is ``claimcheck.files.files_digest`` over their paths and bytes. The walk stops
at ``NOT_RESULTS``: modules that decide where or how a result is stored, or whether data is
accepted, never a result's value. Editing any engine file, say
``h = 3.0 * f + gamma * z`` in ``model.py``, changes the identity, and with it every cache key.

The same modules are the engine a claim's code fingerprint stops at (``engine_module_names``,
handed to ``claimcheck.provenance.fingerprint`` by the plugin): what decides a verdict from the measurements
(``checks``, ``curves``, the claim modules) is hashed by the fingerprint, what measures is named by
this identity. A few statistics live among the measurements (``DECIDES``): the fingerprint
follows those anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from claimcheck.files import files_digest, module_file
from claimcheck.files import import_closure as walk_imports

PACKAGE = "qin2025"
ENGINE_ROOTS = ("qin2025.engine.trainer", "qin2025.engine.finetune", "qin2025.engine.spectral", "qin2025.data")
NOT_RESULTS = {
    "qin2025.data.known": "compares a file's sha256 with the published one; it changes no data",
    "qin2025.data.jena_sanity": "accepts or refuses a record; it changes no data",
    "qin2025.data.sst2_sanity": "accepts or refuses a split; it changes no data",
}
# Statistics that decide verdicts but sit in an engine module (beside the measures they read); a
# claim's fingerprint covers them, and whatever of their own module they use.
DECIDES = (
    "qin2025.engine.spectral.mean_rate",
    "qin2025.engine.spectral.loglog_slope",
    "qin2025.engine.spectral.partial_rank_correlation",
    "qin2025.engine.spectral.rank_deficit",
)
CALIBRATION = (  # labelled cases for calibrating decisions: in no claim's fingerprint
    f"{PACKAGE}.calibration",
    *(f"{PACKAGE}.c{k}.calibration" for k in range(1, 8)),
)


@dataclass(frozen=True)
class CodeIdentity:
    """The sha256 over the engine's source files and the files it covers (package-relative paths)."""

    digest: str
    files: tuple[str, ...]

    def describe(self) -> str:
        """Return e.g. ``3f2a9c01b4de over 24 engine files in qin2025/: __init__, batched, data/__init__, ...``."""
        names = [f.removeprefix(f"{PACKAGE}/").removesuffix(".py") for f in self.files]
        return f"{self.digest[:12]} over {len(self.files)} engine files in {PACKAGE}/: {', '.join(names)}"


def _ours(root: Path) -> Callable[[str], Path | None]:
    """Return the ``find`` of ``import_closure`` over this package: a ``qin2025`` module's file under ``root``."""
    return lambda name: module_file(name, root) if name.split(".")[0] == PACKAGE else None


def import_closure(root: Path, roots: tuple[str, ...], stop: frozenset[str] = frozenset()) -> dict[str, Path]:
    """Return ``roots`` (a package with all its modules) and every ``qin2025`` module they import,
    transitively, with their files under ``root``; the walk neither enters nor lists ``stop``.
    """
    start: dict[str, Path] = {}
    for name in roots:
        path = module_file(name, root)
        if path is None:
            continue
        start[name] = path
        if path.name == "__init__.py":
            start |= {f"{name}.{p.stem}": p for p in sorted(path.parent.glob("*.py")) if p.name != "__init__.py"}
    start = {name: path for name, path in start.items() if name not in stop}
    return walk_imports(start, _ours(root), stop)


def engine_modules(root: Path) -> dict[str, Path]:
    """Return the engine's modules and their files under ``root``: the import closure of ``ENGINE_ROOTS``."""
    return import_closure(root, ENGINE_ROOTS, frozenset(NOT_RESULTS))


def identity_of(root: Path) -> CodeIdentity:
    """Return the sha256 over the engine modules' paths and bytes under ``root`` (the folder above the package)."""
    files = engine_modules(root)
    return CodeIdentity(files_digest(files, root), tuple(p.relative_to(root).as_posix() for p in files.values()))


@cache
def module_identity(module: str, file: str, root: Path | None = None) -> str:
    """Return the sha256 over ``file`` (module ``module``) and every ``qin2025`` module it imports, transitively.

    This is a computation's own code in its cache key (the ``function`` namespace of
    ``claimcheck.store.keys.Key``): editing the module that defines it, or any module of the package it
    reaches, changes the key; editing a module it does not reach does not. Read once per process.
    ``root`` is the folder above the package (default: this one's).
    """
    root = root or Path(__file__).resolve().parents[2]
    return files_digest(walk_imports({module: Path(file).resolve()}, _ours(root), frozenset(NOT_RESULTS)), root)


@cache
def code_identity() -> CodeIdentity:
    """Return the identity of the engine this process imported (read once: the source of a running process is fixed)."""
    return identity_of(Path(__file__).resolve().parents[2])


@cache
def engine_module_names() -> tuple[str, ...]:
    """Return the engine's module names for a claim's fingerprint to stop at (the package itself holds no engine)."""
    return tuple(m for m in engine_modules(Path(__file__).resolve().parents[2]) if m != PACKAGE)
