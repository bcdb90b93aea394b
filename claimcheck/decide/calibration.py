"""Calibrate decision rules: each part's unit decision on cases whose answer is known, the claim rule on known rates.

``calibrate_part`` counts a part's right answers (sensitivity, specificity, zone rate, per origin, each with its
exact one-sided 95% lower bound against ``FLOOR``) and keeps the worst wrong cases; ``simulate_rule`` runs the
claim-level rule on units drawn with known pass rates. Results are plain data for ``claimcheck calibrate --json``
and the ledger's ``calibrate`` entries, which the report reads back (docs/calibration.md). No pytest, no suite.
"""

from __future__ import annotations

import math
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

import numpy as np

from claimcheck.decide import sequential as sq
from claimcheck.decide.evidence import mean_evidence, rate_evidence
from claimcheck.decide.record import Check
from claimcheck.decide.stats import Proportion, clopper_pearson
from claimcheck.decide.verdicts import Verdict, decide_estimate
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ALPHA, LEVEL, ORIGINS, ZONE, ClaimProtocol, Estimate, Family, Part, Stat

FLOOR = 0.9  # a part is calibrated when both one-sided 95% lower bounds reach this
KEEP = 5  # wrong cases kept per family, worst first
SCHEMA = "claimcheck-calibration/1"
RULE_OFFSETS = (-0.3, -0.2, -0.1, 0.0, 0.1, 0.2)  # true pass rates simulated: the bar plus these, within [0, 1]
RULE_REPS = 2000  # simulated claims per (budget, true rate)


Values = Mapping[str, "float | Estimate"]


def statistic_met(stat: Stat, value: float | Estimate) -> bool:
    """Return whether ``value`` meets ``stat`` as the verdict counts it (an ``Estimate``: its whole interval)."""
    if isinstance(value, Estimate):
        return _estimate_verdict(stat, value) is Verdict.REPRODUCED
    return stat.met(float(value))


def _estimate_verdict(stat: Stat, est: Estimate) -> Verdict:
    """Return what the verdict makes of ``est`` against ``stat``: its whole interval on one side, or neither."""
    check = Check(stat.name, est.value, stat.direction, stat.threshold, tol=stat.tol, low=est.low, high=est.high)
    return decide_estimate(check)


def in_zone(values: Values) -> bool:
    """Return whether a decision found the case in its part's declared zone (``ZONE``: 1.0 among its values)."""
    flag = values.get(ZONE)
    return flag is not None and not isinstance(flag, Estimate) and float(flag) == 1.0


def outcome(part: Part, values: Values) -> str:
    """Return "zone" for a case left undecided (or, in a zone part, bounded but not resolved), else "pass" or "fail"."""
    if in_zone(values):
        return "zone"
    if accepts(part, values):
        return "pass"
    bounding = {s.name for s in part.bounding}
    return "zone" if part.unresolved and accepts(part, {k: v for k, v in values.items() if k in bounding}) else "fail"


def undecided(part: Part, values: Values) -> bool:
    """Return whether a whole sample's estimates are neither accepted nor any shown on the wrong side (INCONCLUSIVE).

    Only a sample decides a verdict: a value that is not an ``Estimate`` (one unit's) is never undecided here.
    """
    estimates = {k: v for k, v in values.items() if k != ZONE}
    if not estimates or not all(isinstance(v, Estimate) for v in estimates.values()) or accepts(part, values):
        return False
    pairs = [(part.stat(name), v) for name, v in estimates.items() if isinstance(v, Estimate)]
    return not any(s is not None and _estimate_verdict(s, v) is Verdict.NOT_REPRODUCED for s, v in pairs)


def accepts(part: Part, values: Values) -> bool:
    """Return whether a unit with these ``values`` passes ``part``: not in the zone, every value met, one at least.

    Raise ConfigError when a name is not one of the part's statistics nor ``ZONE``.
    """
    if in_zone(values) or not (values := {k: v for k, v in values.items() if k != ZONE}):
        return False
    for name, value in values.items():
        stat = part.stat(name)
        if stat is None:
            raise ConfigError(
                f"part {part.name!r}: its decision returned {name!r}, which is not one of its statistics "
                f"{[s.name for s in part.stats]}"
            )
        if not statistic_met(stat, value):
            return False
    return True


