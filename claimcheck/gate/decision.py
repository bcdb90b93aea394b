"""Decide the baseline gate from a comparison: PASS, FAIL or UNDECIDED, what makes it so, and the exit status.

docs/report.md ("The baseline gate", "Exit statuses") states the rule and the exit statuses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from claimcheck.decide.verdicts import ClaimResult
from claimcheck.gate.baseline import Comparison, StatChange, render_comparison
from claimcheck.gate.paired import POWER, Movement
from claimcheck.provenance.expectations import RANK, ClaimPin

# pytest uses 0-5, pytest 9 adds 6 (--max-warnings), and 12 is claimcheck's "report not written": 13 and 14 are free
EXIT_WORSE = 13  # --claim-baseline-fail: a statistic worse beyond its margin, or a verdict that fell
EXIT_UNDECIDED = 14  # --claim-baseline-fail: something the gate could not decide, or could not see
FAIL_MODES = ("all", "worse")  # all: worse and undecided fail; worse: only worse (and what the gate cannot see)
NAMED = 3  # statistics named on the gate's line
LISTED = 12  # undecided statistics listed one per line before "and N more"


class Status(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNDECIDED = "UNDECIDED"


def _p_worse(s: StatChange) -> float:
    p = s.test.p_worse if s.test is not None else math.nan
    return 1.0 if math.isnan(p) else p


@dataclass(frozen=True)
class Gate:
    """The gate's outcome, its counts, and the sentences that say what fails and what is undecided."""

    status: Status
    equivalent: int
    worse: int
    better: int
    undecided: int  # undecided or not paired
    compared: int  # statistics compared
    failing: tuple[str, ...]  # one sentence per verdict or statistic that is worse
    open: tuple[str, ...]  # one sentence per undecided statistic, most nearly worse first
    named: tuple[str, ...]  # the statistics named on the line: the worst, else the most nearly worse undecided
    missing_claims: tuple[str, ...] = ()  # in the baseline, not compared in this run
    extra_claims: tuple[str, ...] = ()  # in this run, not in the baseline
    pinned: int = 0  # deviations from the baseline's pinned verdicts (parts, controls) that are not improvements
    rose: tuple[str, ...] = ()  # verdicts that got better: reported, never failed
    not_compared: tuple[str, ...] = ()  # statistics one side lacks, claims under another protocol version
    kind: str = ""  # what changed: "maths changed", "draws changed", "numerics changed" or "nothing beyond margins"
    drawn: tuple[str, ...] = ()  # one sentence per claim whose draws changed (pairing lost), with the units to decide

    @property
    def blind(self) -> bool:
        return bool(self.missing_claims) or bool(self.not_compared) or self.compared == 0

    def exit_code(self, mode: str) -> int:
        if mode not in FAIL_MODES:
            return 0
        if self.status is Status.FAIL:
            return EXIT_WORSE
        if self.status is Status.UNDECIDED and (mode == "all" or self.blind):
            return EXIT_UNDECIDED
        return 0

    def line(self) -> str:
        """Return ``claim baseline: STATUS — N equivalent, N changed (worse W, better B), N undecided[; worst: …]``."""
        text = (
            f"claim baseline: {self.status.value} — {self.equivalent} equivalent, {self.worse + self.better} changed "
            f"(worse {self.worse}, better {self.better}), {self.undecided} undecided"
        )
        if self.named:
            text += f"; {'worst' if self.worse else 'nearest to worse'}: {', '.join(self.named)}"
        if self.kind in ("draws changed", "numerics changed"):  # what the other outcomes say already
            where = f" in {', '.join(d.split(':', 1)[0] for d in self.drawn)}" if self.drawn else ""
            text += f"; {self.kind}{where}"
        return text

    def details(self) -> list[str]:
        out = [f"worse: {f}" for f in self.failing]
        if self.pinned:
            out.append(f"worse: {self.pinned} part or control verdicts deviate from the baseline's (listed above)")
        if self.compared == 0:
            out.append(
                "undecided: 0 statistics compared: the baseline shares no recorded statistic with this run "
                "(a baseline of another claim set?)"
            )
        out += [f"draws changed: {d}" for d in self.drawn]
        out += [f"missing: {c} is in the baseline but not in this run (or SKIPPED)" for c in self.missing_claims]
        out += [f"missing: not compared: {c}" for c in self.not_compared[:LISTED]]
        if len(self.not_compared) > LISTED:
            out.append(f"missing: and {len(self.not_compared) - LISTED} more not compared (the report lists them)")
        out += [f"undecided: {u}" for u in self.open[:LISTED]]
        if len(self.open) > LISTED:
            out.append(f"undecided: and {len(self.open) - LISTED} more (the report lists them)")
        out += [f"not compared: {c} is in this run but not in the baseline" for c in self.extra_claims]
        out += [f"better (fails nothing): {r}" for r in self.rose]
        return out

    def consequence(self, mode: str) -> str:
        code = self.exit_code(mode)
        if mode not in FAIL_MODES:
            return "not held: add --claim-baseline-fail to fail the session on it"
        if code == EXIT_WORSE:
            return f"fails --claim-baseline-fail (exit status {EXIT_WORSE}: worse)"
        if code == EXIT_UNDECIDED:
            why = "the gate could not see every baseline claim and statistic" if self.blind else "undecided"
            loose = "" if self.blind else "; --claim-baseline-fail=worse accepts undecided statistics"
            return f"fails --claim-baseline-fail (exit status {EXIT_UNDECIDED}: {why}){loose}"
        if self.status is Status.UNDECIDED:
            return "passes --claim-baseline-fail=worse, which accepts undecided statistics"
        return "passes --claim-baseline-fail"

    def to_dict(self, comp: Comparison, mode: str) -> dict[str, Any]:
        """Return the gate and every statistic's outcome, margin and power (the JSON sidecar's)."""
        return {
            "status": self.status.value, "kind": self.kind,
            "draws_changed": {c: {"pairing_lost": n, "told": m} for c, (n, m) in comp.draws_changed().items()},
            "line": self.line(), "details": self.details(), "mode": mode, "exit_status": self.exit_code(mode),
            "consequence": self.consequence(mode), "baseline": comp.baseline, "power": POWER,
            "counts": {k: getattr(self, k) for k in ("equivalent", "worse", "better", "undecided", "compared")},
            "missing_claims": list(self.missing_claims), "not_compared": list(self.not_compared),
            "extra_claims": list(self.extra_claims), "statistics": [_stat_dict(s) for s in comp.stats],
            "section": render_comparison(comp),  # the report's section, as the session wrote it (``render`` reads it)
        }  # fmt: skip


