"""Compare a run with a baseline run on the same units: verdicts, pass counts, and every statistic seed by seed.

Values are paired by test, label and unit and tested by ``claimcheck.gate.paired`` against a margin, worse
decided at a family-wise ``ALPHA`` (Holm); docs/report.md ("The baseline gate", "Margins") gives the rules.
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from claimcheck.decide.stats import spread
from claimcheck.decide.verdicts import ClaimResult, ControlResult, PartResult, Point, StatKey, Verdict, unit_values
from claimcheck.decide.verdicts import UnitValues as Values
from claimcheck.errors import ConfigError
from claimcheck.gate.paired import (
    ALPHA,
    POWER,
    Movement,
    PairedTest,
    detectable,
    drawn_anew,
    holm,
    pair_correlation,
    paired_test,
    spread_sd,
    units_to_decide,
)
from claimcheck.gate.tolerance import DEFAULT_TOLERANCE, Tolerance
from claimcheck.protocol.spec import ClaimProtocol
from claimcheck.provenance.environment import hardware_key
from claimcheck.provenance.expectations import RANK, relative
from claimcheck.report.markdown import code, md, table_lines
from claimcheck.report.rundata import RunData

MARGIN_SPREAD = 0.5  # default margin: half the baseline's seed-to-seed standard deviation
FLOAT_FLOOR = 1e-9  # the margin is at least this times the statistic's largest |value| (float noise)
LOG_SPAN = 100.0  # a positive statistic whose baseline values span more than this ratio is compared on log10
MARGINS_INI = "claim_baseline_margins"  # the ini option that sets margins per statistic
Margins = Mapping[str, float] | None  # CLAIM.name -> margin, from MARGINS_INI


@dataclass(frozen=True)
class VerdictChange:
    """A claim whose verdict differs from the baseline's."""

    claim_id: str
    before: str
    after: str

    @property
    def regression(self) -> bool:  # a claim that reproduced no longer does
        return self.before == Verdict.REPRODUCED.value and self.after != self.before

    @property
    def worse(self) -> bool:
        return self.before in RANK and self.after in RANK and RANK[self.after] < RANK[self.before]

    @property
    def better(self) -> bool:
        return self.before in RANK and self.after in RANK and RANK[self.after] > RANK[self.before]


@dataclass(frozen=True)
class PassChange:
    """One part's (or control's) pass count in the baseline and now, with the units that flipped."""

    claim_id: str
    part: str  # "claim" for a one-part claim; "control: <name>" for a control
    before: tuple[int, int]  # (passed, counted)
    after: tuple[int, int]
    lost: tuple[str, ...] = ()  # units that passed in the baseline and fail now
    gained: tuple[str, ...] = ()  # units that failed in the baseline and pass now

    @property
    def changed(self) -> bool:
        return self.before != self.after or bool(self.lost or self.gained)

    @property
    def flips(self) -> str:  # e.g. "lost: 211004; gained: 3"; "" when no unit flipped
        return "; ".join(f"{w}: {', '.join(u)}" for w, u in (("lost", self.lost), ("gained", self.gained)) if u)

    def describe(self) -> str:
        """Return e.g. ``C1: 29/29 -> 28/29 (lost: 211004)``."""
        part = "" if self.part == "claim" else f" {self.part}"
        flips = f" ({self.flips})" if self.flips else ""
        return f"{self.claim_id}{part}: {self.before[0]}/{self.before[1]} -> {self.after[0]}/{self.after[1]}{flips}"