def margin(part: Part, values: Values) -> float:
    """Return the smallest margin of the values past their thresholds, relative to each threshold's size (NaN: -inf)."""
    out = math.inf
    for name, value in values.items():
        stat = part.stat(name)
        if stat is None:  # ZONE among them
            continue
        up = stat.direction in (">=", ">")
        v = (value.low if up else value.high) if isinstance(value, Estimate) else float(value)
        if math.isnan(v):
            return -math.inf
        gap = v - stat.threshold if up else stat.threshold - v
        out = min(out, gap / (abs(stat.threshold) or 1.0))
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, Estimate):
        return {"value": v.value, "low": v.low, "high": v.high}
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True)
class WrongCase:
    """A case the decision got wrong: which, made how, what the decision returned, by how much."""

    index: int
    params: dict[str, Any]
    values: dict[str, Any]  # statistic -> value ({value, low, high} for an estimate); {} when it raised
    margin: float  # see ``margin``: >= 0 for a wrongly accepted case, < 0 for a wrongly rejected one
    error: str = ""  # the decision raised: its message

    def describe(self) -> str:
        """Return e.g. ``case 17 (tau=412, p=1.3): persistence = 0.71, ...``."""
        params = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items())
        said = f"raised {self.error}" if self.error else ", ".join(f"{k} = {_short(v)}" for k, v in self.values.items())
        return f"case {self.index} ({params}): {said}"


def _short(v: Any) -> str:
    if isinstance(v, dict) and "value" in v:
        return f"{v['value']:.4g} [{v['low']:.4g}, {v['high']:.4g}]"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class FamilyResult:
    """How a decision did on one family: right answers of cases, the cases left undecided, the worst wrong cases."""

    name: str
    expect: str
    cases: int
    right: int
    grid: str = ""
    why: str = ""
    wrong: tuple[WrongCase, ...] = ()  # up to KEEP, worst first
    wrong_ranges: dict[str, list[float]] = field(default_factory=dict)  # numeric parameter -> [min, max] over wrong
    errors: int = 0  # cases where the decision raised (counted wrong)
    origin: str = "design"  # who wrote the family: "design", "challenge" or "outside"
    zone: int = 0  # cases the decision left undecided (right only when expect is "zone")

    @property
    def verb(self) -> str:
        """Return what a right answer is called: accepted, rejected, or left undecided."""
        return {"pass": "accepted", "fail": "rejected"}.get(self.expect, "left undecided")

    @property
    def rate(self) -> Proportion:
        """Return the share of cases answered right, with the exact interval (low end: one-sided 95%)."""
        return clopper_pearson(self.right, self.cases, LEVEL)

    def describe(self) -> str:
        """Return e.g. ``offset power law: 52/400 rejected`` (and the cases left undecided, if any)."""
        zone = f", {self.zone} undecided" if self.zone and self.expect != "zone" else ""
        return f"{self.name}: {self.right}/{self.cases} {self.verb}{zone}"

    def to_plain(self, wrong: bool) -> dict[str, Any]:
        """Return the family as plain data; ``origin`` and ``zone`` only where they say something."""
        out: dict[str, Any] = {"name": self.name, "expect": self.expect, "cases": self.cases, "right": self.right}
        if wrong:
            worst = [asdict(w) for w in self.wrong]  # index, params, values, margin, error
            out.update(
                errors=self.errors, grid=self.grid, why=self.why, wrong_ranges=self.wrong_ranges, worst_wrong=worst
            )
        if self.origin != "design":
            out["origin"] = self.origin
        if self.zone or self.expect == "zone":
            out["zone"] = self.zone
        return out


