"""A report fits a pull-request comment: the markdown stays within 60,000 characters, details beside it."""

from __future__ import annotations

from pathlib import Path

from claimcheck.gate.baseline import compare, render_comparison
from claimcheck.report.markdown import MAX_CHARS
from claimcheck.report.rundata import RunData, load
from claimcheck.report.write import DETAILS_MARK, markdown_files, write_markdown_files

REFERENCE = Path(__file__).parents[1] / "reports" / "reference"


def write_markdown(run: RunData, path: Path, figures: str, extra: list[str], shown: set[str] | None) -> Path | None:
    return write_markdown_files(path, markdown_files(run, path, figures, extra, shown))


def test_the_reference_sized_report_with_a_comparison_fits_a_pull_request_comment(tmp_path: Path) -> None:
    run = load(REFERENCE / "claim-report.json")
    extra = [render_comparison(compare(run, run, "baseline.json"))]
    details = write_markdown(run, tmp_path / "claim-report.md", "claim-report-figures", extra, None)
    main = (tmp_path / "claim-report.md").read_text()
    assert len(main) <= MAX_CHARS < 65_536  # GitHub's limit for a comment body
    assert details == tmp_path / "claim-report-details.md"
    text = details.read_text()
    assert text.startswith(DETAILS_MARK) and '<a id="claim-c5"></a>' in text and "**Protocol v" in text
    assert "](claim-report-details.md#claim-c5)" in main and "## Comparison with baseline" in main
    assert "**Protocol v" not in main  # the claim sections moved


def test_the_checked_in_reference_markdown_fits() -> None:
    assert len((REFERENCE / "claim-report.md").read_text()) <= MAX_CHARS


def test_a_report_that_fits_stays_whole_and_keeps_a_details_file_no_manifest_records(tmp_path: Path) -> None:
    run = load(REFERENCE / "claim-report.json")
    run.tests = [t for t in run.tests if t.claim_id == "C2"]
    unrecorded = tmp_path / "r-details.md"
    unrecorded.write_text(DETAILS_MARK + "\nfrom an earlier run\n")  # its first line proves nothing (issue 51)
    mine = tmp_path / "notes-details.md"
    mine.write_text("a user's file\n")
    assert write_markdown(run, tmp_path / "r.md", "r-figures", [], None) is None
    assert "**Protocol v5**" in (tmp_path / "r.md").read_text() and unrecorded.exists()  # C2 v5
    write_markdown(run, tmp_path / "notes.md", "notes-figures", [], None)
    assert mine.read_text() == "a user's file\n"  # not a details file claimcheck wrote: left alone


def test_a_protocols_confirmation_reads_as_the_papers_when_a_users_model_is_checked() -> None:
    from claimcheck.report.markdown import CONFIRMED_ON_KEY, SUBJECT_KEY, render

    run = load(REFERENCE / "claim-report.json")
    c2 = next(t for t in run.tests if t.claim_id == "C2").protocol
    assert c2 is not None
    version = c2["version"]
    assert f"| v{version}, confirmed |" in render(run)
    run.env[SUBJECT_KEY] = "heads: 2; causal mask: none"
    run.env[CONFIRMED_ON_KEY] = "the paper's model (qin2025.engine.model)"
    text = render(run)
    assert f"| v{version}, confirmed on the paper's model (qin2025.engine.model) |" in text
    recorded = "**Model under test**: `qin2025.engine.model (the paper's Transformer)`: heads: 2; causal mask: none."
    assert recorded in text


def test_a_sessions_report_set_carries_its_details_file_and_drops_it_when_the_next_report_fits(tmp_path: Path) -> None:
    from claimcheck.report.fileset import read_manifest
    from claimcheck.report.write import write_report

    big = load(REFERENCE / "claim-report.json")
    report = tmp_path / "claim-report.md"
    written = write_report(big, report, figures=False)
    assert written.details == tmp_path / "claim-report-details.md" and written.details.read_text().startswith(
        DETAILS_MARK
    )
    manifest = read_manifest(report)
    assert manifest is not None and "claim-report-details.md" in manifest.files
    small = load(REFERENCE / "claim-report.json")
    small.tests = [t for t in small.tests if t.claim_id == "C2"]
    small.env["run id"] = "next"
    assert write_report(small, report, figures=False).details is None
    assert not (tmp_path / "claim-report-details.md").exists() and "**Protocol v" in report.read_text()


def test_a_control_estimate_without_an_interval_renders_as_not_available() -> None:
    import dataclasses

    from claimcheck.decide.record import Check
    from claimcheck.report.markdown import _section

    run = load(REFERENCE / "claim-report.json")
    c3 = next(r for r in run.results() if r.claim_id == "C3")
    control = c3.controls[0]
    bare = dataclasses.replace(control, rate=None, estimates=(Check("gap", 0.5, ">", 0.0),))
    text = _section(run, dataclasses.replace(c3, controls=(bare, *c3.controls[1:])), "figures", None)
    assert f"| {bare.name}" in text and "| n/a |" in text  # was a TypeError: format of None