def _outcome(s: StatChange) -> str:
    if s.movement in (Movement.WORSE, Movement.BETTER):
        return "changed"
    return "equivalent" if s.movement is Movement.EQUIVALENT else "undecided"


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _stat_dict(s: StatChange) -> dict[str, Any]:
    t = s.test
    return {
        "name": s.key, "claim": s.claim_id, "statistic": s.statistic, "part": s.part, "control": s.control,
        "outcome": _outcome(s), "movement": s.movement.value if s.movement else "not paired",
        "units": t.n if t else 0, "not_finite_both": t.unfinite if t else 0,
        "not_finite_changed": t.left_out if t else 0,
        "mean_change": _number(t.mean) if t else None, "low": _number(t.low) if t else None,
        "high": _number(t.high) if t else None, "sd": _number(t.sd) if t else None,
        "margin": t.margin if t else None, "margin_source": s.margin_source, "log10": s.log,
        "detectable": _number(s.detectable), "units_to_decide": s.units_to_decide, "looks": s.looks,
        "pairing": _number(s.pairing),
    }  # fmt: skip


def _short(s: StatChange) -> str:
    t = s.test
    if t is None or not math.isfinite(t.mean):
        return f"{s.claim_id} {s.name}"
    return f"{s.claim_id} {s.name} ({t.mean:+.3g} vs margin {t.margin:.3g})"


def _open(s: StatChange) -> str:
    if s.test is None:
        return s.describe()
    need = f"about {s.units_to_decide} units would decide it" if s.units_to_decide else "no number of units decides it"
    return f"{s.describe()}; {need} at this change and spread"


