"""Collect claim test outcomes on the controller and produce the report once, at the end."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from claimcheck.record import ClaimRecorder
from claimcheck.report import render, write_atomic
from claimcheck.results import ClaimResult, Outcome, TestOutcome, aggregate

_RANK: dict[str, int] = {"passed": 0, "skipped": 1, "not_met": 2, "control_passed": 3, "error": 4}


@dataclass
class ClaimSession:
    """The state of one report: outcomes by node id, merged over the test phases."""

    path: Path
    env: dict[str, str]
    title: str = "Claim report"
    outcomes: dict[str, TestOutcome] = field(default_factory=dict)

    def add(self, payload: str, duration: float) -> None:
        """Merge one phase's payload (JSON put on the report by the worker) into its test."""
        p = json.loads(payload)
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
                rerun=p.get("rerun", ""),
            )
            return
        prev.duration += duration
        prev.record = record or prev.record
        if _RANK[outcome] > _RANK[prev.outcome]:
            prev.outcome = outcome
            prev.message = p.get("message", "")

    def results(self) -> list[ClaimResult]:
        """Return the per-claim verdicts so far."""
        return aggregate(self.outcomes.values())

    def write(self, incomplete: list[str] | None = None) -> list[ClaimResult]:
        """Render and atomically write the report; return the results it shows."""
        results = self.results()
        write_atomic(self.path, render(results, self.env, title=self.title, incomplete=incomplete or []))
        return results
