"""Decide each claim from its tests under its protocol: REPRODUCED, NOT REPRODUCED, INCONCLUSIVE, ERROR, SKIPPED.

REPRODUCED needs every part shown to hold and every control to do as required, each at alpha; a part
fails, or a control passes too often, when Holm (or Bonferroni) rejects its p-value over the claim's
family (the rule and its error bounds: docs/decisions.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from claimcheck.decide.evidence import Evidence
from claimcheck.decide.record import Check, ClaimRecorder
from claimcheck.decide.scoring import ControlTests, Design, StatTests, control_tests, interval_meets, part_tests
from claimcheck.decide.scoring import UnitScore as UnitScore  # re-exported: the report reads it from here
from claimcheck.decide.stats import Proportion, Spread, bonferroni, holm, spread
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Stat, from_dict, implicit

Outcome = Literal["passed", "error", "skipped"]
# Negative controls fail as required or pass too often (then the claim is ERROR); positive ones pass as required
# or fail too often (then it is INCONCLUSIVE: the check is blind there).
ControlStatus = Literal["fails as required", "passes too often", "passes as required", "fails too often", "undecided"]
CANNOT_DISCRIMINATE = ("passes too often", "fails too often")


class Verdict(StrEnum):
    """What the report says of a claim or part."""

    REPRODUCED = "REPRODUCED"
    NOT_REPRODUCED = "NOT REPRODUCED"
    INCONCLUSIVE = "INCONCLUSIVE"
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
    message: str = ""  # skip reason or error
    duration: float = 0.0
    protocol: dict[str, Any] | None = None  # the claim's declared protocol, as carried on the report
    counts: dict[str, int] = field(default_factory=dict)  # what the test computed, read and verified in the cache


@dataclass(frozen=True)
class StatSummary:
    """A statistic over every unit of a claim part (or of one negative control)."""

    statistic: str
    direction: str
    threshold: float
    values: Spread
    met: int  # checks that met the threshold
    control: str | None
    part: str = ""


@dataclass(frozen=True)
class PartResult:
    """The verdict of one part (sub-claim) and the evidence for it."""

    name: str
    statement: str
    rule: str
    bar: float
    verdict: Verdict
    reason: str
    rate: Proportion | None  # pass-rate rule
    units: tuple[UnitScore, ...] = ()
    estimates: tuple[Check, ...] = ()  # estimate rule; mean rule: each statistic's mean with its interval
    unit_name: str = "seed"  # what one unit is
    p_hold: float = math.nan  # p-value of "the part does not hold" (the largest over its statistics)
    p_fail: tuple[float, ...] = ()  # p-value of "it holds", per statistic: the claim's Holm family members
    unresolved: str = ""  # a zone part whose bounds held and that nothing resolved: what the range cannot tell


@dataclass(frozen=True)
class ControlResult:
    """A negative control's own pass rate, and whether it failed as often as its protocol requires."""

    name: str
    part: str
    why: str
    max_pass_rate: float
    status: ControlStatus
    rate: Proportion | None
    units: tuple[UnitScore, ...] = ()
    estimates: tuple[Check, ...] = ()
    p_fails: float = math.nan  # p-value of "it does not fail as required" (IUT side)
    p_passes: float = math.nan  # p-value of "it does not pass too often" (a Holm family member)
    kind: str = "discriminating"  # "sanity": fails by construction; "positive": must pass; neither counted below


@dataclass
class ClaimResult:
    """Everything the report shows of one claim."""

    claim_id: str
    title: str
    source: str
    verdict: Verdict
    reason: str
    protocol: ClaimProtocol | None = None
    parts: list[PartResult] = field(default_factory=list)
    controls: list[ControlResult] = field(default_factory=list)
    tests: list[TestOutcome] = field(default_factory=list)
    claim_stats: list[StatSummary] = field(default_factory=list)
    control_stats: list[StatSummary] = field(default_factory=list)
    alpha: float = math.nan  # the claim's decision level, per direction
    multiplicity: str = ""  # how the family of "fails" hypotheses shares alpha
    family: int = 0  # hypotheses in that family

    @property
    def controls_failed(self) -> int:
        """Return how many discriminating controls failed as required (sanity controls do not count)."""
        return sum(c.status == "fails as required" for c in self.controls if c.kind == "discriminating")

    @property
    def controls_total(self) -> int:
        """Return how many discriminating controls ran."""
        return sum(c.kind == "discriminating" for c in self.controls)

    @property
    def sanity_controls(self) -> list[ControlResult]:
        """Return the sanity controls that ran (they fail by construction and show no discrimination)."""
        return [c for c in self.controls if c.kind == "sanity"]

    @property
    def positive_controls(self) -> list[ControlResult]:
        """Return the positive controls that ran (cases where the claim holds by construction: they must pass)."""
        return [c for c in self.controls if c.kind == "positive"]


