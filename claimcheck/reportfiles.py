"""Write a run's report files once, at the end: the JSON sidecar, the figures, the markdown, the CI summary."""

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
from claimcheck.report import figure_dir, md, render, render_compact
from claimcheck.rundata import RunData, dumps


@dataclass
class Written:
    """What ``write_report`` wrote and found."""

    report: Path
    json: Path
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
    figure_cache: Path | None = None,
) -> Written:
    """Write the JSON sidecar, the figures, the markdown report, and the CI step summary of ``run``.

    ``figure_cache`` is a folder of figures drawn before (``figures.cached_group``): an unchanged
    figure is copied from it instead of drawn.

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
            drawn = draw_figures(run, folder, enabled=figures, cache=figure_cache)
            written.figures = drawn.written
            written.problems += drawn.problems + drawn.notes
        except Exception as e:
            written.problems.append(f"drawing the figures failed: {type(e).__name__}: {e}")
        if written.problems:
            extra.append(
                "## Problems while writing this report\n\n" + "\n".join(f"- {md(p)}" for p in written.problems) + "\n"
            )
        shown = {p.name for p in written.figures}
        write_atomic(path, render(run, figure_folder=folder.name, extra=extra, figures=shown))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(render_compact(run) + "\n")
    return written


def _clear_figures(folder: Path) -> None:
    """Remove the figures an earlier run left, so that none of them can be taken for this run's."""
    if folder.is_dir():
        for old in folder.glob("*.png"):
            old.unlink(missing_ok=True)
