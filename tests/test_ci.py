"""``.ci/run``: the steps it runs, in order, and its exit status, with every tool replaced by a stub."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
TOOLS = ("python3", "pip", "ruff", "mypy", "lint-imports", "pytest")
STUB = """#!/usr/bin/env bash
echo "$(basename "$0")${*:+ $*}" >> "$CALLS"
if [ "$(basename "$0")" = python3 ]; then mkdir -p .venv/bin && : > .venv/bin/activate; fi
key="$(basename "$0")${*:+ $*}"
case "$FAIL" in *"|$key="*) rc="${FAIL#*|$key=}"; exit "${rc%%|*}";; esac
exit 0
"""


def run_ci(tmp_path: Path, fail: dict[str, int] | None = None) -> tuple[int, list[str], str]:
    """Run a copy of .ci/run with stub tools; return its exit status, the calls, and stderr."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    repo, bin_dir = tmp_path / "repo", tmp_path / "bin"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    bin_dir.mkdir()
    for tool in TOOLS:
        (bin_dir / tool).write_text(STUB)
        (bin_dir / tool).chmod(stat.S_IRWXU)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(tmp_path / "calls"),
        "FAIL": "|" + "|".join(f"{k}={v}" for k, v in (fail or {}).items()) + "|",
    }
    done = subprocess.run(["bash", str(repo / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    calls = (tmp_path / "calls").read_text().splitlines()
    return done.returncode, calls, done.stderr


def test_ci_runs_the_fast_tests_then_the_slow_ones_then_rays_then_the_claims(tmp_path: Path) -> None:
    rc, calls, _ = run_ci(tmp_path)
    assert rc == 0
    assert [c for c in calls if c.startswith(("pytest", "ruff", "mypy", "lint-imports"))] == [
        "ruff check .",
        "mypy",
        "lint-imports",
        "pytest tests",
        "pytest tests -m slow -n 2 --dist loadfile",
        "pytest tests -m ray",
        "pytest claims --claim-budget ci",
    ]
    assert calls[1] == "pip install -q torch==2.13.0"  # torch first, before anything that needs it
    assert "pip install -q -e .[dev,ray]" in calls  # the Ray tests need the extra


def test_a_failed_step_fails_ci_and_the_later_steps_still_run(tmp_path: Path) -> None:
    rc, calls, err = run_ci(tmp_path, {"pytest tests": 1})
    assert rc == 1
    assert "pytest claims --claim-budget ci" in calls
    assert "CI failed: fast tests (README's test command) (exit 1)" in err


def test_no_tests_collected_is_a_failure_not_a_pass(tmp_path: Path) -> None:
    rc, _, err = run_ci(tmp_path, {"pytest tests -m slow -n 2 --dist loadfile": 5})
    assert rc == 1
    assert "slow tests: pytest collected no tests (exit 5)" in err
