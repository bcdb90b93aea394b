"""Run the claim suite in a pytest subprocess and load the run's JSON: the unit of stability and mutant runs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from claimcheck.runfile import RunData, load

Job = tuple[Path, Sequence[str]]  # (report path, extra pytest arguments)


def run_suite(report: Path, budget: str, targets: Sequence[str], args: Sequence[str]) -> RunData:
    """Run ``pytest targets`` with a claim report at ``report`` and return the run it wrote.

    pytest's output goes to ``report`` with the suffix ``.log``. The session's exit status is not
    an error: a claim that does not reproduce fails its test and is still in the report.
    """
    cmd = [
        sys.executable, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider",
        f"--claim-budget={budget}", f"--claim-report={report}", *args,
    ]  # fmt: skip
    log = report.with_suffix(".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"[claimcheck] {' '.join(cmd[2:])} > {log}", file=sys.stderr, flush=True)
    with open(log, "w", encoding="utf-8") as out:
        subprocess.run(cmd, check=False, stdout=out, stderr=subprocess.STDOUT)
    return load(report.with_suffix(".json"))


def run_many(jobs: Sequence[Job], budget: str, targets: Sequence[str], workers: int = 1) -> list[RunData]:
    """Run the suite once per job, ``workers`` at a time (one torch thread each by default); keep the order."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(run_suite, report, budget, targets, args) for report, args in jobs]
        return [f.result() for f in futures]
