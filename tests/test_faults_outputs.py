"""Issue 51: claimcheck writes over, or removes, only the files its manifests record it wrote, and says why it cannot.

Ownership of an output file is proven by what claimcheck recorded when it wrote it (the manifest
beside it, with the file's sha256), never inferred from the file's name or content: a run JSON
given as ``-o``, a details file that opens with claimcheck's mark, a report whose manifest is
stale are the user's. A write that cannot happen (a full disk, a folder that is read-only, a
name too long, a path that is no file) is one line naming the option and the file, never a
traceback; and the committed reference report shows its figures with relative links only.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import tempfile
import warnings
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from toys import toy

from claimcheck.cli import main as cli
from claimcheck.cli.main import main
from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report import fileset as reportset
from claimcheck.report.fileset import ReportSetWarning, manifest_path, read_manifest
from claimcheck.report.markdown import render
from claimcheck.report.rundata import RunData
from claimcheck.report.write import DETAILS_MARK, mark_superseded, write_report


def _run(run_id: str = "r1", claims: int = 1) -> RunData:
    tests = []
    for i in range(claims):
        rec = ClaimRecorder(claim_id=f"C{i + 1}", seed=0)
        rec.check("toy statistic", 0.5, "<=", 1.0)
        tests.append(TestOutcome(f"test_toy.py::test_c{i + 1}", f"C{i + 1}", "toy", "Sec. 9", "passed", record=rec))
    return RunData(title="toy", env={"run id": run_id, "date": "today", "budget": "ci: toy"}, tests=tests)


def _run_json(where: Path, run_id: str = "r1", claims: int = 1) -> Path:
    write_report(_run(run_id, claims), where / "claim-report.md", figures=False)
    return where / "claim-report.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# 1. -o onto a run JSON: a kept baseline is not claimcheck's output because it is a run file


@pytest.mark.parametrize("command", ["compare", "render", "matrix"])
def test_o_onto_a_run_json_claimcheck_did_not_write_there_is_refused_and_the_json_kept(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path / "run")
    base = tmp_path / "baseline.json"
    base.write_bytes(run.read_bytes())  # a kept baseline: a run file, copied by the user
    before = _sha(base)
    args = {"compare": [str(base), str(run)], "render": [str(run)], "matrix": [str(run)]}[command]
    assert main([command, *args, "-o", str(base)]) == 2
    assert _sha(base) == before
    err = capsys.readouterr().err
    assert f"-o {base}" in err and "--force" in err and "Traceback" not in err
    assert main([command, *args, "-o", str(base), "--force"]) == 0  # the user's choice
    assert _sha(base) != before


def test_o_onto_the_run_json_itself_is_refused(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    before = _sha(run)
    assert main(["matrix", str(run), "-o", str(run)]) == 2
    assert main(["render", str(run), "-o", str(run)]) == 2
    assert _sha(run) == before


def test_o_onto_its_own_earlier_output_named_json_needs_no_force(tmp_path: Path) -> None:
    run = _run_json(tmp_path / "run")
    out = tmp_path / "matrix.json"
    assert main(["matrix", str(run), "-o", str(out)]) == 0
    assert main(["matrix", str(run), "-o", str(out)]) == 0  # recorded when written: claimcheck's own


# 2. a details file goes only when the manifest records it with the content claimcheck wrote


def _split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every report of two claims or more too long for one file, so its sections go to the details file."""
    monkeypatch.setattr("claimcheck.report.write.MAX_CHARS", len(render(_run())) + 200)


