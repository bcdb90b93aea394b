"""Write a run's report files once, at the end: the JSON sidecar, the figures, the markdown, the CI summary.

The markdown is one file when it fits ``MAX_CHARS`` (a pull-request comment); otherwise its
per-claim sections go to ``<stem>-details.md`` beside it and the main file links there.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from claimcheck.baseline import DEFAULT_TOLERANCE, Comparison, Tolerance, compare, render_comparison
from claimcheck.figures import draw_figures
from claimcheck.files import write_atomic
from claimcheck.report import MAX_CHARS, details_path, figure_dir, md, render, render_compact, render_details
from claimcheck.rundata import RunData, dumps


@dataclass
class Written:
    """What ``write_report`` wrote and found."""

    report: Path
    json: Path
    details: Path | None = None  # the per-claim sections, when the report had to be split
    figures: list[Path] = field(default_factory=list)
    comparison: Comparison | None = None
    problems: list[str] = field(default_factory=list)  # what could not be done (a figure, the comparison)


@contextmanager
def _report_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside ``path`` so that two sessions never interleave a report and its sidecar."""
    lock = path.with_name(f".{path.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


STALE_BANNER = (
    "> **This report is from an earlier run.** Run {run_id}, started {date}, is writing a new one; "
    "if this line stays, that run did not finish.\n\n"
)


def mark_superseded(path: Path, run_id: str, date: str) -> None:
    """Put a banner on an existing report: a run that is killed before it finishes leaves the old one marked."""
    if not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if text.startswith("> **This report is from an earlier run.**"):
        text = text.split("\n\n", 1)[-1]
    write_atomic(path, STALE_BANNER.format(run_id=run_id, date=date) + text)


def write_report(
    run: RunData,
    path: Path,
    baseline: RunData | None = None,
    baseline_source: str = "",
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    figures: bool = True,
) -> Written:
    """Write the JSON sidecar, the figures, the markdown report, and the CI step summary of ``run``.

    Nothing optional decides whether the report is written: a comparison or a figure that fails
    is named in the report instead. The report and its sidecar are written under one lock,
    sidecar first, and carry the same run id.
    """
    json_path = path.with_suffix(".json")
    written = Written(path, json_path)
    extra = []
    if baseline is not None:
        try:
            written.comparison = compare(run, baseline, baseline_source, tolerance)
            extra.append(render_comparison(written.comparison))
        except Exception as e:
            written.problems.append(f"the comparison with {baseline_source} failed: {type(e).__name__}: {e}")
    folder = figure_dir(path)
    with _report_lock(path):
        write_atomic(json_path, dumps(run))
        _clear_figures(folder)
        try:  # figures never decide the outcome
            drawn = draw_figures(run, folder, enabled=figures)
            written.figures = drawn.written
            written.problems += drawn.problems + drawn.notes
        except Exception as e:
            written.problems.append(f"drawing the figures failed: {type(e).__name__}: {e}")
        if written.problems:
            extra.append(
                "## Problems while writing this report\n\n" + "\n".join(f"- {md(p)}" for p in written.problems) + "\n"
            )
        shown = {p.name for p in written.figures}
        written.details = write_markdown(run, path, folder.name, extra, shown)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(render_compact(run) + "\n")
    return written


DETAILS_MARK = "<!-- claimcheck details -->"  # the first line of a details file: only such a file is ever removed


def write_markdown(
    run: RunData, path: Path, figure_folder: str, extra: list[str], shown: set[str] | None
) -> Path | None:
    """Write the markdown report at ``path``, split into a details file when whole it exceeds ``MAX_CHARS``.

    Return the details file written, or None; a details file an earlier run left beside ``path``
    is removed when this report is whole.
    """
    whole = render(run, figure_folder=figure_folder, extra=extra, figures=shown)
    details = details_path(path)
    if len(whole) <= MAX_CHARS:
        write_atomic(path, whole)
        if details.is_file() and details.read_text(encoding="utf-8").startswith(DETAILS_MARK):
            details.unlink()
        return None
    write_atomic(details, DETAILS_MARK + "\n" + render_details(run, figure_folder=figure_folder, figures=shown))
    write_atomic(path, render(run, figure_folder=figure_folder, extra=extra, figures=shown, details=details.name))
    return details


def _clear_figures(folder: Path) -> None:
    """Remove the figures an earlier run left, so that none of them can be taken for this run's."""
    if folder.is_dir():
        for old in folder.glob("*.png"):
            old.unlink(missing_ok=True)
