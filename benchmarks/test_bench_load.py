"""A one-test project with the plugin installed, against the same project with ``-p no:claimcheck`` (target: 0.3 s).

Issue 34: loading the plugin must cost a project that runs no claim next to nothing. One
benchmark runs ``pytest -q test_one.py`` in a fresh interpreter ``ROUNDS`` times with the plugin
and ``ROUNDS`` times without, alternating (so a change of load falls on both alike); the target is
the difference of the medians. ``extra_info`` holds both medians, every wall time, the difference,
the load average at the start and the end, and whether the target was met.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pytest_benchmark.fixture import BenchmarkFixture

ROUNDS = 5
MAX_EXTRA_S = 0.3


def _wall(project: Path, *args: str) -> float:
    """Return the wall seconds of one ``pytest -q`` in ``project`` (a fresh interpreter, bytecode kept)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return wall


def test_a_one_test_project_pays_next_to_nothing_for_the_plugin(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")  # its own root: none of this repository's settings
    (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    _wall(project)  # bytecode written, files in the page cache: neither side pays for them
    load_before = os.getloadavg()[0]
    plugin: list[float] = []
    bare: list[float] = []

    def both() -> None:
        plugin.append(_wall(project))
        bare.append(_wall(project, "-p", "no:claimcheck"))

    benchmark.pedantic(both, rounds=ROUNDS, iterations=1)
    extra = statistics.median(plugin) - statistics.median(bare)
    benchmark.extra_info.update(
        plugin_median_s=round(statistics.median(plugin), 3),
        bare_median_s=round(statistics.median(bare), 3),
        plugin_walls_s=[round(w, 3) for w in plugin],
        bare_walls_s=[round(w, 3) for w in bare],
        extra_s=round(extra, 3),
        load=[round(load_before, 2), round(os.getloadavg()[0], 2)],
        targets_met=extra <= MAX_EXTRA_S,
    )
