"""claimcheck deletes, moves and overwrites only the files it wrote, and proves it by their place and content.

The report manifest is committed in git, so a pull request can edit it: an entry is honoured only
when it names a regular file inside the report's folder whose sha256 is the one recorded when
claimcheck wrote it. The cache's ``clear`` removes only the store's own entries; a collection-only
run touches neither the cache nor the report.
"""

from __future__ import annotations

import hashlib
import json
import signal
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_cache_faults import CLAIM as CACHED
from toys import K, toy

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report.fileset import manifest_path, recover
from claimcheck.report.rundata import RunData
from claimcheck.report.write import mark_superseded, write_report
from claimcheck.store.cache import ResultCache


def _run(run_id: str, curve: str = "toy curve") -> RunData:
    rec = ClaimRecorder(claim_id="C9", seed=0)
    rec.check("toy statistic", 0.5, "<=", 1.0)
    rec.curve("loss", [1.0, 0.5], group=curve)
    test = TestOutcome("test_toy.py::test_claim", "C9", "toy", "Sec. 9", "passed", record=rec)
    return RunData(title="toy", env={"run id": run_id, "date": "today"}, tests=[test])


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _edit_manifest(report: Path, **changes: object) -> None:
    data = json.loads(manifest_path(report).read_text())
    data.update(changes)
    manifest_path(report).write_text(json.dumps(data))


def _victim(where: Path, text: str = "the user's") -> Path:
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(text)
    return where


