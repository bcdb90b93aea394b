"""Comparing runs: verdicts, pass counts, every statistic seed by seed against a margin, bit identity apart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.errors import ConfigError
from claimcheck.gate.baseline import Comparison, check_margins, compare, render_comparison
from claimcheck.gate.decision import EXIT_UNDECIDED, EXIT_WORSE, Status, judge
from claimcheck.gate.paired import Movement, detectable
from claimcheck.gate.tolerance import DEFAULT_TOLERANCE, Tolerance
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.report.rundata import RunData

SEEDS = range(20)


def _regressions(comp: Comparison) -> list[str]:
    """One sentence per verdict that fell from REPRODUCED or statistic worse beyond its margin."""
    return [f"{v.claim_id}: {v.before} -> {v.after}" for v in comp.verdicts if v.regression] + [
        s.describe() for s in comp.stats if s.worse
    ]


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
    assert _regressions(comp) == [] and comp.differences == []


def test_float_noise_is_equivalent_but_not_bit_identical() -> None:
    comp = compare(_run([0.2 + v + 1e-13 for v in SPREAD]), _base(), "base.json")
    (stat, _) = comp.stats
    assert stat.movement is Movement.EQUIVALENT and _regressions(comp) == []
    assert comp.differences == ["C1 s: 20 of 20 values differ from the baseline's (largest relative difference 5e-13)"]


def test_a_shift_of_many_seed_to_seed_sds_is_worse_beyond_the_margin_and_named() -> None:
    comp = compare(_base(shift=0.5), _base(), "base.json")
    (stat, control) = comp.stats
    assert stat.movement is Movement.WORSE and control.movement is Movement.EQUIVALENT
    assert stat.margin_source == "0.5 x baseline SD" and 0.04 < stat.test.margin < 0.06  # type: ignore[union-attr]
    (line,) = _regressions(comp)
    assert line.startswith("C1 s: median") and "+0.5 [+0.5, +0.5] over 20 units" in line
    assert line.endswith("(worse beyond margin)")


def test_a_shift_in_the_claims_favour_is_better_and_not_a_regression() -> None:
    comp = compare(_base(shift=-0.5), _base(), "base.json")
    assert comp.stats[0].movement is Movement.BETTER and _regressions(comp) == []
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


def test_a_1000x_move_of_a_tiny_statistic_is_a_difference_on_any_hardware() -> None:
    """A loss ratio of 1e-24 is compared relative to itself (an absolute floor of 1e-12 once hid a 1000x move)."""
    tiny = [1e-24 * (1 + v) for v in SPREAD]
    comp = compare(_run([1000 * t for t in tiny], cpu="cpu B"), _run(tiny), "base.json", Tolerance(0, 0.05))
    assert comp.differences and "largest relative difference 999" in comp.differences[0]


def test_a_baseline_of_another_block_compares_verdicts_only_and_a_strict_or_worse_gate_says_so() -> None:
    """Other seeds pair nothing: each claim is 'not compared' with the reason, and =worse exits 14, not 0."""
    now, before = _base(), _base(shift=0.5)
    now.env.update({"budget": "ci: 40 units", "base seed": "0", "seed pool": "confirmatory"})
    before.env.update({"budget": "standard: 100 units", "base seed": "0", "seed pool": "confirmatory"})
    comp = compare(now, before, "base.json")
    assert comp.stats == [] and comp.not_compared == [
        "C1: the baseline drew budget standard; this run budget ci: other seeds, so no statistic or pass count is "
        "compared (verdicts only)"
    ]
    assert judge(comp).exit_code("worse") == EXIT_UNDECIDED == judge(comp).exit_code("all")
    before.env.update({"budget": "ci: 40 units"})  # the same block: compared as ever
    assert compare(now, before, "base.json").stats


def test_a_claim_the_baseline_lacks_is_not_compared_whatever_its_verdict() -> None:
    """As a statistic on one side only: strict mode exits 14 (it exited 0 for a REPRODUCED claim, 13 otherwise)."""
    for value in (0.3, 2.0):  # C2 REPRODUCED, then NOT REPRODUCED
        now = _base()
        now.tests = [*now.tests, *_run(value, claim="C2").tests]
        comp = compare(now, _base(), "base.json")
        assert comp.not_compared == ["C2: only in this run (the baseline does not hold it)"]
        assert judge(comp).exit_code("all") == EXIT_UNDECIDED == judge(comp).exit_code("worse")


def test_a_lost_verdict_is_a_regression_and_listed_first() -> None:
    comp = compare(_run(2.0), _base(), "base.json")
    assert [(v.before, v.after, v.regression) for v in comp.verdicts] == [("REPRODUCED", "NOT REPRODUCED", True)]
    assert _regressions(comp)[0] == "C1: REPRODUCED -> NOT REPRODUCED"
    text = render_comparison(comp)
    assert text.index("Verdict changes") < text.index("| claim | statistic |")


def test_a_regained_verdict_is_not_a_regression() -> None:
    comp = compare(_base(), _run(2.0), "base.json")
    assert comp.verdicts and not comp.verdicts[0].regression
    assert _regressions(comp) == [] and comp.differences[0] == "C1: NOT REPRODUCED -> REPRODUCED"


def test_claims_on_one_side_only_are_listed_not_compared() -> None:
    comp = compare(_base(claim="C2"), _base(), "base.json")
    assert sorted(comp.missing) == ["C1: only in the baseline", "C2: only in this run"]


def test_a_baseline_without_unit_ids_is_compared_by_medians_only() -> None:
    comp = compare(_base(), _base(shift=0.01, units=False), "old.json", DEFAULT_TOLERANCE)
    assert all(s.test is None and s.movement is None for s in comp.stats)
    assert comp.counts()["not paired"] == 2 and _regressions(comp) == []
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
    from claimcheck.report.rundata import RunFileError, from_dict

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

    from claimcheck.report.rundata import load

    old = load(Path(__file__).parent / "fixtures" / "run-schema-2.json")  # the reference run of v2/v3 protocols
    comp = compare(old, old, "old.json")
    assert old.schema == "claimcheck-run/2" and comp.counts()["equivalent"] == len(comp.stats) > 50


# --- the gate: three outcomes per statistic and per run, exit statuses, power in view --------------------------


def _noisy(shift: float, scale: float = 1.0, seed: int = 0) -> RunData:
    """Return a run of the base's values plus ``shift`` and seed-to-seed noise of ``scale`` baseline SDs."""
    noise = [scale * 0.1 * ((5 * s + seed) % 7 - 3) / 2 for s in SEEDS]  # a second fixed pattern, mean near 0
    return _run([0.2 + v + shift + e for v, e in zip(SPREAD, noise, strict=True)])