@dataclass(frozen=True)
class StatChange:
    """One statistic in the baseline and now: medians, the paired test, and the bit-identity check."""

    claim_id: str
    statistic: str
    part: str
    control: str | None
    direction: str  # the claim's direction for this statistic
    before: float  # median over units
    after: float
    test: PairedTest | None  # None: not paired (no shared units)
    margin_source: str  # "protocol", "0.5 x baseline SD", "baseline interval", "float floor", ""
    movement: Movement | None  # after the family-wise adjustment; None when not paired
    differ: int = 0  # values not equal to the baseline's within the exact check's tolerance
    values: int = 0  # values compared by the exact check
    max_relative: float = 0.0  # the largest relative difference of a value (inf if one side is not finite)
    log: bool = False  # compared on log10 (a positive statistic spanning orders of magnitude)
    detectable: float = math.nan  # the true mean change shown beyond the margin with probability POWER, these units
    units_to_decide: int | None = None  # undecided: the units that would decide it at the measured change and SD
    looks: int = 1  # K, the looks the gate may take at it (a baseline with a reserve): each at ALPHA / K
    pairing: float = math.nan  # the values' correlation over the units: ~1 the same draws, ~0 drawn anew
    spread_ratio: float = math.nan  # the values' SD after / before over the same units

    @property
    def pairing_lost(self) -> bool:
        return drawn_anew(self.pairing, self.spread_ratio)

    @property
    def worse(self) -> bool:
        return self.movement is Movement.WORSE

    @property
    def name(self) -> str:
        return stat_name(self.part, self.control, self.statistic)

    @property
    def key(self) -> str:  # CLAIM.name, the name claim_baseline_margins sets a margin by
        return f"{self.claim_id}.{self.name}"

    def describe(self) -> str:
        """Return e.g. ``C1 s: mean change +0.5 [0.4, 0.6] per unit, margin 0.1 (worse beyond margin)``."""
        t = self.test
        if t is None:
            return f"{self.claim_id} {self.name}: median {self.before:.4g} -> {self.after:.4g} (not paired)"
        interval = f" [{t.low:+.3g}, {t.high:+.3g}]" if math.isfinite(t.low) else ""
        what = self.movement.value if self.movement else "not paired"
        lost = f"; pairing lost: correlation {self.pairing:.2f} over the units" if self.pairing_lost else ""
        return (
            f"{self.claim_id} {self.name}: median {self.before:.4g} -> {self.after:.4g}, mean paired change "
            f"{'of log10 ' if self.log else ''}"
            f"{t.mean:+.3g}{interval} over {t.n} units, margin {t.margin:.3g} ({what}){lost}"
        )


@dataclass
class Comparison:
    """The result of comparing a run with a baseline."""

    baseline: str  # where the baseline came from
    same_hardware: bool
    tolerance: float  # the bit-identity check's relative tolerance that applied
    verdicts: list[VerdictChange] = field(default_factory=list)
    passes: list[PassChange] = field(default_factory=list)
    stats: list[StatChange] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # claims or statistics only one side has
    missing_claims: list[str] = field(default_factory=list)  # in the baseline, but not run (or SKIPPED) now
    extra_claims: list[str] = field(default_factory=list)  # run now, but not in the baseline (or SKIPPED there)
    not_compared: list[str] = field(default_factory=list)  # of claims on both sides: what could not be paired

    @property
    def differences(self) -> list[str]:
        """Return one sentence per statistic with a value that is not the baseline's (``--claim-baseline-exact``)."""
        out = [f"{v.claim_id}: {v.before} -> {v.after}" for v in self.verdicts]
        return out + [
            f"{s.claim_id} {s.name}: {s.differ} of {s.values} values differ from the baseline's "
            f"(largest relative difference {s.max_relative:.3g})"
            for s in self.stats
            if s.differ
        ]

    def draws_changed(self) -> dict[str, tuple[int, int]]:
        """Return {claim: (statistics whose pairing is lost, statistics where it could be told)} where most lost it."""
        told: dict[str, list[bool]] = defaultdict(list)
        for s in self.stats:
            if not math.isnan(s.pairing):
                told[s.claim_id].append(s.pairing_lost)
        return {c: (sum(v), len(v)) for c, v in told.items() if 2 * sum(v) > len(v)}

    def skip(self, why: str) -> None:
        """Record what of claims on both sides was not compared: in ``missing`` and ``not_compared``."""
        self.missing.append(why)
        self.not_compared.append(why)

    def counts(self) -> dict[str, int]:
        out = {m.value: 0 for m in Movement} | {"not paired": 0}
        for s in self.stats:
            out[s.movement.value if s.movement else "not paired"] += 1
        return out


def stat_name(part: str, control: str | None, statistic: str) -> str:
    if control:
        return f"{statistic} (control: {control})"
    return f"{part}: {statistic}" if part else statistic


