"""Name the code of a user's model: the sha256 of the factory's module and every local module it imports.

A ``--claim-model`` result must be recomputed when any of the model's own code changes, not only
the file that holds the factory. The model's tree is the folder of the factory's file, or, for a
module inside a package, the folder above its top-level package. ``model_sources`` reads the
factory's module and follows its ``import`` statements (absolute and relative) to every module
whose file lies in that tree, transitively; a module outside it (torch, numpy, qin2025 installed
elsewhere) is not followed. The digest covers each file's path relative to the tree and its bytes.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from qin2025.codeid import module_file


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


def _imports(path: Path, name: str) -> set[str]:
    """Return every module name ``path`` (module ``name``) imports, with its packages and ``from x import y`` as x.y."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - node.level + 1] if node.level > 1 else package
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {".".join(m.split(".")[:i]) for m in found if m for i in range(1, len(m.split(".")) + 1)}


def model_sources(path: Path) -> dict[str, Path]:
    """Return the model file ``path`` and every module of its tree it imports, transitively, by module name."""
    root = model_root(path)
    start = _module_name(path, root)
    todo, seen = [(start, path.resolve())], {}
    while todo:
        name, file = todo.pop()
        if name in seen:
            continue
        seen[name] = file
        for mod in _imports(file, name):
            found = module_file(mod, root)
            if found is not None and mod not in seen:
                todo.append((mod, found))
    return dict(sorted(seen.items()))


def source_digest(path: Path) -> str:
    """Return the sha256 over the relative paths and bytes of ``model_sources(path)``."""
    root = model_root(path)
    h = hashlib.sha256()
    for file in model_sources(path).values():
        data = file.read_bytes()
        h.update(f"{file.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()
