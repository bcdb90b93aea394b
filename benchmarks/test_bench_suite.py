"""The whole CI-budget claim suite cold, then warm, in one benchmark (target: warm <= 6 s and >= 25x faster).

One benchmark runs ``pytest claims --claim-budget ci --claim-report`` in a subprocess, so the
timing includes start-up (importing torch, collecting) and the report with its figures, as a user
sees it: first once on an empty cache folder (cold, untimed by pytest-benchmark, timed here), then
``ROUNDS`` times on the cache the cold run filled (warm: the benchmark's rounds). ``extra_info``
holds the cold seconds, the warm median, their ratio, the load average at the start and the end,
and whether the targets were met; then one more warm rerun under cProfile says where its seconds
go (``warm_profile.stages``: imports, the ledger's git checks, fingerprints, cache reads, figures,
the report), kept as ``profile``. The child's environment is this one less PYTHONDONTWRITEBYTECODE
(``suite_times.run_suite``): a user's installation keeps its bytecode. Real-data claims use
``$CLAIMCHECK_DATA_DIR``; without it the benchmark is skipped.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture
from suite_times import run_suite
from warm_profile import profile_warm

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5
WARM_MAX_S = 6.0
SPEED_UP_MIN = 25.0


@pytest.mark.skipif("CLAIMCHECK_DATA_DIR" not in os.environ, reason="set CLAIMCHECK_DATA_DIR so C5 and C6 run too")
def test_suite_cold_then_warm(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    cache, report = tmp_path / "cache", [f"--claim-report={tmp_path / 'report' / 'claim-report.md'}"]
    cold = run_suite(ROOT, cache, "ci", 0, report)
    assert cold["exit"] in (0, 1), cold["summary"]  # 1: a claim that does not reproduce, as expected or not
    walls: list[float] = []

    def warm() -> None:
        run = run_suite(ROOT, cache, "ci", 0, report)
        assert run["exit"] == cold["exit"], run["summary"]
        walls.append(run["wall_s"])

    benchmark.pedantic(warm, rounds=ROUNDS, iterations=1)
    median = statistics.median(walls)
    benchmark.extra_info.update(
        cold_s=cold["wall_s"],
        cold_cpu_s=cold["cpu_s"],
        cold_claims_s=cold["claims_s"],
        warm_median_s=median,
        warm_walls_s=walls,
        speed_up=round(cold["wall_s"] / median, 1),
        load=[cold["load_before"], os.getloadavg()[0]],
        targets_met=median <= WARM_MAX_S and cold["wall_s"] / median >= SPEED_UP_MIN,
        profile=profile_warm(ROOT, cache, report),
    )