def check_margins(margins: Mapping[str, float], baseline: RunData, option: str = f"ini {MARGINS_INI}") -> None:
    """Raise ConfigError naming ``option`` when a margin names a statistic the baseline did not record."""
    known = {f"{r.claim_id}.{stat_name(*key)}" for r in baseline.results() for key in unit_values(r)}
    for name in margins:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"{option}: {name!r} names no statistic of the baseline; give CLAIM.statistic as the comparison's "
                f"table names it (with 'part: ' or ' (control: ...)' where it shows them){hint}"
            )


def _direction(r: ClaimResult, key: StatKey) -> str:
    for t in r.tests:
        for c in t.record.checks if t.record else ():
            if (c.control, c.statistic) == key[1:]:
                return c.direction
    return "<="


def _declared_margin(protocol: ClaimProtocol | None, key: StatKey) -> float | None:
    if protocol is None or not protocol.declared:
        return None
    try:
        stat = protocol.part(key[0]).stat(key[2])
    except Exception:
        return None
    return None if stat is None else stat.margin


def _margin(
    declared: float | None, base: dict[tuple[str, str, str, int], Point], declared_by: str = "protocol"
) -> tuple[float, str]:
    floor = FLOAT_FLOOR * max((abs(v) for v, _, _ in base.values() if math.isfinite(v)), default=0.0)
    if declared is not None:
        return max(declared, floor), declared_by
    by_label: dict[str, list[float]] = defaultdict(list)
    for (_, label, _, _), (v, _, _) in base.items():
        by_label[label].append(v)
    sd = spread_sd(list(by_label.values()))
    if math.isfinite(sd) and sd > 0 and MARGIN_SPREAD * sd > floor:
        return MARGIN_SPREAD * sd, f"{MARGIN_SPREAD:g} x baseline SD"
    if len(base) == 1:
        ((_, low, high),) = base.values()
        if low is not None and high is not None and math.isfinite(high - low) and (high - low) / 2 > floor:
            return (high - low) / 2, "baseline interval"
    return floor, "float floor"


def _halfwidths(a: Point, b: Point) -> tuple[float, float] | None:
    return None if None in (*a[1:], *b[1:]) else ((a[2] - a[1]) / 2, (b[2] - b[1]) / 2)  # type: ignore[operator]


def compare_stat(
    cid: str,
    key: StatKey,
    values: tuple[Values, Values],
    direction: str,
    protocols: Sequence[ClaimProtocol | None],
    tol: float,
    user_margin: float | None = None,
    looks: int = 1,
) -> tuple[StatChange, PairedTest | None]:
    """Compare one statistic: ``values`` are (now, baseline); the first of ``protocols`` to declare a margin gives it.

    With K ``looks`` the margin is the baseline's over all its values, fixed before any look.
    """
    a, b = values
    shared = [k for k in b if k in a]
    med_b, med_a = (spread([v for v, _, _ in d.values()]).median for d in (b, a))
    rels = [relative(b[k][0], a[k][0]) for k in shared] or [relative(med_b, med_a)]  # unpaired: the medians
    test, pairing, ratio, source, log = None, math.nan, math.nan, "", False
    if shared:
        by = f"ini {MARGINS_INI}" if user_margin is not None else "protocol"
        declared = next(
            (m for m in (user_margin, *(_declared_margin(p, key) for p in protocols)) if m is not None), None
        )
        log = declared is None and _log_scale([b[k][0] for k in shared], [a[k][0] for k in shared])
        base, cur = ({k: _log10(p) for k, p in d.items()} if log else d for d in (b, a))
        margin, source = _margin(declared, base if looks > 1 else {k: base[k] for k in shared}, by)
        halves = _halfwidths(base[shared[0]], cur[shared[0]]) if len(shared) == 1 else None
        before, after = [base[k][0] for k in shared], [cur[k][0] for k in shared]
        pairing, ratio = pair_correlation(before, after)
        sign = (
            1 if (direction in ("<=", "<")) != (key[1] is not None) else -1
        )  # +1: larger is worse (a control: smaller)
        test = paired_test(before, after, margin, sign, halfwidths=halves, looks=looks)
    change = StatChange(
        cid, key[2], key[0], key[1], direction, med_b, med_a, test, source, None,
        sum(r > tol for r in rels), len(shared) or 1, max(rels), log, pairing=pairing, spread_ratio=ratio,
    )  # fmt: skip
    return change, test


