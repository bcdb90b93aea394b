"""Score a claim's units and turn each part and control into its two one-sided tests (``StatTests``).

The ``Design`` picks the tests: exact ones for one look, anytime-valid ones for a schedule of several
(``claimcheck.decide.evidence``); ``claimcheck.decide.verdicts`` decides the claim from them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from claimcheck.decide.evidence import Evidence, mean_evidence, rate_evidence
from claimcheck.decide.record import Check, ClaimRecorder, Exclusion
from claimcheck.protocol.spec import ClaimProtocol, Control, Part


@dataclass(frozen=True)
class UnitScore:
    """One unit of a part or control: passed, failed, or excluded (with the reason)."""

    unit: str
    passed: bool
    excluded: str = ""  # the reason, when the unit left the premise
    nodeids: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()  # the checks it missed, described


@dataclass(frozen=True)
class Design:
    """How the units of a claim were run: the looks each test planned, its cap, and the order units came in."""

    alpha: float
    prior: tuple[float, float]
    looks: Mapping[str, int]  # node id -> planned looks (1: one look at a fixed number of units)
    caps: Mapping[str, int]  # node id -> the most units it could run
    order: Mapping[str, int]  # unit -> position in the order the batches added it

    @classmethod
    def of(cls, proto: ClaimProtocol, records: Iterable[tuple[str, ClaimRecorder]]) -> Design:
        """Return the design of the claim tests ``records`` ((node id, record) pairs) under ``proto``."""
        looks: dict[str, int] = {}
        caps: dict[str, int] = {}
        order: dict[str, int] = {}
        for nodeid, rec in records:
            looks[nodeid] = max(1, len(rec.schedule))
            caps[nodeid] = rec.schedule[-1] if rec.schedule else 0
            for look in rec.looks:
                for u in look.added:
                    order.setdefault(u, len(order))
        return cls(proto.alpha, (float(proto.prior[0]), float(proto.prior[1])), looks, caps, order)

    def plan(self, nodeids: Iterable[str]) -> tuple[int, int]:
        """Return (looks, cap) for units recorded by ``nodeids``: several looks if any of them planned several."""
        ids = list(nodeids)
        return max((self.looks.get(n, 1) for n in ids), default=1), max((self.caps.get(n, 0) for n in ids), default=0)

    def key(self, unit: str) -> tuple[int, tuple[int, int | str]]:
        """Return the sort key of a unit: the order its batch added it, then its id."""
        return (self.order.get(unit, len(self.order)), unit_key(unit))


def unit_key(unit: str) -> tuple[int, int | str]:
    """Return a unit's sort key by id: numbers in numeric order first, then names."""
    return (0, int(unit)) if unit.lstrip("-").isdigit() else (1, unit)


def score_units(
    checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion], design: Design | None = None
) -> tuple[UnitScore, ...]:
    """Score each unit: excluded if any exclusion names it; else passed when every check is met.

    Units come in the order their batches added them (``design``), else by id.
    """
    key = design.key if design is not None else (lambda u: (0, unit_key(u)))
    by_unit: dict[str, list[tuple[str, Check]]] = {}
    for nodeid, c in checks:
        by_unit.setdefault(c.unit, []).append((nodeid, c))
    why = {e.unit: e.reason for e in exclusions}
    out = []
    for unit in sorted(by_unit, key=key):
        rows = by_unit[unit]
        nodeids = tuple(dict.fromkeys(n for n, _ in rows))
        misses = tuple(c.describe() + (f" at {c.label}" if c.label else "") for _, c in rows if not c.met)
        out.append(UnitScore(unit, not misses, why.get(unit, ""), nodeids, misses))
    for unit in sorted(set(why) - set(by_unit), key=key):
        out.append(UnitScore(unit, False, why[unit]))
    return tuple(out)


@dataclass(frozen=True)
class StatTests:
    """The two one-sided p-values of a statistic: ``p_hold`` of 'it does not hold', ``p_fail`` of 'it does not fail'."""

    p_hold: float
    p_fail: float
    evidence: Evidence | None = None
    check: Check | None = None  # what the report shows for it (an estimate, or a mean with its interval)
    in_family: bool = True  # False for an interval-only estimate: decided by its interval, outside the level


def interval_meets(check: Check) -> tuple[bool, bool]:
    """Return (all of the estimate's interval meets its threshold, none of it does); both False when undefined."""
    if check.low is None or check.high is None or math.isnan(check.low) or math.isnan(check.high):
        return False, False
    near, far = (check.low, check.high) if check.direction in (">=", ">") else (check.high, check.low)
    return check.stat.met(near), not check.stat.met(far)


def pass_rate_tests(passes: Sequence[bool], null: float, design: Design, nodeids: Iterable[str]) -> StatTests:
    """Return the tests of a pass rate against ``null`` (a bar to beat); a bar of 1 is decided by counting."""
    looks, _ = design.plan(nodeids)
    ev = rate_evidence(passes, null, design.alpha, looks, design.prior)
    if null >= 1:  # theorem-style: every unit must pass; one counterexample fails it
        n, k = len(passes), sum(passes)
        return StatTests(0.0 if n and k == n else 1.0, 0.0 if k < n else 1.0, ev)
    return StatTests(ev.p_above, ev.p_below, ev)


