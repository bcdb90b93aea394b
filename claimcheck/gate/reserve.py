"""Let the baseline gate decide by adding units: its pre-stated looks, its reserve of units, and when it stops.

A ``--claim-gate-cap`` baseline records a reserve (``GateUnits``); a run compared with it adds units while
undecided, each look at ALPHA / K, "changed" at ALPHA / M too (docs/report.md, "Deciding by adding units").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from claimcheck.decide.record import Check, ClaimRecorder
from claimcheck.decide.verdicts import record_values, unqualified
from claimcheck.gate.baseline import compare_stat, stat_name
from claimcheck.gate.paired import ALPHA, Movement, PairedTest
from claimcheck.protocol.spec import ClaimProtocol, block_seed
from claimcheck.report.rundata import GateUnits, RunData

CAP_OFF = 1  # --claim-gate-cap 1: no reserve; the gate looks once, at the units the claim ran


def gate_looks(claim_looks: Sequence[int], multiple: int) -> list[int]:
    """Return the units after each look the gate may take: the claim's own looks, then its cap doubled to ``multiple``.

    ``claim_looks`` are the claim test's looks at the budget, e.g. [10, 20, 30] (``Seeds.looks``);
    with ``multiple`` 16 the gate adds 60, 120, 240 and 480. A multiple that is not a power of two
    ends on itself (3: [..., 60, 90]); 1 adds nothing.
    """
    if multiple < CAP_OFF:
        raise ValueError(f"the gate's cap is a multiple >= 1 of the claim's units, got {multiple}")
    looks = [n for n in claim_looks if n > 0]
    if not looks:
        return []
    cap, k = looks[-1], 2
    while k < multiple:
        looks.append(k * cap)
        k *= 2
    if multiple > CAP_OFF:
        looks.append(multiple * cap)
    return looks


def gate_seeds(proto: ClaimProtocol, base: int, budget_index: int, pool: str, first: int, upto: int) -> list[int]:
    start = 0 if pool == "exploratory" else proto.seeds.start
    return [block_seed(base, budget_index, start + i) for i in range(first, upto)]


def family(baseline: RunData) -> int:
    """Return M, the statistics the baseline holds: the most a session can compare, Holm's largest family."""
    held = [{(c.part, c.control, c.statistic) for c in t.record.checks} for t in baseline.tests if t.record is not None]
    return max(1, sum(map(len, held)))


@dataclass(frozen=True)
class Look:
    """The gate's state at one look: each statistic of the test and its outcome so far."""

    units: int
    outcomes: dict[str, str]  # statistic name -> "equivalent", "worse", "better", "undecided", "one pair"

    @property
    def decided(self) -> bool:
        return all(v != "undecided" for v in self.outcomes.values())


class GateCheck:
    """Decide, in the worker, whether a claim test's paired comparison with the baseline is decided at a look."""

    def __init__(
        self,
        baseline: RunData,
        claim_id: str,
        nodeid: str,
        protocol: ClaimProtocol | None,
        margins: Mapping[str, float] | None = None,
        tol: float = 0.0,
    ) -> None:
        self.claim_id, self.protocol, self.tol, self.margins = claim_id, protocol, tol, dict(margins or {})
        self.name = unqualified(nodeid)
        base = next((t for t in baseline.tests if t.claim_id == claim_id and unqualified(t.nodeid) == self.name), None)
        self.nodeid = base.nodeid if base is not None else nodeid
        reserve = baseline.gate_units.get(self.nodeid)
        self.looks = reserve.looks if reserve is not None else []
        checks = [
            *(base.record.checks if base is not None and base.record else ()),
            *(reserve.checks if reserve else ()),
        ]
        self.before = record_values(self.name, checks)
        self.directions = {(c.part, c.control, c.statistic): c.direction for c in checks}
        self.share = ALPHA / family(baseline)

    @property
    def usable(self) -> bool:
        return len(self.looks) > 1

    def look(self, checks: Sequence[Check], units: int) -> Look:
        now = record_values(self.name, checks)
        out: dict[str, str] = {}
        for key, b in self.before.items():
            if not (a := now.get(key)):
                continue
            change, test = compare_stat(
                self.claim_id, key, (a, b), self.directions[key], (self.protocol,), self.tol,
                self.margins.get(f"{self.claim_id}.{stat_name(*key)}"), looks=len(self.looks),
            )  # fmt: skip
            out[change.name] = outcome(test, self.share)
        return Look(units, out)


