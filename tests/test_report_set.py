"""The report set (markdown, JSON sidecar, figures) is written as a whole, or not at all and said so.

A kill at any point leaves the old set (with its "earlier run" banner) or the new one once the next
run started; a report that cannot be written still leaves the verdicts on the terminal, names the
path and the cause, keeps the old set, and exits with status 12.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
from pathlib import Path

import pytest
from toys import toy

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report.rundata import RunData
from claimcheck.report.write import mark_superseded, write_report

REPORT_NOT_WRITTEN = 12  # pytest uses 0-6


def _run(run_id: str, curve: str) -> RunData:
    rec = ClaimRecorder(claim_id="C9", seed=0)
    rec.check("toy statistic", 0.5, "<=", 1.0)
    rec.check("toy statistic", 2.0, "<=", 1.0, control="toy control")
    rec.curve("loss", [1.0, 0.5], group=curve)
    test = TestOutcome("test_toy.py::test_claim", "C9", "toy", "Sec. 9", "passed", record=rec)
    return RunData(title="toy", env={"run id": run_id, "date": "today"}, tests=[test])


def _state(report: Path) -> tuple[str, str, set[str], set[str]]:
    """Return the markdown's run id, the sidecar's, the figures the markdown links, and the figures on disk."""
    text = report.read_text()
    md_id = re.search(r"\| run id \| (\w+) \|", text)
    sidecar = json.loads(report.with_suffix(".json").read_text())["env"]["run id"]
    linked = set(re.findall(r"\]\([^)/]*/([^)]+\.png)\)", text))
    folder = report.with_name(report.stem + "-figures")
    on_disk = {p.name for p in folder.glob("*.png")} if folder.is_dir() else set()
    return (md_id.group(1) if md_id else ""), sidecar, linked, on_disk


def _die_at(step: int) -> None:
    """Make this process die (as kill -9 would) just before its ``step``-th rename or removal of a file."""
    calls = [0]
    real_replace, real_unlink = os.replace, os.unlink

    def counted(real):  # type: ignore[no-untyped-def]
        def op(*args, **kwargs):  # type: ignore[no-untyped-def]
            if calls[0] == step:
                os._exit(9)
            calls[0] += 1
            return real(*args, **kwargs)

        return op

    os.replace = counted(real_replace)  # type: ignore[assignment]
    os.unlink = counted(real_unlink)  # type: ignore[assignment]


def _write_new_and_die(report: str, step: int) -> None:
    _die_at(step)
    write_report(_run("new", "new curve"), Path(report))
    os._exit(0)


def test_a_kill_at_any_point_leaves_the_old_set_or_the_new_one(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    outcomes = set()
    for step in range(40):
        folder = tmp_path / f"step{step}"
        report = folder / "claim-report.md"
        write_report(_run("old", "old curve"), report)
        mark_superseded(report, "new", "today")  # the new run's start
        child = ctx.Process(target=_write_new_and_die, args=(str(report), step))
        child.start()
        child.join(60)
        mark_superseded(report, "next", "today")  # the next run's start finds what the kill left
        md_id, sidecar, linked, on_disk = _state(report)
        assert md_id == sidecar, f"killed at step {step}: markdown of run {md_id}, sidecar of run {sidecar}"
        assert linked == on_disk, f"killed at step {step}: the markdown links {linked}, the folder holds {on_disk}"
        leftovers = [p.name for p in folder.rglob(".*") if not p.name.endswith((".lock", ".manifest.json"))]
        assert not leftovers, f"killed at step {step}: temporaries left behind: {leftovers}"
        outcomes.add(md_id)
        if child.exitcode == 0:  # the write finished before the step: every kill point was tried
            break
    assert outcomes == {"old", "new"} and child.exitcode == 0


FULL_DISK = """
import errno

import claimcheck.report.figures
import claimcheck.report.write

try:
    import claimcheck.report.fileset as reportset
except ImportError:
    reportset = None


MODULES = [m for m in (claimcheck.report.figures, claimcheck.report.write, reportset) if hasattr(m, "write_atomic")]
REAL = [m.write_atomic for m in MODULES]


def full(path, data):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


def pytest_collection_finish(session):
    for module in MODULES:
        module.write_atomic = full


def pytest_unconfigure(config):
    for module, real in zip(MODULES, REAL):
        module.write_atomic = real
