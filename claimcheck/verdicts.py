"""Decide each claim from its tests under its protocol: REPRODUCED, NOT REPRODUCED, INCONCLUSIVE, ERROR, SKIPPED.

Every unit (normally a seed) of a part is scored pass or fail; units that left the claim's premise
are excluded and listed. A part's verdict comes from the exact interval of its pass rate against
the protocol's bar (``decide_rate``), or from an estimate's interval against its threshold
(``decide_estimate``). Controls are scored the same way against the rate at which they may pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

from claimcheck.protocol import ClaimProtocol, Control, Part, Stat, from_dict, implicit
from claimcheck.record import Check, ClaimRecorder, Exclusion
from claimcheck.stats import Proportion, Spread, clopper_pearson, spread

Outcome = Literal["passed", "error", "skipped"]


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
class UnitScore:
    """One unit of a part or control: passed, failed, or excluded (with the reason)."""

    unit: str
    passed: bool
    excluded: str = ""  # the reason, when the unit left the premise
    nodeids: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()  # the checks it missed, described


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
    estimates: tuple[Check, ...] = ()  # estimate rule
    unit_name: str = "seed"  # what one unit is


@dataclass(frozen=True)
class ControlResult:
    """A negative control's own pass rate, and whether it failed as often as its protocol requires."""

    name: str
    part: str
    why: str
    max_pass_rate: float
    status: Literal["fails as required", "passes too often", "undecided"]
    rate: Proportion | None
    units: tuple[UnitScore, ...] = ()
    estimates: tuple[Check, ...] = ()


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

    @property
    def controls_failed(self) -> int:
        """Return how many controls failed as required."""
        return sum(c.status == "fails as required" for c in self.controls)

    @property
    def controls_total(self) -> int:
        """Return how many controls ran."""
        return len(self.controls)


def summarise(checks: Iterable[Check]) -> list[StatSummary]:
    """Group checks by (part, control, statistic, direction, threshold), keeping first-seen order."""
    groups: dict[tuple[str, str | None, str, str, float], list[Check]] = {}
    for c in checks:
        groups.setdefault((c.part, c.control, c.statistic, c.direction, c.threshold), []).append(c)
    return [
        StatSummary(stat, direction, thr, spread([c.value for c in cs]), sum(c.met for c in cs), ctl, part)
        for (part, ctl, stat, direction, thr), cs in groups.items()
    ]


def decide_rate(rate: Proportion, bar: float) -> Verdict:
    """Return the verdict of a pass rate against the bar pi_0.

    REPRODUCED when the interval's lower end is above the bar, NOT REPRODUCED when its upper end
    is below, INCONCLUSIVE when it straddles. Bar 1 is theorem-style: REPRODUCED only when every
    unit passed (at least one), NOT REPRODUCED on any counterexample.
    """
    if rate.n == 0:
        return Verdict.INCONCLUSIVE
    if bar >= 1:
        return Verdict.REPRODUCED if rate.passed == rate.n else Verdict.NOT_REPRODUCED
    if rate.low > bar:
        return Verdict.REPRODUCED
    if rate.high < bar:
        return Verdict.NOT_REPRODUCED
    return Verdict.INCONCLUSIVE


def decide_estimate(check: Check) -> Verdict:
    """Return REPRODUCED when all of the estimate's interval meets its threshold, NOT REPRODUCED when none does."""
    if check.low is None or check.high is None or math.isnan(check.low) or math.isnan(check.high):
        return Verdict.INCONCLUSIVE
    stat = check.stat
    near, far = (check.low, check.high) if check.direction in (">=", ">") else (check.high, check.low)
    if stat.met(near):
        return Verdict.REPRODUCED
    if not stat.met(far):
        return Verdict.NOT_REPRODUCED
    return Verdict.INCONCLUSIVE


def _score_units(checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion]) -> tuple[UnitScore, ...]:
    """Score each unit: excluded if any exclusion names it; else passed when every check is met."""
    by_unit: dict[str, list[tuple[str, Check]]] = {}
    for nodeid, c in checks:
        by_unit.setdefault(c.unit, []).append((nodeid, c))
    why = {e.unit: e.reason for e in exclusions}
    out = []
    for unit in sorted(by_unit, key=_unit_key):
        rows = by_unit[unit]
        nodeids = tuple(dict.fromkeys(n for n, _ in rows))
        misses = tuple(c.describe() + (f" at {c.label}" if c.label else "") for _, c in rows if not c.met)
        out.append(UnitScore(unit, not misses, why.get(unit, ""), nodeids, misses))
    for unit in sorted(set(why) - set(by_unit), key=_unit_key):
        out.append(UnitScore(unit, False, why[unit]))
    return tuple(out)