@dataclass(frozen=True)
class PartCalibration:
    """The calibration of one part's decision: sensitivity, specificity, and each family's counts."""

    claim: str
    part: str
    decision: str  # the decision's identity (``Part.decision_id``); "" when the part has none
    families: tuple[FamilyResult, ...]
    seconds: float = 0.0
    date: str = ""
    seed: int = 0

    def rate(self, expect: str, origin: str = "design") -> Proportion:
        """Return the right answers over the families of ``origin`` that expect ``expect``, with the exact interval."""
        fams = [f for f in self.families if f.expect == expect and f.origin == origin]
        return clopper_pearson(sum(f.right for f in fams), sum(f.cases for f in fams), LEVEL)

    @property
    def sensitivity(self) -> Proportion:
        """Return the design families' must-pass cases accepted, with the exact interval (low end: one-sided 95%)."""
        return self.rate("pass")

    @property
    def specificity(self) -> Proportion:
        """Return the design families' must-fail cases rejected, with the exact interval."""
        return self.rate("fail")

    @property
    def origins(self) -> tuple[str, ...]:
        """Return the origins this part has families of, design first."""
        return tuple(o for o in ORIGINS if any(f.origin == o for f in self.families))

    def _rates(self) -> list[Proportion]:
        """Return every rate the status reads: each origin's sensitivity, specificity and zone rate with cases."""
        return [r for o in ORIGINS for e in ("pass", "fail", "zone") if (r := self.rate(e, o)).n]

    @property
    def status(self) -> str:
        """Return "calibrated" (every rate with cases at the floor), "failing calibration" or "uncalibrated"."""
        if not self.decision or self.sensitivity.n == 0 or self.specificity.n == 0:
            return "uncalibrated"
        return "calibrated" if min(r.low for r in self._rates()) >= FLOOR else "failing calibration"

    def _counts(self, origin: str) -> str:
        said = (("fail", "must-fail rejected"), ("pass", "must-pass accepted"), ("zone", "in-zone left undecided"))
        return ", ".join(f"{r.passed}/{r.n} {what}" for e, what in said if (r := self.rate(e, origin)).n)

    def summary(self) -> str:
        """Return the report's mark, e.g. ``calibrated: 400/400 must-fail rejected, 598/600 must-pass accepted``."""
        sens, spec = self.sensitivity, self.specificity
        if not self.decision:
            return "uncalibrated: no decision declared"
        if sens.n == 0 or spec.n == 0:
            return f"uncalibrated: no must-{'pass' if sens.n == 0 else 'fail'} cases"
        text = self._counts("design")
        for origin in (o for o in self.origins if o != "design"):
            text += f"; {origin}: {self._counts(origin)}"
        if self.status == "calibrated":
            return f"calibrated: {text}"
        short = [f for f in self.families if f.right < f.cases]
        if not short:
            return f"failing calibration: {text}; too few cases for a lower bound of {FLOOR:g}"
        worst = min(short, key=lambda f: f.right / f.cases)
        return f"failing calibration: {text}; worst: {worst.describe()}"

    def rates_beyond_design(self, form: Callable[[Proportion], dict[str, Any]]) -> dict[str, Any]:
        """Return the design zone rate and each other origin's rates, those with cases, each written by ``form``."""
        pairs = (("sensitivity", "pass"), ("specificity", "fail"), ("zone", "zone"))
        out = {"zone": form(self.rate("zone"))} if self.rate("zone").n else {}
        others = (o for o in self.origins if o != "design")
        return out | {o: {key: form(r) for key, expect in pairs if (r := self.rate(expect, o)).n} for o in others}

    def to_entry(self) -> dict[str, Any]:
        """Return the result as a plain dict, every wrong case kept (``claimcheck calibrate --json``)."""
        return {
            "kind": "calibration",
            "claim": self.claim,
            "part": self.part,
            "decision": self.decision,
            "status": self.status,
            "summary": self.summary(),
            "sensitivity": _bounded(self.sensitivity),
            "specificity": _bounded(self.specificity),
            "floor": FLOOR,
            "level": "one-sided 95% (Clopper-Pearson)",
            "families": [f.to_plain(wrong=True) for f in self.families],
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "date": self.date,
            **self.rates_beyond_design(_bounded),
        }


def _bounded(r: Proportion) -> dict[str, Any]:
    """Return a rate with both ends of its interval (``--json``)."""
    return {"passed": r.passed, "n": r.n, "low": r.low, "high": r.high}


def _counted(r: Proportion) -> dict[str, Any]:
    """Return a rate as the ledger keeps it: the count and its lower bound, rounded."""
    return {"passed": r.passed, "n": r.n, "low": round(r.low, 4)}


UNITS = "units"  # a mean-rule part's case: {"units": [each unit's measurements, ...]}, a whole sample


def decide_case(part: Part, measurements: Mapping[str, Any], alpha: float = ALPHA) -> Values:
    """Return the statistics ``part`` decides on one calibration case, as its verdict would read them.

    A mean-rule case is a sample, ``{"units": [...]}``: each statistic becomes the mean over the units outside the
    zone, with the one-look Student-t interval (each end at ``alpha``); a sample all in the zone is in the zone.
    """
    assert part.decision is not None
    if part.rule != "mean":
        return part.decision(**measurements)
    if UNITS not in measurements:
        raise ConfigError(f"part {part.name!r} (rule 'mean'): a calibration case holds {{'units': [...]}}, a sample")
    every = [part.decision(**unit) for unit in measurements[UNITS]]
    scored = [v for v in every if not in_zone(v)]
    if every and not scored:
        return {**{s.name: math.nan for s in part.stats}, ZONE: 1.0}
    out: dict[str, float | Estimate] = {}
    for stat in part.stats:
        values = [float(v[stat.name]) for v in scored if stat.name in v]  # type: ignore[arg-type]
        ev = mean_evidence(values, stat.threshold, alpha, 1, part.bounds, part.sigma)
        out[stat.name] = Estimate(ev.estimate, ev.low, ev.high, f"{ev.method}, {ev.n} units")
    return out


