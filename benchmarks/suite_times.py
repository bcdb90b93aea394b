"""Time whole claim-suite runs, per claim, for docs/performance.md (a script: runs take minutes).

``python benchmarks/suite_times.py --budget ci --cold CHECKOUT [CHECKOUT ...]`` runs
``pytest claims --claim-budget ci`` once in each checkout, one after the other, each with an empty
cache folder of its own, and prints one JSON object per run: wall seconds, the CPU seconds of the
run (user + system, from the child's resource usage), the load average before and after, and the
seconds of each claim's tests (setup + call + teardown, from a JUnit XML report). ``--warm N``
then reruns each checkout N times on the cache its cold run filled. ``--repeat K`` alternates the
checkouts K times (A B A B ...), so that the ratio between them is measured in one sitting.
``--xdist N`` adds ``-n N``. Extra pytest arguments follow ``--``.

The child's environment is this process's, less PYTHONDONTWRITEBYTECODE: a user's installation
keeps its bytecode, so a rerun does not compile every module again (the cold run writes it).
Real-data claims need CLAIMCHECK_DATA_DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def _claims_of(junit: Path) -> dict[str, float]:
    """Return the seconds of each claim's tests (by the claim module's name, test_cN_...) from a JUnit XML file."""
    out: dict[str, float] = {}
    for case in ET.parse(junit).iter("testcase"):
        m = re.search(r"test_(c\d+)_", case.get("classname", "") + "." + case.get("file", ""))
        key = m.group(1).upper() if m else "other"
        out[key] = round(out.get(key, 0.0) + float(case.get("time", 0.0)), 2)
    return dict(sorted(out.items(), key=lambda kv: (len(kv[0]), kv[0])))


def run_suite(checkout: Path, cache: Path, budget: str, xdist: int, extra: list[str]) -> dict[str, Any]:
    """Run the claim suite once in ``checkout`` on ``cache``; return its timings."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "claims", "-q", "-p", "no:cacheprovider", f"--claim-budget={budget}"]
        cmd += [f"--claim-cache-dir={cache}", f"--junitxml={junit}", *(["-n", str(xdist)] if xdist else []), *extra]
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        claims = _claims_of(junit) if junit.exists() else {}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    return {
        "checkout": str(checkout),
        "budget": budget,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "exit": done.returncode,
        "claims_s": claims,
        "summary": tail[0] if tail else done.stderr.strip()[-300:],
    }


def main(argv: list[str]) -> int:
    """Run what the arguments ask and print one JSON line per run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path)
    parser.add_argument("--budget", default="ci")
    parser.add_argument("--warm", type=int, default=0, help="warm reruns after each cold run")
    parser.add_argument("--repeat", type=int, default=1, help="alternate the checkouts this many times")
    parser.add_argument("--xdist", type=int, default=0, help="pytest-xdist workers (-n)")
    parser.add_argument("--cache-root", type=Path, default=None, help="where caches go (default: temp)")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    root = args.cache_root or Path(tempfile.mkdtemp(prefix="suite-times-"))
    for k in range(args.repeat):
        for i, checkout in enumerate(args.checkouts):
            cache = root / f"cache-{k}-{i}"
            cold = run_suite(checkout.resolve(), cache, args.budget, args.xdist, extra)
            print(json.dumps({"round": k, "kind": "cold", **cold}), flush=True)
            for _ in range(args.warm):
                warm = run_suite(checkout.resolve(), cache, args.budget, args.xdist, extra)
                print(json.dumps({"round": k, "kind": "warm", **warm}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
