"""Keep training results in a content-addressed cache on disk: no pickle, atomic, safe across processes.

An entry is one ``.npz`` file (``allow_pickle=False``) named by the sha256 of everything that decides
the result: configs, data fingerprint, seed, engine version, the engine's code identity (the sha256
of its source files, ``claimcheck.codeid``), torch version, device type and dtype.
The file holds the result's arrays, its JSON metadata, and a checksum over both; an entry that
fails the checksum is recomputed. A per-entry ``fcntl`` lock makes concurrent pytest-xdist workers
(or hosts sharing the folder over a POSIX file system) compute a result once: the first takes the
lock and computes, the others wait and then read. A batch (``memo_many``) takes its entries' locks
in key order, computes the missing results together, and stores one entry per result.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import shutil
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from claimcheck.batched import Run, check_batchable, initial_lambdas, train_batch
from claimcheck.codeid import code_identity
from claimcheck.data.synthetic import TensorData
from claimcheck.files import write_atomic
from claimcheck.model import ModelConfig
from claimcheck.protocol import PAPER, ModelSpec
from claimcheck.settings import user_cache_dir
from claimcheck.train import ENGINE_VERSION, TrainConfig, Trajectory, hessian_top_eigenvalue, train

Arrays = dict[str, np.ndarray]
Meta = dict[str, Any]
T = TypeVar("T")
FORMAT = "claimcheck-cache/1"


def cache_key(parts: Mapping[str, Any]) -> str:
    """Return the sha256 of ``parts`` as canonical JSON (sorted keys), plus the software identity.

    The software identity is the entry format, ``ENGINE_VERSION``, the sha256 of the engine's source
    files (``code_identity``: an edit to any of them is a new key, so a run never reads a result that
    other code computed) and torch's version.
    """
    software = {"format": FORMAT, "engine": ENGINE_VERSION, "code": code_identity().digest, "torch": torch.__version__}
    full = {**software, **parts}
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
        key = cache_key(parts)
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
        keys = [cache_key(p) for p in parts]
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


_ARRAYS = ("loss", "sigma_steps", "sigma_min", "sigma_max")


def trajectory_to_entry(traj: Trajectory) -> tuple[Arrays, Meta]:
    """Split a trajectory into arrays and JSON metadata."""
    arrays = {k: getattr(traj, k) for k in _ARRAYS}
    meta = {f.name: getattr(traj, f.name) for f in fields(traj) if f.name not in _ARRAYS}
    return arrays, meta


def trajectory_from_entry(arrays: Arrays, meta: Meta) -> Trajectory:
    """Rebuild a trajectory from ``trajectory_to_entry`` output."""
    values: dict[str, Any] = {k: arrays[k] for k in _ARRAYS} | meta
    return Trajectory(**values)


def train_key(
    model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int, model: ModelSpec = PAPER
) -> dict[str, Any]:
    """Return everything that decides a training result."""
    return {
        "kind": "train",
        "impl": model.identity,
        "model": model_cfg.to_dict(),
        "train": train_cfg.to_dict(),
        "device_type": torch.device(train_cfg.device).type,
        "dtype": train_cfg.dtype,
        "data": data.fingerprint,
        "seed": seed,
    }


@dataclass
class Trainer:
    """Train through the cache on the session's device, counting what this test computed and reused."""

    cache: ResultCache
    device: str = "cpu"
    model: ModelSpec = PAPER
    counts: Counts = field(default_factory=Counts)

    def __call__(self, model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int) -> Trajectory:
        """Return the trajectory of ``train`` on this session's device (``train_cfg.device`` is replaced)."""
        return trajectory_from_entry(
            *self.memo(*_train_job(model_cfg, replace(train_cfg, device=self.device), data, seed, self.model))
        )

    def lambda_max(self, model_cfg: ModelConfig, data: TensorData, seed: int, dtype: str = "float64") -> float:
        """Return the top Hessian eigenvalue at the initialisation ``train`` would draw from ``seed``."""
        parts = _lambda_key(model_cfg, data, seed, dtype, self.device, self.model)

        def compute() -> tuple[Arrays, Meta]:
            torch_dtype = TrainConfig(dtype=dtype).torch_dtype
            params = self.model.init_params(model_cfg, torch.Generator().manual_seed(seed), torch_dtype)
            params = {k: v.to(self.device) for k, v in params.items()}
            on_device = TensorData(data.x.to(self.device, torch_dtype), data.y.to(self.device, torch_dtype), data.name)
            lam = hessian_top_eigenvalue(params, on_device, model_cfg, seed=seed, model=self.model)
            return {}, {"lambda_max": lam}

        return float(self.memo(parts, compute)[1]["lambda_max"])

    def memo(self, parts: Mapping[str, Any], compute: Callable[[], tuple[Arrays, Meta]]) -> tuple[Arrays, Meta]:
        """Return ``compute()`` through the cache (for results other than ``train``'s), counting it."""
        return self._counted(lambda: self.cache.memo(parts, compute))

    def batch(self, runs: Sequence[Run]) -> list[Trajectory]:
        """Return ``self(run.model, run.train, run.data, run.seed)`` for every run, training the missing together.

        Each run is read and stored under the key ``__call__`` uses, so a result trained here and
        one trained alone are the same entry; the runs not in the cache are trained as one
        ``train_batch``, which on CPU gives ``train``'s bits. The runs must share the shapes
        ``check_batchable`` names (ConfigError otherwise, whatever the cache holds). A ``--claim-model``
        model has no batched engine: its runs train one at a time, under the same keys.
        """
        if self.model is not PAPER:
            return [self(r.model, r.train, r.data, r.seed) for r in runs]
        runs = [replace(r, train=replace(r.train, device=self.device)) for r in runs]
        check_batchable(runs)

        def compute(missing: list[int]) -> list[tuple[Arrays, Meta]]:
            return [trajectory_to_entry(t) for t in train_batch([runs[i] for i in missing])]

        parts = [train_key(r.model, r.train, r.data, r.seed, self.model) for r in runs]
        return [trajectory_from_entry(*entry) for entry in self._counted(lambda: self.cache.memo_many(parts, compute))]

    def lambda_maxes(self, runs: Sequence[Run]) -> list[float]:
        """Return ``lambda_max(run.model, run.data, run.seed, run.train.dtype)`` for every run, as one batch.

        Each value is read and stored under ``lambda_max``'s key; the missing ones are measured by
        ``initial_lambdas`` with ``lambda_max``'s power iteration (200 steps, tolerance 1e-7), whatever
        ``run.train`` says of steps, step size or power iteration. A ``--claim-model`` model measures one
        run at a time.
        """
        if self.model is not PAPER:
            return [self.lambda_max(r.model, r.data, r.seed, r.train.dtype) for r in runs]
        runs = [Run(r.model, TrainConfig(dtype=r.train.dtype, device=self.device), r.data, r.seed) for r in runs]
        check_batchable(runs)

        def compute(missing: list[int]) -> list[tuple[Arrays, Meta]]:
            return [({}, {"lambda_max": lam}) for lam in initial_lambdas([runs[i] for i in missing])]

        parts = [_lambda_key(r.model, r.data, r.seed, r.train.dtype, self.device, self.model) for r in runs]
        return [float(meta["lambda_max"]) for _, meta in self._counted(lambda: self.cache.memo_many(parts, compute))]

    def _counted(self, work: Callable[[], T]) -> T:
        """Return ``work()``, adding what it computed and read through ``self.cache`` to ``self.counts``."""
        before = replace(self.cache.counts)
        result = work()
        self.counts.add(self.cache.counts)
        self.counts.add(before, sign=-1)
        return result


def _lambda_key(
    model_cfg: ModelConfig, data: TensorData, seed: int, dtype: str, device: str, model: ModelSpec
) -> dict[str, Any]:
    """Return everything that decides ``Trainer.lambda_max``'s result."""
    parts = {"kind": "lambda_max", "impl": model.identity, "model": model_cfg.to_dict(), "data": data.fingerprint}
    return parts | {"seed": seed, "device_type": torch.device(device).type, "dtype": dtype}


def _train_job(
    model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int, model: ModelSpec
) -> tuple[dict[str, Any], Callable[[], tuple[Arrays, Meta]]]:
    return train_key(model_cfg, train_cfg, data, seed, model), lambda: trajectory_to_entry(
        train(model_cfg, train_cfg, data, seed, model)
    )


def default_cache_dir() -> Path:
    """Return the user cache folder for training results."""
    return user_cache_dir("results")