def _log_scale(before: list[float], after: list[float]) -> bool:
    base = [v for v in before if math.isfinite(v)]
    return bool(base) and all(v > 0 for v in before + after if math.isfinite(v)) and max(base) > LOG_SPAN * min(base)


def _log10(p: Point) -> Point:
    value, low, high = p
    logged = math.log10(value) if value > 0 else (math.inf if value == math.inf else math.nan)
    return (
        (logged, None, None) if low is None or high is None or low <= 0 else (logged, math.log10(low), math.log10(high))
    )


def _pass_changes(cid: str, now: ClaimResult, before: ClaimResult) -> list[PassChange]:
    def entries(r: ClaimResult) -> dict[str, PartResult | ControlResult]:
        out: dict[str, PartResult | ControlResult] = {(p.name or "claim"): p for p in r.parts if p.rule != "estimate"}
        out |= {f"control: {c.name}": c for c in r.controls if c.rate is not None}
        return out

    a, b = entries(now), entries(before)
    out = []
    for name in [k for k in b if k in a]:
        ua, ub = ({u.unit: u.passed for u in r[name].units if not u.excluded} for r in (a, b))
        lost = tuple(u for u in ub if ub[u] and u in ua and not ua[u])
        gained = tuple(u for u in ub if not ub[u] and ua.get(u))
        out.append(PassChange(cid, name, (sum(ub.values()), len(ub)), (sum(ua.values()), len(ua)), lost, gained))
    return out


def compare(
    current: RunData, baseline: RunData, source: str, tolerance: Tolerance = DEFAULT_TOLERANCE, margins: Margins = None
) -> Comparison:
    """Compare every claim, pass count and statistic of ``current`` with ``baseline`` (see the module).

    ``margins`` (``CLAIM.name`` -> margin) win over the protocol's. Power is stated at Holm's first
    step (ALPHA / the statistics compared), so each statistic is at least that likely to be shown.
    """
    margins = margins or {}
    same = hardware_key(current.env) == hardware_key(baseline.env)
    tol = tolerance.same if same else tolerance.cross
    comp = Comparison(baseline=source, same_hardware=same, tolerance=tol)
    now = {r.claim_id: r for r in current.results()}
    before = {r.claim_id: r for r in baseline.results()}
    current_reserve, baseline_reserve = ({n: g.checks for n, g in r.gate_units.items()} for r in (current, baseline))
    tests: list[PairedTest | None] = []
    skipped = Verdict.SKIPPED
    drawn = _other_block(current, baseline)
    for cid in sorted(set(now) | set(before)):
        new, old = now.get(cid), before.get(cid)
        if cid in current.not_run and old is not None:  # a claim this run did not finish says nothing of the code
            comp.skip(f"{cid}: did not finish in this run (interrupted, or a test of it left out): not compared")
            continue
        if new is None or old is None:
            comp.missing.append(f"{cid}: only in {'this run' if new is not None else 'the baseline'}")
            (comp.extra_claims if new is not None else comp.missing_claims).append(cid)
            if new is not None and new.verdict is not skipped:  # as a statistic on one side only: not compared
                comp.not_compared.append(f"{cid}: only in this run (the baseline does not hold it)")
            continue
        if new.verdict is skipped and old.verdict is not skipped:
            comp.missing_claims.append(cid)
        elif old.verdict is skipped and new.verdict is not skipped:
            comp.extra_claims.append(cid)
        if new.verdict != old.verdict:
            comp.verdicts.append(VerdictChange(cid, old.verdict.value, new.verdict.value))
        if drawn:  # other seeds: no unit pairs, so only the verdicts say anything
            comp.skip(f"{cid}: {drawn}: other seeds, so no statistic or pass count is compared (verdicts only)")
            continue
        comp.passes += _pass_changes(cid, new, old)
        a, b = unit_values(new, current_reserve), unit_values(old, baseline_reserve)
        looks, protocols = _looks(old, baseline), (new.protocol, old.protocol)
        v_new, v_old = (p.version if p is not None else None for p in protocols)
        if None not in (v_new, v_old) and v_new != v_old:
            comp.skip(f"{cid}: the baseline ran protocol v{v_old}, this run v{v_new}: statistics not compared")
            continue
        for key in [*b, *(k for k in a if k not in b)]:
            if key not in a or key not in b:
                side, control = "this run" if key in a else "the baseline", f" (control: {key[1]})" if key[1] else ""
                why = f"{cid} {key[2]}{control}: only in {side} (renamed, or a test missing on one side)"
                comp.missing.append(why)
                if new.verdict is not skipped and old.verdict is not skipped:
                    comp.not_compared.append(why)
                continue
            user, k = margins.get(f"{cid}.{stat_name(*key)}"), looks.get(key, 1)
            change, test = compare_stat(cid, key, (a[key], b[key]), _direction(old, key), protocols, tol, user, k)
            comp.stats.append(replace(change, looks=k))
            tests.append(test)
    worse = holm([t.p_worse if t else math.nan for t in tests], ALPHA)
    better = holm([t.p_better if t else math.nan for t in tests], ALPHA)
    share = ALPHA / max(1, sum(not math.isnan(t.p_worse) for t in tests if t))  # Holm's first step
    comp.stats = [_powered(replace(s, movement=t.movement(w, b)), t, share) if t else s
                  for s, t, w, b in zip(comp.stats, tests, worse, better, strict=True)]  # fmt: skip
    return comp