"""

IN_THE_WAY = """
import os


def pytest_collection_finish(session):
    os.makedirs({path!r})
"""


def _old_report(pytester: pytest.Pytester) -> tuple[str, str]:
    pytester.makepyfile(test_toy=toy())
    assert pytester.runpytest("--claim-report").ret == pytest.ExitCode.OK
    reports = pytester.path / "reports"
    return (reports / "claim-report.md").read_text(), (reports / "claim-report.json").read_text()


def _old_set_kept(pytester: pytest.Pytester, old_md: str, old_json: str) -> None:
    reports = pytester.path / "reports"
    md = (reports / "claim-report.md").read_text()
    assert md.startswith("> **This report is from an earlier run.**") and md.endswith(old_md)  # only the banner added
    assert (reports / "claim-report.json").read_text() == old_json
    assert (reports / "claim-report-figures" / "C9-toy-curve.png").is_file()


def test_a_full_disk_at_report_time_keeps_the_verdicts_the_old_report_and_says_so(pytester: pytest.Pytester) -> None:
    old_md, old_json = _old_report(pytester)
    pytester.makeconftest(FULL_DISK)
    result = pytester.runpytest("--claim-report")
    assert result.ret == REPORT_NOT_WRITTEN
    result.stdout.fnmatch_lines(["*claim verdicts*", "C9: REPRODUCED*"])
    result.stdout.fnmatch_lines(["*claim report NOT written*claim-report.md*No space left on device*exit status 12*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    _old_set_kept(pytester, old_md, old_json)


@pytest.mark.parametrize("blocked", ["claim-report.json", "claim-report.md"])
def test_a_folder_in_the_way_at_report_time_keeps_the_old_report_and_says_so(
    pytester: pytest.Pytester, blocked: str
) -> None:
    old_md, old_json = _old_report(pytester)
    reports = pytester.path / "reports"
    (reports / blocked).unlink()
    pytester.makeconftest(IN_THE_WAY.format(path=str(reports / blocked)))
    result = pytester.runpytest("--claim-report")
    assert result.ret == REPORT_NOT_WRITTEN
    result.stdout.fnmatch_lines(["C9: REPRODUCED*", f"*claim report NOT written*{blocked} is a folder*"])
    kept = reports / ("claim-report.md" if blocked.endswith(".json") else "claim-report.json")
    assert kept.read_text().endswith(old_md if blocked.endswith(".json") else old_json)


def test_a_sidecar_path_that_is_a_folder_is_refused_at_start(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=toy())
    (pytester.path / "reports" / "claim-report.json").mkdir(parents=True)
    result = pytester.runpytest("--claim-report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *claim-report.json is a folder*"])


def test_a_killed_runs_temporaries_are_removed_by_the_next_run_and_nothing_else(pytester: pytest.Pytester) -> None:
    _old_report(pytester)
    reports = pytester.path / "reports"
    temporaries = [
        reports / ".claim-report.md.k3j_a9zq.tmp",
        reports / ".claim-report.json.0a1b2c3d.tmp",
        reports / "claim-report-figures" / ".C9-toy-curve.png.zz9_x1y2.tmp",
    ]
    staging = reports / ".claim-report.md.0123456789ab.staging"
    (staging / "claim-report-figures").mkdir(parents=True)
    (staging / "claim-report.json").write_text("{}")
    for p in temporaries:
        p.write_text("cut short")
    mine = [reports / ".notes.md.k3j_a9zq.tmp", reports / "claim-report-figures" / "beach.png", reports / "x.tmp"]
    for p in mine:
        p.write_text("the user's")
    assert pytester.runpytest("--claim-report").ret == pytest.ExitCode.OK
    assert not any(p.exists() for p in temporaries) and not staging.exists()
    assert all(p.read_text() == "the user's" for p in mine)


def test_a_figure_whose_name_holds_a_file_of_the_users_is_not_drawn_over(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    theirs = tmp_path / "claim-report-figures" / "C9-toy-curve.png"
    theirs.parent.mkdir()
    theirs.write_bytes(b"the user's picture")
    written = write_report(_run("new", "toy curve"), report)
    assert theirs.read_bytes() == b"the user's picture" and written.figures == []
    assert "figure C9-toy-curve.png is not shown" in report.read_text()