StatKey = tuple[str, str | None, str]  # (part, control, statistic)
Point = tuple[float, float | None, float | None]  # (value, low, high)
UnitValues = dict[tuple[str, str, str, int], Point]  # (test, label, unit, occurrence) -> point


def record_values(
    test: str, checks: Sequence[Check], out: dict[StatKey, UnitValues] | None = None
) -> dict[StatKey, UnitValues]:
    """Return (into ``out``) each statistic's points by unit: what pairs a unit of one run with another run's."""
    out = defaultdict(dict) if out is None else out
    seen: dict[tuple[StatKey, str, str], int] = defaultdict(int)
    for c in checks:
        key = (c.part, c.control, c.statistic)
        k = seen[(key, c.label, c.unit)]
        seen[(key, c.label, c.unit)] += 1
        out.setdefault(key, {})[(test, c.label, c.unit, k)] = (c.value, c.low, c.high)
    return out


def unit_values(r: ClaimResult, extra: Mapping[str, Sequence[Check]] | None = None) -> dict[StatKey, UnitValues]:
    """Return ``record_values`` over a claim's tests, with ``extra`` checks per test nodeid (a gate's reserve)."""
    out: dict[StatKey, UnitValues] = defaultdict(dict)
    for t in r.tests:
        checks = [*(t.record.checks if t.record else ()), *(extra or {}).get(t.nodeid, ())]
        record_values(unqualified(t.nodeid), checks, out)
    return out


def unqualified(nodeid: str) -> str:
    """Return a test's name without its file: what pairs a test of this run with the baseline's."""
    return nodeid.split("::", 1)[-1]


def summarise(checks: Iterable[Check]) -> list[StatSummary]:
    """Group checks by (part, control, statistic, direction, threshold), keeping first-seen order."""
    groups: dict[tuple[str, str | None, str, str, float], list[Check]] = {}
    for c in checks:
        groups.setdefault((c.part, c.control, c.statistic, c.direction, c.threshold), []).append(c)
    return [
        StatSummary(stat, direction, thr, spread([c.value for c in cs]), sum(c.met for c in cs), ctl, part)
        for (part, ctl, stat, direction, thr), cs in groups.items()
    ]


def decide_estimate(check: Check) -> Verdict:
    """Return REPRODUCED when all of the estimate's interval meets its threshold, NOT REPRODUCED when none does."""
    holds, fails = interval_meets(check)
    return Verdict.REPRODUCED if holds else Verdict.NOT_REPRODUCED if fails else Verdict.INCONCLUSIVE


def _proportion(ev: Evidence, alpha: float) -> Proportion:
    return Proportion(ev.passed, ev.n, ev.low, ev.high, 1 - 2 * alpha, ev.method)


def _combine(verdicts: Sequence[Verdict]) -> Verdict:
    if not verdicts:
        return Verdict.INCONCLUSIVE
    if any(v is Verdict.NOT_REPRODUCED for v in verdicts):
        return Verdict.NOT_REPRODUCED
    if all(v is Verdict.REPRODUCED for v in verdicts):
        return Verdict.REPRODUCED
    return Verdict.INCONCLUSIVE


def _reject(p_values: Sequence[float], alpha: float, multiplicity: str) -> list[bool]:
    return holm(p_values, alpha) if multiplicity == "holm" else bonferroni(p_values, alpha)


