"""Keep computed results in a content-addressed store on disk: no pickle, atomic, safe across processes.

An entry is one ``.npz`` file (``allow_pickle=False``) named by the sha256 of everything that decides
the result (``store_key``: the caller's parts, the entry format, torch's version). The file holds the
result's arrays, its JSON metadata, its own key, and a checksum over all three; an entry that fails
the checksum, or that holds another key (a file copied or renamed over it), is recomputed and counted
as corrupt. An entry that cannot be written (a full disk) costs nothing computed: the result is used,
counted as unsaved, and a ``CacheWriteWarning`` names the path and the cause once per cache.

Entries are sealed with the cache folder's secret key (``claimcheck.cachefile``: an HMAC over the
whole file, the key made on first use, mode 0600): an entry written by someone without the key, even
one re-encoded with this module's own encoder, fails authentication and is recomputed and counted
(``unauthenticated``). Only regular files of at most ``cachefile.MAX_BYTES`` are read; the decoder
never raises on damaged bytes, and every entry not used is named in a ``CacheReadWarning``.

A per-entry ``fcntl`` lock makes concurrent pytest-xdist workers (or hosts sharing the folder over a
POSIX file system) compute a result once: the first takes the lock and computes, the others wait
and then read. A batch (``memo_many``) takes its entries' locks in key order, computes
the missing results together, and stores one entry per result. Nothing here knows what is stored.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import io
import json
import os
import re
import stat
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from claimcheck.cachefile import NotReadable, cache_secret, read_regular, seal, unseal
from claimcheck.files import write_atomic
from claimcheck.settings import user_cache_dir

Arrays = dict[str, np.ndarray]
Meta = dict[str, Any]
FORMAT = "claimcheck-cache/2"  # 2: every entry holds its key
SEAL = b"claimcheck-cache-entry/3 hmac-sha256\n"  # the first line of a sealed entry; its HMAC follows
_ENTRY_NAME = re.compile(r"^[0-9a-f]{64}\.npz$")
_ZIP = b"PK\x03\x04"  # the first bytes of an entry written before entries were sealed


def store_key(parts: Mapping[str, Any]) -> str:
    """Return the sha256 of ``parts`` as canonical JSON (sorted keys), with the entry format and torch's version.

    Whoever stores a result puts everything that decides it into ``parts``: its inputs and the
    identity of the code that computes it.
    """
    full = {"format": FORMAT, "torch": torch.__version__, **parts}
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()


class CacheWriteWarning(UserWarning):
    """A cache entry could not be written; the result computed is used all the same."""


class CacheReadWarning(UserWarning):
    """A cache entry was not used (damaged, not authenticated, not a regular file); its result is recomputed."""


def _checksum(arrays: Arrays, meta_json: str, key: str = "") -> str:
    h = hashlib.sha256(key.encode() + b"\0" + meta_json.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + str((a.shape, a.dtype.str)).encode() + a.tobytes())
    return h.hexdigest()


def encode(arrays: Arrays, meta: Meta, key: str = "") -> bytes:
    """Return the bytes of entry ``key``: the arrays, the metadata as JSON, the key, and their checksum."""
    meta_json = json.dumps(meta, sort_keys=True)
    buf = io.BytesIO()
    payload: dict[str, Any] = {f"a_{k}": v for k, v in arrays.items()}
    payload["meta"] = np.array(meta_json)
    payload["key"] = np.array(key)
    payload["checksum"] = np.array(_checksum(arrays, meta_json, key))
    np.savez(buf, **payload)
    return buf.getvalue()


def decode(data: bytes, key: str = "") -> tuple[Arrays, Meta] | None:
    """Return (arrays, meta) from the bytes of entry ``key``, or None if corrupt, of another key or format.

    Never raises on damaged bytes: whatever numpy, zipfile or json raise on them means None. Only an
    archive ``np.savez`` could have written is parsed (stored members, none larger than the data),
    so a damaged size field cannot make it read past what is there.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
        if any(i.compress_type != zipfile.ZIP_STORED for i in infos) or sum(i.file_size for i in infos) > len(data):
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
            meta_json = str(z["meta"])
            stored_key = str(z["key"])
            checksum = str(z["checksum"])
        if stored_key != key or _checksum(arrays, meta_json, stored_key) != checksum:
            return None
        meta = json.loads(meta_json)
    except Exception:  # any damage: TokenError, NotImplementedError, RuntimeError, zlib.error, ...
        return None
    return (arrays, meta) if isinstance(meta, dict) else None


def open_entry(data: bytes, key: str, secret: bytes) -> tuple[tuple[Arrays, Meta] | None, str]:
    """Return (the result, "ok") from the bytes of sealed entry ``key``, or (None, why it is not used).

    Why is "corrupt" (damaged, or of another key) or "unauthenticated" (intact, but not sealed with
    ``secret``: written by someone without the cache's key, or before entries were sealed).
    """
    payload, sealed = unseal(SEAL, data, secret)
    hit = decode(payload, key)
    if hit is None:
        return None, "corrupt"
    return (hit, "ok") if sealed else (None, "unauthenticated")


@dataclass
class Counts:
    """How many results a process computed, read from the cache, recomputed after corruption, or could not save."""

    computed: int = 0
    cached: int = 0
    corrupt: int = 0  # damaged, of another key, or not a regular file of bounded size: recomputed
    unsaved: int = 0  # computed, used, but not written to the cache (a full disk)
    unauthenticated: int = 0  # intact but not sealed with the cache's key: recomputed

    def add(self, other: Counts, sign: int = 1) -> None:
        """Add ``other`` (times ``sign``) into these counts."""
        self.computed += sign * other.computed
        self.cached += sign * other.cached
        self.corrupt += sign * other.corrupt
        self.unsaved += sign * other.unsaved
        self.unauthenticated += sign * other.unauthenticated


