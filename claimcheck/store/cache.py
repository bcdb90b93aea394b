"""Keep computed results in a content-addressed store on disk: no pickle, atomic, safe across processes.

An entry is one ``.npz`` file named by its ``claimcheck.store.keys.Key``'s digest, holding the result's arrays,
its JSON metadata, its key and a checksum, sealed with the folder's key (``claimcheck.store.cachefile``). One
damaged, of another key or not authenticated is recomputed and named (``CacheReadWarning``); one that cannot be
written costs nothing computed (``CacheWriteWarning``). A per-entry lock (``claimcheck.store.filelock``) makes
concurrent processes compute a result once; a batch takes its locks in key order. docs/usage.md says more.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import math
import os
import platform
import re
import stat
import struct
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from claimcheck.errors import ClaimcheckError
from claimcheck.files import sha256_file, user_cache_dir, write_atomic
from claimcheck.provenance.environment import key_numerics
from claimcheck.store import filelock
from claimcheck.store.cachefile import NotReadable, cache_secret, read_regular, seal, unseal
from claimcheck.store.keys import Key

Arrays = dict[str, np.ndarray]
Meta = dict[str, Any]
PRODUCER = "__producer__"  # the meta field naming who computed an entry; taken off before a caller sees it
VERIFY_RTOL = 1e-6  # --claim-cache-verify's tolerance for an entry another host or thread count computed
SEAL = b"claimcheck-cache-entry/3 hmac-sha256\n"  # the first line of a sealed entry; its HMAC follows
_ENTRY_NAME = re.compile(r"^[0-9a-f]{64}\.npz$")
_ZIP = b"PK\x03\x04"  # a zip member's local header: the first bytes of an entry written before entries were sealed
_NOT_USED = {  # why an entry that was read is not used, by ``open_entry``'s status
    "corrupt": "{path} is damaged or holds another key's result",
    "unauthenticated": "{path} fails authentication: it was not written with this cache's key (someone without the "
    "key, or a claimcheck before entries were sealed)",
}


class CacheMismatch(ClaimcheckError):
    """A cache entry differs from its recompute (``--claim-cache-verify``): the entry was dropped."""


def _check_key(key: object) -> None:
    if not isinstance(key, Key):
        raise TypeError(
            f"the result cache takes a claimcheck.store.keys.Key, got {type(key).__name__}: build it with Key(...)"
        )


def producer() -> dict[str, Any]:
    """Return who computes here: the host, torch's threads and the numerics (a verify compares bits when the same)."""
    return {"host": platform.node(), "threads": torch.get_num_threads(), "numerics": key_numerics()}


def differs(hit: tuple[Arrays, Meta], again: tuple[Arrays, Meta], rtol: float) -> str | None:
    """Return how a cached result and its recompute differ (None when they agree to ``rtol``; 0: bit for bit)."""
    (a_arrays, a_meta), (b_arrays, b_meta) = hit, again
    b_arrays = {k: np.asarray(v) for k, v in b_arrays.items()}
    if sorted(a_arrays) != sorted(b_arrays):
        return f"arrays {sorted(a_arrays)} cached, {sorted(b_arrays)} recomputed"
    for name in sorted(a_arrays):
        a, b = np.asarray(a_arrays[name]), b_arrays[name]
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"array {name!r} is {a.dtype}{a.shape} cached, {b.dtype}{b.shape} recomputed"
        same = a.tobytes() == b.tobytes()
        if not same and rtol > 0 and a.dtype.kind in "fc":
            same = bool(np.allclose(a, b, rtol=rtol, atol=0.0, equal_nan=True))
        if not same:
            i = int(np.argmax(np.asarray(a != b).ravel())) if a.size else 0
            x, y = (a.ravel()[i], b.ravel()[i]) if a.size else (None, None)
            return f"array {name!r} differs (first at flat index {i}: {x!r} cached, {y!r} recomputed)"
    a_json, b_json = json.loads(json.dumps(a_meta, sort_keys=True)), json.loads(json.dumps(b_meta, sort_keys=True))
    return _meta_differs(a_json, b_json, rtol, "meta")


