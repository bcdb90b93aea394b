"""Run zero-argument callables in this process, or as Ray tasks set up and checked as this process (docs/cluster.md)."""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from claimcheck.errors import ClaimcheckError, ConfigError

T = TypeVar("T")

INSTALL = "pip install 'claimcheck[ray]'"
MAX_RETRIES = 3  # retries of a task whose worker died (Ray's own default)


class ClusterError(ClaimcheckError):
    """A task could not be run on the cluster: its worker kept dying, or the worker runs other code."""


def ray_missing() -> str | None:
    """Return why Ray cannot be used here (with the command that installs it), or None when it can."""
    try:
        import ray  # noqa: F401
    except ImportError as e:
        return f"Ray is not installed ({e}); install it with {INSTALL}"
    return None


def split(positions: Sequence[int], parts: int) -> list[list[int]]:
    """Return ``positions`` cut into at most ``parts`` consecutive runs of near-equal length (none empty)."""
    import numpy as np

    return [c.tolist() for c in np.array_split(np.asarray(positions, dtype=np.int64), max(1, parts)) if c.size]


class Executor:
    """Run tasks in this process, in order: the default, and what a task sees of a cluster executor."""

    @property
    def slots(self) -> int:
        """Return how many tasks can run at once (what a batch is split into): 1 here."""
        return 1

    def map(self, tasks: Sequence[Callable[[], T]], name: str = "task") -> list[T]:
        """Return ``[task() for task in tasks]``; ``name`` says what the tasks compute, for errors."""
        return [task() for task in tasks]

    def run(self, task: Callable[[], T], name: str = "task") -> T:
        """Return ``task()``."""
        return self.map([task], name)[0]

    def describe(self) -> str:
        """Return where tasks run, for the report header."""
        return "local (this process)"

    @property
    def address(self) -> str:
        """Return the address other processes join to share this executor's cluster ("" when there is none)."""
        return ""

    def close(self) -> None:
        """Release what the executor holds (nothing here)."""


LOCAL = Executor()


@dataclass(frozen=True)
class WorkerSetup:
    """How a worker must be set up to compute what this process computes."""

    threads: int  # torch intra-op threads, as in this process
    default_dtype: str  # torch's default dtype in this process, e.g. "float32"
    gpu: bool  # the task runs on a GPU: TF32 off, as the plugin sets it
    identity: Callable[[], Mapping[str, str]] | None  # what the worker's code must match (None: no check)
    expected: Mapping[str, str]  # ``identity()`` in this process, with the library versions


def _identity(setup: WorkerSetup) -> dict[str, str]:
    """Return the library versions and the code identity ``setup`` names, in this process."""
    import numpy as np
    import torch

    versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__}
    return {**versions, **(setup.identity() if setup.identity is not None else {})}


def run_task(setup: WorkerSetup, task: Callable[[], T]) -> T:
    """Set this worker up as ``setup`` says, check it runs the same code, and return ``task()`` (a Ray task's body)."""
    import torch

    torch.set_num_threads(setup.threads)
    torch.set_default_dtype(getattr(torch, setup.default_dtype))
    if setup.gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    here = _identity(setup)
    if here != dict(setup.expected):
        differ = {k: (setup.expected.get(k), here.get(k)) for k in sorted(set(here) | set(setup.expected))}
        shown = "; ".join(f"{k}: controller {a}, worker {b}" for k, (a, b) in differ.items() if a != b)
        raise ClusterError(
            f"the Ray worker on {platform.node()} runs other code than the controller ({shown}); install the "
            "same claimcheck commit, torch and numpy on every node (see docs/cluster.md)"
        )
    return task()


