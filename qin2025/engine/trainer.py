"""Train and measure the paper's models through the content-addressed store (``claimcheck.store.cache``).

Every result's key (``claimcheck.store.keys.Key``, built here by ``Trainer.key`` alone) holds, each in
its own namespace: the engine's identity (``ENGINE_VERSION``, the sha256 of the engine's source
files from ``qin2025.engine.codeid``, numpy's version); the model's identity; the computation's own
identity (its name and the sha256 of its module with every ``qin2025`` module that module imports);
and its inputs (configs, data fingerprint, seed, device type and dtype). An edit to any engine
file, to the model, or to the module that measures gives new keys, so a run never reads a result
that other code computed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import Any, TypeVar

import numpy as np
import torch

from claimcheck.errors import ConfigError
from claimcheck.provenance.environment import key_numerics
from claimcheck.pytest.deadline import deadline
from claimcheck.pytest.executor import LOCAL, Executor, split
from claimcheck.store.cache import Arrays, Counts, Meta, ResultCache
from claimcheck.store.keys import Key
from qin2025.data.synthetic import TensorData
from qin2025.engine.batched import Run, check_batchable, initial_lambdas, train_batch
from qin2025.engine.codeid import code_identity, module_identity
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import ENGINE_VERSION, TrainConfig, Trajectory, hessian_top_eigenvalue, train
from qin2025.engine.usermodel import PAPER, ModelSpec

T = TypeVar("T")


def engine_identity() -> dict[str, Any]:
    """Return the parts every key of the paper's engine carries: its version, its source files' sha256, numpy's
    version and the numerics that compute it.

    Torch's version is in every store key already; numpy's is here because cached measurements
    (C3's SVDs, C7's read-outs) are numpy's and LAPACK's numbers. The numerics (kernels, CPU, math
    libraries, threads: ``claimcheck.provenance.environment.key_numerics``) are here because the same seeds give
    other bits under others: a run never reads another numerics' entries as its own, and
    ``--claim-cache-verify`` compares a hit only with a recompute under the numerics that made it.
    """
    return {
        "engine": ENGINE_VERSION,
        "code": code_identity().digest,
        "numpy": np.__version__,
        "numerics": key_numerics(),
    }


def function_identity(fn: Callable[..., Any]) -> dict[str, str]:
    """Return the ``function`` namespace of a key: ``fn``'s qualified name and the sha256 of the code it runs.

    The code is ``fn``'s file with every ``qin2025`` module it imports (``codeid.module_identity``).
    """
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if path is None:
        raise ConfigError(f"a cached computation must be a function defined in a file, got {fn!r}")
    return {"name": f"{fn.__module__}.{fn.__qualname__}", "code": module_identity(fn.__module__, path)}


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


def train_key(model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int) -> dict[str, Any]:
    """Return the inputs that decide a training result (the model's identity is its key's ``model``)."""
    device_type = torch.device(train_cfg.device).type  # cuda:0 and cuda:1 (cpu and cpu:0) share entries
    return {
        "kind": "train",
        "model": model_cfg.to_dict(),
        "train": train_cfg.to_dict() | {"device": device_type},
        "device_type": device_type,
        "dtype": train_cfg.dtype,
        "data": data.fingerprint,
        "seed": seed,
    }


@dataclass
class Trainer:
    """Train through the cache on the session's device, counting what this test computed and reused.

    What the cache lacks is computed by ``executor``: in this process, or as tasks on a Ray cluster
    (``claimcheck.pytest.executor``), whose results come back here and are stored under the same keys.
    """

    cache: ResultCache
    device: str = "cpu"
    model: ModelSpec = PAPER
    counts: Counts = field(default_factory=Counts)
    executor: Executor = LOCAL
    timeout: float = 0.0  # wall-clock seconds per training run (--claim-timeout); 0: no limit

    def __call__(self, model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int) -> Trajectory:
        """Return the trajectory of ``train`` on this session's device (``train_cfg.device`` is replaced)."""
        return trajectory_from_entry(
            *self.memo(*_train_job(model_cfg, replace(train_cfg, device=self.device), data, seed, self.model), train)
        )

    def lambda_max(self, model_cfg: ModelConfig, data: TensorData, seed: int, dtype: str = "float64") -> float:
        """Return the top Hessian eigenvalue at the initialisation ``train`` would draw from ``seed``."""
        parts = _lambda_key(model_cfg, data, seed, dtype, self.device)

        def compute() -> tuple[Arrays, Meta]:
            torch_dtype = TrainConfig(dtype=dtype).torch_dtype
            params = self.model.init_params(model_cfg, torch.Generator().manual_seed(seed), torch_dtype)
            params = {k: v.to(self.device) for k, v in params.items()}
            on_device = TensorData(data.x.to(self.device, torch_dtype), data.y.to(self.device, torch_dtype), data.name)
            lam = hessian_top_eigenvalue(params, on_device, model_cfg, seed=seed, model=self.model)
            return {}, {"lambda_max": lam}

        return float(self.memo(parts, compute, hessian_top_eigenvalue)[1]["lambda_max"])

    def call(self, fn: Callable[..., Mapping[str, Any]], **inputs: Any) -> Arrays:
        """Return ``fn(self.model, **inputs)`` as arrays through the cache: for computations that train nothing.

        For a measurement a claim makes without training (a spectral sweep, a probe). The key holds
        the engine's identity, ``fn``'s identity (its name, and the sha256 of its module with what it
        imports of ``qin2025``: editing a claim module recomputes that module's entries only), the
        model's identity and ``inputs``, which must be JSON (numbers, strings, lists). ``fn`` is not
        given the device: it computes
        where its own tensors are (the CPU), so a CPU and a GPU session share its entries. It returns
        a mapping of names to arrays (or to what ``numpy.asarray`` makes one of).
        """

        def compute() -> tuple[Arrays, Meta]:
            return {k: np.asarray(v) for k, v in fn(self.model, **inputs).items()}, {}

        return self.memo({"kind": "call", **inputs}, compute, fn)[0]

    def key(self, inputs: Mapping[str, Any], code: Callable[..., Any]) -> Key:
        """Return the key of a result of ``code`` (the function that computes it) on ``inputs`` by this model.

        The one place this suite builds a key: the engine's identity, the model's, ``code``'s
        (``function_identity``) and ``inputs``, each a namespace of its own.
        """
        return Key(engine=engine_identity(), model=self.model.identity, function=function_identity(code), inputs=inputs)

    def memo(
        self,
        inputs: Mapping[str, Any],
        compute: Callable[[], tuple[Arrays, Meta]],
        code: Callable[..., Any] | None = None,
    ) -> tuple[Arrays, Meta]:
        """Return ``compute()`` through the cache (for results other than ``train``'s), counting it.

        ``code`` is the function whose code decides the result (default: ``compute`` itself, whose
        module is then the one that calls ``memo``): its module and what that imports are in the key.
        """
        name = str(inputs.get("kind", "memo"))
        key = self.key(inputs, code or compute)

        def timed() -> tuple[Arrays, Meta]:
            with deadline(self.timeout, f"the {name} run of seed {inputs.get('seed', '?')} ({_model_of(inputs)})"):
                return self.executor.run(compute, name)

        return self._counted(lambda: self.cache.memo(key, timed))

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
            return [trajectory_to_entry(t) for t in self._spread(train_batch, [runs[i] for i in missing])]

        keys = [self.key(train_key(r.model, r.train, r.data, r.seed), train) for r in runs]
        return [trajectory_from_entry(*entry) for entry in self._counted(lambda: self.cache.memo_many(keys, compute))]

    def lambda_maxes(self, runs: Sequence[Run]) -> list[float]:
        """Return ``lambda_max(run.model, run.data, run.seed, run.train.dtype)`` for every run, as one batch.

        Each value is read and stored under ``lambda_max``'s key; the missing ones are measured by
        ``initial_lambdas`` with ``lambda_max``'s Lanczos iteration (200 steps, tolerance 1e-7), whatever
        ``run.train`` says of steps, step size or Lanczos steps. A ``--claim-model`` model measures one
        run at a time.
        """
        if self.model is not PAPER:
            return [self.lambda_max(r.model, r.data, r.seed, r.train.dtype) for r in runs]
        runs = [Run(r.model, TrainConfig(dtype=r.train.dtype, device=self.device), r.data, r.seed) for r in runs]
        check_batchable(runs)

        def compute(missing: list[int]) -> list[tuple[Arrays, Meta]]:
            return [({}, {"lambda_max": lam}) for lam in self._spread(initial_lambdas, [runs[i] for i in missing])]

        keys = [
            self.key(_lambda_key(r.model, r.data, r.seed, r.train.dtype, self.device), hessian_top_eigenvalue)
            for r in runs
        ]
        return [float(meta["lambda_max"]) for _, meta in self._counted(lambda: self.cache.memo_many(keys, compute))]

    def _spread(self, fn: Callable[[Sequence[Run]], list[T]], runs: list[Run]) -> list[T]:
        """Return ``fn(runs)``, run as one batch per slot of the executor (the results are the same bits)."""
        chunks = split(range(len(runs)), self.executor.slots)
        seeds = ", ".join(str(r.seed) for r in runs[:8]) + (", ..." if len(runs) > 8 else "")
        with deadline(self.timeout, f"the {fn.__name__} batch of {len(runs)} run(s), seeds {seeds}", len(runs)):
            done = self.executor.map([partial(fn, runs[c[0] : c[-1] + 1]) for c in chunks], fn.__name__)
        return [value for part in done for value in part]

    def _counted(self, work: Callable[[], T]) -> T:
        """Return ``work()``, adding what it computed and read through ``self.cache`` to ``self.counts``."""
        before = replace(self.cache.counts)
        result = work()
        self.counts.add(self.cache.counts)
        self.counts.add(before, sign=-1)
        return result


def _model_of(parts: Mapping[str, Any]) -> str:
    """Return the model config of a result's key parts, in short (for a message)."""
    model = parts.get("model")
    if not isinstance(model, Mapping):
        return "no model config"
    return ", ".join(f"{k}={model[k]}" for k in ("d", "d_qk", "n_layers", "beta") if k in model)


def _lambda_key(model_cfg: ModelConfig, data: TensorData, seed: int, dtype: str, device: str) -> dict[str, Any]:
    """Return the inputs that decide ``Trainer.lambda_max``'s result."""
    parts = {"kind": "lambda_max", "model": model_cfg.to_dict(), "data": data.fingerprint}
    return parts | {"seed": seed, "device_type": torch.device(device).type, "dtype": dtype}


def _train_job(
    model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int, model: ModelSpec
) -> tuple[dict[str, Any], Callable[[], tuple[Arrays, Meta]]]:
    return train_key(model_cfg, train_cfg, data, seed), lambda: trajectory_to_entry(
        train(model_cfg, train_cfg, data, seed, model)
    )