def _meta_differs(a: Any, b: Any, rtol: float, where: str) -> str | None:
    if isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b):
        found = (_meta_differs(a[k], b[k], rtol, f"{where}.{k}") for k in sorted(a))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = (_meta_differs(x, y, rtol, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=True)))
    else:
        both_nan = isinstance(a, float) and isinstance(b, float) and a != a and b != b
        close = isinstance(a, float) and isinstance(b, float) and abs(a - b) <= rtol * max(abs(a), abs(b))
        return None if a == b or both_nan or close else f"{where} is {a!r} cached, {b!r} recomputed"
    return next((p for p in found if p is not None), None)


class CacheWriteWarning(UserWarning):
    """A cache entry could not be written; the result computed is used all the same."""


class CacheLockWarning(UserWarning):
    """An entry's lock was waited for longer than ``filelock.NOTE_AFTER_S``: another session holds it."""


class CacheReadWarning(UserWarning):
    """A cache entry was not used (damaged, not authenticated, not a regular file); its result is recomputed."""


def _checksum(arrays: Arrays, meta_json: str, key: str = "") -> str:
    h = hashlib.sha256(key.encode() + b"\0" + meta_json.encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + str((a.shape, a.dtype.str)).encode() + a.tobytes())
    return h.hexdigest()


def encode(arrays: Arrays, meta: Meta, key: str = "") -> bytes:
    meta_json = json.dumps(meta, sort_keys=True)
    payload: dict[str, Any] = {f"a_{k}": v for k, v in arrays.items()}
    payload.update(meta=np.array(meta_json), key=np.array(key), checksum=np.array(_checksum(arrays, meta_json, key)))
    np.savez(buf := io.BytesIO(), **payload)
    return buf.getvalue()


# The header np.save writes for a plain array (format 1.0 or 2.0): read without numpy's literal_eval,
# the costliest step of a warm rerun (one call per array, six arrays an entry). Other headers go to numpy.
_NPY_MAGIC = b"\x93NUMPY"
_NPY_HEADER = re.compile(
    rb"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': (False|True), 'shape': \(((?:\d+, )*\d*,?)\), \} *\n"
)


def _read_npy(raw: bytes) -> np.ndarray:
    # the header starts past the magic, the version and the header's size (2 bytes in format 1.0, 4 in 2.0)
    start = {b"\x01\x00": 10, b"\x02\x00": 12}.get(raw[6:8]) if raw[:6] == _NPY_MAGIC else None
    header = b"" if start is None else raw[start : start + int.from_bytes(raw[8:start], "little")]
    if start is None or (match := _NPY_HEADER.fullmatch(header)) is None:
        return np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
    dtype = np.dtype(match[1].decode())
    if dtype.hasobject:
        raise ValueError("an object array needs pickle")
    shape = tuple(int(n) for n in match[3].split(b",") if n.strip())
    count, offset = math.prod(shape), start + len(header)
    if len(raw) != offset + count * dtype.itemsize:
        raise ValueError("the array's data does not fill its member")
    flat = np.frombuffer(raw, dtype=dtype, count=count, offset=offset)
    array = flat.reshape(shape[::-1]).transpose() if match[2] == b"True" else flat.reshape(shape)
    return array.copy(order="K")