def _check_reachable(address: str, timeout: float = 10.0) -> None:
    """Raise OSError unless ``[ray://]host:port`` takes a TCP connection in ``timeout`` s (Ray retries for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
        pass


class RayExecutor(Executor):
    """Run tasks on a Ray cluster: the one at ``address``, or an embedded local one sized to this machine.

    Each task takes ``threads`` CPUs or one GPU, refuses to run where ``identity`` differs, and is retried up to
    ``max_retries`` times when its worker died; ``ship_code`` sends this package and ``packages`` to a named cluster.
    """

    def __init__(
        self,
        address: str = "",
        threads: int = 1,
        gpu: bool = False,
        identity: Callable[[], Mapping[str, str]] | None = None,
        max_retries: int = MAX_RETRIES,
        ship_code: bool = True,
        source: str = "--claim-ray-address",
        packages: Sequence[Path] = (),
    ) -> None:
        why = ray_missing()
        if why is not None:
            raise ConfigError(f"--claim-executor ray: {why}")
        import ray

        self._ray: Any = ray
        self._owner = False
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
            if address:
                if ship_code:
                    shipped = [Path(__file__).resolve().parents[1], *packages]  # claimcheck/ and the suite's packages
                    options["runtime_env"] = {"py_modules": [str(p) for p in shipped]}
                try:
                    _check_reachable(address)
                    ray.init(address=address, **options)
                except Exception as e:  # ConnectionError, AuthenticationError, a bad address: all say why
                    raise ConfigError(
                        f"{source} {address}: cannot join the Ray cluster there ({type(e).__name__}: {e}); "
                        "start it with `ray start --head` or give the address `ray status` shows"
                    ) from None
            else:
                ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, **options)
            self._owner = True
        self._address = address or "embedded local Ray"
        self._gcs = str(ray.get_runtime_context().gcs_address)
        self.threads = max(1, threads)
        self.gpu = gpu
        self.max_retries = max_retries
        expected = _identity(WorkerSetup(self.threads, "", gpu, identity, {}))
        import torch  # with Ray, not in every session: the local executor needs none

        dtype = str(torch.get_default_dtype()).removeprefix("torch.")
        self.setup = WorkerSetup(self.threads, dtype, gpu, identity, expected)
        self._task: Any = ray.remote(run_task)
        self._options = {"num_cpus": self.threads, "num_gpus": 1 if gpu else 0, "max_retries": max_retries}
        if gpu and not self._resources().get("GPU"):
            self.close()
            raise ConfigError(
                f"--claim-device cuda: the Ray cluster ({self._address}) has no GPU; add GPU nodes or use "
                "--claim-device cpu"
            )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as a local executor: a task that carries this executor computes in its own worker."""
        return (Executor, ())

    def _resources(self) -> dict[str, float]:
        return dict(self._ray.cluster_resources())

    @property
    def slots(self) -> int:
        """Return how many tasks the cluster runs at once: its GPUs, or its CPUs over the threads per task."""
        res = self._resources()
        if self.gpu:
            return max(1, int(res.get("GPU", 0)))
        return max(1, int(res.get("CPU", 0) // self.threads))

    @property
    def address(self) -> str:
        """Return the cluster's GCS address: pytest-xdist workers join the controller's cluster there."""
        return self._gcs

    def describe(self) -> str:
        """Return e.g. ``ray: embedded local Ray at 10.0.0.2:6379, 2 CPUs, 1 thread and 1 CPU per task``."""
        res = self._resources()
        gpus = f", {int(res['GPU'])} GPUs" if res.get("GPU") else ""
        per = "1 GPU" if self.gpu else f"{self.threads} CPU{'s' * (self.threads > 1)}"
        where = self._address if self._address != self._gcs else "cluster"
        return (
            f"ray: {where} at {self._gcs}, {int(res.get('CPU', 0))} CPUs{gpus}; "
            f"{self.threads} torch thread{'s' * (self.threads > 1)} and {per} per task, {self.max_retries} retries"
        )

    def map(self, tasks: Sequence[Callable[[], T]], name: str = "task") -> list[T]:
        """Submit every task at once and return their results in order; on the first failure cancel the others."""
        ray = self._ray
        refs = [
            self._task.options(name=name, retry_exceptions=False, **self._options).remote(self.setup, task)
            for task in tasks
        ]
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                ray.get(done[0])  # raises here on the first task that failed
            return list(ray.get(refs))
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, BaseException) else e
            if cause is not e:
                cause.add_note(f"raised in Ray task {name!r} on the cluster at {self._gcs}")
            raise cause from e
        except ray.exceptions.RayError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ClusterError(
                f"Ray task {name!r} failed on {self._address}: {type(e).__name__} ({first}); its worker was "
                f"retried up to {self.max_retries} times; see the Ray logs (ray logs, or /tmp/ray/session_latest/logs)"
            ) from e
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        """Disconnect from the cluster (and stop the embedded one) if this process started the connection."""
        if self._owner and self._ray.is_initialized():
            self._ray.shutdown()
        self._owner = False
