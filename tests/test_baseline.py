"""Comparing runs: verdicts, pass counts, every statistic seed by seed against a margin, bit identity apart."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from claimcheck.baseline import DEFAULT_TOLERANCE, Tolerance, compare, render_comparison
from claimcheck.paired import Movement
from claimcheck.protocol import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.record import ClaimRecorder
from claimcheck.rundata import RunData
from claimcheck.verdicts import TestOutcome

SEEDS = range(20)
SPREAD = [0.03 * ((7 * s) % 11) for s in SEEDS]  # a fixed seed-to-seed pattern in [0, 0.3], sd about 0.1


def _protocol(margin: float | None = None) -> ClaimProtocol:
    part = Part("", "s stays small", (Stat("s", "<=", 1.0, margin=margin),), bar=0.8)
    return ClaimProtocol("C1", 1, (part,), (Control("ctl", "", "shifted"),), Seeds("b", 1000, {"ci": 20}))


def _run(
    values: Sequence[float] | float,
    cpu: str = "cpu A",
    control: float = 5.0,
    claim: str = "C1",
    protocol: ClaimProtocol | None = None,
    units: bool = True,
) -> RunData:
    values = [values] * len(SEEDS) if isinstance(values, float | int) else values
    tests = []
    for seed, v in zip(SEEDS, values, strict=True):
        rec = ClaimRecorder(claim, seed=seed, protocol=protocol)
        rec.check("s", v, "<=", 1.0, unit=seed if units else "")
        rec.check("s", control, "<=", 1.0, control="ctl", unit=seed if units else "")
        proto = protocol.to_dict() if protocol else None
        tests.append(TestOutcome(f"t.py::test_{claim}[{seed}]", claim, "title", "src", "passed", rec, protocol=proto))
    return RunData("r", {"cpu": cpu, "torch": "2.13"}, tests)


def _base(shift: float = 0.0, **kw: object) -> RunData:
    return _run([0.2 + v + shift for v in SPREAD], **kw)  # type: ignore[arg-type]


def test_the_same_run_is_equivalent_and_bit_identical() -> None:
    comp = compare(_base(), _base(), "base.json")
    assert comp.same_hardware and comp.tolerance == 0.0
    assert {s.movement for s in comp.stats} == {Movement.EQUIVALENT}
    assert comp.regressions == [] and comp.differences == []


def test_float_noise_is_equivalent_but_not_bit_identical() -> None:
    comp = compare(_run([0.2 + v + 1e-13 for v in SPREAD]), _base(), "base.json")
    (stat, _) = comp.stats
    assert stat.movement is Movement.EQUIVALENT and comp.regressions == []
    assert comp.differences == ["C1 s: 20 of 20 values differ from the baseline's (largest relative difference 5e-13)"]


def test_a_shift_of_many_seed_to_seed_sds_is_worse_beyond_the_margin_and_named() -> None:
    comp = compare(_base(shift=0.5), _base(), "base.json")
    (stat, control) = comp.stats
    assert stat.movement is Movement.WORSE and control.movement is Movement.EQUIVALENT
    assert stat.margin_source == "0.5 x baseline SD" and 0.04 < stat.test.margin < 0.06  # type: ignore[union-attr]
    (line,) = comp.regressions
    assert line.startswith("C1 s: median") and "+0.5 [+0.5, +0.5] over 20 units" in line
    assert line.endswith("(worse beyond margin)")


def test_a_shift_in_the_claims_favour_is_better_and_not_a_regression() -> None:
    comp = compare(_base(shift=-0.5), _base(), "base.json")
    assert comp.stats[0].movement is Movement.BETTER and comp.regressions == []
    assert "**better beyond margin**" in render_comparison(comp)


def test_a_control_moving_towards_passing_is_worse() -> None:
    now = _run([0.2 + v for v in SPREAD], control=0.5)
    comp = compare(now, _base(), "base.json")
    control = next(s for s in comp.stats if s.control)
    assert control.movement is Movement.WORSE


def test_a_declared_margin_wins_over_the_derived_one() -> None:
    proto = _protocol(margin=1.0)
    comp = compare(_base(shift=0.5, protocol=proto), _base(protocol=proto), "base.json")
    assert comp.stats[0].margin_source == "protocol" and comp.stats[0].movement is Movement.EQUIVALENT


def test_a_pass_count_that_drops_appears_with_the_units_that_flipped() -> None:
    proto = _protocol()
    values = [0.2 + v for v in SPREAD]
    now = list(values)
    now[3] = 1.5  # one seed of 20 now misses the threshold
    comp = compare(_run(now, protocol=proto), _run(values, protocol=proto), "base.json")
    (change,) = [p for p in comp.passes if p.changed]
    assert change.describe() == "C1: 20/20 -> 19/20 (lost: 3)"
    assert "| C1 | claim | 20/20 | 19/20 | lost: 3 |" in render_comparison(comp)


def test_other_hardware_uses_the_wide_tolerance_for_bit_identity() -> None:
    comp = compare(_run([0.2 + v * (1 + 1e-3) for v in SPREAD], cpu="cpu B"), _base(), "base.json", Tolerance(0, 0.05))
    assert not comp.same_hardware and comp.tolerance == 0.05 and comp.differences == []


def test_a_lost_verdict_is_a_regression_and_listed_first() -> None:
    comp = compare(_run(2.0), _base(), "base.json")
    assert [(v.before, v.after, v.regression) for v in comp.verdicts] == [("REPRODUCED", "NOT REPRODUCED", True)]
    assert comp.regressions[0] == "C1: REPRODUCED -> NOT REPRODUCED"
    text = render_comparison(comp)
    assert text.index("Verdict changes") < text.index("| claim | statistic |")


def test_a_regained_verdict_is_not_a_regression() -> None:
    comp = compare(_base(), _run(2.0), "base.json")
    assert comp.verdicts and not comp.verdicts[0].regression
    assert comp.regressions == [] and comp.differences[0] == "C1: NOT REPRODUCED -> REPRODUCED"


def test_claims_on_one_side_only_are_listed_not_compared() -> None:
    comp = compare(_base(claim="C2"), _base(), "base.json")
    assert sorted(comp.missing) == ["C1: only in the baseline", "C2: only in this run"]


def test_a_baseline_without_unit_ids_is_compared_by_medians_only() -> None:
    comp = compare(_base(), _base(shift=0.01, units=False), "old.json", DEFAULT_TOLERANCE)
    assert all(s.test is None and s.movement is None for s in comp.stats)
    assert comp.counts()["not paired"] == 2 and comp.regressions == []
    assert "(not paired)" in comp.stats[0].describe()


def test_a_statistic_that_became_infinite_differs_and_its_pairs_are_left_out() -> None:
    values = [0.2 + v for v in SPREAD]
    comp = compare(_run([math.inf, *values[1:]]), _run(values), "base.json")
    stat = comp.stats[0]
    assert stat.max_relative == math.inf and stat.test.left_out == 1  # type: ignore[union-attr]


def test_a_positive_statistic_spanning_orders_of_magnitude_is_compared_on_log10() -> None:
    base = [10.0 ** -(5 + s % 15) for s in SEEDS]  # a loss ratio: 1e-5 .. 1e-19
    comp = compare(_run([v * 1e-3 for v in base]), _run(base), "base.json")
    stat = comp.stats[0]
    assert stat.log and stat.test.mean == pytest.approx(-3.0)  # type: ignore[union-attr]
    assert stat.movement is Movement.BETTER and "(log10)" in render_comparison(comp)


def test_a_baseline_of_the_first_schema_is_refused_with_the_command_that_regenerates_it() -> None:
    from claimcheck.rundata import RunFileError, from_dict

    raw = {
        "schema": "claimcheck-run/1",
        "env": {"rerun options": "--claim-seed 0 --claim-budget ci", "git commit": "abc"},
    }
    with pytest.raises(RunFileError) as e:
        from_dict(raw, "main/claim-report.json")
    assert "older schema 'claimcheck-run/1'" in str(e.value)
    assert "`pytest claims --claim-seed 0 --claim-budget ci --claim-report=claim-report.md` on the code" in str(e.value)


def test_a_baseline_of_the_second_schema_is_read_and_compared_seed_by_seed() -> None:
    from pathlib import Path

    from claimcheck.rundata import load

    old = load(Path(__file__).parent / "fixtures" / "run-schema-2.json")  # the reference run of v2/v3 protocols
    comp = compare(old, old, "old.json")
    assert old.schema == "claimcheck-run/2" and comp.counts()["equivalent"] == len(comp.stats) > 50
