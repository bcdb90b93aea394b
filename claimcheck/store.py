"""Keep computed results in a content-addressed store on disk: no pickle, atomic, safe across processes.

An entry is one ``.npz`` file (``allow_pickle=False``) named by the sha256 of everything that decides
the result (``store_key``: the caller's parts, the entry format, torch's version). The file holds the
result's arrays, its JSON metadata, and a checksum over both; an entry that fails the checksum is
recomputed. A per-entry ``fcntl`` lock makes concurrent pytest-xdist workers (or hosts sharing the
folder over a POSIX file system) compute a result once: the first takes the lock and computes, the
others wait and then read. A batch (``memo_many``) takes its entries' locks in key order, computes
the missing results together, and stores one entry per result. Nothing here knows what is stored.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import io
import json
import shutil
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from claimcheck.files import write_atomic
from claimcheck.settings import user_cache_dir

Arrays = dict[str, np.ndarray]
Meta = dict[str, Any]
FORMAT = "claimcheck-cache/1"


def store_key(parts: Mapping[str, Any]) -> str:
    """Return the sha256 of ``parts`` as canonical JSON (sorted keys), with the entry format and torch's version.

    Whoever stores a result puts everything that decides it into ``parts``: its inputs and the
    identity of the code that computes it.
    """
    full = {"format": FORMAT, "torch": torch.__version__, **parts}
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()


def _checksum(arrays: Arrays, meta_json: str) -> str:
    h = hashlib.sha256(meta_json.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + str((a.shape, a.dtype.str)).encode() + a.tobytes())
    return h.hexdigest()


def encode(arrays: Arrays, meta: Meta) -> bytes:
    """Return the bytes of an entry: the arrays, the metadata as JSON, and their checksum."""
    meta_json = json.dumps(meta, sort_keys=True)
    buf = io.BytesIO()
    payload: dict[str, Any] = {f"a_{k}": v for k, v in arrays.items()}
    payload["meta"] = np.array(meta_json)
    payload["checksum"] = np.array(_checksum(arrays, meta_json))
    np.savez(buf, **payload)
    return buf.getvalue()


def decode(data: bytes) -> tuple[Arrays, Meta] | None:
    """Return (arrays, meta) from an entry's bytes, or None if it is corrupt or of another format."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
            meta_json = str(z["meta"])
            checksum = str(z["checksum"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
        return None
    if _checksum(arrays, meta_json) != checksum:
        return None
    return arrays, json.loads(meta_json)


@dataclass
class Counts:
    """How many results a process computed, read from the cache, or recomputed after corruption."""

    computed: int = 0
    cached: int = 0
    corrupt: int = 0

    def add(self, other: Counts, sign: int = 1) -> None:
        """Add ``other`` (times ``sign``) into these counts."""
        self.computed += sign * other.computed
        self.cached += sign * other.cached
        self.corrupt += sign * other.corrupt


@dataclass
class ResultCache:
    """A folder of cache entries; ``root`` None disables caching (every call computes)."""

    root: Path | None
    counts: Counts = field(default_factory=Counts)

    def path(self, key: str) -> Path:
        """Return the file of entry ``key``."""
        assert self.root is not None
        return self.root / key[:2] / f"{key}.npz"

    @contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def memo(self, parts: Mapping[str, Any], compute: Callable[[], tuple[Arrays, Meta]]) -> tuple[Arrays, Meta]:
        """Return the cached result for ``parts``, computing and storing it once if absent or corrupt."""
        if self.root is None:
            self.counts.computed += 1
            return compute()
        key = store_key(parts)
        with self._locked(key):
            hit = self._read(key)
            if hit is not None:
                self.counts.cached += 1
                return hit
            arrays, meta = compute()
            write_atomic(self.path(key), encode(arrays, meta))
            self.counts.computed += 1
            return arrays, meta

    def memo_many(
        self, parts: Sequence[Mapping[str, Any]], compute: Callable[[list[int]], list[tuple[Arrays, Meta]]]
    ) -> list[tuple[Arrays, Meta]]:
        """Return ``memo``'s result for every ``parts[i]``, computing all missing ones in one call.

        ``compute(missing)`` gets the positions of the entries absent or corrupt (the first of any
        repeated parts) and returns their results in that order. The entries' locks are taken one at
        a time in key order, so processes whose batches overlap cannot deadlock; an entry found is
        released at once, a missing one is held until its result is stored: as with ``memo``, each
        result is computed once across processes. A repeated part counts as read after its first.
        """
        if self.root is None:
            self.counts.computed += len(parts)
            return compute(list(range(len(parts))))
        keys = [store_key(p) for p in parts]
        found: dict[str, tuple[Arrays, Meta]] = {}
        with ExitStack() as held:
            for key in sorted(set(keys)):
                lock = ExitStack()
                lock.enter_context(self._locked(key))
                hit = self._read(key)
                if hit is None:
                    held.push(lock)  # released once the result is stored
                else:
                    found[key] = hit
                    lock.close()
            missing = [keys.index(key) for key in dict.fromkeys(keys) if key not in found]
            if missing:
                for i, (arrays, meta) in zip(missing, compute(missing), strict=True):
                    write_atomic(self.path(keys[i]), encode(arrays, meta))
                    found[keys[i]] = arrays, meta
        self.counts.computed += len(missing)
        self.counts.cached += len(keys) - len(missing)
        return [found[key] for key in keys]

    def _read(self, key: str) -> tuple[Arrays, Meta] | None:
        """Return entry ``key`` if it is stored and intact; count it as corrupt if it fails to decode."""
        path = self.path(key)
        if not path.exists():
            return None
        hit = decode(path.read_bytes())
        if hit is None:
            self.counts.corrupt += 1
        return hit

    def clear(self) -> int:
        """Delete every entry; return how many were removed."""
        if self.root is None or not self.root.exists():
            return 0
        n = sum(1 for _ in self.root.rglob("*.npz"))
        shutil.rmtree(self.root)
        return n


def default_cache_dir() -> Path:
    """Return the user cache folder for training results."""
    return user_cache_dir("results")


# --- Memoise a function by its inputs and its module's source (the ``claim_cache`` fixture) ---


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