def test_an_identical_run_passes_the_gate_with_every_statistic_equivalent() -> None:
    gate = judge(compare(_base(), _base(), "base.json"))
    assert gate.status is Status.PASS and gate.exit_code("all") == 0
    assert gate.line() == "claim baseline: PASS — 2 equivalent, 0 changed (worse 0, better 0), 0 undecided"


def test_an_undecided_statistic_is_not_a_pass_and_fails_the_strict_gate_only() -> None:
    comp = compare(_noisy(0.05, scale=3.0), _base(), "base.json")
    stat = comp.stats[0]
    assert stat.movement is Movement.UNDECIDED
    gate = judge(comp)
    assert gate.status is Status.UNDECIDED and gate.undecided == 1
    assert gate.exit_code("all") == EXIT_UNDECIDED and gate.exit_code("worse") == 0 and gate.exit_code("") == 0
    assert gate.line().startswith(
        "claim baseline: UNDECIDED — 1 equivalent, 0 changed (worse 0, better 0), 1 undecided"
    )
    assert "C1 s" in gate.line()  # the worst statistic is named
    assert stat.units_to_decide is not None and stat.units_to_decide > 20


def test_a_worse_statistic_fails_both_modes_with_its_own_exit_status() -> None:
    gate = judge(compare(_base(shift=0.5), _base(), "base.json"))
    assert gate.status is Status.FAIL and gate.worse == 1
    assert gate.exit_code("all") == gate.exit_code("worse") == EXIT_WORSE
    assert "worst: C1 s" in gate.line()


