"""Collect claim test outcomes on the controller and write the report files once, at the end."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from claimcheck.baseline import DEFAULT_TOLERANCE, Comparison, Tolerance, compare, render_comparison
from claimcheck.figures import draw
from claimcheck.files import write_atomic
from claimcheck.record import ClaimRecorder
from claimcheck.report import figure_dir, render, render_compact
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
    ) -> Written:
        """Write the JSON sidecar, the figures, the markdown report, and the CI step summary."""
        run = self.snapshot(incomplete, not_run)
        if self.path is None:
            raise ValueError("ClaimSession.finish needs a report path")
        json_path = self.path.with_suffix(".json")
        written = Written(self.path, json_path)
        extra = []
        if baseline is not None:
            written.comparison = compare(run, baseline, baseline_source, tolerance)
            extra.append(render_comparison(written.comparison))
        write_atomic(json_path, dumps(run))
        folder = figure_dir(self.path)
        written.figures = draw(run, folder)
        write_atomic(self.path, render(run, figure_folder=folder.name, extra=extra))
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(render_compact(run) + "\n")
        return written
