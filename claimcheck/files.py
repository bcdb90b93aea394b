"""Write files atomically (a temporary file in the same folder, then a rename), hash them, and find a module's imports.

The one file digest (``sha256_file``, ``files_digest``) and the one import walker (``import_closure``)
of the code identities live here, in a module that imports nothing of the project, so the engine
may use them without loading the rest of the core.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path


def user_cache_dir(name: str) -> Path:
    """Return ``$XDG_CACHE_HOME/claimcheck/<name>`` (``~/.cache`` when unset or empty)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "claimcheck" / name


def current_umask() -> int:
    """Return the process's umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """Return the mode ``open(path, "w")`` gives a new file: 0o666 less the umask (0o644 under umask 022)."""
    return 0o666 & ~current_umask()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a part.

    The file gets the mode a plain ``open`` would give it (``new_file_mode``), not ``mkstemp``'s
    0o600, so a report, its JSON, figures and cache entries are readable by whom the umask allows.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of the bytes of the file at ``path``, read in blocks (a large file is not held)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def files_digest(files: Mapping[str, Path], root: Path) -> str:
    """Return the sha256 over each file's path relative to ``root`` (else its name in ``files``), size and bytes.

    ``files`` maps a name (say a module) to its file, hashed in the mapping's order; each file adds
    ``"<path>\\0<size>\\0"`` and then its bytes, so moving a file or a byte from one file to the next changes
    the digest. The code identities of a cache key (``qin2025.engine.codeid``,
    ``qin2025.engine.modelcode``) are this digest.
    """
    h = hashlib.sha256()
    for name, path in files.items():
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else name
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def import_base(stmt: ast.ImportFrom, module: str, is_package: bool) -> str:
    """Return the module a ``from ... import`` statement imports from, a relative one resolved against ``module``.

    ``module`` is the importing module's name; ``is_package`` whether its file is an ``__init__.py``.
    """
    if not stmt.level:
        return stmt.module or ""
    parts = module.split(".")
    keep = len(parts) - stmt.level + (1 if is_package else 0)
    return ".".join([*parts[: max(keep, 0)], *([stmt.module] if stmt.module else [])])


def module_file(name: str, root: Path) -> Path | None:
    """Return the source file of module ``name`` (``pkg.x.y``) under ``root``, the folder above its package, or None."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_modules(path: Path, module: str) -> set[str]:
    """Return every module the file ``path`` (module ``module``) may import, anywhere in it, with their packages.

    ``import a.b`` gives a and a.b (a module runs its packages); ``from a import b`` gives a and
    a.b, since b may be a module; relative imports are resolved against ``module``. A caller keeps
    the names that are modules of its own (``import_closure``). Raise SyntaxError for a file that
    does not parse.
    """
    return set(_imported(path.read_bytes(), str(path), module))


@functools.lru_cache(maxsize=1024)
def _imported(source: bytes, filename: str, module: str) -> frozenset[str]:
    """``imported_modules`` of one file's bytes, parsed once per content (many import closures share files)."""
    tree = ast.parse(source, filename=filename)
    is_package = Path(filename).name == "__init__.py"
    found: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = import_base(node, module, is_package)
            found.add(base)
            found.update(f"{base}.{a.name}" if base else a.name for a in node.names)
    return frozenset(".".join(m.split(".")[:i]) for m in found if m for i in range(1, len(m.split(".")) + 1))


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Yield every statement of ``tree``, nested ones too: an import is a statement, so this finds every
    one ``ast.walk`` would while skipping the expressions (most of a file's nodes)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for name in _BLOCKS:
            todo.extend(reversed(getattr(node, name, ())))


def import_closure(
    start: Mapping[str, Path], find: Callable[[str], Path | None], stop: Collection[str] = (), strict: bool = True
) -> dict[str, Path]:
    """Return ``start`` ({module: file}) and every module their files import, transitively, sorted by name.

    ``find`` returns the file of a module to follow, or None for one that is not followed (outside
    the tree, or not a module: ``from pkg import name``); the walk neither enters nor lists ``stop``.
    A file that does not parse raises SyntaxError, or with ``strict`` False is listed but not followed.
    This is the one import walker of the file identities: the engine's (``qin2025.engine.codeid``) and a
    user model's (``qin2025.engine.modelcode``); ``provenance.fingerprint.code_fingerprint`` walks definitions instead.
    """
    seen: dict[str, Path] = {}
    todo = sorted(start.items(), reverse=True)
    while todo:
        name, path = todo.pop()
        if name in seen or name in stop:
            continue
        seen[name] = path
        try:
            mods = imported_modules(path, name)
        except (SyntaxError, ValueError, OSError):  # UnicodeDecodeError is a ValueError
            if strict:
                raise
            mods = set()
        for mod in sorted(mods, reverse=True):
            found = None if mod in seen or mod in stop else find(mod)
            if found is not None:
                todo.append((mod, found))
    return dict(sorted(seen.items()))
