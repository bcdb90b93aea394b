"""Run the claim suite in a pytest subprocess and load the run's JSON: the unit of stability and mutant runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from claimcheck.errors import ClaimcheckError
from claimcheck.report.rundata import NOT_STARTED, RunData, load

Job = tuple[Path, Sequence[str]]  # (report path, extra pytest arguments)


class RunRefused(ClaimcheckError):
    """A suite run stopped before any claim ran (a usage error, e.g. a model the probe refused)."""


def run_suite(
    report: Path, budget: str, targets: Sequence[str], args: Sequence[str], cwd: Path | None = None
) -> RunData:
    """Run ``pytest targets`` with a claim report at ``report`` and return the run it wrote.

    pytest's output goes to ``report`` with the suffix ``.log``. The session's exit status is not an error: a claim that
    does not reproduce fails its test and is still in the report. With ``cwd`` the session runs in that folder with it
    first on ``PYTHONPATH`` (a patched copy of the checkout: its packages win over the installed ones).
    """
    cmd = [
        sys.executable, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider",
        f"--claim-budget={budget}", f"--claim-report={report}", *args,
    ]  # fmt: skip
    log = report.with_suffix(".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    report.with_suffix(".json").unlink(missing_ok=True)  # an earlier run's, which a refused run would leave
    print(f"[claimcheck] {' '.join(cmd[2:])} > {log}", file=sys.stderr, flush=True)
    env = None
    if cwd is not None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), *filter(None, [os.environ.get("PYTHONPATH")])])}
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run(cmd, check=False, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    found = reused(report)
    if isinstance(found, RunData):
        return found
    raise found or RunRefused(f"pytest exited {done.returncode} and wrote no report (see {log})")


def reused(report: Path) -> RunData | RunRefused | None:
    """Return what a finished ``run_suite`` left at ``report``: its run, its refusal, or None.

    A run refused at start by the suite (a model the probe refused) writes a report that says why and
    ran no test: its refusal is read there. One refused before the core could write (a bad option)
    leaves only the log: its last ERROR line.
    """
    if report.with_suffix(".json").is_file():
        run = load(report.with_suffix(".json"))
        why = [i.removeprefix(NOT_STARTED) for i in run.incomplete if i.startswith(NOT_STARTED)]
        return RunRefused(why[0]) if why and not run.tests else run
    log = report.with_suffix(".log")
    if not log.is_file():
        return None
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("ERROR")]
    return RunRefused(lines[-1]) if lines else None


def run_many(jobs: Sequence[Job], budget: str, targets: Sequence[str], workers: int = 1) -> list[RunData]:
    """Run the suite once per job, ``workers`` at a time (one torch thread each by default); keep the order.

    Once every run has finished, raise ``RunRefused`` for the first (in order) that stopped before any claim ran.
    """
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(run_suite, report, budget, targets, args) for report, args in jobs]
    return [f.result() for f in futures]