def test_a_users_details_file_that_opens_with_the_mark_survives_the_next_report(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report, figures=False)
    mine = tmp_path / "claim-report-details.md"
    mine.write_text(DETAILS_MARK + "\nmy own notes, in claimcheck's format\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: the file is simply not the set's
        write_report(_run("new"), report, figures=False)
    assert mine.read_text() == DETAILS_MARK + "\nmy own notes, in claimcheck's format\n"


def test_an_annotated_details_file_of_a_split_report_is_kept_and_said_so_when_the_next_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "claim-report.md"
    _split(monkeypatch)
    written = write_report(_run("split", claims=3), report, figures=False)
    assert written.details is not None
    annotated = written.details.read_text() + "\nmy annotation\n"
    written.details.write_text(annotated)
    with pytest.warns(ReportSetWarning, match="left alone.*claim-report-details.md"):
        whole = write_report(_run("whole"), report, figures=False)
    assert whole.details is None and written.details.read_text() == annotated
    assert any("claim-report-details.md" in why for why in whole.left_alone)


def test_an_unchanged_details_file_of_a_split_report_goes_when_the_next_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "claim-report.md"
    _split(monkeypatch)
    written = write_report(_run("split", claims=3), report, figures=False)
    assert written.details is not None and written.details.exists()
    write_report(_run("whole"), report, figures=False)
    assert not written.details.exists()


def test_render_whole_keeps_a_details_file_that_was_edited_or_never_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big, small = _run_json(tmp_path / "big", "big", claims=3), _run_json(tmp_path / "small", "small")
    out = tmp_path / "out.md"
    _split(monkeypatch)
    assert main(["render", str(big), "-o", str(out)]) == 0
    details = tmp_path / "out-details.md"
    details.write_text(details.read_text() + "\nmy annotation\n")
    assert main(["render", str(small), "-o", str(out)]) == 0
    assert details.read_text().endswith("my annotation\n")
    other = tmp_path / "other-details.md"
    other.write_text(DETAILS_MARK + "\nmine\n")
    assert main(["render", str(small), "-o", str(tmp_path / "other.md")]) == 0
    assert other.read_text() == DETAILS_MARK + "\nmine\n"
    assert main(["render", str(big), "-o", str(out), "--force"]) == 0  # claimcheck's again, recorded
    assert main(["render", str(small), "-o", str(out)]) == 0
    assert not details.exists()  # recorded with this content: removed


# 3. the superseded-report banner checks ownership as every other write of the set does


def test_the_superseded_banner_is_not_written_over_a_file_claimcheck_did_not_write(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    report.write_text("the user's notes\n")
    mark_superseded(report, "new", "today")
    assert report.read_text() == "the user's notes\n"


def test_the_superseded_banner_is_not_written_over_a_report_edited_since_claimcheck_wrote_it(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report, figures=False)
    report.write_text(report.read_text() + "\nmy annotation\n")
    edited = report.read_text()
    mark_superseded(report, "new", "today")
    assert report.read_text() == edited


def test_the_superseded_banner_goes_on_claimcheck_s_own_report_and_is_recorded(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report, figures=False)
    mark_superseded(report, "new", "today")
    assert report.read_text().startswith("> **This report is from an earlier run.** Run new")
    write_report(_run("new"), report, figures=False)  # the banner is claimcheck's: replaced without a word
    assert "earlier run" not in report.read_text()


# 4. a full disk at the last manifest write, after the moves: the new set is in place, and it says so

FULL_AT_THE_LAST_MANIFEST = '''
import errno

import claimcheck.report.fileset as reportset

_real = reportset.write_atomic


def _full(path, data):
    """The disk fills up as the manifest that ends a commit (no moves left) is written."""
    ending = path.exists() and '"moves"' in path.read_text()
    if path.name.endswith(".manifest.json") and '"moves"' not in data and ending:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    _real(path, data)


def pytest_configure(config):
    reportset.write_atomic = _full


def pytest_unconfigure(config):
    reportset.write_atomic = _real
'''


def test_a_full_disk_at_the_last_manifest_write_says_the_new_set_is_in_place_and_cleans_the_staging_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "claim-report.md"
    write_report(_run("old"), report, figures=False)
    real = reportset.write_atomic

    def full(path: Path, data: str | bytes) -> None:
        if path == manifest_path(report) and '"moves"' not in str(data):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(reportset, "write_atomic", full)
    with pytest.warns(ReportSetWarning, match="new report set of run new is in place.*No space left"):
        written = write_report(_run("new"), report, figures=False)
    assert "new" in json.loads(written.json.read_text())["env"]["run id"]
    assert not list(tmp_path.glob("*.staging"))
    monkeypatch.setattr(reportset, "write_atomic", real)
    write_report(_run("next"), report, figures=False)  # the next run finishes the manifest and goes on
    assert read_manifest(report) is not None and not read_manifest(report).moves  # type: ignore[union-attr]


def test_a_session_whose_last_manifest_write_meets_a_full_disk_does_not_say_the_old_set_was_kept(
    pytester: pytest.Pytester,
) -> None:
    (pytester.mkdir("claims") / "test_toy.py").write_text(toy())
    assert pytester.runpytest("--claim-report=r.md", "claims").ret == pytest.ExitCode.OK
    pytester.makeconftest(FULL_AT_THE_LAST_MANIFEST)
    result = pytester.runpytest("--claim-report=r.md", "--claim-cache=off", "claims")
    out = result.stdout.str()
    assert "NOT written" not in out and "previous report set is kept" not in out
    result.stdout.fnmatch_lines(["*new report set of run * is in place, but its manifest *No space left on device*"])
    assert result.ret == pytest.ExitCode.OK
    assert not list(pytester.path.glob(".r.md.*.staging"))


# 5. a path holding bytes that are not UTF-8 is refused at option parsing, naming the option


@pytest.mark.parametrize("option", ["--claim-report", "--claim-cache-dir"])
def test_a_path_with_bytes_that_are_not_utf8_is_a_usage_error_naming_the_option(
    pytester: pytest.Pytester, option: str
) -> None:
    (pytester.mkdir("claims") / "test_toy.py").write_text(toy())
    name = os.fsdecode(b"caf\xff" + (b".md" if option == "--claim-report" else b""))
    result = pytester.runpytest(f"{option}={pytester.path / name}", "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option}:*caf\\xff*not UTF-8*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "UnicodeEncodeError" not in result.stdout.str() + result.stderr.str()


# 6. a report path or an -o target that cannot be written is one line naming the option and what to do


def test_a_claim_report_that_is_a_symbolic_link_to_itself_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.mkdir("claims") / "test_toy.py").write_text(toy())
    (pytester.path / "loop.md").symlink_to("loop.md")
    result = pytester.runpytest("--claim-report=loop.md", "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *loop.md is a symbolic link that cannot be followed*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert (pytester.path / "loop.md").is_symlink()


def _o_commands(tmp_path: Path) -> dict[str, list[str]]:
    run = _run_json(tmp_path / "run")
    return {"compare": ["compare", str(run), str(run)], "render": ["render", str(run)], "matrix": ["matrix", str(run)]}


@pytest.mark.parametrize("command", ["compare", "render", "matrix"])
def test_o_into_a_read_only_folder_is_one_line_naming_the_option_and_file(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _o_commands(tmp_path)[command]

    def read_only(*_: object, **__: object) -> None:  # what a folder without write permission answers (not as root)
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "locked"))

    monkeypatch.setattr(cli, "write_atomic", read_only)
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    out = tmp_path / "locked" / "out.md"
    assert main([*args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"-o {out}: cannot write it: Permission denied" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("command", ["compare", "render", "matrix"])
def test_o_with_a_file_name_too_long_is_one_line_naming_the_option(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _o_commands(tmp_path)[command]
    out = tmp_path / ("x" * 300 + ".md")
    assert main([*args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"-o {out}: cannot write it: File name too long" in err and "Traceback" not in err
    assert "choose a path with a shorter name" in err


def test_render_into_a_folder_not_yet_there_creates_it(tmp_path: Path) -> None:
    """As --claim-report and audit -o do (it said 'choose a writable path with a shorter name' before)."""
    args = _o_commands(tmp_path)["render"]
    out = tmp_path / "new" / "deeper" / "r.md"
    assert main([*args, "-o", str(out)]) == 0 and out.is_file()


@pytest.mark.parametrize("command", ["stability", "mutants"])
def test_out_that_is_a_regular_file_is_refused_before_any_run_and_the_file_kept(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_run(*_: object, **__: object) -> None:
        raise AssertionError("a suite run was started")

    monkeypatch.setattr(cli, "run_seeds", no_run)
    monkeypatch.setattr(cli, "run_catalogue", no_run)
    mine = tmp_path / "results.txt"
    mine.write_text("the user's")
    extra = ["model:a", "model:b"] if command == "mutants" else []
    assert main([command, *extra, "--out", str(mine), "--targets", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"--out {mine}: it is a file, not a folder" in err and mine.read_text() == "the user's"


# 7. a report meant to be committed is self-contained: relative links that resolve, its figures shown, no local path

REPOSITORY = Path(__file__).parents[1]
REFERENCE = REPOSITORY / "reports" / "reference"
LOCAL_PATHS = re.compile(r"(?<![\w.$])/(?:tmp|home|root|Users|work|private|var/folders)/")


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [v for k, v in attrs if (tag, k) in (("a", "href"), ("img", "src")) and v]


@pytest.mark.parametrize("name", ["claim-report.md", "claim-report-details.md"])
def test_the_committed_reference_report_links_only_files_of_the_repository_and_shows_its_figures(name: str) -> None:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    markdown = REFERENCE / name
    text = markdown.read_text(encoding="utf-8")
    assert not LOCAL_PATHS.findall(text), "an absolute path of the machine that wrote it"
    assert "not shown" not in text and "was not written by claimcheck" not in text
    parser = _Targets()
    parser.feed(cmarkgfm.github_flavored_markdown_to_html(text))
    local = [t for t in parser.targets if not t.startswith(("https://", "http://", "#"))]
    for target in local:
        path = unquote(urlsplit(target).path)
        assert not path.startswith("/") and "://" not in target, target
        assert (markdown.parent / path).resolve().is_relative_to(REPOSITORY), target
        assert (markdown.parent / path).is_file(), f"{target} does not exist"
    figures = [t for t in local if t.endswith(".png")]
    if name == "claim-report-details.md":
        drawn = sorted((REFERENCE / "claim-report-figures").glob("*.png"))
        assert drawn and {unquote(t).split("/")[-1] for t in figures} == {p.name for p in drawn}


def test_a_figure_not_shown_is_named_relative_to_the_report_folder_in_the_markdown(tmp_path: Path) -> None:
    report = tmp_path / "claim-report.md"
    rec = ClaimRecorder(claim_id="C1", seed=0)
    rec.check("toy statistic", 0.5, "<=", 1.0)
    rec.curve("loss", [1.0, 0.5], group="toy curve")
    run = RunData(title="toy", env={"run id": "r1", "date": "today"}, tests=[])
    run.tests = [TestOutcome("test_toy.py::test_c1", "C1", "toy", "Sec. 9", "passed", record=rec)]
    figures = tmp_path / "claim-report-figures"
    figures.mkdir()
    (figures / "C1-toy-curve.png").write_bytes(b"the user's picture")
    written = write_report(run, report)
    text = report.read_text()
    assert "C1-toy-curve.png is not shown" in text, written.problems
    assert str(tmp_path) not in text and "claim-report-figures/C1-toy-curve.png exists" in text


def test_the_environment_table_shows_no_absolute_path_of_the_machine_that_ran_but_the_json_keeps_it(
    tmp_path: Path,
) -> None:
    run = _run()
    run.env["command"] = "pytest claims --claim-cache-dir /tmp/refcache --claim-report=reports/claim-report.md"
    run.env["data dir"] = "/home/someone/.cache/claimcheck/data"
    written = write_report(run, tmp_path / "claim-report.md", figures=False)
    text = written.report.read_text()
    assert "--claim-cache-dir …/refcache --claim-report=reports/claim-report.md" in text and "…/data" in text
    assert not LOCAL_PATHS.findall(text)
    assert json.loads(written.json.read_text())["env"]["command"].count("/tmp/refcache") == 1
