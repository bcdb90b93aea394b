"""Run a claim test's units in the batches its protocol schedules, and stop once the claim is decided.

After each batch ``claim_units.batches()`` decides the test's checks so far with the controller's own
``decide``, records the look on the ``ClaimRecorder`` and stops when everything in scope is decided, or
at the cap (docs/decisions.md, "Running a claim in batches"). With no schedule there is one batch of
every unit and nothing is recorded. A ``Reserve`` (``claimcheck.gate.reserve``) goes on past the claim's
units for the gate, moving what the test records on them out of the verdict's reach (docs/report.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from claimcheck.decide.record import ClaimRecorder, Look
from claimcheck.decide.verdicts import CANNOT_DISCRIMINATE, ClaimResult, TestOutcome, Verdict, decide
from claimcheck.errors import ConfigError
from claimcheck.protocol.budget import Budget
from claimcheck.protocol.spec import ClaimProtocol

if TYPE_CHECKING:  # a reserve is driven here, made and judged by the gate
    from claimcheck.gate.reserve import Reserve

DECIDED = {"REPRODUCED", "NOT REPRODUCED", "fails as required", "passes as required", *CANNOT_DISCRIMINATE}
FINAL_ONLY_AT_CAP = {"REPRODUCED", "fails as required", "passes as required"}  # bar 1 / max 0: a later unit may undo it


class ClaimUnits:
    """The units of one claim test: its seeds up to the cap, and the units after each look (``Seeds.looks``).

    ``on_look(units so far, cap, undecided)``, when set, is told after each look that the test goes on
    (``undecided`` False: the claim has stopped and the units go on for the gate's reserve).
    """

    def __init__(
        self,
        record: ClaimRecorder,
        seeds: Sequence[int],
        looks: Sequence[int],
        nodeid: str = "",
        reserve: Reserve | None = None,
    ) -> None:
        self.record = record
        self.seeds = list(seeds)
        self.looks = [n for n in looks if n > 0] or [len(self.seeds)]
        self.nodeid = nodeid or record.claim_id
        self.reserve = reserve
        self.on_look: Callable[[int, int, bool], None] | None = None

    @property
    def sequential(self) -> bool:
        """Return whether the protocol allows more than one look at this budget."""
        return len(self.looks) > 1

    def batches(
        self, *, parts: Sequence[str] | None = None, controls: Sequence[str] | None = None
    ) -> Iterator[list[int]]:
        """Yield the seeds of each batch until what is in scope is decided, or the cap is reached.

        The scope is ``parts`` and ``controls`` when given, else every part and control this test has
        recorded a check on (each with ``unit=seed``). A test may stop early by its own rule (``break``).
        """
        proto = self.record.protocol
        reserve = self.reserve
        if proto is None or (not self.sequential and reserve is None):
            yield list(self.seeds)
            return
        if self.sequential:
            self.record.schedule = list(self.looks)
        seeds = self.seeds + (reserve.seeds if reserve is not None else [])
        grid = reserve.looks if reserve is not None else self.looks
        given, claim_open = 0, True
        for i, upto in enumerate(grid):
            batch = seeds[given:upto]
            given = upto
            mark = reserve.mark(self.record) if reserve is not None and not claim_open else None
            try:
                yield batch
            except GeneratorExit:  # the test left the loop (its own stopping rule, or an error)
                if reserve is not None and mark is not None:
                    reserve.take(self.record, mark, batch, upto)
                    reserve.stopped_by_test(i, upto)
                    raise
                if self.sequential:
                    with suppress(ConfigError):
                        self._look(proto, upto, batch, parts, controls)
                    self.record.stopped = f"stopped by the test's own rule after look {i + 1} ({upto} units)"
                if reserve is not None:
                    reserve.stopped_by_test(i, upto)
                raise
            if reserve is not None and mark is not None:
                reserve.take(self.record, mark, batch, upto)
            elif self.sequential:
                state = self._look(proto, upto, batch, parts, controls)
                if _decided(state, proto, last=upto == self.looks[-1]):
                    self.record.stopped = f"decided at look {i + 1} of {len(self.looks)} ({upto} units)"
                    claim_open = False
                elif upto == self.looks[-1]:
                    self.record.stopped = f"cap reached ({upto} units) undecided"
                    claim_open = False
            else:
                claim_open = False
            if not claim_open and (reserve is None or reserve.done(self.record, i, upto)):
                return
            if self.on_look is not None:
                self.on_look(upto, len(seeds), claim_open)

    def _look(
        self,
        proto: ClaimProtocol,
        upto: int,
        batch: list[int],
        parts: Sequence[str] | None,
        controls: Sequence[str] | None,
    ) -> dict[str, str]:
        rec = self.record
        given = {str(s) for s in self.seeds[:upto]}
        stray = sorted({c.unit for c in rec.checks} - given)
        if stray:
            raise ConfigError(
                f"{rec.claim_id}: checks recorded on unit(s) {stray[:3]} that no batch handed out; record each "
                "check of a batched claim test with unit=seed"
            )
        result = look_result(proto, rec, self.nodeid)
        state = _state(result, rec, parts, controls)
        rec.looks.append(Look(upto, [str(s) for s in batch], state))
        return state


def units_for(
    record: ClaimRecorder, seeds: Sequence[int], budget: Budget, reserve: Reserve | None = None
) -> ClaimUnits:
    """Return the units of a claim test: ``seeds`` (the protocol's, up to the cap) in the looks it schedules."""
    return ClaimUnits(record, seeds, claim_looks(record, seeds, budget), reserve=reserve)


def claim_looks(record: ClaimRecorder, seeds: Sequence[int], budget: Budget) -> list[int]:
    """Return the units after each look the claim test's protocol schedules at ``budget`` (one look without one)."""
    proto = record.protocol
    return proto.seeds.looks(budget.name, budget.seeds) if proto is not None else [len(seeds)]


def look_result(proto: ClaimProtocol, record: ClaimRecorder, nodeid: str) -> ClaimResult:
    """Return the claim decided from ``record`` alone, with the controller's own decision function.

    What this test does not record comes out undecided and still counts in the claim's family (p-value 1).
    """
    outcome = TestOutcome(nodeid, record.claim_id, "", "", "passed", record, protocol=proto.to_dict())
    return decide([outcome], proto)


def shown_below(record: ClaimRecorder) -> bool:
    """Return whether a part of ``record``'s claim is shown below its bar: NOT REPRODUCED whatever follows."""
    if record.protocol is None:
        return False
    result = look_result(record.protocol, record, record.claim_id)
    return any(p.verdict is Verdict.NOT_REPRODUCED for p in result.parts)


def _state(
    result: ClaimResult, rec: ClaimRecorder, parts: Sequence[str] | None, controls: Sequence[str] | None
) -> dict[str, str]:
    seen_parts = {c.part for c in rec.checks if c.control is None}
    seen_controls = {c.control for c in rec.checks if c.control is not None}
    want_parts = set(parts) if parts is not None else seen_parts
    want_controls = set(controls) if controls is not None else seen_controls
    state = {_name("part", p.name): p.verdict.value for p in result.parts if p.name in want_parts}
    state |= {_name("control", c.name): c.status for c in result.controls if c.name in want_controls}
    for name in want_controls - {c.name for c in result.controls}:
        state[_name("control", name)] = "undecided"
    return state


def _name(kind: str, name: str) -> str:
    return f"{kind} {name}" if name else "claim"


def _decided(state: dict[str, str], proto: ClaimProtocol, last: bool) -> bool:
    """Return whether every entry of ``state`` is decided for good.

    A bar-1 part that holds so far, a positive control on one, or a control that may pass on no unit
    and has not yet is decided only at the cap: a later unit could still be a counterexample.
    """
    if not state:
        return False
    bar_one = {p.name for p in proto.parts if p.bar >= 1}
    final_at_cap = {_name("part", name) for name in bar_one}
    final_at_cap |= {  # a positive control on a bar-1 part holds like the part; a negative one may pass on no unit
        _name("control", c.name)
        for c in proto.controls
        if (c.part in bar_one if c.kind == "positive" else c.max_pass_rate <= 0)
    }
    for name, value in state.items():
        if value not in DECIDED:
            return False
        if name in final_at_cap and value in FINAL_ONLY_AT_CAP and not last:
            return False
    return True