@dataclass
class ResultCache:
    """A folder of cache entries; ``root`` None disables caching (every call computes)."""

    root: Path | None
    counts: Counts = field(default_factory=Counts)
    warned: bool = False  # a CacheWriteWarning was shown (once per cache)
    _secret: bytes | None = field(default=None, repr=False)

    def path(self, key: str) -> Path:
        """Return the file of entry ``key``."""
        assert self.root is not None
        return self.root / key[:2] / f"{key}.npz"

    @contextmanager
    def _locked(self, key: str) -> Iterator[bool]:
        """Hold entry ``key``'s lock; yield False (and warn) when the lock file cannot be made: no cache for it."""
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(path.with_suffix(".lock"), "a+b")  # closed by the with below
        except OSError as e:
            self._cannot_write(path, e)
            yield False
            return
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield True
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def secret(self) -> bytes:
        """Return the cache folder's secret key (made on first use); raise OSError when it cannot be had."""
        if self._secret is None:
            assert self.root is not None
            self._secret = cache_secret(self.root)
        return self._secret

    def _store(self, key: str, arrays: Arrays, meta: Meta) -> None:
        """Write entry ``key``, sealed; a failure (a full disk, no key) is counted and warned of; the result is kept."""
        try:
            write_atomic(self.path(key), seal(SEAL, encode(arrays, meta, key), self.secret()))
        except OSError as e:
            self._cannot_write(self.path(key), e)

    def _cannot_write(self, path: Path, error: OSError) -> None:
        self.counts.unsaved += 1
        if not self.warned:
            self.warned = True
            warnings.warn(
                CacheWriteWarning(
                    f"cannot write the cache entry {path} ({error.strerror or error}); results computed in this "
                    "session are used all the same, but not saved for the next one (warned once; free space, or "
                    "choose another folder with --claim-cache-dir)"
                ),
                stacklevel=4,
            )

    def memo(self, parts: Mapping[str, Any], compute: Callable[[], tuple[Arrays, Meta]]) -> tuple[Arrays, Meta]:
        """Return the cached result for ``parts``, computing and storing it once if absent or corrupt."""
        if self.root is None:
            self.counts.computed += 1
            return compute()
        key = store_key(parts)
        with self._locked(key) as usable:
            hit = self._read(key) if usable else None
            if hit is not None:
                self.counts.cached += 1
                return hit
            arrays, meta = compute()
            self.counts.computed += 1
            if usable:
                self._store(key, arrays, meta)
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
        usable: dict[str, bool] = {}
        with ExitStack() as held:
            for key in sorted(set(keys)):
                lock = ExitStack()
                usable[key] = lock.enter_context(self._locked(key))
                hit = self._read(key) if usable[key] else None
                if hit is None:
                    held.push(lock)  # released once the result is stored
                else:
                    found[key] = hit
                    lock.close()
            missing = [keys.index(key) for key in dict.fromkeys(keys) if key not in found]
            if missing:
                for i, (arrays, meta) in zip(missing, compute(missing), strict=True):
                    if usable[keys[i]]:
                        self._store(keys[i], arrays, meta)
                    found[keys[i]] = arrays, meta
        self.counts.computed += len(missing)
        self.counts.cached += len(keys) - len(missing)
        return [found[key] for key in keys]

    def _read(self, key: str) -> tuple[Arrays, Meta] | None:
        """Return entry ``key`` if it is stored, intact, of this key and sealed with the cache's key.

        Else None: absent, or counted (corrupt or unauthenticated) and named in a CacheReadWarning.
        A cache whose key cannot be read is not read at all (the write of the result says why).
        """
        path = self.path(key)
        try:
            data = read_regular(path)
        except NotReadable as e:
            return self._not_used(path, "corrupt", str(e))
        except OSError as e:
            return self._not_used(path, "corrupt", f"{path} cannot be read ({e.strerror or e})")
        if data is None:
            return None
        try:
            secret = self.secret()
        except OSError:
            return None
        hit, status = open_entry(data, key, secret)
        if status == "corrupt":
            return self._not_used(path, status, f"{path} is damaged or holds another key's result")
        if status == "unauthenticated":
            return self._not_used(
                path, status, f"{path} fails authentication: it was not written with this cache's key ({KEY_FILE_NOTE})"
            )
        return hit

    def _not_used(self, path: Path, status: str, why: str) -> tuple[Arrays, Meta] | None:
        """Count entry ``path`` as not used for ``status`` and name it in a CacheReadWarning; return None."""
        if status == "unauthenticated":
            self.counts.unauthenticated += 1
        else:
            self.counts.corrupt += 1
        warnings.warn(CacheReadWarning(f"cache entry not used: {why}; the result is recomputed"), stacklevel=4)
        return None

    def clear(self) -> int:
        """Delete every entry the store recognises (by its name and its first bytes); return how many were removed.

        The folder, its key, the lock files and any file the store did not write are left as they are.
        """
        if self.root is None or not self.root.is_dir():
            return 0
        n = 0
        for path in self.root.glob("[0-9a-f][0-9a-f]/*.npz"):
            if _is_entry(path):
                path.unlink(missing_ok=True)
                n += 1
        return n


KEY_FILE_NOTE = "someone without the key, or a claimcheck before entries were sealed"


def _is_entry(path: Path) -> bool:
    """Return whether ``path`` is a file the store wrote: an entry's name in its folder, and an entry's first bytes."""
    if not _ENTRY_NAME.match(path.name) or path.parent.name != path.name[:2]:
        return False
    try:
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW | os.O_NONBLOCK)) as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            head = f.read(len(SEAL))
    except OSError:
        return False
    return head == SEAL or head.startswith(_ZIP)


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
