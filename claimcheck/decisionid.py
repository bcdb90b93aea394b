"""Name a part's decision and fingerprint the code that decides: the function, what it calls, the part's statistics.

A calibration result holds for one decision only. ``decision_identity`` returns
``module:name sha256`` where the sha256 covers the function's code and, followed through its
globals, every function, class and constant it uses from its own top-level package or from
``claimcheck``, each normalised (the syntax tree without docstrings, so a comment, a docstring
or a reformatting leaves it unchanged; a changed number or operator does not), plus the part's
statistics (name, direction, threshold, tolerance). A decision changed since its calibration
is shown as such on the report.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import textwrap
import types
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

OWN = ("claimcheck",)  # packages whose code is followed besides the decision's own


def decision_identity(fn: Callable[..., Any], stats: Sequence[Sequence[Any]] = ()) -> str:
    """Return ``module:qualname sha256[:12]`` of ``fn``'s code (followed through its globals) and ``stats``."""
    name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
    h = hashlib.sha256(json.dumps([list(s) for s in stats], default=repr).encode())
    for text in _closure(fn):
        h.update(text.encode())
        h.update(b"\0")
    return f"{name} {h.hexdigest()[:12]}"


def _closure(fn: Callable[..., Any]) -> list[str]:
    """Return the normalised code of ``fn`` and of everything it reaches in its own package, in a fixed order.

    Entries are named without their module, so moving the code to another module leaves them as they were.
    """
    root = (getattr(fn, "__module__", "") or "").split(".")[0]
    packages = {root, *OWN}
    seen: dict[str, tuple[str, str]] = {}  # module.qualname -> (qualname, code)
    todo: list[tuple[str, str, Any]] = [("<decision>", "<decision>", inspect.unwrap(fn))]
    while todo:
        key, label, obj = todo.pop()
        if key in seen:
            continue
        text, names = _code(obj)
        seen[key] = (label, text)
        scope = getattr(obj, "__globals__", None) or vars(inspect.getmodule(obj) or types.ModuleType("_"))
        for n in sorted(names):
            ref = scope.get(n)
            if ref is None:
                continue
            if isinstance(ref, int | float | str | bytes | tuple | frozenset | bool):
                seen.setdefault(f"const {getattr(obj, '__module__', '')}.{n}", (f"const {n}", repr(ref)))
                continue
            module = getattr(ref, "__module__", None)
            if (inspect.isfunction(ref) or inspect.isclass(ref)) and module and module.split(".")[0] in packages:
                todo.append((f"{module}.{ref.__qualname__}", ref.__qualname__, ref))
    return [f"{label}\n{text}" for label, text in sorted(seen.values())]


@cache
def _code(obj: Any) -> tuple[str, frozenset[str]]:
    """Return the syntax tree of ``obj`` without docstrings, dumped, and the global names it uses (cached)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError):  # no source (a builtin, a C function): its repr stands in
        return repr(obj), frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False, include_attributes=False), frozenset(names)
