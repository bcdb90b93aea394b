"""Comparing runs: tolerances by hardware, verdict changes first, what only one side has."""

from __future__ import annotations

import math

from claimcheck.baseline import Tolerance, compare, render_comparison
from claimcheck.record import ClaimRecorder
from claimcheck.rundata import RunData
from claimcheck.verdicts import TestOutcome


def _run(value: float, cpu: str = "cpu A", control: float = 5.0, claim: str = "C1") -> RunData:
    rec = ClaimRecorder(claim, seed=0)
    rec.check("s", value, "<=", 1.0)
    rec.check("s", control, "<=", 1.0, control="ctl")
    test = TestOutcome(f"t.py::test_{claim}", claim, "title", "src", "passed", rec)
    return RunData("r", {"cpu": cpu, "torch": "2.13"}, [test])


def test_same_hardware_uses_the_tight_tolerance() -> None:
    comp = compare(_run(0.5 * (1 + 1e-3)), _run(0.5), "base.json", Tolerance(same=1e-6, cross=0.05))
    assert comp.same_hardware and comp.tolerance == 1e-6
    assert [s.flagged for s in comp.stats] == [True, False]
    assert comp.regressions == ["C1 s: 0.5 -> 0.5005 (got worse)"]


def test_a_move_in_the_claims_favour_is_not_called_worse() -> None:
    comp = compare(_run(0.4), _run(0.5), "base.json", Tolerance(same=1e-6, cross=0.05))
    assert comp.regressions == ["C1 s: 0.5 -> 0.4 (moved, in the claim's favour)"]
    assert "moved (better)" in render_comparison(comp)


def test_a_control_moving_towards_passing_is_worse() -> None:
    comp = compare(_run(0.5, control=2.0), _run(0.5, control=5.0), "base.json")
    (change,) = [s for s in comp.stats if s.control]
    assert change.worse and "got worse" in change.describe()


def test_other_hardware_uses_the_wide_tolerance() -> None:
    comp = compare(_run(0.5 * (1 + 1e-3), cpu="cpu B"), _run(0.5), "base.json", Tolerance(same=1e-6, cross=0.05))
    assert not comp.same_hardware and comp.tolerance == 0.05
    assert comp.regressions == []


def test_a_lost_verdict_is_a_regression_and_listed_first() -> None:
    comp = compare(_run(2.0), _run(0.5), "base.json")
    assert [(v.before, v.after, v.regression) for v in comp.verdicts] == [("REPRODUCED", "NOT REPRODUCED", True)]
    text = render_comparison(comp)
    assert text.index("Verdict changes") < text.index("| claim | statistic |")


def test_a_regained_verdict_is_not_a_regression() -> None:
    comp = compare(_run(0.5), _run(2.0), "base.json", Tolerance(same=10.0, cross=10.0))
    assert comp.verdicts and not comp.verdicts[0].regression and comp.regressions == []


def test_claims_on_one_side_only_are_listed_not_compared() -> None:
    comp = compare(_run(0.5, claim="C2"), _run(0.5), "base.json")
    assert sorted(comp.missing) == ["C1: only in the baseline", "C2: only in this run"]


def test_a_statistic_that_became_infinite_is_flagged() -> None:
    comp = compare(_run(math.inf), _run(0.5), "base.json", Tolerance(same=1e9, cross=1e9))
    assert comp.stats[0].relative == math.inf and comp.stats[0].flagged
