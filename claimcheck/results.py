"""Turn per-test outcomes into per-claim verdicts: REPRODUCED, NOT REPRODUCED, ERROR, SKIPPED."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from claimcheck.record import Check, ClaimRecorder
from claimcheck.stats import Spread, spread

Outcome = Literal["passed", "not_met", "control_passed", "error", "skipped"]


class Verdict(StrEnum):
    """What the report says of a claim."""

    REPRODUCED = "REPRODUCED"
    NOT_REPRODUCED = "NOT REPRODUCED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"


@dataclass
class TestOutcome:
    """One claim test as the controller saw it (merged over setup, call and teardown)."""

    __test__ = False  # not a pytest test class

    nodeid: str
    claim_id: str
    title: str
    source: str
    outcome: Outcome
    record: ClaimRecorder | None = None
    message: str = ""  # skip reason, failure summary or error
    duration: float = 0.0


@dataclass(frozen=True)
class StatSummary:
    """A statistic over every run of a claim (or of one negative control)."""

    statistic: str
    direction: str
    threshold: float
    values: Spread
    met: int  # runs that met the threshold
    control: str | None


@dataclass
class ClaimResult:
    """Everything the report shows of one claim."""

    claim_id: str
    title: str
    source: str
    verdict: Verdict
    reason: str
    tests: list[TestOutcome] = field(default_factory=list)
    claim_stats: list[StatSummary] = field(default_factory=list)
    control_stats: list[StatSummary] = field(default_factory=list)
    controls_failed: int = 0  # control groups that failed as required
    controls_total: int = 0


def summarise(checks: Iterable[Check]) -> list[StatSummary]:
    """Group checks by (control, statistic, direction, threshold), keeping first-seen order."""
    groups: dict[tuple[str | None, str, str, float], list[Check]] = {}
    for c in checks:
        groups.setdefault((c.control, c.statistic, c.direction, c.threshold), []).append(c)
    return [
        StatSummary(stat, direction, thr, spread([c.value for c in cs]), sum(c.met for c in cs), ctl)
        for (ctl, stat, direction, thr), cs in groups.items()
    ]


def _control_groups(tests: list[TestOutcome]) -> tuple[int, int]:
    failed = total = 0
    for t in tests:
        if t.record is None:
            continue
        groups: dict[tuple[str, str], list[Check]] = {}
        for c in t.record.checks:
            if c.control is not None:
                groups.setdefault((c.control, c.label), []).append(c)
        for cs in groups.values():
            total += 1
            failed += any(c.defined and not c.met for c in cs)
    return failed, total


def decide(tests: list[TestOutcome]) -> tuple[Verdict, str]:
    """Return the claim's verdict and the reason, from all of its tests.

    ERROR wins (a crash, a negative control that did not fail, or a claim whose checks could not
    have failed); then NOT REPRODUCED (a claim check not met); SKIPPED when nothing ran; otherwise
    REPRODUCED, which needs at least one claim check and one negative control that failed.
    """
    ran = [t for t in tests if t.outcome != "skipped"]
    if not ran:
        reason = tests[0].message if tests else "no test"
        return Verdict.SKIPPED, reason
    errors = [t for t in ran if t.outcome == "error"]
    if errors:
        return Verdict.ERROR, f"{len(errors)} test(s) raised: {errors[0].message}"
    leaky = [t for t in ran if t.outcome == "control_passed"]
    if leaky:
        return Verdict.ERROR, f"the check cannot discriminate: {leaky[0].message}"
    not_met = [t for t in ran if t.outcome == "not_met"]
    if not_met:
        return Verdict.NOT_REPRODUCED, f"{len(not_met)} of {len(ran)} test(s) missed: {not_met[0].message}"
    checks = [c for t in ran if t.record for c in t.record.checks]
    if not any(c.control is None for c in checks):
        return Verdict.ERROR, "no claim statistic was recorded: the check could not have failed"
    failed, total = _control_groups(ran)
    if total == 0:
        return Verdict.ERROR, "no negative control ran: the check was not shown able to fail"
    skipped = len(tests) - len(ran)
    extra = f"; {skipped} test(s) skipped" if skipped else ""
    return (
        Verdict.REPRODUCED,
        f"all {len(ran)} test(s) met their thresholds; {failed}/{total} controls failed as required{extra}",
    )


def aggregate(tests: Iterable[TestOutcome]) -> list[ClaimResult]:
    """Group outcomes by claim id (in id order) and decide each claim."""
    by_claim: dict[str, list[TestOutcome]] = {}
    for t in tests:
        by_claim.setdefault(t.claim_id, []).append(t)
    results = []
    for cid in sorted(by_claim, key=_claim_sort_key):
        ts = by_claim[cid]
        verdict, reason = decide(ts)
        checks = [c for t in ts if t.record for c in t.record.checks]
        stats = summarise(checks)
        failed, total = _control_groups(ts)
        results.append(
            ClaimResult(
                claim_id=cid,
                title=ts[0].title,
                source=ts[0].source,
                verdict=verdict,
                reason=reason,
                tests=ts,
                claim_stats=[s for s in stats if s.control is None],
                control_stats=[s for s in stats if s.control is not None],
                controls_failed=failed,
                controls_total=total,
            )
        )
    return results


def _claim_sort_key(cid: str) -> tuple[str, int, str]:
    head = cid.rstrip("0123456789")
    tail = cid[len(head) :]
    return (head, int(tail) if tail else -1, cid)