def test_a_better_statistic_and_a_better_verdict_are_reported_not_failed() -> None:
    better = judge(compare(_base(shift=-0.5), _base(), "base.json"))
    assert better.status is Status.PASS and better.better == 1 and better.exit_code("all") == 0
    regained = compare(_base(), _run(2.0), "base.json")
    assert regained.verdicts[0].better and not regained.verdicts[0].worse
    assert judge(regained).exit_code("all") == 0


def test_a_verdict_that_fell_fails_the_gate() -> None:
    comp = compare(_run(2.0), _base(), "base.json")
    assert comp.verdicts[0].worse
    gate = judge(comp)
    assert gate.status is Status.FAIL and "C1: REPRODUCED -> NOT REPRODUCED" in gate.failing


def test_a_baseline_of_another_claim_set_compares_nothing_and_is_undecided_in_both_modes() -> None:
    comp = compare(_base(claim="C2"), _base(), "base.json")
    assert comp.missing_claims == ["C1"] and comp.extra_claims == ["C2"]
    gate = judge(comp)
    assert gate.status is Status.UNDECIDED and gate.compared == 0
    assert gate.exit_code("all") == gate.exit_code("worse") == EXIT_UNDECIDED
    text = "\n".join(gate.details())
    assert "0 statistics compared" in text and "C1 is in the baseline but not in this run" in text
    assert "C2 is in this run but not in the baseline" in text


def test_a_baseline_claim_missing_from_the_run_fails_even_when_the_rest_passes() -> None:
    both = RunData("r", {"cpu": "cpu A"}, _base().tests + _base(claim="C2").tests)
    gate = judge(compare(_base(), both, "base.json"))
    assert gate.status is Status.UNDECIDED and gate.missing_claims == ("C2",)
    assert gate.exit_code("worse") == EXIT_UNDECIDED


def _renamed(run: RunData, old: str, new: str) -> RunData:
    """Return ``run`` with the statistic ``old`` recorded as ``new`` (a baseline written before a rename)."""
    for t in run.tests:
        assert t.record is not None
        t.record.checks = [
            c if c.statistic != old else type(c)(**{**c.__dict__, "statistic": new}) for c in t.record.checks
        ]
    run.tests = list(run.tests)  # the verdicts kept are no longer theirs
    return run


def test_a_statistic_renamed_in_the_baseline_is_not_compared_and_fails_the_strict_gate_naming_it() -> None:
    """Issue 51 (7): a renamed statistic, its value moved 1000x, passed strict mode with '0 undecided'."""
    baseline = _renamed(_run([1000 * (0.2 + v) for v in SPREAD]), "s", "s_old")
    gate = judge(compare(_base(), baseline, "base.json"))
    assert gate.status is not Status.PASS and gate.exit_code("all") == EXIT_UNDECIDED
    assert any("C1 s_old: only in the baseline" in n for n in gate.not_compared)
    assert any(d.startswith("missing: not compared: C1 s_old") for d in gate.details())


def test_a_baseline_missing_a_control_test_fails_the_strict_gate() -> None:
    baseline = _base()
    baseline.tests = [t for t in baseline.tests if t.record is not None]
    for t in baseline.tests:
        assert t.record is not None
        t.record.checks = [c for c in t.record.checks if c.control is None]
    baseline.tests = list(baseline.tests)
    gate = judge(compare(_base(), baseline, "base.json"))
    assert gate.exit_code("all") == EXIT_UNDECIDED and any(
        "(control: ctl): only in this run" in n for n in gate.not_compared
    )


