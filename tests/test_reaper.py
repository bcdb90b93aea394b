"""--claim-timeout from outside a pytest-xdist worker: one long C call that the in-process limit cannot stop."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from claimcheck.pytest.reaper import Reaper, grace, killed_note, note_path

STUCK = """
import signal, sys, time
from pathlib import Path
from claimcheck.pytest.reaper import Reaper
reaper = Reaper(Path(sys.argv[1]), __import__("os").getpid())
with reaper.watch(float(sys.argv[2]), "test_x.py::test_stuck"):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(float(sys.argv[3]))
print("finished")
"""


def _run(folder: Path, limit: float, sleep: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", STUCK, str(folder), str(limit), str(sleep)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_a_block_past_its_limit_and_grace_is_killed_with_a_note(tmp_path: Path) -> None:
    start = time.monotonic()
    done = _run(tmp_path, 0.2, 30)
    assert done.returncode == -9 and "finished" not in done.stdout
    assert time.monotonic() - start < 0.2 + grace(0.2) + 8
    note = killed_note(tmp_path, "test_x.py::test_stuck")
    assert note is not None and "ran past --claim-timeout 0.2 s: its worker was killed from outside" in note


def test_a_block_within_its_limit_is_left_alone(tmp_path: Path) -> None:
    done = _run(tmp_path, 5, 0.1)
    assert done.returncode == 0 and "finished" in done.stdout
    assert not note_path(tmp_path, "test_x.py::test_stuck").exists() and list(tmp_path.iterdir()) == []


def test_no_limit_starts_no_reaper(tmp_path: Path) -> None:
    reaper = Reaper(tmp_path, 1)
    with reaper.watch(0, "x"):
        pass
    assert reaper.process is None


CLAIM_TEST = """
import ctypes, signal
import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed):
    if claim_seed == 1:
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        ctypes.CDLL(None).sleep(60)  # one C call: no signal and no async exception stops it
    claim_record.check("toy statistic", 0.5, "<=", 1.0)
"""


@pytest.mark.slow  # a pytest-xdist worker imports torch: 10-30 s on a shared machine
def test_a_worker_stuck_in_one_c_call_is_killed_and_its_claim_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CLAIM_TEST)
    start = time.monotonic()
    result = pytester.runpytest_subprocess("-n", "1", "--claim-report", "--claim-timeout=1", "-p", "no:randomly")
    assert time.monotonic() - start < 55, "the C call's 60 s were not waited for"
    result.assert_outcomes(passed=2, failed=1)
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "**ERROR**" in text and "its worker was killed from outside" in text, text