def _other_block(now: RunData, before: RunData) -> str:
    """Return how the two runs' seed blocks differ, "" when they are the same (a field unrecorded on a side: same)."""
    drawn = zip(("budget", "base seed", "pool"), now.drawn(), before.drawn(), strict=True)
    differ = [(n, b, a) for n, a, b in drawn if a and b and a != b]
    if not differ:
        return ""
    then, here = (", ".join(f"{n} {d[k]}" for n, *d in differ) for k in (0, 1))
    return f"the baseline drew {then}; this run {here}"


def _looks(before: ClaimResult, baseline: RunData) -> dict[StatKey, int]:
    """Return K per statistic: the most looks the baseline's reserve lets the gate take at a test recording it."""
    out: dict[StatKey, int] = {}
    for t in before.tests:
        reserve = baseline.gate_units.get(t.nodeid)
        k = max(1, len(reserve.looks)) if reserve is not None else 1
        checks = [*(t.record.checks if t.record else ()), *(reserve.checks if reserve else ())]
        for key in {(c.part, c.control, c.statistic) for c in checks}:
            out[key] = max(out.get(key, 1), k)
    return out


def _powered(s: StatChange, t: PairedTest, share: float) -> StatChange:
    """Return ``s`` with its detectable change and, when undecided, the units that decide it (at the last look)."""
    found = detectable(t.sd, t.n, t.margin, share / s.looks) if t.n >= 1 else math.nan
    undecided = s.movement is Movement.UNDECIDED
    need = units_to_decide(t, share / s.looks, alpha_equivalent=ALPHA / s.looks) if undecided else None
    return replace(s, detectable=found, units_to_decide=need)


_ORDER = {Movement.WORSE: 0, Movement.BETTER: 1, Movement.UNDECIDED: 2, None: 3, Movement.EQUIVALENT: 4}


def _stat_row(s: StatChange) -> list[str]:
    t = s.test
    if t is None:
        change, units, margin, outcome = "not paired", "0", "", "not paired"
    else:
        interval = f" [{t.low:+.3g}, {t.high:+.3g}]" if math.isfinite(t.low) else ""
        change = "identical" if t.identical else f"{t.mean:+.3g}{interval}" if math.isfinite(t.mean) else "n/a"
        change += " (log10)" if s.log and not t.identical else ""
        units = f"{t.n}" + (f" (+{t.left_out} not finite)" if t.left_out else "")
        units += f" (+{t.unfinite} not finite on both sides)" if t.unfinite else ""
        margin = f"{t.margin:.3g} ({s.margin_source})"
        outcome = s.movement.value if s.movement else ""
        outcome = f"**{outcome}**" if s.movement in (Movement.WORSE, Movement.BETTER) else outcome
    sees = f"±{s.detectable:.3g}" if math.isfinite(s.detectable) else ""
    sees = "none: too few units" if math.isinf(s.detectable) else sees
    need = "" if s.movement is not Movement.UNDECIDED else f"{s.units_to_decide}" if s.units_to_decide else "unknown"
    medians = [f"{s.before:.4g}", f"{s.after:.4g}"]
    return [md(s.claim_id), md(s.name), *medians, change, units, md(margin), sees, need, outcome]


