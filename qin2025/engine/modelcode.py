"""Name the code of a user's model: the sha256 of the factory's module and every local module it imports.

A ``--claim-model`` result must be recomputed when any of the model's own code changes, not only
the file that holds the factory. The model's tree is the folder of the factory's file, or, for a
module inside a package, the folder above its top-level package. ``model_sources`` reads the
factory's module and follows its ``import`` statements (absolute and relative) to every module
whose file lies in that tree, transitively; a module outside it (torch, numpy, qin2025 installed
elsewhere) is not followed. The digest covers each file's path relative to the tree and its bytes.
The walk and the digest are the core's (``claimcheck.files.import_closure``,
``claimcheck.files.files_digest``), the ones the engine's identity uses (``qin2025.engine.codeid``).
"""

from __future__ import annotations

from pathlib import Path

from claimcheck.files import files_digest, import_closure, module_file


def model_root(path: Path) -> Path:
    """Return the tree a model file belongs to: its folder, or the folder above its top-level package."""
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def _module_name(path: Path, root: Path) -> str:
    rel = path.resolve().relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def model_sources(path: Path) -> dict[str, Path]:
    """Return the model file ``path`` and every module of its tree it imports, transitively, by module name."""
    root = model_root(path)
    return import_closure(
        {_module_name(path, root): path.resolve()}, lambda name: module_file(name, root), strict=False
    )


def source_digest(path: Path) -> str:
    """Return the sha256 over the relative paths and bytes of ``model_sources(path)`` (``files_digest``)."""
    return files_digest(model_sources(path), model_root(path))
