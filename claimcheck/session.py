"""Collect claim test outcomes on the controller and write the report files once, at the end."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from claimcheck.baseline import DEFAULT_TOLERANCE, Comparison, Tolerance, compare, render_comparison
from claimcheck.figures import draw_figures
from claimcheck.files import write_atomic
from claimcheck.record import ClaimRecorder
from claimcheck.report import figure_dir, md, render, render_compact
from claimcheck.results import Outcome, TestOutcome
from claimcheck.runfile import RunData, dumps

_COUNTER_NAMES = {
    "computed": "training results computed",
    "cached": "read from the cache",
    "corrupt": "corrupt cache entries recomputed",
}
_RANK: dict[str, int] = {"passed": 0, "skipped": 1, "error": 2}


@dataclass
class Written:
    """What ``ClaimSession.finish`` wrote and found."""

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


@dataclass
class ClaimSession:
    """The state of one report: outcomes by node id, merged over the test phases."""

    path: Path | None  # None: collect (for verdict checks) but write no files
    run: RunData
    expected: list[str] = field(default_factory=list)  # node ids collected, when known
    outcomes: dict[str, TestOutcome] = field(default_factory=dict)

    def add(self, payload: str, duration: float) -> None:
        """Merge one phase's payload (JSON put on the report by the worker) into its test."""
        p = json.loads(payload)
        for name, value in p.get("counts", {}).items():
            key = _COUNTER_NAMES.get(name, name)
            self.run.counters[key] = self.run.counters.get(key, 0) + int(value)
        record = ClaimRecorder.from_json(p["record"]) if p.get("record") else None
        outcome: Outcome = p["outcome"]
        prev = self.outcomes.get(p["nodeid"])
        if prev is None:
            self.outcomes[p["nodeid"]] = TestOutcome(
                nodeid=p["nodeid"],
                claim_id=p["claim_id"],
                title=p["title"],
                source=p["source"],
                outcome=outcome,
                record=record,
                message=p.get("message", ""),
                duration=duration,
                protocol=p.get("protocol"),
            )
            return
        prev.duration += duration
        prev.record = record or prev.record
        prev.protocol = prev.protocol or p.get("protocol")
        if _RANK[outcome] > _RANK[prev.outcome]:
            prev.outcome = outcome
            prev.message = p.get("message", "")

    def snapshot(self, incomplete: list[str], not_run: dict[str, list[str]] | None = None) -> RunData:
        """Return the run as it stands, with ``incomplete`` noted and the tests of each claim that did not run."""
        self.run.tests = sorted(self.outcomes.values(), key=lambda t: t.nodeid)
        self.run.incomplete = incomplete
        self.run.not_run = not_run or {}
        return self.run

    def finish(
        self,
        incomplete: list[str],
        not_run: dict[str, list[str]] | None = None,
        baseline: RunData | None = None,
        baseline_source: str = "",
        tolerance: Tolerance = DEFAULT_TOLERANCE,
        figures: bool = True,
    ) -> Written:
        """Write the JSON sidecar, the figures, the markdown report, and the CI step summary.

        Nothing optional decides whether the report is written: a comparison or a figure that fails
        is named in the report instead. The report and its sidecar are written under one lock,
        sidecar first, and carry the same run id.
        """
        run = self.snapshot(incomplete, not_run)
        if self.path is None:
            raise ValueError("ClaimSession.finish needs a report path")
        json_path = self.path.with_suffix(".json")
        written = Written(self.path, json_path)
        extra = []
        if baseline is not None:
            try:
                written.comparison = compare(run, baseline, baseline_source, tolerance)
                extra.append(render_comparison(written.comparison))
            except Exception as e:
                written.problems.append(f"the comparison with {baseline_source} failed: {type(e).__name__}: {e}")
        folder = figure_dir(self.path)
        with _report_lock(self.path):
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
                    "## Problems while writing this report\n\n"
                    + "\n".join(f"- {md(p)}" for p in written.problems)
                    + "\n"
                )
            shown = {p.name for p in written.figures}
            write_atomic(self.path, render(run, figure_folder=folder.name, extra=extra, figures=shown))
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