def _unit_key(unit: str) -> tuple[int, int | str]:
    return (0, int(unit)) if unit.lstrip("-").isdigit() else (1, unit)


def _rate(units: Sequence[UnitScore], level: float) -> Proportion:
    counted = [u for u in units if not u.excluded]
    return clopper_pearson(sum(u.passed for u in counted), len(counted), level)


def _part_result(
    part: Part, level: float, checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion]
) -> PartResult:
    mine = [(n, c) for n, c in checks if c.part == part.name and c.control is None]
    if part.rule == "estimate":
        ests = tuple(c for _, c in mine)
        if not ests:
            return PartResult(part.name, part.statement, part.rule, part.bar, Verdict.INCONCLUSIVE, "no estimate", None)
        verdicts = [decide_estimate(c) for c in ests]
        verdict = _combine(verdicts)
        reason = "; ".join(f"{c.describe()} ({c.interval}): {v.value}" for c, v in zip(ests, verdicts, strict=True))
        left = tuple(
            UnitScore(e.unit, False, e.reason) for e in exclusions if e.part == part.name and e.control is None
        )
        if left:
            reason += f"; {len(left)} unit(s) excluded (left the premise)"
        return PartResult(part.name, part.statement, part.rule, part.bar, verdict, reason, None, left, ests, part.unit)
    units = _score_units(mine, [e for e in exclusions if e.part == part.name and e.control is None])
    rate = _rate(units, level)
    verdict = decide_rate(rate, part.bar)
    excluded = sum(bool(u.excluded) for u in units)
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
    return PartResult(part.name, part.statement, part.rule, part.bar, verdict, reason, rate, units, (), part.unit)


def _control_result(
    ctl: Control, part: Part, level: float, checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion]
) -> ControlResult | None:
    mine = [(n, c) for n, c in checks if c.control == ctl.name]
    if not mine:
        return None
    if part.rule == "estimate":
        ests = tuple(c for _, c in mine)
        verdict = _combine([decide_estimate(c) for c in ests])
        status: Literal["fails as required", "passes too often", "undecided"] = (
            "passes too often" if verdict is Verdict.REPRODUCED else "fails as required"
        )
        return ControlResult(ctl.name, ctl.part, ctl.why, ctl.max_pass_rate, status, None, estimates=ests)
    # A control unit "passes" when every check is met; a NaN showed nothing, so it counts as passing.
    nan_as_met = [(n, c if c.defined else _as_met(c)) for n, c in mine]
    units = _score_units(nan_as_met, [e for e in exclusions if e.control == ctl.name])
    rate = _rate(units, level)
    if ctl.max_pass_rate <= 0:  # every unit must fail
        status = (
            "fails as required" if rate.n and rate.passed == 0 else "passes too often" if rate.passed else "undecided"
        )
    elif rate.n and rate.high < ctl.max_pass_rate:
        status = "fails as required"
    elif rate.n and rate.low > ctl.max_pass_rate:
        status = "passes too often"
    else:
        status = "undecided"
    return ControlResult(ctl.name, ctl.part, ctl.why, ctl.max_pass_rate, status, rate, units)


def _as_met(c: Check) -> Check:
    """Return a NaN check as one that met its threshold (a control that showed nothing did not fail)."""
    return replace(c, value=c.threshold)


def _combine(verdicts: Sequence[Verdict]) -> Verdict:
    if not verdicts:
        return Verdict.INCONCLUSIVE
    if any(v is Verdict.NOT_REPRODUCED for v in verdicts):
        return Verdict.NOT_REPRODUCED
    if all(v is Verdict.REPRODUCED for v in verdicts):
        return Verdict.REPRODUCED
    return Verdict.INCONCLUSIVE


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

    ERROR wins (a crash, a control that passes too often, no claim statistic, no control);
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
    result.parts = [_part_result(p, proto.level, checks, exclusions) for p in proto.parts]
    if missing:  # an incomplete run cannot show that a part holds
        result.parts = [
            replace(p, verdict=Verdict.INCONCLUSIVE, reason=f"{p.reason}; the run is incomplete")
            if p.verdict is Verdict.REPRODUCED
            else p
            for p in result.parts
        ]
    parts = {p.name: p for p in proto.parts}
    for ctl in proto.controls:
        cr = _control_result(
            ctl, parts[ctl.part] if ctl.part in parts else proto.parts[0], proto.level, checks, exclusions
        )
        if cr is not None:
            result.controls.append(cr)
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
    leaky = [c for c in r.controls if c.status == "passes too often"]
    if leaky:
        c = leaky[0]
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
            return Verdict.INCONCLUSIVE, f"{reasons}; but control '{c.name}' is not yet shown to fail ({rate})"
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