_STAT_HEAD = ["claim", "statistic", "baseline median", "now median", "mean paired change [90%]", "units", "margin"]
_STAT_HEAD += [f"shown at {POWER:.0%}", "units to decide", "outcome"]


def render_comparison(comp: Comparison) -> str:
    """Return a markdown section: verdict changes, pass counts that moved, statistics worse/better/undecided first."""
    where = "same hardware" if comp.same_hardware else "different hardware"
    n_tested = sum(s.test is not None for s in comp.stats)
    parts = [
        "## Comparison with baseline",
        "",
        f"Baseline: {code(comp.baseline)} ({where}). Each statistic is compared unit by unit (the same seeds): "
        "the mean paired change now - baseline with its 90% interval, against an equivalence margin (the "
        f"protocol's, else {MARGIN_SPREAD:g} x the baseline's seed-to-seed SD). 'Worse beyond margin' is decided "
        f"at a family-wise {ALPHA:.0%} over the {n_tested} statistics compared (Holm), by the paired t-test and "
        "Fisher's sign-flip test together (on n units no change is shown below p = 2^-n), and fails --claim-baseline-"
        "fail, as does a verdict that got worse; an undecided statistic fails it too (--claim-baseline-fail=worse "
        f"accepts undecided). 'Shown at {POWER:.0%}' is the true mean change the gate shows beyond the margin with "
        f"probability at least {POWER:.0%} at these units (at {ALPHA:.0%} / the statistics compared; 'none' when the "
        "units are too few for the sign-flip test to reach it); 'units to decide' is how many units would decide an "
        "undecided statistic if its change and spread stayed as measured.",
        "",
    ]
    changes = [
        f"- {md(v.claim_id)}: {md(v.before)} -> **{md(v.after)}**" + (" (regression)" if v.regression else "")
        for v in comp.verdicts
    ]
    parts += ["**Verdict changes**", "", *changes, ""] if changes else ["No verdict changed.", ""]
    moved = [p for p in comp.passes if p.changed]
    if moved:
        rows = [
            [md(p.claim_id), md(p.part), f"{p.before[0]}/{p.before[1]}", f"{p.after[0]}/{p.after[1]}", md(p.flips)]
            for p in moved
        ]
        headers = ["claim", "part", "baseline", "now", "units that flipped"]
        parts += ["**Pass counts that changed**", "", *table_lines(headers, rows), ""]
    else:
        parts += [f"No pass count changed ({len(comp.passes)} parts and controls).", ""]
    counts = comp.counts()
    parts += ["**Statistics**: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v), ""]
    ordered = sorted(comp.stats, key=lambda s: _ORDER[s.movement])
    shown, hidden = ([s for s in ordered if (s.movement is Movement.EQUIVALENT) is eq] for eq in (False, True))
    if shown:
        parts += [*table_lines(_STAT_HEAD, [_stat_row(s) for s in shown]), ""]
    if hidden:
        parts += [f"<details><summary>{len(hidden)} equivalent statistics</summary>", ""]
        parts += [*table_lines(_STAT_HEAD, [_stat_row(s) for s in hidden]), "", "</details>", ""]
    differ = [s for s in comp.stats if s.differ]
    values = sum(s.values for s in comp.stats)
    tol = "bit for bit" if comp.tolerance == 0 else f"within relative {comp.tolerance:g}"
    parts.append(
        f"Bit identity ({tol}; --claim-baseline-exact fails the session on any): {sum(s.differ for s in differ)} "
        f"of {values} values differ, in {len(differ)} of {len(comp.stats)} statistics."
    )
    if comp.missing_claims:
        parts += ["", f"**Claims of the baseline this run did not compare**: {md(', '.join(comp.missing_claims))}"]
    if comp.extra_claims:
        parts += ["", f"**Claims of this run the baseline lacks**: {md(', '.join(comp.extra_claims))}"]
    if comp.missing:
        parts += ["", "**Not compared**", ""] + [f"- {md(m)}" for m in comp.missing]
    return "\n".join(parts) + "\n"