def _part_result(
    part: Part, tests: Sequence[StatTests], units: tuple[UnitScore, ...], fails: Sequence[bool], alpha: float
) -> PartResult:
    """Return the part's verdict: REPRODUCED when every statistic holds at alpha, NOT REPRODUCED when one fails.

    A zone part (``Part.unresolved``) is judged by its other statistics, and its resolving ones then
    say whether the range resolved it: INCONCLUSIVE, "not resolved", where they are not shown to hold.
    """
    resolving = {s.name for s in part.stats if s.resolves}
    marks = [t.check is not None and t.check.statistic in resolving for t in tests]
    resolved = all(t.p_hold <= alpha for t, r in zip(tests, marks, strict=True) if r)
    bounds = [(t, f) for t, f, r in zip(tests, fails, marks, strict=True) if not r]
    holds = all(t.p_hold <= alpha for t, _ in bounds)
    failed = any(f for _, f in bounds)
    verdict = (
        Verdict.INCONCLUSIVE
        if holds and failed
        else Verdict.REPRODUCED
        if holds
        else Verdict.NOT_REPRODUCED
        if failed
        else Verdict.INCONCLUSIVE
    )
    if part.rule == "estimate":  # interval only, as before the family-wise rule
        verdict = _combine([decide_estimate(t.check) for t, _ in bounds if t.check is not None])
    p_hold = max(t.p_hold for t in tests)
    p_fail = tuple(t.p_fail for t in tests)
    excluded = sum(bool(u.excluded) for u in units)
    shown = tuple(t.check for t in tests if t.check is not None)
    if part.rule != "pass-rate":
        if not shown:
            reason = "no estimate"
        else:
            reason = "; ".join(
                f"{c.describe()} ({c.interval}): {_stat_word(t, f, alpha)}"
                for c, t, f in zip(shown, tests, fails, strict=True)
            )
        if excluded:
            reason += f"; {excluded} unit(s) excluded (left the premise)"
        rate = None
    else:
        ev = tests[0].evidence
        assert ev is not None
        rate = _proportion(ev, alpha)
        reason = f"{rate.format()} of {part.unit}s passed vs bar {part.bar:g}"
        if excluded:
            reason += f"; {excluded} excluded (left the premise)"
        if rate.n == 0:
            reason = f"no admissible {part.unit} ran" + (f"; {excluded} excluded" if excluded else "")
        failing = [u for u in units if not u.passed and not u.excluded]
        if failing and part.bar >= 1:
            reason += f"; counterexample: {part.unit} {failing[0].unit}: {'; '.join(failing[0].misses)}"
        if failing and part.bar < 1:
            reason += f"; first failing {part.unit} {failing[0].unit}: {'; '.join(failing[0].misses)}"
        if part.bar < 1 and rate.n:
            reason += f"; {_stat_word(tests[0], fails[0], alpha)}"
    if holds and failed:
        reason += "; the evidence points both ways (a confidence sequence crossed the bar after excluding it)"
    unresolved = part.unresolved if verdict is Verdict.REPRODUCED and not resolved else ""
    if unresolved:
        verdict, reason = Verdict.INCONCLUSIVE, f"{reason}; not resolved: {unresolved}"
    return PartResult(
        part.name,
        part.statement,
        part.rule,
        part.bar,
        verdict,
        reason,
        rate,
        units,
        shown,
        part.unit,
        p_hold,
        p_fail,
        unresolved,
    )


def _stat_word(t: StatTests, failed: bool, alpha: float) -> str:
    if t.p_hold <= alpha:
        return f"holds, p = {_p(t.p_hold)}"
    if failed:
        return f"fails, p = {_p(t.p_fail)}"
    if t.p_fail <= alpha:
        return f"undecided: below at p = {_p(t.p_fail)}, short of the multiplicity-adjusted level"
    return f"undecided (p = {_p(t.p_hold)} holds, {_p(t.p_fail)} fails)"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else "< 1e-4"


def _control_result(ctl: Control, found: ControlTests, leaks: bool, alpha: float) -> ControlResult:
    tests, units, per = found
    if not tests.in_family:  # an interval-only estimate control: decided by its interval
        leaks = tests.p_fail <= alpha
    fails = tests.p_hold <= alpha  # for a positive control: shown to pass
    positive = ctl.kind == "positive"
    required: ControlStatus = "passes as required" if positive else "fails as required"
    wrong: ControlStatus = "fails too often" if positive else "passes too often"
    status: ControlStatus = "undecided" if fails and leaks else wrong if leaks else required if fails else "undecided"
    rate = _proportion(tests.evidence, alpha) if tests.evidence is not None and not per else None
    shown = tuple(t.check for t in per if t.check is not None)
    return ControlResult(
        ctl.name, ctl.part, ctl.why, ctl.max_pass_rate, status, rate, units, shown, tests.p_hold, tests.p_fail, ctl.kind
    )