def outcome(test: PairedTest | None, share: float) -> str:
    """Return what one look says of a statistic: worse or better (beyond ``share``), equivalent, undecided, one pair."""
    if test is None:
        return "undecided"
    if test.n < 2 and not test.identical:
        return "one pair"  # a value measured once per run: no number of units decides it
    if test.p_worse <= share:
        return "worse"
    if test.p_better <= share:
        return "better"
    return "equivalent" if test.movement() is Movement.EQUIVALENT else "undecided"


_Mark = tuple[int, int, int, int]  # the lengths of a record's checks, notes, curves and exclusions


class Reserve:
    """One claim test's units for the gate: the looks it may take past the claim's, its seeds, and when it stops.

    ``to_cap``: record every look to the cap (a run with ``--claim-gate-cap``, which can serve as a
    baseline); otherwise stop at the first look where ``check`` finds the comparison decided.
    """

    def __init__(self, looks: Sequence[int], seeds: Sequence[int], check: GateCheck | None, to_cap: bool) -> None:
        self.looks, self.seeds = list(looks), list(seeds)  # the reserve's seeds, after the claim's own
        self.check, self.to_cap, self.units = check, to_cap, GateUnits(list(looks))
        self.last: Look | None = None

    def mark(self, record: ClaimRecorder) -> _Mark:
        return len(record.checks), len(record.notes), len(record.curves), len(record.exclusions)

    def take(self, record: ClaimRecorder, mark: _Mark, batch: Sequence[int], upto: int) -> None:
        """Move what ``record`` got on ``batch`` (reserve units) into the reserve; drop its notes, curves, exclusions.

        Only checks on the batch's own units are kept (a pooled estimate is the verdict's, not a unit's).
        """
        units, (checks, notes, curves, exclusions) = {str(s) for s in batch}, mark
        self.units.checks += [c for c in record.checks[checks:] if c.unit in units]
        del record.checks[checks:], record.notes[notes:], record.curves[curves:], record.exclusions[exclusions:]
        self.units.units = upto

    def done(self, record: ClaimRecorder, index: int, upto: int) -> bool:
        """Return whether the gate stops after look ``index`` (``upto`` units, the claim's verdict already closed)."""
        self.units.units = max(self.units.units, upto)
        if self.check is not None:
            self.last = self.check.look([*record.checks, *self.units.checks], upto)
        if not self.to_cap and self.last is not None and self.last.decided:
            self.units.stopped = f"decided at look {index + 1} of {len(self.looks)} ({upto} units)"
            return True
        if index < len(self.looks) - 1:
            return False
        what = "reserve recorded to the cap" if self.to_cap else "cap reached"
        self.units.stopped = f"{what} ({upto} units){self._state()}"
        return True

    def stopped_by_test(self, index: int, upto: int) -> None:
        self.units.stopped = f"stopped by the test's own rule after look {index + 1} ({upto} units)" + self._state()

    def _state(self) -> str:
        if self.last is None:
            return ""
        open_ = sorted(name for name, v in self.last.outcomes.items() if v == "undecided")
        return f", {len(open_)} undecided" if open_ else ", every statistic decided"


def reserve_for(
    record: ClaimRecorder,
    nodeid: str,
    claim_looks: Sequence[int],
    multiple: int,
    baseline: RunData | None,
    seeds_after: Callable[[int, int], list[int]],
    margins: Mapping[str, float] | None = None,
    tol: float = 0.0,
) -> Reserve | None:
    """Return a claim test's reserve: the run records one (``multiple`` > 1), or the baseline holds one; else None.

    ``seeds_after(first, upto)`` gives the seeds of offsets ``first`` .. ``upto`` - 1.
    """
    claim_looks = [n for n in claim_looks if n > 0]
    if not claim_looks or record.protocol is None:
        return None
    check = None
    if baseline is not None:
        check = GateCheck(baseline, record.claim_id, nodeid, record.protocol, margins, tol)
        if not (check.usable and check.looks[: len(claim_looks)] == claim_looks):
            check = None
    own = gate_looks(claim_looks, multiple)
    if multiple > CAP_OFF:
        looks = own
    elif check is not None:
        looks = check.looks
    else:
        return None
    return Reserve(looks, seeds_after(claim_looks[-1], looks[-1]), check, multiple > CAP_OFF)
