"""Describe the machine and software a run used: the report header and the JSON fingerprint."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from claimcheck.provenance import git

# The fingerprint keys that decide whether two runs count as the same hardware and software.
HARDWARE_KEYS = ("cpu", "gpu", "torch", "cuda", "device", "numerics")  # numerics: kernels and threads round


def _git(root: Path, *args: str) -> str | None:
    try:
        out = git.run(root, *args, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode(errors="replace").strip() if out.returncode == 0 else None


@functools.cache
def _cpuinfo(field: str) -> str:
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    return ""


def _cpu_model() -> str:
    return _cpuinfo("model name") or platform.processor() or platform.machine()


@functools.cache
def _libraries() -> str:
    """Return the math libraries that round on the CPU: torch's MKL and oneDNN, numpy's BLAS (names and versions)."""
    found = []
    for line in torch.__config__.show().splitlines():
        line = line.strip(" -")
        if "Math Kernel Library Version" in line:
            found.append("MKL " + line.split("Version", 1)[1].split()[0].split("-")[0])
        elif line.startswith("Intel(R) MKL-DNN"):
            found.append("oneDNN " + line.split()[2])
    with suppress(AttributeError, KeyError, TypeError):
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        found.append(f"numpy {blas.get('name', '?')} {blas.get('version', '?')}")
    return ", ".join(found) or "unknown"


def _gpu() -> tuple[str, str]:
    if not torch.cuda.is_available():
        return "none", "none"
    name = torch.cuda.get_device_name(0)
    driver = "unknown"
    with suppress(OSError, subprocess.SubprocessError, IndexError):
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        out = subprocess.run(query, capture_output=True, text=True, timeout=10, check=True).stdout
        driver = out.strip().splitlines()[0]
    return f"{name} (x{torch.cuda.device_count()})", driver


# Variables by which MKL and oneDNN choose their own kernels (ATEN_CPU_CAPABILITY does not reach them)
KERNEL_VARIABLES = ("MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")


def numerics(device: str, gpu: str = "none") -> str:
    """Return what decides a run's floating-point rounding beyond the code and its inputs (the cache keys hold it).

    See docs/protocols.md for why each part is there."""
    threads = torch.get_num_threads()
    if device.startswith("cuda"):
        return f"cuda {gpu}; CUDA {torch.version.cuda}; torch {torch.__version__}"
    vendor = _cpuinfo("vendor_id") or platform.machine()
    return (
        f"cpu {torch.backends.cpu.get_cpu_capability()}; {vendor} {_cpu_model()}; {_libraries()}; "
        f"torch {torch.__version__}; {threads} thread{'s' if threads != 1 else ''}"
        + "".join(f"; {v}={os.environ[v]}" for v in KERNEL_VARIABLES if os.environ.get(v))
    )


def key_numerics() -> str:
    """Return the numerics a cache key holds: the CPU's line, and the GPU's name where torch sees one."""
    gpu = f"; cuda {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""
    return numerics("cpu") + gpu


def fingerprint(root: Path, device: str = "cpu") -> dict[str, str]:
    """Return versions, CPU, threads, accelerator, numerics flags and git state as strings.

    A suite adds its own lines (the code identity of its engine, say) with ``pytest_claimcheck_environment``."""
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