def protocol_of(tests: Sequence[TestOutcome], units: int = 0) -> ClaimProtocol:
    """Return the claim's declared protocol, or the implicit one (every unit passes) built from its checks."""
    for t in tests:
        if t.protocol:
            return from_dict(t.protocol)
    cid = tests[0].claim_id if tests else ""
    stats: dict[str, Stat] = {}
    controls: dict[str, Control] = {}
    for t in tests:
        for c in t.record.checks if t.record else ():
            stats.setdefault(c.statistic, Stat(c.statistic, c.direction, c.threshold))
            if c.control is not None:
                controls.setdefault(c.control, Control(c.control, "", "declared by the test", max_pass_rate=0.0))
    if not stats:
        stats["(none recorded)"] = Stat("(none recorded)", "<=", 0.0)
    return implicit(cid, stats, controls, units)


def decide(tests: list[TestOutcome], protocol: ClaimProtocol | None = None, missing: Sequence[str] = ()) -> ClaimResult:
    """Return the claim's verdict, parts, controls and reason, from all of its tests.

    ERROR wins (a crash, a control that passes too often, no claim statistic, no control); a positive
    control shown to fail makes it INCONCLUSIVE (the instrument is blind);
    SKIPPED when nothing ran; then the parts decide: NOT REPRODUCED if any part is, REPRODUCED if
    all are and every control failed as required, INCONCLUSIVE otherwise (an undecided control or
    part, or tests of the claim that did not run: ``missing``).
    """
    first = tests[0]
    proto = protocol or protocol_of(tests)
    result = ClaimResult(first.claim_id, first.title, first.source, Verdict.SKIPPED, "", proto, tests=tests)
    ran = [t for t in tests if t.outcome != "skipped"]
    checks = [(t.nodeid, c) for t in ran if t.record for c in t.record.checks]
    stats = summarise(c for _, c in checks)
    result.claim_stats = [s for s in stats if s.control is None]
    result.control_stats = [s for s in stats if s.control is not None]
    if not ran:
        result.reason = first.message or "no test ran"
        return result
    if not proto.declared:  # the implicit protocol's one part holds every statistic
        checks = [(n, _in_part(c, "")) for n, c in checks]
    exclusions = [e for t in ran if t.record for e in t.record.exclusions]
    design = Design.of(proto, ((t.nodeid, t.record) for t in ran if t.record is not None))
    found = [part_tests(p, design, checks, exclusions) for p in proto.parts]
    parts = {p.name: p for p in proto.parts}
    controls = [
        (c, control_tests(c, parts.get(c.part, proto.parts[0]), design, checks, exclusions)) for c in proto.controls
    ]
    members = [t for stat_tests, _ in found for t in stat_tests] + [
        f[0] if f else StatTests(1.0, 1.0) for _, f in controls
    ]
    family = [t.p_fail for t in members if t.in_family]
    flags = iter(_reject(family, proto.alpha, proto.multiplicity))
    rejected = [t.in_family and next(flags) for t in members]
    result.alpha, result.multiplicity, result.family = proto.alpha, proto.multiplicity, len(family)
    at = 0
    for p, (stat_tests, units) in zip(proto.parts, found, strict=True):
        result.parts.append(_part_result(p, stat_tests, units, rejected[at : at + len(stat_tests)], proto.alpha))
        at += len(stat_tests)
    for (c, ran_control), leaks in zip(controls, rejected[at:], strict=True):
        if ran_control is not None:
            result.controls.append(_control_result(c, ran_control, leaks, proto.alpha))
    if missing:  # an incomplete run cannot show that a part holds
        result.parts = [
            replace(p, verdict=Verdict.INCONCLUSIVE, reason=f"{p.reason}; the run is incomplete")
            if p.verdict is Verdict.REPRODUCED
            else p
            for p in result.parts
        ]
    result.verdict, result.reason = _claim_verdict(result, ran, checks, missing)
    return result


def _in_part(c: Check, part: str) -> Check:
    return replace(c, part=part)