def test_a_baseline_under_another_protocol_version_is_named_not_compared() -> None:
    v1, v2 = _protocol(), ClaimProtocol("C1", 2, _protocol().parts, _protocol().controls, Seeds("b", 1000, {"ci": 20}))
    gate = judge(compare(_base(protocol=v2), _base(protocol=v1), "base.json"))
    assert gate.exit_code("all") == EXIT_UNDECIDED
    assert gate.not_compared == ("C1: the baseline ran protocol v1, this run v2: statistics not compared",)


def test_each_statistic_carries_the_change_it_can_see_and_the_json_holds_it() -> None:
    comp = compare(_noisy(0.0, scale=1.0), _base(), "base.json")
    stat = comp.stats[0]
    t = stat.test
    assert t is not None and stat.detectable == pytest.approx(detectable(t.sd, t.n, t.margin, 0.05 / 2))
    data = judge(comp).to_dict(comp, "all")
    row = data["statistics"][0]
    assert row["name"] == "C1.s" and row["detectable"] == pytest.approx(stat.detectable)
    assert data["status"] == "PASS" and data["exit_status"] == 0 and data["counts"]["equivalent"] == 2
    assert "shown at 90%" in render_comparison(comp)


def test_a_margin_set_by_name_wins_over_the_protocols_and_a_bad_name_is_refused_naming_the_option() -> None:
    proto = _protocol(margin=0.01)
    comp = compare(_base(shift=0.5, protocol=proto), _base(protocol=proto), "base.json", margins={"C1.s": 1.0})
    assert comp.stats[0].margin_source == "ini claim_baseline_margins"
    assert comp.stats[0].movement is Movement.EQUIVALENT
    check_margins({"C1.s": 1.0, "C1.s (control: ctl)": 2.0}, _base())
    with pytest.raises(ConfigError, match=r"ini claim_baseline_margins: 'C1.z' names no statistic.*'C1.s'"):
        check_margins({"C1.z": 1.0}, _base())