def case_rng(seed: int, claim: str, part: str, family: str, index: int) -> np.random.Generator:
    """Return the generator of case ``index`` of a family: the same on every machine and in any order."""
    return np.random.default_rng([seed, zlib.crc32(f"{claim}\0{part}\0{family}".encode()), index])


def run_family(claim: str, part: Part, fam: Family, seed: int = 0, cases: int | None = None) -> FamilyResult:
    """Draw and decide every case of ``fam`` (``cases`` of them if given); return the right answers, the worst wrong."""
    assert part.decision is not None
    n = fam.cases if cases is None else cases
    right, errors, zone = 0, 0, 0
    wrong: list[WrongCase] = []
    for i in range(n):
        case = fam.generate(case_rng(seed, claim, part.name, fam.name, i))
        try:
            values = decide_case(part, case.measurements)
            answer = outcome(part, values)
        except ConfigError:
            raise
        except Exception as e:  # a decision that raises on a case is a finding, kept
            errors += 1
            wrong.append(WrongCase(i, dict(case.params), {}, -math.inf, f"{type(e).__name__}: {e}"))
            continue
        # a sample whose intervals decide neither way is left undecided, as its verdict would be: right in a zone
        # family, counted beside the answer in the others (a fail family's "rejected" is then "not accepted")
        left = answer == "fail" and undecided(part, values)
        if left and fam.expect == "zone":
            answer = "zone"
        zone += answer == "zone" or left
        if answer == fam.expect:
            right += 1
            continue
        plain = {k: _plain(v) for k, v in values.items()}
        # an undecided answer where one was due misses by nothing measurable; a decided one in a zone by its margin
        gap = 0.0 if answer == "zone" else margin(part, values)
        wrong.append(WrongCase(i, {k: _plain(v) for k, v in case.params.items()}, plain, gap))
    ranges: dict[str, list[float]] = {}
    for w in wrong:
        for k, v in w.params.items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                lo, hi = ranges.get(k, [math.inf, -math.inf])
                ranges[k] = [min(lo, float(v)), max(hi, float(v))]
    # worst first: a wrongly accepted case by how far it cleared its thresholds, a rejected one by how far it missed
    wrong.sort(key=lambda w: -abs(w.margin) if math.isfinite(w.margin) else -math.inf)
    kept = tuple(wrong[:KEEP])
    return FamilyResult(fam.name, fam.expect, n, right, fam.grid, fam.why, kept, ranges, errors, fam.origin, zone)


def calibrate_part(
    claim: str, part: Part, seed: int = 0, cases: int | None = None, today: str | None = None
) -> PartCalibration:
    """Run every calibration family of ``part``; return its calibration (uncalibrated without decision or cases)."""
    date = today or datetime.now(UTC).strftime("%Y-%m-%d")
    if part.decision is None:
        return PartCalibration(claim, part.name, "", (), 0.0, date, seed)
    start = time.perf_counter()
    fams = tuple(run_family(claim, part, f, seed, cases) for f in part.calibration)
    return PartCalibration(claim, part.name, part.decision_id, fams, time.perf_counter() - start, date, seed)


def rule_verdict(
    units: Sequence[bool],
    bar: float,
    alpha: float = 0.05,
    looks: Sequence[int] = (),
    prior: tuple[float, float] = (1.0, 1.0),
) -> Verdict:
    """Return the verdict the controller gives a one-part claim whose units passed as ``units`` say.

    One look (``looks`` empty): the exact tests of ``rate_evidence``; a schedule: the first look whose
    anytime-valid evidence decides it. A bar of 1 is decided by counting.
    """
    if bar >= 1:
        return Verdict.REPRODUCED if units and all(units) else Verdict.NOT_REPRODUCED
    if not looks:
        return _one_look(sum(units), len(units), bar, alpha)
    if not units:
        return Verdict.INCONCLUSIVE
    return rule_verdicts(np.asarray([units], dtype=bool), bar, alpha, looks, prior)[0]