def _members(data: bytes) -> dict[str, bytes]:
    """Return each member of the zip ``data`` by name, its CRC checked; ValueError if np.savez did not write it."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
    out = {}
    for info in infos:
        at, name = info.header_offset, info.filename.encode()
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 or info.compress_size != info.file_size:
            raise ValueError("not a member np.savez writes")
        if data[at : at + 4] != _ZIP or data[at + 30 : at + 30 + len(name)] != name:
            raise ValueError("a local header that disagrees with the directory")
        name_len, extra_len = struct.unpack("<HH", data[at + 26 : at + 30])
        start = at + 30 + name_len + extra_len
        raw = data[start : start + info.file_size]
        if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
            raise ValueError("a member cut short or damaged")
        out[info.filename] = raw
    return out


def decode(data: bytes, key: str = "") -> tuple[Arrays, Meta] | None:
    """Return (arrays, meta) from the bytes of entry ``key``, or None if corrupt, of another key or format."""
    try:
        members = {name.removesuffix(".npy"): _read_npy(raw) for name, raw in _members(data).items()}
        arrays = {k[2:]: v for k, v in members.items() if k.startswith("a_")}
        meta_json, stored_key, checksum = (str(members[k]) for k in ("meta", "key", "checksum"))
        if stored_key != key or _checksum(arrays, meta_json, stored_key) != checksum:
            return None
        meta = json.loads(meta_json)
    except Exception:  # any damage: TokenError, NotImplementedError, RuntimeError, zlib.error, ...
        return None
    return (arrays, meta) if isinstance(meta, dict) else None


def open_entry(data: bytes, key: str, secret: bytes) -> tuple[tuple[Arrays, Meta] | None, str]:
    """Return (the result, "ok") from sealed entry ``key``, or (None, "corrupt" or "unauthenticated")."""
    payload, sealed = unseal(SEAL, data, secret)
    if (hit := decode(payload, key)) is None:
        return None, "corrupt"
    return (hit, "ok") if sealed else (None, "unauthenticated")


@dataclass
class Counts:
    """How many results a process computed, read from the cache, recomputed after corruption, or could not save."""

    computed: int = 0
    cached: int = 0
    corrupt: int = 0  # damaged, of another key, or not a regular file of bounded size: recomputed
    unsaved: int = 0  # computed, used, but not written to the cache (a full disk)
    verified: int = 0  # read, recomputed under --claim-cache-verify, and found the same
    unauthenticated: int = 0  # intact but not sealed with the cache's key: recomputed

    def add(self, other: Counts, sign: int = 1) -> None:
        """Add ``other`` (times ``sign``) into these counts."""
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + sign * value)


@dataclass
class ResultCache:
    """A folder of cache entries; ``root`` None disables caching (every call computes)."""

    root: Path | None
    counts: Counts = field(default_factory=Counts)
    warned: bool = False  # a CacheWriteWarning was shown (once per cache)
    verify: float = 0.0  # the fraction of hits recomputed and compared (--claim-cache-verify)
    verify_seed: int = 0  # seeds which hits ``verify`` selects
    lock_timeout: float | None = None  # the longest an entry's lock is waited for (None: filelock.TIMEOUT_S)
    note: Callable[[str], None] | None = field(default=None, repr=False)  # where a long wait is told (stderr)
    _producers: dict[str, Any] = field(default_factory=dict, repr=False)
    _secret: bytes | None = field(default=None, repr=False)

    def path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.npz"

    @contextmanager
    def _locked(self, key: str) -> Iterator[bool]:
        """Hold entry ``key``'s lock; yield False (and warn) when the lock file cannot be made: no cache for it."""
        path = self.path(key)
        with ExitStack() as stack:
            usable = True
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                stack.enter_context(filelock.hold(path.with_suffix(".lock"), self.lock_timeout, self._note))
            except OSError as e:  # a link or a folder in the lock's place included: not followed, not used
                self._cannot_write(path, e)
                usable = False
            yield usable

    def _note(self, line: str) -> None:
        warnings.warn(CacheLockWarning(line.removeprefix("claimcheck: ")), stacklevel=5)
        (self.note or filelock.to_stderr)(line)

    def secret(self) -> bytes:
        if self._secret is None:
            assert self.root is not None
            self._secret = cache_secret(self.root)
        return self._secret

    def _store(self, key: str, arrays: Arrays, meta: Meta) -> None:
        """Write entry ``key``, its meta stamped with who computed it (``producer``); a failure is warned of once."""
        try:
            entry = encode(arrays, {**meta, PRODUCER: producer()}, key)
            write_atomic(self.path(key), seal(SEAL, entry, self.secret()))
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

    def memo(self, key: Key, compute: Callable[[], tuple[Arrays, Meta]]) -> tuple[Arrays, Meta]:
        """Return the cached result for ``key``, computing and storing it once if absent or corrupt (or verified)."""
        _check_key(key)
        if self.root is None:
            self.counts.computed += 1
            return compute()
        digest = key.digest
        if (hit := self._read_unlocked(digest)) is not None:
            self.counts.cached += 1
            return hit
        with self._locked(digest) as usable:
            if (hit := self._hit(digest) if usable else None) is not None:
                self.counts.cached += 1
                if self._chosen(digest):
                    self._verify(key, hit, compute())
                return hit
            arrays, meta = compute()
            self.counts.computed += 1
            if usable:
                self._store(digest, arrays, meta)
            return arrays, meta

    def memo_many(
        self, keys: Sequence[Key], compute: Callable[[list[int]], list[tuple[Arrays, Meta]]]
    ) -> list[tuple[Arrays, Meta]]:
        """Return ``memo``'s result for every ``keys[i]``, computing all missing ones in one call.

        ``compute(missing)`` gets the positions of the entries absent or corrupt (the first of repeated keys)
        and returns their results in that order; locks are taken in digest order, held until stored.
        """
        for key in keys:
            _check_key(key)
        if self.root is None:
            self.counts.computed += len(keys)
            return compute(list(range(len(keys))))
        digests = [k.digest for k in keys]
        found = {d: hit for d in dict.fromkeys(digests) if (hit := self._read_unlocked(d)) is not None}
        usable: dict[str, bool] = {}
        with ExitStack() as held:
            for digest in sorted(set(digests) - set(found)):
                lock = ExitStack()
                usable[digest] = lock.enter_context(self._locked(digest))
                if (hit := self._hit(digest) if usable[digest] else None) is None:
                    held.push(lock)  # released once the result is stored
                else:
                    found[digest] = hit
                    lock.close()
            firsts = [digests.index(d) for d in dict.fromkeys(digests)]
            missing = [i for i in firsts if digests[i] not in found]
            if missing:
                for i, (arrays, meta) in zip(missing, compute(missing), strict=True):
                    if usable[digests[i]]:
                        self._store(digests[i], arrays, meta)
                    found[digests[i]] = arrays, meta
        self.counts.computed += len(missing)
        self.counts.cached += len(keys) - len(missing)
        check = [i for i in firsts if i not in missing and self._chosen(digests[i])]
        if check:
            for i, again in zip(check, compute(check), strict=True):
                self._verify(keys[i], found[digests[i]], again)
        return [found[d] for d in digests]

    def _chosen(self, digest: str) -> bool:
        """Return whether ``--claim-cache-verify`` recomputes hit ``digest`` (a seeded draw at the rate ``verify``)."""
        if self.verify <= 0 or self.verify >= 1:
            return self.verify >= 1  # no hit, or every hit
        draw = int.from_bytes(hashlib.sha256(f"{self.verify_seed}:{digest}".encode()).digest()[:8], "big")
        return draw / 2**64 < self.verify

    def _verify(self, key: Key, hit: tuple[Arrays, Meta], again: tuple[Arrays, Meta]) -> None:
        same_producer = self._producers.get(key.digest) == producer()
        if (problem := differs(hit, again, 0.0 if same_producer else VERIFY_RTOL)) is None:
            self.counts.verified += 1
            return
        path = self.path(key.digest)
        path.unlink(missing_ok=True)
        how = (
            "bit for bit (same host and threads)"
            if same_producer
            else f"to relative {VERIFY_RTOL:g} (another producer)"
        )
        fields = json.dumps(key.fields(), sort_keys=True, default=str)
        raise CacheMismatch(
            f"--claim-cache-verify: the cache entry {path} ({key.describe()}) differs from its recompute "
            f"{how}: {problem}. The entry was dropped; rerun to use the recomputed value. Its key: "
            f"{fields[:2000]}"
        )

    def _read_unlocked(self, key: str) -> tuple[Arrays, Meta] | None:
        """Return entry ``key`` read without its lock when it is a sound hit; None (nothing counted) for the rest.

        An entry is written whole and renamed into place (``write_atomic``), so a reader needs no lock to see
        all of it or none; the lock is there so that one process computes a missing result. Taking it for a hit
        cost a warm rerun 0.2 s (a mkdir, and the lock file written twice, per entry). A miss, a damaged entry and
        ``--claim-cache-verify`` take the locked path, which reads again, counts and warns as before.
        """
        if self.verify > 0:
            return None
        return self._hit(key, quiet=True)

    def _hit(self, key: str, quiet: bool = False) -> tuple[Arrays, Meta] | None:
        """Return entry ``key`` if stored, intact and sealed, its ``PRODUCER`` kept aside; else None (counted).

        ``quiet``: what is not a sound hit is None, neither counted nor warned of (``_read_unlocked``).
        """
        path = self.path(key)
        try:
            data = read_regular(path)
        except (NotReadable, OSError) as e:
            why = f"{path} cannot be read ({e.strerror or e})" if isinstance(e, OSError) else str(e)
            return None if quiet else self._not_used(path, "corrupt", why)
        if data is None:
            return None
        try:
            secret = self.secret()
        except OSError:
            return None
        hit, status = open_entry(data, key, secret)
        if hit is None:
            return None if quiet else self._not_used(path, status, _NOT_USED[status].format(path=path))
        arrays, meta = hit[0], dict(hit[1])
        self._producers[key] = meta.pop(PRODUCER, None)
        return arrays, meta

    def _not_used(self, path: Path, status: str, why: str) -> tuple[Arrays, Meta] | None:
        setattr(self.counts, status, getattr(self.counts, status) + 1)  # "corrupt" or "unauthenticated"
        warnings.warn(CacheReadWarning(f"cache entry not used: {why}; the result is recomputed"), stacklevel=3)
        return None

    def clear(self) -> int:
        """Delete every entry the store recognises (``_is_entry``); return how many. A linked shard is not followed."""
        if self.root is None or not self.root.is_dir() or self.root.is_symlink():
            return 0
        shards = [s for s in sorted(self.root.iterdir()) if re.fullmatch(r"[0-9a-f]{2}", s.name) and not s.is_symlink()]
        entries = [p for shard in shards if shard.is_dir() for p in sorted(shard.glob("*.npz")) if _is_entry(p)]
        for path in entries:
            path.unlink(missing_ok=True)
        return len(entries)


