"""Describe the machine and software a run used: the report header and the JSON fingerprint."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

# The fingerprint keys that decide whether two runs count as the same hardware and software.
HARDWARE_KEYS = ("cpu", "gpu", "torch", "cuda", "device")


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu() -> tuple[str, str]:
    if not torch.cuda.is_available():
        return "none", "none"
    name = torch.cuda.get_device_name(0)
    driver = "unknown"
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        driver = out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    return f"{name} (x{torch.cuda.device_count()})", driver


def numerics(device: str, gpu: str = "none") -> str:
    """Return what decides a run's floating-point rounding beyond the code: the kernels torch dispatches to.

    On the CPU, the instruction set ATen picked (``cpu AVX512``, ``cpu AVX2``): the same seeds give
    other bits under other vector kernels. On a GPU, its name. Statistics pinned under one value are
    compared only on a host that gives the same (``claimcheck.expectations.PinnedAt``).
    """
    if device.startswith("cuda"):
        return f"cuda {gpu}"
    return f"cpu {torch.backends.cpu.get_cpu_capability()}"


def fingerprint(root: Path, device: str = "cpu") -> dict[str, str]:
    """Return versions, CPU, threads, accelerator, numerics flags and git state as strings.

    A suite adds its own lines (the code identity of its engine, say) with ``pytest_claimcheck_environment``.
    """
    commit = _git(root, "rev-parse", "--short=12", "HEAD")
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    gpu, driver = _gpu()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None  # type: ignore[no-untyped-call]
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu": f"{_cpu_model()} ({os.cpu_count()} logical cores)",
        "torch threads": str(torch.get_num_threads()),
        "device": device,
        "numerics": numerics(device, gpu),
        "cuda": torch.version.cuda or "none",
        "cudnn": str(cudnn) if cudnn else "none",
        "gpu": gpu,
        "gpu driver": driver,
        "deterministic algorithms": str(torch.are_deterministic_algorithms_enabled()),
        "tf32 (matmul, cudnn)": f"{torch.backends.cuda.matmul.allow_tf32}, {torch.backends.cudnn.allow_tf32}",
        "git commit": "unknown" if commit is None else commit,
        "git tree dirty": "unknown" if dirty is None else str(bool(dirty)),
        "command": " ".join(["pytest", *sys.argv[1:]]),
    }


def hardware_key(env: dict[str, str]) -> tuple[str, ...]:
    """Return the part of a fingerprint that must match for two runs to count as the same hardware."""
    return tuple(env.get(k, "") for k in HARDWARE_KEYS)