def _claim_verdict(
    r: ClaimResult, ran: Sequence[TestOutcome], checks: Sequence[tuple[str, Check]], missing: Sequence[str]
) -> tuple[Verdict, str]:
    errors = [t for t in ran if t.outcome == "error"]
    if errors:
        return Verdict.ERROR, f"{len(errors)} test(s) raised: {errors[0].message}"
    if not any(c.control is None for _, c in checks):
        return Verdict.ERROR, "no claim statistic was recorded: the check could not have failed"
    leaky = [c for c in r.controls if c.status in CANNOT_DISCRIMINATE]
    if leaky:
        c = leaky[0]
        if c.kind == "positive":
            rate = c.rate.format() if c.rate else "its estimate missed the claim's threshold"
            return (
                Verdict.INCONCLUSIVE,
                f"the instrument is blind: positive control '{c.name}', where the claim holds by construction, "
                f"was shown to fail ({rate}); this check cannot decide the claim here",
            )
        rate = c.rate.format() if c.rate else "its estimate met the claim's threshold"
        return (
            Verdict.ERROR,
            f"the check cannot discriminate: control '{c.name}' passed {rate} (may pass < {c.max_pass_rate:g})",
        )
    if not r.controls:
        return Verdict.ERROR, "no negative control ran: the check was not shown able to fail"
    part_verdicts = [p.verdict for p in r.parts]
    reasons = "; ".join(f"{p.name}: {p.verdict.value}, {p.reason}" if p.name else p.reason for p in r.parts)
    if any(v is Verdict.NOT_REPRODUCED for v in part_verdicts):
        seen = {c.name for c in r.controls if c.status == "passes as required"}
        declared = r.protocol.controls if r.protocol is not None else ()
        unseen = [c.name for c in declared if c.kind == "positive" and c.name not in seen]
        if unseen:  # a part shown to fail says something only where the check was shown able to see
            return Verdict.INCONCLUSIVE, (
                f"{reasons}; but positive control '{unseen[0]}' is not shown to pass, so the check is not shown "
                "able to see what the failing part misses"
            )
        return Verdict.NOT_REPRODUCED, reasons
    if missing:
        return (
            Verdict.INCONCLUSIVE,
            f"the run is incomplete ({len(missing)} test(s) of this claim did not run); {reasons}",
        )
    undecided = [c for c in r.controls if c.status == "undecided"]
    if all(v is Verdict.REPRODUCED for v in part_verdicts):
        if undecided:
            c = undecided[0]
            rate = c.rate.format() if c.rate else ""
            shown = "pass" if c.kind == "positive" else "fail"
            return Verdict.INCONCLUSIVE, f"{reasons}; but control '{c.name}' is not yet shown to {shown} ({rate})"
        return Verdict.REPRODUCED, reasons
    return Verdict.INCONCLUSIVE, reasons


def aggregate(
    tests: Iterable[TestOutcome],
    missing: Mapping[str, Sequence[str]] | None = None,
    titles: Mapping[str, Sequence[str]] | None = None,
) -> list[ClaimResult]:
    """Group outcomes by claim id (in id order) and decide each claim; ``missing`` maps claim -> tests not run.

    A claim in ``missing`` none of whose tests ran is INCONCLUSIVE ("did not run"), with its title and
    source from ``titles`` (claim -> [title, source]), so that every collected claim has a result.
    """
    by_claim: dict[str, list[TestOutcome]] = {}
    for t in tests:
        by_claim.setdefault(t.claim_id, []).append(t)
    missing = missing or {}
    ids = set(by_claim) | set(missing)
    return [
        decide(sorted(by_claim[cid], key=lambda t: t.nodeid), missing=missing.get(cid, ()))
        if cid in by_claim
        else not_started(cid, missing[cid], *[*(titles or {}).get(cid, ()), "", ""][:2])
        for cid in sorted(ids, key=_claim_sort_key)
    ]


def not_started(claim_id: str, tests: Sequence[str], title: str = "", source: str = "") -> ClaimResult:
    """Return the result of a claim none of whose ``tests`` ran: INCONCLUSIVE, saying so."""
    reason = f"did not run: the session stopped before any of its {len(tests)} test(s) ran"
    return ClaimResult(claim_id, title or "(did not run)", source, Verdict.INCONCLUSIVE, reason)


def _claim_sort_key(cid: str) -> tuple[str, int, str]:
    head = cid.rstrip("0123456789")
    tail = cid[len(head) :]
    return (head, int(tail) if tail else -1, cid)