def mean_tests(
    part: Part, mine: Sequence[tuple[str, Check]], design: Design, units: Sequence[str], bounding: bool = False
) -> list[StatTests]:
    """Return one pair of tests per statistic of a part under the mean rule, over ``units`` in that order.

    ``bounding``: only the statistics that do not resolve a zone part (what a control is judged by).
    """
    out = []
    looks, cap = design.plan(n for n, _ in mine)
    for stat in part.bounding if bounding else part.stats:
        by_unit = {c.unit: c.value for _, c in mine if c.statistic == stat.name}
        values = [by_unit[u] for u in units if u in by_unit]
        up = stat.direction in (">=", ">")
        null = stat.threshold - stat.tol if up else stat.threshold + stat.tol
        ev = mean_evidence(values, null, design.alpha, looks, part.bounds, part.sigma, cap)
        shown = Check(
            stat.name,
            ev.estimate,
            stat.direction,
            stat.threshold,
            tol=stat.tol,
            unit="pooled",
            low=ev.low,
            high=ev.high,
            interval=f"{ev.method}, {ev.n} units",
        )
        out.append(StatTests(ev.p_above if up else ev.p_below, ev.p_below if up else ev.p_above, ev, shown))
    return out


def estimate_tests(ests: Sequence[Check], alpha: float) -> list[StatTests]:
    """Return the tests of estimates that carry only their interval (rule 'estimate'): outside the claim's family."""
    out = []
    for c in ests:
        holds, fails = interval_meets(c)
        out.append(StatTests(alpha if holds else 1.0, alpha if fails else 1.0, check=c, in_family=False))
    return out


def _admitted(units: Sequence[UnitScore]) -> list[str]:
    return [u.unit for u in units if not u.excluded]


def part_tests(
    part: Part, design: Design, checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion]
) -> tuple[list[StatTests], tuple[UnitScore, ...]]:
    """Return a part's tests (one per statistic, or one for a pass rate) and its scored units."""
    mine = [(n, c) for n, c in checks if c.part == part.name and c.control is None]
    left = [e for e in exclusions if e.part == part.name and e.control is None]
    if part.rule == "estimate":
        ests = [c for _, c in mine]
        found = estimate_tests(ests, design.alpha) if ests else [StatTests(1.0, 1.0, in_family=False)]
        return found, tuple(UnitScore(e.unit, False, e.reason) for e in left)
    units = score_units(mine, left, design)
    if part.rule == "mean":
        kept = _admitted(units)
        return mean_tests(part, [(n, c) for n, c in mine if c.unit in set(kept)], design, kept), units
    passes = [u.passed for u in units if not u.excluded]
    return [pass_rate_tests(passes, part.bar, design, (n for n, _ in mine))], units


ControlTests = tuple[StatTests, tuple[UnitScore, ...], list[StatTests]]


def control_tests(
    ctl: Control, part: Part, design: Design, checks: Sequence[tuple[str, Check]], exclusions: Sequence[Exclusion]
) -> ControlTests | None:
    """Return a control's tests, its units and its per-statistic tests (None when it recorded nothing).

    ``p_hold`` is of "it does not fail as required", ``p_fail`` of "it does not pass too often" (a positive
    control: ``positive_tests``). The rule per kind of part, zone parts by their bounding statistics:
    docs/decisions.md ("Controls share the family").
    """
    mine = [(n, c) for n, c in checks if c.control == ctl.name]
    if not mine:
        return None
    left = [e for e in exclusions if e.control == ctl.name]
    if ctl.kind == "positive":
        return positive_tests(part, design, mine, left)
    if part.rule == "estimate":
        judged = [c for _, c in mine if c.statistic in {s.name for s in part.bounding}]
        per = estimate_tests(judged, design.alpha)
        leaks = all(interval_meets(c)[0] for c in judged)
        return StatTests(1.0 if leaks else 0.0, 0.0 if leaks else 1.0, in_family=False), (), per
    if part.rule == "mean":
        units = score_units(mine, left, design)
        kept = _admitted(units)
        per = mean_tests(part, [(n, c) for n, c in mine if c.unit in set(kept)], design, kept, bounding=True)
        p_leak = max(t.p_hold for t in per)
        p_fails = min(1.0, len(per) * min(t.p_fail for t in per))
        return StatTests(p_fails, p_leak), units, per
    # A control unit "passes" when every check is met; a NaN showed nothing, so it counts as passing.
    nan_as_met = [(n, c if c.defined else replace(c, value=c.threshold)) for n, c in mine]
    units = score_units(nan_as_met, left, design)
    passes = [u.passed for u in units if not u.excluded]
    if ctl.max_pass_rate <= 0:  # every unit must fail
        n, k = len(passes), sum(passes)
        ev = rate_evidence(passes, 0.0, design.alpha, design.plan(n for n, _ in mine)[0], design.prior)
        return StatTests(0.0 if n and k == 0 else 1.0, 0.0 if k else 1.0, ev), units, []
    t = pass_rate_tests(passes, ctl.max_pass_rate, design, (n for n, _ in mine))
    return StatTests(t.p_fail, t.p_hold, t.evidence), units, []


def positive_tests(
    part: Part, design: Design, mine: Sequence[tuple[str, Check]], left: Sequence[Exclusion]
) -> ControlTests:
    """Return a positive control's tests: decided as its part would be, on the control's own units.

    ``p_hold`` is of "it does not pass as required" (the largest over the statistics), ``p_fail`` of "it
    does not fail too often" (the smallest times their number); a zone part's resolving statistics do not count.
    """
    as_part = [(n, replace(c, control=None, part=part.name)) for n, c in mine]
    found, units = part_tests(part, design, as_part, [replace(e, control=None, part=part.name) for e in left])
    bounding = {s.name for s in part.bounding}
    found = [t for t in found if t.check is None or t.check.statistic in bounding]  # a zone part's bounds
    p_works = max(t.p_hold for t in found)
    p_blind = min(1.0, len(found) * min(t.p_fail for t in found))
    evidence = found[0].evidence if part.rule == "pass-rate" else None
    per = [] if part.rule == "pass-rate" else found
    return StatTests(p_works, p_blind, evidence, in_family=all(t.in_family for t in found)), units, per