def rule_verdicts(
    runs: np.ndarray, bar: float, alpha: float, looks: Sequence[int], prior: tuple[float, float] = (1.0, 1.0)
) -> list[Verdict]:
    """Return ``rule_verdict`` of many claims at once under a schedule of looks: ``runs`` is (claims x units)."""
    up, down = (sq.beta_binomial_paths(runs, bar, side, prior) for side in ("greater", "less"))
    verdicts = [Verdict.INCONCLUSIVE] * runs.shape[0]
    open_ = np.ones(runs.shape[0], dtype=bool)
    for n in [n for n in looks if n <= runs.shape[1]] or [runs.shape[1]]:
        holds, fails = open_ & (up[:, n - 1] <= alpha), open_ & ~(up[:, n - 1] <= alpha) & (down[:, n - 1] <= alpha)
        for i in np.flatnonzero(holds | fails):
            verdicts[i] = Verdict.REPRODUCED if holds[i] else Verdict.NOT_REPRODUCED
        open_ &= ~(holds | fails)
    return verdicts


@cache
def _one_look(passed: int, n: int, bar: float, alpha: float) -> Verdict:
    """Return the one-look verdict of ``passed`` of ``n`` units: the exact tests depend on the count alone."""
    ev = rate_evidence([True] * passed + [False] * (n - passed), bar, alpha)
    if ev.p_above <= alpha:
        return Verdict.REPRODUCED
    return Verdict.NOT_REPRODUCED if ev.p_below <= alpha else Verdict.INCONCLUSIVE


@dataclass(frozen=True)
class RuleRow:
    """How often each verdict came out for one unit count and one true pass rate."""

    budget: str
    units: int
    true_rate: float
    counts: dict[str, int]  # verdict -> simulated claims
    reps: int

    def share(self, verdict: Verdict) -> float:
        """Return the share of simulated claims with ``verdict``."""
        return self.counts.get(verdict.value, 0) / self.reps