def _drawn(comp: Comparison, claim: str, lost: int, told: int) -> str:
    open_ = [s for s in comp.stats if s.claim_id == claim and s.movement in (Movement.UNDECIDED, None)]
    need = max((s.units_to_decide for s in open_ if s.units_to_decide), default=None)
    shared = max((s.test.n for s in open_ if s.test is not None), default=0)
    if not open_:
        what = "every statistic is decided as it stands"
    elif need is None or not shared:
        what = f"{len(open_)} statistics undecided; no number of units decides the widest at this change and spread"
    else:
        cap = math.ceil(need / shared)
        what = (
            f"{len(open_)} statistics undecided; about {need} units would decide the widest at this change and spread "
            f"(a baseline and a run with --claim-gate-cap {cap} record {cap}x the {shared} units compared)"
        )
    return (
        f"{claim}: pairing lost in {lost} of {told} statistics (each unit's two values differ as much as two "
        f"units' do: the edit drew other numbers from the same seeds, so the paired tests are as wide as unpaired "
        f"ones); {what}"
    )


def _kind(failing: bool, drawn: Mapping[str, Any], same_hardware: bool) -> str:
    if failing or drawn:
        return "maths changed" if failing else "draws changed"
    return "nothing beyond margins" if same_hardware else "numerics changed"


def judge(comp: Comparison, pinned: int = 0) -> Gate:
    """Return the gate's outcome of ``comp``; ``pinned`` counts deviations from the baseline's pinned verdicts.

    "Draws changed" is said, with the units that would decide, and decides nothing (docs/report.md).
    """
    worse, better, equivalent, undecided = (
        sorted((s for s in comp.stats if s.movement in these), key=_p_worse)
        for these in ((Movement.WORSE,), (Movement.BETTER,), (Movement.EQUIVALENT,), (Movement.UNDECIDED, None))
    )
    drawn = comp.draws_changed()
    fell = [f"{v.claim_id}: {v.before} -> {v.after}" for v in comp.verdicts if v.worse]
    failing = (*fell, *(s.describe() for s in worse))
    if failing or pinned:
        status = Status.FAIL
    elif undecided or comp.missing_claims or comp.not_compared or not comp.stats:
        status = Status.UNDECIDED
    else:
        status = Status.PASS
    named = [_short(s) for s in (worse or undecided)[:NAMED]]
    return Gate(
        status, len(equivalent), len(worse), len(better), len(undecided), len(comp.stats),
        failing, tuple(_open(s) for s in undecided), tuple(named),
        tuple(comp.missing_claims), tuple(comp.extra_claims), pinned,
        tuple(f"{v.claim_id}: {v.before} -> {v.after}" for v in comp.verdicts if v.better),
        tuple(comp.not_compared), _kind(bool(failing or pinned), drawn, comp.same_hardware),
        tuple(_drawn(comp, c, *n) for c, n in drawn.items()),
    )  # fmt: skip


def improved_only(result: ClaimResult, pin: ClaimPin) -> bool:
    """Return True when a claim differs from its pinned verdicts only by improving (a changed control never does)."""

    def up(now: str, before: str) -> bool:
        return now == before or (now in RANK and before in RANK and RANK[now] > RANK[before])

    if not up(result.verdict.value, pin.verdict):
        return False
    parts = {p.name or "claim": p.verdict.value for p in result.parts}
    if any(name in parts and not up(parts[name], want) for name, want in pin.parts.items()):
        return False
    return all(c.status == pin.controls.get(c.name, c.status) for c in result.controls)


def held_to_pins(results: Sequence[ClaimResult], pins: Mapping[str, ClaimPin]) -> list[ClaimResult]:
    return [r for r in results if r.claim_id not in pins or not improved_only(r, pins[r.claim_id])]


REPORT_NOT_WRITTEN = 12  # the report could not be written: the verdicts reached the terminal only
_STANDING = (2, 3, 4)  # pytest's interrupted, internal error and usage error: nothing of ours replaces them


def exit_status(pytest_status: int, failing: bool, gate: int = 0, report_failed: bool = False) -> int:
    """Return the session's exit status from every reason it has, by the precedence of docs/report.md's table.

    pytest's 2, 3 and 4 stand; then 12 (``report_failed``); then the gate's 13 or 14 (``gate``), which
    wins over the generic 1 (``failing``, or pytest's 1); else pytest's own status.
    """
    if pytest_status in _STANDING:
        return pytest_status
    if report_failed:
        return REPORT_NOT_WRITTEN
    if gate:
        return gate
    if failing or pytest_status == 1:
        return 1
    return pytest_status