def test_accepting_a_run_writes_it_over_the_baseline_and_keeps_the_old_one_beside_it(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from claimcheck.cli.main import main
    from claimcheck.gate.accept import AcceptError, accept
    from claimcheck.report.rundata import dumps

    base, run = tmp_path / "base.json", tmp_path / "run.json"
    base.write_text(dumps(_base()))
    run.write_text(dumps(_base(shift=0.5)))
    old = base.read_text()
    when = datetime(2025, 12, 2, 10, 30, tzinfo=UTC)
    kept = accept(run.read_text(), base, when)
    assert kept == tmp_path / "base.20251202T103000Z.json" and kept.read_text() == old
    assert base.read_text() == run.read_text()
    assert accept(run.read_text(), base, when) == tmp_path / "base.20251202T103000Z-2.json"  # never over history
    assert main(["baseline", "accept", str(run), str(tmp_path / "new.json")]) == 0  # a first baseline
    assert (tmp_path / "new.json").read_text() == run.read_text()
    cut = _base()
    cut.incomplete = ["the session was interrupted (e.g. Ctrl-C)"]
    with pytest.raises(AcceptError, match="the run is incomplete"):
        accept(dumps(cut), base)
    both = _base()
    both.tests = [*both.tests, *_run(0.3, claim="C2").tests]
    base.write_text(dumps(both))
    with pytest.raises(AcceptError, match="it holds C2, which this run did not run"):  # a partial run keeps out
        accept(run.read_text(), base)
    assert base.read_text() == dumps(both)  # nothing replaced


def test_one_precedence_sets_the_session_exit_status() -> None:
    """Issue 49: pytest's own statuses stand, then 12, then the gate's 13/14 (an ERROR under the gate is 13), then 1."""
    from claimcheck.gate.decision import REPORT_NOT_WRITTEN, exit_status

    assert exit_status(2, failing=True, gate=EXIT_WORSE, report_failed=True) == 2  # interrupted
    assert exit_status(4, failing=False) == 4  # usage error
    assert exit_status(0, failing=True, gate=EXIT_WORSE, report_failed=True) == REPORT_NOT_WRITTEN
    assert exit_status(1, failing=True, gate=EXIT_WORSE) == EXIT_WORSE  # a claim turned ERROR: the gate says worse
    assert exit_status(0, failing=True, gate=EXIT_UNDECIDED) == EXIT_UNDECIDED
    assert exit_status(0, failing=True) == 1 and exit_status(1, failing=False) == 1
    assert exit_status(0, failing=False) == 0 and exit_status(5, failing=False) == 5


def test_a_claim_that_turned_error_is_a_verdict_that_fell_and_fails_the_gate_as_worse() -> None:
    errored = _base()
    for t in errored.tests:
        t.outcome, t.message = "error", "RuntimeError: the bug"
    errored.tests = list(errored.tests)
    gate = judge(compare(errored, _base(), "base.json"))
    assert gate.status is Status.FAIL and gate.exit_code("worse") == EXIT_WORSE
    assert any("-> ERROR" in f for f in gate.failing)


RESEED = [0.2 + SPREAD[(5 * s + 3) % len(SEEDS)] for s in SEEDS]  # the same values, other units: new draws, same law


def test_new_draws_of_the_same_law_are_named_draws_changed_and_the_units_to_decide() -> None:
    comp = compare(_run(RESEED), _base(), "base.json")
    (stat, control) = comp.stats
    assert stat.pairing < 0.5 and stat.pairing_lost and math.isnan(control.pairing)  # the control has no spread
    assert comp.draws_changed() == {"C1": (1, 1)}
    gate = judge(comp)
    assert gate.kind == "draws changed" and gate.line().endswith("; draws changed in C1")
    (drawn,) = gate.drawn
    assert drawn.startswith("C1: pairing lost in 1 of 1 statistics")
    if stat.movement is Movement.UNDECIDED:
        assert f"about {stat.units_to_decide} units would decide the widest" in drawn and "--claim-gate-cap" in drawn
    assert f"draws changed: {drawn}" in gate.details()


def test_the_same_draws_keep_their_pairing_even_when_the_maths_moves_them() -> None:
    comp = compare(_base(shift=0.5), _base(), "base.json")
    assert comp.stats[0].pairing == pytest.approx(1.0) and comp.draws_changed() == {}
    assert judge(comp).kind == "maths changed"
    assert judge(compare(_base(), _base(), "base.json")).kind == "nothing beyond margins"
    assert judge(compare(_run([0.2 + v for v in SPREAD], cpu="cpu B"), _base(), "b.json")).kind == "numerics changed"


def test_a_verdict_that_falls_fails_whatever_the_draws() -> None:
    # "draws changed" is said and decides nothing: forgiving a fall under new draws forgave real bugs too
    proto = _protocol()
    near = [0.6 + 1.2 * v for v in SPREAD]  # every unit passes (<= 1.0), the largest at 0.96: near the edge
    base = _run(near, protocol=proto)
    drawn = [1.02 + 0.01 * (s % 3) if s in (2, 9, 14) else near[(5 * s + 3) % 20] for s in SEEDS]  # 17/20
    comp = compare(_run(drawn, protocol=proto), base, "base.json")
    assert [(v.before, v.after) for v in comp.verdicts] == [("REPRODUCED", "INCONCLUSIVE")]
    assert "C1" in comp.draws_changed()
    gate = judge(comp)
    assert gate.status is Status.FAIL and gate.exit_code("worse") == EXIT_WORSE
    assert any(d.startswith("draws changed: C1: pairing lost") for d in gate.details())
    # an edit that breaks a few units widens the spread: not read as new draws
    broken = [1.5 if s in (2, 9, 14) else v for s, v in enumerate(drawn)]
    assert compare(_run(broken, protocol=proto), base, "base.json").draws_changed() == {}