def _is_entry(path: Path) -> bool:
    """Return whether ``path`` is a file the store wrote: an entry's name in its folder, and an entry's contents.

    A sealed entry is known by its first line, an older plain ``.npz`` only when it decodes as its name says.
    """
    if not _ENTRY_NAME.match(path.name) or path.parent.name != path.name[:2]:
        return False
    try:
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW | os.O_NONBLOCK)) as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            head = f.read(len(SEAL))
        if head == SEAL:
            return True
        data = read_regular(path) if head.startswith(_ZIP) else None  # the whole archive, up to the cap
    except (NotReadable, OSError):
        return False
    return data is not None and decode(data, path.stem) is not None


def default_cache_dir() -> Path:
    return user_cache_dir("results")


def source_digest(fn: Callable[..., Any]) -> str:
    """Return the sha256 of the source file that defines ``fn`` (of its source text when it has no file)."""
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if path is not None and Path(path).is_file():
        return sha256_file(Path(path))
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()


@dataclass
class Memo:
    """Memoise ``fn(**inputs) -> arrays`` by its inputs and its module's source (the ``claim_cache`` fixture)."""

    cache: ResultCache

    def __call__(self, fn: Callable[..., Mapping[str, Any]], **inputs: Any) -> Arrays:
        """Return ``fn(**inputs)`` as arrays, from the cache when the same code saw the same inputs."""
        name = f"{fn.__module__}.{fn.__qualname__}"
        engine = {"numerics": key_numerics()}  # another numerics' bits are another entry
        key = Key(engine=engine, model="", function={"name": name, "code": source_digest(fn)}, inputs=inputs)

        def compute() -> tuple[Arrays, dict[str, Any]]:
            out = fn(**inputs)
            return {k: np.asarray(v) for k, v in out.items()}, {"memo": name}

        arrays, _ = self.cache.memo(key, compute)
        return arrays

    @property
    def counts(self) -> dict[str, int]:
        return {"computed": self.cache.counts.computed, "cached": self.cache.counts.cached}
