"""Compare a run with an earlier one: verdict changes first, then statistics that moved."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from claimcheck.environment import hardware_key
from claimcheck.report import code, md
from claimcheck.rundata import RunData
from claimcheck.verdicts import ClaimResult, StatSummary, Verdict

ABS_FLOOR = 1e-12  # changes are relative to max(|baseline|, ABS_FLOOR)


@dataclass(frozen=True)
class Tolerance:
    """Relative tolerances on a statistic's median: on the same hardware, and across hardware."""

    same: float = 1e-6  # float64 on one machine is reproducible to rounding
    cross: float = 0.05  # another CPU/GPU, BLAS or torch build may reorder sums


DEFAULT_TOLERANCE = Tolerance()


@dataclass(frozen=True)
class VerdictChange:
    """A claim whose verdict differs from the baseline's."""

    claim_id: str
    before: str
    after: str

    @property
    def regression(self) -> bool:
        """Return True when a claim that reproduced no longer does."""
        return self.before == Verdict.REPRODUCED.value and self.after != self.before


@dataclass(frozen=True)
class StatChange:
    """One statistic's median in the baseline and now."""

    claim_id: str
    statistic: str
    control: str | None
    before: float
    after: float
    relative: float  # |after - before| / max(|before|, ABS_FLOOR); inf if one side is not finite
    flagged: bool  # moved by more than the tolerance
    direction: str = "<="  # the claim's direction for this statistic

    @property
    def worse(self) -> bool:
        """Return True when the move goes against the claim: away from its threshold, or a control towards it.

        A claim statistic gets worse when it moves away from where the claim wants it; a control's
        gets worse when it moves towards passing (the check discriminates less). NaN or inf count as worse.
        """
        if not (math.isfinite(self.before) and math.isfinite(self.after)):
            return True
        up = self.after > self.before
        wants_low = self.direction in ("<=", "<")
        claim_worse = up if wants_low else not up
        return claim_worse if self.control is None else not claim_worse

    def describe(self) -> str:
        """Return e.g. ``C1 s: 0.5 -> 0.5005 (got worse)``."""
        how = "got worse" if self.worse else "moved, in the claim's favour"
        return f"{self.claim_id} {self.statistic}{_ctl(self.control)}: {self.before:.6g} -> {self.after:.6g} ({how})"


@dataclass
class Comparison:
    """The result of comparing a run with a baseline."""

    baseline: str  # where the baseline came from
    same_hardware: bool
    tolerance: float  # the tolerance that applied
    verdicts: list[VerdictChange] = field(default_factory=list)
    stats: list[StatChange] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # claims or statistics only one side has

    @property
    def regressions(self) -> list[str]:
        """Return one sentence per change that fails ``--claim-baseline-fail``: a lost verdict, a moved statistic.

        Each statistic says whether it got worse (against the claim's direction) or moved in its favour.
        """
        out = [f"{v.claim_id}: {v.before} -> {v.after}" for v in self.verdicts if v.regression]
        out += [s.describe() for s in self.stats if s.flagged and s.worse]
        out += [s.describe() for s in self.stats if s.flagged and not s.worse]
        return out


def _ctl(control: str | None) -> str:
    return f" (control: {control})" if control else ""


def _relative(before: float, after: float) -> float:
    if math.isnan(before) and math.isnan(after):
        return 0.0
    if before == after:
        return 0.0
    if not (math.isfinite(before) and math.isfinite(after)):
        return math.inf
    return abs(after - before) / max(abs(before), ABS_FLOOR)


def _stats(r: ClaimResult) -> dict[tuple[str | None, str], StatSummary]:
    return {
        (s.control, f"{s.part}: {s.statistic}" if s.part else s.statistic): s for s in r.claim_stats + r.control_stats
    }


def compare(current: RunData, baseline: RunData, source: str, tolerance: Tolerance = DEFAULT_TOLERANCE) -> Comparison:
    """Compare every claim and statistic of ``current`` with ``baseline``."""
    same = hardware_key(current.env) == hardware_key(baseline.env)
    tol = tolerance.same if same else tolerance.cross
    comp = Comparison(baseline=source, same_hardware=same, tolerance=tol)
    now = {r.claim_id: r for r in current.results()}
    before = {r.claim_id: r for r in baseline.results()}
    for cid in sorted(set(now) | set(before)):
        if cid not in now or cid not in before:
            comp.missing.append(f"{cid}: only in {'this run' if cid in now else 'the baseline'}")
            continue
        if now[cid].verdict != before[cid].verdict:
            comp.verdicts.append(VerdictChange(cid, before[cid].verdict.value, now[cid].verdict.value))
        a, b = _stats(now[cid]), _stats(before[cid])
        for key in [*b, *(k for k in a if k not in b)]:
            if key not in a or key not in b:
                comp.missing.append(
                    f"{cid} {key[1]}{_ctl(key[0])}: only in {'this run' if key in a else 'the baseline'}"
                )
                continue
            x, y = b[key].values.median, a[key].values.median
            rel = _relative(x, y)
            comp.stats.append(StatChange(cid, key[1], key[0], x, y, rel, rel > tol, b[key].direction))
    return comp


def render_comparison(comp: Comparison) -> str:
    """Return a markdown section: verdict changes first, then moved statistics, then the rest."""
    where = "same hardware" if comp.same_hardware else "different hardware"
    parts = [
        "## Comparison with baseline",
        "",
        f"Baseline: {code(comp.baseline)} ({where}; relative tolerance {comp.tolerance:g} on medians).",
        "",
    ]
    if comp.verdicts:
        parts += ["**Verdict changes**", ""]
        parts += [
            f"- {md(v.claim_id)}: {v.before} -> **{v.after}**" + (" (regression)" if v.regression else "")
            for v in comp.verdicts
        ]
        parts.append("")
    else:
        parts += ["No verdict changed.", ""]
    moved = sorted(comp.stats, key=lambda s: (not s.flagged, -s.relative if math.isfinite(s.relative) else -1e300))
    rows = [
        f"| {md(s.claim_id)} | {md(s.statistic)}{md(_ctl(s.control))} | {s.before:.6g} | {s.after:.6g} | "
        f"{s.relative:.3g} | {('**got worse**' if s.worse else 'moved (better)') if s.flagged else 'ok'} |"
        for s in moved
    ]
    parts += ["| claim | statistic | baseline | now | relative change | flag |", "|---|---|---|---|---|---|", *rows]
    if comp.missing:
        parts += ["", "**Not compared**", ""] + [f"- {md(m)}" for m in comp.missing]
    return "\n".join(parts) + "\n"
