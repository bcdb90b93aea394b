"""Positive controls: where the claim holds by construction, the check must see it, or the claim is INCONCLUSIVE.

A positive control (``Control(kind="positive")``) is decided as its part would be. Shown to hold,
it passes as required; shown to fail, the instrument is blind and the claim is INCONCLUSIVE (the check ran as
written and cannot see; ERROR is kept for a negative control that passes too often); undecided, a
failing part cannot make the claim NOT REPRODUCED. Decided here through ``verdicts.decide``, the
controller's function, and once from outside with pytester for the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.schedule import ClaimUnits
from claimcheck.decide.verdicts import ClaimResult, TestOutcome, Verdict, decide
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

MEAN = Part("b", "the elasticity is at least 0.5", (Stat("b", ">=", 0.5),), rule="mean", sigma=1.0)
RATE = Part("r", "most units pass", (Stat("r", "<=", 1.0),), bar=0.8)
PROTOCOL = ClaimProtocol(
    "P1",
    1,
    parts=(MEAN, RATE),
    controls=(
        Control("negative", "b", "no effect here", naive="a naive check passes it"),
        Control("sees b", "b", "the effect holds by construction", kind="positive"),
        Control("sees r", "r", "every unit passes by construction", kind="positive"),
    ),
    seeds=Seeds("P1-v1", 1000, {"ci": 20}),
)


def _decide(part_b: Sequence[float], seen_b: Sequence[float] | None, seen_r: Sequence[float]) -> ClaimResult:
    """Decide a claim whose part b records ``part_b``, control "sees b" ``seen_b`` and "sees r" ``seen_r``."""
    rec = ClaimRecorder("P1", protocol=PROTOCOL)
    for u, v in enumerate(part_b):
        rec.check("b", v, part="b", unit=u)
        rec.check("r", 0.0, part="r", unit=u)
        rec.check("b", -1.0 + 0.01 * u, control="negative", unit=u)
    for u, v in enumerate(seen_b or ()):
        rec.check("b", v, control="sees b", unit=u)
    for u, v in enumerate(seen_r):
        rec.check("r", v, control="sees r", unit=u)
    return decide([TestOutcome("t", "P1", "", "", "passed", rec, protocol=PROTOCOL.to_dict())], PROTOCOL)


LOW = [0.01 * u for u in range(20)]  # mean 0.095, far below 0.5
HIGH = [1.0 + 0.01 * u for u in range(20)]  # mean 1.095, far above
SEEN = [0.0] * 20  # every unit meets r <= 1
UNSEEN = [2.0] * 20  # no unit does


def _status(r: ClaimResult, name: str) -> str:
    return next(c.status for c in r.controls if c.name == name)


def test_a_failing_part_is_not_reproduced_when_the_positive_controls_show_the_check_can_see() -> None:
    r = _decide(LOW, HIGH, SEEN)
    assert r.verdict is Verdict.NOT_REPRODUCED
    assert _status(r, "sees b") == "passes as required" and _status(r, "sees r") == "passes as required"
    assert r.family == 5  # two parts, one negative and two positive controls: each a "fails" hypothesis


def test_a_positive_control_shown_to_fail_makes_the_claim_inconclusive() -> None:
    r = _decide(LOW, LOW, SEEN)
    assert r.verdict is Verdict.INCONCLUSIVE
    assert _status(r, "sees b") == "fails too often"
    assert "the instrument is blind: positive control 'sees b'" in r.reason


def test_a_positive_control_on_a_pass_rate_part_is_decided_against_the_parts_bar() -> None:
    r = _decide(HIGH, HIGH, UNSEEN)
    assert _status(r, "sees r") == "fails too often" and r.verdict is Verdict.INCONCLUSIVE
    assert "the instrument is blind" in r.reason
    rate = next(c.rate for c in r.controls if c.name == "sees r")
    assert rate is not None and rate.passed == 0 and rate.n == 20


def test_a_failing_part_without_its_positive_control_shown_passing_is_inconclusive() -> None:
    few = _decide(LOW, HIGH[:1], SEEN)  # one unit: Student-t needs two, so "sees b" is undecided
    assert _status(few, "sees b") == "undecided"
    assert few.verdict is Verdict.INCONCLUSIVE
    assert "positive control 'sees b' is not shown to pass" in few.reason
    absent = _decide(LOW, None, SEEN)  # declared but never recorded
    assert absent.verdict is Verdict.INCONCLUSIVE and "'sees b'" in absent.reason


def test_a_holding_claim_needs_its_positive_controls_shown_passing_too() -> None:
    assert _decide(HIGH, HIGH, SEEN).verdict is Verdict.REPRODUCED
    r = _decide(HIGH, HIGH[:1], SEEN)
    assert r.verdict is Verdict.INCONCLUSIVE and "not yet shown to pass" in r.reason


def test_positive_controls_are_counted_apart_from_the_discriminating_ones() -> None:
    r = _decide(LOW, HIGH, SEEN)
    assert (r.controls_failed, r.controls_total) == (1, 1)
    assert [c.name for c in r.positive_controls] == ["sees b", "sees r"]


def test_an_unknown_kind_of_control_is_refused_naming_the_kinds() -> None:
    with pytest.raises(ConfigError, match=r"kind must be one of .*'positive'"):
        Control("x", "b", "why", kind="checking")  # type: ignore[arg-type]


def test_a_batched_test_stops_once_its_positive_control_passes_as_required() -> None:
    proto = ClaimProtocol(
        "P2",
        1,
        parts=(MEAN,),
        controls=(Control("sees b", "b", "holds by construction", kind="positive"),),
        seeds=Seeds("P2-v1", 1000, {"ci": 40}, batch={"ci": 10}),
    )
    rec = ClaimRecorder("P2", protocol=proto)
    units = ClaimUnits(rec, list(range(40)), proto.seeds.looks("ci", 40))
    for seeds in units.batches(controls=["sees b"]):
        for s in seeds:
            rec.check("b", 3.0, control="sees b", unit=s)
    assert rec.looks[-1].state == {"control sees b": "passes as required"}
    assert rec.stopped.startswith("decided at look")


MODULE = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "P3",
    1,
    parts=(Part("b", "at least 0.5", (Stat("b", ">=", 0.5),), rule="mean", sigma=1.0),),
    controls=(
        Control("negative", "b", "no effect here", naive="a naive check passes it"),
        Control("sees b", "b", "the effect holds by construction", kind="positive"),
    ),
    seeds=Seeds("P3-v1", 1000, {"ci": 12}),
)
CLAIM = pytest.mark.claim("P3", "toy", "Sec. 1", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("b", 0.001 * (s % 7), part="b", unit=s)
            claim_record.check("b", -1.0 - 0.001 * (s % 5), control="negative", unit=s)
            claim_record.check("b", 2.0 + 0.001 * (s % 3), control="sees b", unit=s)
"""


def test_the_report_shows_a_positive_control_and_its_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=MODULE)
    result = pytester.runpytest("--claim-report", "-p", "no:randomly")
    claim = json.loads((pytester.path / "reports" / "claim-report.json").read_text())["claims"][0]
    assert claim["verdict"] == "NOT REPRODUCED", result.stdout.str()
    positive = next(c for c in claim["controls"] if c["name"] == "sees b")
    assert positive["kind"] == "positive" and positive["status"] == "passes as required"
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "1/1 fail as required; positive: 1/1 pass as required" in text
    assert "sees b (positive: holds by construction, must pass)" in text
