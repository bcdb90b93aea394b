"""The whole CI-budget claim suite with a cold result cache against a warm one (target: warm >= 10x faster).

Each round runs ``pytest claims --claim-budget ci`` in a subprocess, so the timing includes start-up
(importing torch, collecting) as a user sees it. The cold round gets an empty cache folder; the warm
rounds reuse a folder that one untimed run filled. Real-data claims use ``$CLAIMCHECK_DATA_DIR``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

ROOT = Path(__file__).resolve().parents[1]


def _suite(cache: Path) -> None:
    cmd = [sys.executable, "-m", "pytest", "claims", "-q", "-p", "no:cacheprovider", "--claim-budget=ci"]
    done = subprocess.run([*cmd, f"--claim-cache-dir={cache}"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.skipif("CLAIMCHECK_DATA_DIR" not in os.environ, reason="set CLAIMCHECK_DATA_DIR so C5 and C6 run too")
def test_suite_cold_cache(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    fresh = iter(range(10**6))
    benchmark.pedantic(
        _suite, setup=lambda: ((tmp_path / f"cold{next(fresh)}",), {}), rounds=1, iterations=1, warmup_rounds=0
    )


@pytest.mark.skipif("CLAIMCHECK_DATA_DIR" not in os.environ, reason="set CLAIMCHECK_DATA_DIR so C5 and C6 run too")
def test_suite_warm_cache(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    _suite(tmp_path / "warm")  # fill the cache, untimed
    benchmark.pedantic(_suite, args=(tmp_path / "warm",), rounds=3, iterations=1)
