"""Say where a warm claim-suite rerun spends its seconds: imports, fingerprints, ledger, cache reads, figures, report.

``python benchmarks/warm_profile.py CHECKOUT --cache DIR [-- pytest args]`` reruns
``pytest claims --claim-budget ci`` under cProfile on a cache a cold run filled and prints one JSON
object: the wall seconds of the run and the cumulative seconds of each stage (``STAGES``: the
function whose cumulative time stands for it). Stages nest (the report holds its figures; the
tests hold their cache reads), so they do not add up to the wall time; ``outside tests`` is the
wall time less the tests' own. cProfile slows Python code (about 1.3-2x), so the stage seconds are
shares, not a plain run's seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# stage -> (file suffix, function name) whose cumulative time is that stage's
STAGES: dict[str, tuple[str, str]] = {
    "imports": ("<frozen importlib._bootstrap>", "_find_and_load"),
    "configure (options, suite hooks)": ("_pytest/config/__init__.py", "_do_configure"),
    "start the claim core": ("claimcheck/pytest/plugin.py", "start_core"),
    "ledger and git checks": ("claimcheck/pytest/session.py", "verified_ledger"),
    "environment fingerprint": ("claimcheck/provenance/environment.py", "fingerprint"),
    "collection": ("_pytest/main.py", "perform_collect"),
    "claim code fingerprints": ("claimcheck/pytest/core.py", "fingerprint_claims"),
    "tests (setup, call, teardown)": ("_pytest/runner.py", "runtestprotocol"),
    "cache reads (entries)": ("claimcheck/store/cache.py", "_hit"),
    "session finish (decide, write, save)": ("claimcheck/pytest/session.py", "pytest_sessionfinish"),
    "decide the claims": ("claimcheck/report/rundata.py", "decide"),
    "serialise the run (JSON)": ("claimcheck/report/rundata.py", "dumps"),
    "write the report set": ("claimcheck/report/write.py", "write_report"),
    "figures": ("claimcheck/report/figures.py", "draw_figures"),
    "markdown": ("claimcheck/report/write.py", "markdown_files"),
    "terminal summary": ("claimcheck/pytest/session.py", "pytest_terminal_summary"),
}


def stages(profile: Path) -> dict[str, float]:
    """Return the cumulative seconds of each of ``STAGES`` in a cProfile output file (0 for one never called)."""
    raw: dict[tuple[str, int, str], Any] = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    out = dict.fromkeys(STAGES, 0.0)
    for (file, _, name), (_, _, _, cumulative, _) in raw.items():
        for stage, (suffix, function) in STAGES.items():
            if name == function and file.endswith(suffix):
                out[stage] = max(out[stage], round(float(cumulative), 2))
    return out


def profile_warm(checkout: Path, cache: Path, extra: list[str]) -> dict[str, Any]:
    """Rerun the ci suite of ``checkout`` on ``cache`` under cProfile; return its wall seconds and its stages."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "warm.prof"
        cmd = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "pytest", "claims", "-q"]
        cmd += ["-p", "no:cacheprovider", "--claim-budget=ci", f"--claim-cache-dir={cache}", *extra]
        start = time.perf_counter()
        subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        found = stages(prof) if prof.exists() else {}
    tests = found.get("tests (setup, call, teardown)", 0.0)
    return {
        "wall_s": round(wall, 2),  # cProfile's exit status is always 0: the run's own is not known here
        "outside tests_s": round(wall - tests, 2),
        "stages_s": found,
        "load": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str]) -> int:
    """Profile one warm rerun and print its stages as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--cache", type=Path, required=True, help="a cache folder a cold run filled")
    args, extra = parser.parse_known_args(argv)
    print(json.dumps(profile_warm(args.checkout.resolve(), args.cache, [a for a in extra if a != "--"]), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
