"""Run a claim test's units in the batches its protocol schedules, and stop once the claim is decided.

``claim_units.batches()`` hands out the seeds of one batch at a time. After each batch it asks
the decision rule (``claimcheck.decide.verdicts.decide``, the function the controller decides with) about
the checks the test has recorded so far, records the look on the ``ClaimRecorder`` (units run, the
batch, the state of every part and control in scope), and stops when every one of them is decided,
or at the cap. The looks travel on the test report, so they reach the controller under
pytest-xdist (a claim test runs wholly on one worker). The decisions stay valid however the test
stops, because a schedule of several looks is decided by anytime-valid tests (``claimcheck.decide.sequential``).

With no schedule at the session's budget there is one batch of every unit, and nothing is recorded.

A test with a ``Reserve`` (``claimcheck.gate.reserve``: the run records one, or its baseline holds one)
goes on past the units its verdict is decided on: once the claim has stopped by its own rule (or
after its one batch), further batches of the reserve's seeds are handed out at the gate's looks,
and what the test records on them is moved to the reserve, out of the verdict's reach. It stops
when the gate is decided, at the reserve's cap, or by the test's own rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from claimcheck.decide.record import ClaimRecorder, Look
from claimcheck.decide.verdicts import ClaimResult, TestOutcome, Verdict, decide
from claimcheck.errors import ConfigError
from claimcheck.protocol.budget import Budget
from claimcheck.protocol.spec import ClaimProtocol

if TYPE_CHECKING:  # a reserve is driven here, made and judged by the gate
    from claimcheck.gate.reserve import Reserve

DECIDED = {
    "REPRODUCED",
    "NOT REPRODUCED",
    "fails as required",
    "passes too often",
    "passes as required",
    "fails too often",
}
FINAL_ONLY_AT_CAP = {"REPRODUCED", "fails as required", "passes as required"}  # bar 1 / max 0: a later unit may undo it


class ClaimUnits:
    """The units of one claim test: its seeds up to the cap, and the looks its protocol schedules.

    ``looks`` holds the number of units after each look, e.g. [10, 20, 30] for batches of 10 up to
    a cap of 30 (``Seeds.looks``). ``on_look(units so far, cap, undecided)``, when set, is told after
    each look that the test goes on (the plugin's progress: a long sequential test is not silent);
    ``undecided`` is False when the claim has stopped and the units go on for the gate's reserve.
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

        The scope is ``parts`` and ``controls`` when given, else every part and control this test
        has recorded a check on. Record each check with ``unit=seed``. A test may also stop early
        by its own rule (``break``): the look is recorded and the decision is as valid as at the cap.
        With a reserve, the batches go on for the gate once the claim has stopped (see the module).
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
                    try:
                        self._look(proto, upto, batch, parts, controls)
                    except ConfigError:
                        pass
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

    Parts and controls this test does not record come out undecided, and still count in the
    claim's multiplicity family (with p-value 1), so whatever a look decides stays decided when
    the controller adds the other tests' evidence.
    """
    outcome = TestOutcome(nodeid, record.claim_id, "", "", "passed", record, protocol=proto.to_dict())
    return decide([outcome], proto)


def shown_below(record: ClaimRecorder) -> bool:
    """Return whether a part of ``record``'s claim is shown below its bar: NOT REPRODUCED whatever follows.

    For a batched claim test that stops there by its own rule (``break``); its decisions stay valid.
    """
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

    A bar-1 part that holds so far (every unit passed), a positive control on one, or a control
    that may pass on no unit and has not yet is decided only at the cap: a later unit could still
    be a counterexample.
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
