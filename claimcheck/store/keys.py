"""Build every cache key in one place: a typed value with named fields that cannot overwrite each other.

A result's key says what computed it and from what, in four namespaces: ``engine`` (the code and
libraries every result of a suite depends on), ``model`` (the model under test), ``function`` (the
computation: its name and the sha256 of its code) and ``inputs`` (configs, data fingerprints, seeds,
device type and dtype). Each is its own field, so an engine digest and a function digest both called
``code`` stay two fields: a merge such as ``{**engine, **parts}`` has no place to happen. The digest
(``Key.digest``, the entry's file name) is the sha256 of the four as canonical JSON with the entry
format and torch's version, made by ``store_key`` alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT = "claimcheck-cache/3"  # 3: keys are namespaced (engine, model, function, inputs)


def _torch_version() -> str:
    import torch  # deferred: building a key is the first thing that needs torch

    return str(torch.__version__)


def _plain(value: Mapping[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"Key.{name} must be a mapping of names to JSON values, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class Key:
    """What decides a cached result, in four namespaces (see the module docstring)."""

    engine: Mapping[str, Any]
    model: str
    function: Mapping[str, Any]
    inputs: Mapping[str, Any]
    digest: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("engine", "function", "inputs"):
            object.__setattr__(self, name, _plain(getattr(self, name), name))
        if not isinstance(self.model, str):
            raise TypeError(f"Key.model must be the model's identity string, got {type(self.model).__name__}")
        object.__setattr__(self, "digest", store_key(self))

    def fields(self) -> dict[str, Any]:
        """Return the four namespaces as one JSON-ready mapping (what the digest is taken over)."""
        return {"engine": self.engine, "model": self.model, "function": self.function, "inputs": self.inputs}

    def describe(self) -> str:
        """Return a short line naming the key: its function, the model, and the inputs' names."""
        name = self.function.get("name", "?")
        return f"{name} (model {self.model or 'none'}; inputs: {', '.join(sorted(self.inputs)) or 'none'})"


def store_key(key: Key) -> str:
    """Return the sha256 of ``key``'s namespaces as canonical JSON, with the entry format and torch's version."""
    full = {"format": FORMAT, "torch": _torch_version(), "key": key.fields()}
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()
