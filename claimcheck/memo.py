"""Memoise an expensive computation by its inputs and the source of the code that computes it.

``Memo`` wraps the content-addressed ``ResultCache``: ``memo(fn, **inputs)`` returns the arrays
``fn(**inputs)`` returns, computed once per (the function's name, the sha256 of its module's source
file, the inputs as canonical JSON). Editing the function's module gives new keys; so does any
change of an input. Results are dicts of numpy arrays, stored without pickle.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from claimcheck.store import ResultCache

Arrays = dict[str, np.ndarray]


def source_digest(fn: Callable[..., Any]) -> str:
    """Return the sha256 of the source file that defines ``fn`` (of its source text when it has no file)."""
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if path is not None and Path(path).is_file():
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()


@dataclass
class Memo:
    """Memoise ``fn(**inputs) -> dict of arrays`` through a ``ResultCache``."""

    cache: ResultCache

    def __call__(self, fn: Callable[..., Mapping[str, Any]], **inputs: Any) -> Arrays:
        """Return ``fn(**inputs)`` as arrays, from the cache when the same code saw the same inputs."""
        parts = {
            "memo": f"{fn.__module__}.{fn.__qualname__}",
            "code": source_digest(fn),
            "inputs": inputs,
        }

        def compute() -> tuple[Arrays, dict[str, Any]]:
            out = fn(**inputs)
            return {k: np.asarray(v) for k, v in out.items()}, {"memo": parts["memo"]}

        arrays, _ = self.cache.memo(parts, compute)
        return arrays

    @property
    def counts(self) -> dict[str, int]:
        """Return how many results were computed and how many read from the cache."""
        return {"computed": self.cache.counts.computed, "cached": self.cache.counts.cached}
