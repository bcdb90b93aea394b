"""benchmarks/gpu_run.sh: the GPU-against-CPU run, end to end on the CPU at a toy size, and its refusals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_run.sh"
TOY = """
import pytest

CLAIM = pytest.mark.claim("C9", "a toy claim", "toy")


@CLAIM
def test_toy(claim_record, claim_seeds):
    for s in claim_seeds:
        claim_record.check("value", (s % 7) / 10, "<=", 1.0, label="toy", unit=s)
"""


def _run(tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = os.environ | {"PYTHON": sys.executable, "PYTHONPATH": str(ROOT)} | env
    return subprocess.run(
        ["bash", str(SCRIPT), str(tmp / "out")], cwd=tmp, env=full, capture_output=True, text=True, timeout=600
    )


def test_a_bad_pool_or_a_missing_cpu_folder_is_refused_with_the_variable_and_the_fix(tmp_path: Path) -> None:
    bad = _run(tmp_path, GPU_RUN_POOL="mine")
    assert bad.returncode == 2 and "GPU_RUN_POOL must be exploratory or confirmatory, got 'mine'" in bad.stderr
    missing = _run(tmp_path, GPU_RUN_CPU=str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "cpu-all/report.json" in missing.stderr and "GPU_RUN_CPU=run" in missing.stderr


@pytest.mark.slow
def test_a_dry_run_on_the_cpu_times_both_sides_and_finds_them_the_same(tmp_path: Path) -> None:
    (tmp_path / "test_toy_claim.py").write_text(TOY)
    done = _run(
        tmp_path,
        GPU_RUN_DEVICE="cpu",
        GPU_RUN_BUDGET="ci",
        GPU_RUN_C6_BUDGET="ci",
        GPU_RUN_CLAIMS="test_toy_claim.py",
        GPU_RUN_C6="test_toy_claim.py",
        GPU_RUN_THREADS="1",
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    times = (out / "times.tsv").read_text().splitlines()
    assert [row.split("\t")[:2] for row in times[1:]] == [["gpu", "all"], ["gpu", "c6"], ["cpu", "all"], ["cpu", "c6"]]
    assert all(float(row.split("\t")[4]) > 0 for row in times[1:])
    summary = (out / "summary.md").read_text()
    rows = [
        line.split(" | ")[:2]
        for line in summary.splitlines()
        if line.startswith("| gpu |") or line.startswith("| cpu |")
    ]
    assert rows == [["| gpu", "all"], ["| gpu", "c6"], ["| cpu", "all"], ["| cpu", "c6"]]
    assert summary.count("C9:") == 2 and "(same)" in summary and "CHANGED" not in summary
    assert "met flips 0/" in summary  # the same bits on both sides: no check moved
    # a second run reuses the first one's CPU side instead of running it again
    again = _run(
        tmp_path,
        GPU_RUN_DEVICE="cpu",
        GPU_RUN_BUDGET="ci",
        GPU_RUN_C6_BUDGET="ci",
        GPU_RUN_CLAIMS="test_toy_claim.py",
        GPU_RUN_C6="test_toy_claim.py",
        GPU_RUN_CPU=str(out),
    )
    assert again.returncode == 0, again.stderr
    assert [r.split("\t")[0] for r in (out / "times.tsv").read_text().splitlines()[1:]] == ["gpu", "gpu"]