@dataclass(frozen=True)
class RuleSimulation:
    """The claim-level rule of one pass-rate part, simulated at each budget's unit count."""

    claim: str
    part: str
    bar: float
    rows: tuple[RuleRow, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the simulation as plain data."""
        return {
            "claim": self.claim,
            "part": self.part,
            "bar": self.bar,
            "rows": [
                {"budget": r.budget, "units": r.units, "true_rate": r.true_rate, "reps": r.reps, "verdicts": r.counts}
                for r in self.rows
            ],
        }


def true_rates(bar: float) -> list[float]:
    """Return the true pass rates simulated for ``bar``: the bar and ``RULE_OFFSETS`` around it, within [0, 1]."""
    rates = {round(min(1.0, max(0.0, bar + d)), 4) for d in RULE_OFFSETS}
    if bar < 1:
        rates.add(1.0)
    return sorted(rates)


def simulate_rule(
    proto: ClaimProtocol, part: Part, seed: int = 0, reps: int = RULE_REPS, rates: Iterable[float] | None = None
) -> RuleSimulation:
    """Simulate ``reps`` claims per unit count and true pass rate; budgets with the same unit count share a row."""
    by_units: dict[tuple[int, ...], list[str]] = {}
    for budget in proto.seeds.units:
        by_units.setdefault(tuple(proto.seeds.looks(budget, int(proto.seeds.units[budget]))), []).append(budget)
    prior = (float(proto.prior[0]), float(proto.prior[1]))
    rows = []
    for looks in sorted(by_units):
        n = looks[-1]
        for rate in rates if rates is not None else true_rates(part.bar):
            rng = np.random.default_rng([seed, zlib.crc32(f"{proto.claim_id}\0{part.name}".encode()), n])
            draws = rng.random((reps, n)) < rate
            if len(looks) > 1 and part.bar < 1:
                verdicts = rule_verdicts(draws, part.bar, proto.alpha, looks, prior)
            else:
                verdicts = [rule_verdict(row.tolist(), part.bar, proto.alpha, (), prior) for row in draws]
            counts = dict(Counter(v.value for v in verdicts))  # in the order first met, as the JSON lists them
            rows.append(RuleRow(", ".join(by_units[looks]), n, rate, counts, reps))
    return RuleSimulation(proto.claim_id, part.name, part.bar, tuple(rows))


@dataclass(frozen=True)
class SuiteCalibration:
    """Every part of every protocol, calibrated, and the claim rule of each pass-rate part simulated."""

    parts: tuple[PartCalibration, ...]
    rules: tuple[RuleSimulation, ...]
    controls: tuple[dict[str, Any], ...]  # per claim: its controls by kind, flagged without a discriminating one
    seconds: float
    seed: int

    @property
    def failing(self) -> list[PartCalibration]:
        """Return the parts failing calibration."""
        return [p for p in self.parts if p.status == "failing calibration"]

    def to_dict(self) -> dict[str, Any]:
        """Return everything as plain data (what ``--json`` writes)."""
        return {
            "schema": SCHEMA,
            "seed": self.seed,
            "seconds": round(self.seconds, 2),
            "floor": FLOOR,
            "parts": [p.to_entry() for p in self.parts],
            "failing": [f"{p.claim}/{p.part}" for p in self.failing],
            "uncalibrated": [f"{p.claim}/{p.part}" for p in self.parts if p.status == "uncalibrated"],
            "claim_rule": [r.to_dict() for r in self.rules],
            "controls": list(self.controls),
        }


def control_kinds(proto: ClaimProtocol) -> dict[str, Any]:
    """Return a claim's controls by kind, and whether it lacks a discriminating one (then it is flagged)."""
    disc = [{"name": c.name, "naive": c.naive} for c in proto.controls if c.kind == "discriminating"]
    return {
        "claim": proto.claim_id,
        "discriminating": disc,
        "sanity": [c.name for c in proto.controls if c.kind == "sanity"],
        "positive": [c.name for c in proto.controls if c.kind == "positive"],
        "flag": "" if disc else "no discriminating control",
    }


def calibrate_suite(
    protocols: Sequence[ClaimProtocol],
    seed: int = 0,
    cases: int | None = None,
    reps: int = RULE_REPS,
    progress: Callable[[PartCalibration], None] | None = None,
) -> SuiteCalibration:
    """Calibrate every part of every protocol and simulate the claim rule of every pass-rate part."""
    start = time.perf_counter()
    parts, rules = [], []
    for proto in protocols:
        for part in proto.parts:
            parts.append(pc := calibrate_part(proto.claim_id, part, seed, cases))
            if progress is not None:
                progress(pc)
            if part.rule == "pass-rate":
                rules.append(simulate_rule(proto, part, seed, reps))
    controls = tuple(control_kinds(p) for p in protocols)
    return SuiteCalibration(tuple(parts), tuple(rules), controls, time.perf_counter() - start, seed)


# --- the record the report reads: calibrate entries of the ledger ---------------------------------


def ledger_results(pc: PartCalibration) -> dict[str, Any]:
    """Return what a ledger ``calibrate`` entry keeps of a part's calibration: the mark and the counts."""
    return {
        "decision": pc.decision,
        "status": pc.status,
        "summary": pc.summary(),
        "sensitivity": _counted(pc.sensitivity),
        "specificity": _counted(pc.specificity),
        "floor": FLOOR,
        "seed": pc.seed,
        "families": [f.to_plain(wrong=False) for f in pc.families],
        **pc.rates_beyond_design(_counted),
    }


def decision_digest(decision_id: object) -> str:
    """Return the code fingerprint of a decision identity ``module:name sha256`` (where it lives does not count)."""
    return str(decision_id).rsplit(" ", 1)[-1]


def entry_of(entries: Sequence[Mapping[str, Any]], claim: str, part: Part) -> Mapping[str, Any] | None:
    """Return the recorded entry of ``part`` of ``claim`` of its current decision (compared by fingerprint), or None."""
    digest = decision_digest(part.decision_id)
    mine = (e for e in entries if e.get("claim") == claim and e.get("part") == part.name)
    return next((e for e in mine if decision_digest(e.get("decision")) == digest), None)


def part_mark(entries: Sequence[Mapping[str, Any]], claim: str, part: Part) -> str:
    """Return the first screen's calibration mark of ``part`` (``entries``: ``calibration_entries``, latest first)."""
    if errors := [e["error"] for e in entries if "error" in e]:
        return f"calibration record unreadable: {errors[0]}"
    if not part.decision_id:
        return "uncalibrated (no decision declared)"
    if (entry := entry_of(entries, claim, part)) is not None:
        return str(entry.get("summary", entry.get("status", "")))
    if any(e.get("claim") == claim and e.get("part") == part.name for e in entries):
        return "uncalibrated (changed since)"
    return "uncalibrated (no calibration recorded)"