def test_a_manifest_entry_outside_the_report_folder_is_never_removed(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    outside = _victim(tmp_path / "victim.txt")
    absolute = _victim(tmp_path / "elsewhere" / "precious.txt")
    data = json.loads(manifest_path(report).read_text())
    entries = ["../victim.txt", str(absolute)]
    hashes = {e: _sha(p) for e, p in zip(entries, (outside, absolute), strict=True)}
    _edit_manifest(report, files=[*data["files"], *entries], sha256={**data.get("sha256", {}), **hashes})
    with pytest.warns(UserWarning, match="victim.txt"):
        write_report(_run("new", "another curve"), report)
    assert outside.read_text() == "the user's" and absolute.read_text() == "the user's"


def test_a_move_whose_source_leaves_the_report_folder_removes_no_folder(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    precious = _victim(tmp_path / "elsewhere" / "precious.txt")
    sibling = _victim(tmp_path / "sibling.txt")
    for source in ("..", str(precious.parent), "../sibling.txt"):
        _edit_manifest(report, moves=[[source, "claim-report.md"]], remove=[])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            recover(report)
        assert precious.read_text() == "the user's" and sibling.read_text() == "the user's"
        assert report.is_file()


def test_a_move_onto_a_file_of_the_users_in_the_report_folder_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report)
    notes = _victim(tmp_path / "notes.txt")
    staged = _victim(tmp_path / ".claim-report.md.abc.staging" / "notes.txt", "from a pull request")
    _edit_manifest(
        report,
        files=["notes.txt"],
        sha256={"notes.txt": _sha(staged)},
        moves=[[".claim-report.md.abc.staging/notes.txt", "notes.txt"]],
        remove=[],
    )
    with pytest.warns(UserWarning, match="notes.txt"):
        recover(report)
    assert notes.read_text() == "the user's"


def test_an_old_sets_file_whose_content_changed_since_claimcheck_wrote_it_is_left_alone(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old", "old curve"), report)
    figure = tmp_path / "claim-report-figures" / "C9-old-curve.png"
    assert figure.is_file()
    figure.write_bytes(b"the user's own picture, saved over claimcheck's")
    with pytest.warns(UserWarning, match="C9-old-curve.png"):
        write_report(_run("new", "new curve"), report)
    assert figure.read_bytes() == b"the user's own picture, saved over claimcheck's"
    assert (tmp_path / "claim-report-figures" / "C9-new-curve.png").is_file()


def test_a_manifest_entry_through_a_symbolic_link_is_not_followed_out(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    theirs = _victim(tmp_path / "theirs" / "photo.png")
    (report.parent / "linked").symlink_to(theirs.parent, target_is_directory=True)
    (report.parent / "photo-link.png").symlink_to(theirs)
    data = json.loads(manifest_path(report).read_text())
    entries = ["linked/photo.png", "photo-link.png"]
    _edit_manifest(
        report,
        files=[*data["files"], *entries],
        sha256={**data.get("sha256", {}), **dict.fromkeys(entries, _sha(theirs))},
    )
    with pytest.warns(UserWarning, match="photo"):
        write_report(_run("new", "another curve"), report)
    assert theirs.read_text() == "the user's" and (report.parent / "photo-link.png").is_symlink()


def test_the_banner_of_a_new_run_keeps_the_old_report_claimchecks_own(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report)
    mark_superseded(report, "new", "today")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_report(_run("new"), report)
    assert "run id | new" in report.read_text() and not report.read_text().startswith(">")


# --- the cache's clear, and a collection-only run ---------------------------------------------------------------


def test_clearing_the_cache_removes_only_the_stores_entries(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    cache.memo(K({"k": 1}), lambda: ({"v": np.zeros(2)}, {}))
    entry = cache.path(next(p.stem for p in (tmp_path / "cache").rglob("*.npz")))
    mine = _victim(tmp_path / "cache" / "notes.txt")
    lookalike = _victim(tmp_path / "cache" / "ab" / ("ab" + "0" * 62 + ".npz"), "not an entry")
    other = _victim(tmp_path / "cache" / "photos" / "holiday.npz", "a user's arrays")
    assert cache.clear() == 1
    assert not entry.exists() and (tmp_path / "cache").is_dir()
    assert all(p.read_text() for p in (mine, lookalike, other))


def test_a_collection_only_run_clears_no_cache_and_writes_no_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CACHED)
    cache = pytester.path / "cache"
    assert pytester.runpytest("--claim-report", f"--claim-cache-dir={cache}").ret == 0
    reports = pytester.path / "reports"
    before = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    entries = sorted(cache.rglob("*.npz"))
    result = pytester.runpytest("--co", "--claim-report", "--claim-cache=clear", f"--claim-cache-dir={cache}")
    assert result.ret == 0
    assert sorted(cache.rglob("*.npz")) == entries and entries
    assert {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()} == before


def test_a_report_whose_sidecar_is_the_baseline_is_refused_naming_both_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=toy())
    assert pytester.runpytest("--claim-report=out/x.md").ret == 0
    baseline = pytester.path / "out" / "x.json"
    kept = baseline.read_bytes()
    result = pytester.runpytest("--claim-report=out/x.md", f"--claim-baseline={baseline}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report*--claim-baseline*"])
    assert baseline.read_bytes() == kept


SIGTERM_TOY = """
import os
import signal

import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")
LATER = pytest.mark.claim("C8", "later", "Sec. 8")


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("toy statistic", 0.5, "<=", 1.0)


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")


@LATER
def test_later(claim_record, claim_seed):
    os.kill(os.getpid(), signal.SIGTERM)  # the CI job is cancelled
    claim_record.check("later statistic", 0.5, "<=", 1.0)
"""


def test_sigterm_ends_the_run_like_ctrl_c_with_an_incomplete_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=SIGTERM_TOY)
    result = pytester.runpytest_subprocess("--claim-report", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "**INCOMPLETE RUN**" in text
    assert "finished, so their verdicts stand: C9" in text


def test_the_sigterm_handler_is_given_back_when_the_session_ends(pytester: pytest.Pytester) -> None:
    before = signal.getsignal(signal.SIGTERM)
    pytester.makepyfile(test_toy=toy())
    assert pytester.runpytest("--claim-report").ret == 0
    assert signal.getsignal(signal.SIGTERM) is before
