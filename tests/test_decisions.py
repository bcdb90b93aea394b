"""Decisions at a stated family-wise level, and claims that add units in batches until decided.

The plumbing is tested from outside with pytester (the looks reach the report and the JSON, also
under pytest-xdist); the error rates are measured through ``verdicts.decide``, the function the
controller calls, over 2,000 simulated claims.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from claimcheck.decide.record import ClaimRecorder, Look
from claimcheck.decide.stats import clopper_pearson
from claimcheck.decide.verdicts import TestOutcome, Verdict, decide
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

SEQUENTIAL_MODULE = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(Part("a", "toy part a", (Stat("s", "<=", 1.0),), bar=0.8),),
    controls=(Control("ctl", "a", "the toy claim should not hold here", max_pass_rate=0.3),),
    seeds=Seeds("C9-v1", 1000, {{"ci": 30, "standard": 12}}, batch={{"ci": 5}}),
)
CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9", protocol=PROTOCOL)
FAIL = {fail}
STOP_AFTER = {stop_after}


@CLAIM
def test_claim(claim_record, claim_units):
    for i, seeds in enumerate(claim_units.batches()):
        for s in seeds:
            claim_record.check("s", 2.0 if (s - 1000) in FAIL else 0.5, part="a", unit={unit})
        if i + 1 == STOP_AFTER:
            break


@CLAIM
def test_control(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("s", 2.0, control="ctl", unit=s)
"""


def _sequential(pytester: pytest.Pytester, fail: set[int] | None = None, stop_after: int = 0, unit: str = "s") -> None:
    pytester.makepyfile(test_toy=SEQUENTIAL_MODULE.format(fail=fail or set(), stop_after=stop_after, unit=unit))


def _claim(pytester: pytest.Pytester) -> dict[str, Any]:
    data = json.loads((pytester.path / "reports" / "claim-report.json").read_text())
    return data["claims"][0]  # type: ignore[no-any-return]


def _markdown(pytester: pytest.Pytester) -> str:
    return (pytester.path / "reports" / "claim-report.md").read_text()


def test_a_batched_claim_stops_when_decided_and_its_looks_reach_the_report_and_the_json(
    pytester: pytest.Pytester,
) -> None:
    _sequential(pytester)
    result = pytester.runpytest("--claim-report", "-p", "no:randomly")
    assert result.ret == 0
    claim = _claim(pytester)
    assert claim["verdict"] == "REPRODUCED" and claim["alpha"] == 0.05 and claim["multiplicity"] == "holm"
    looks = {run["test"].split("::")[1]: run for run in claim["looks"]}
    # 20 of 20 passing first shows the rate above 0.8 (the beta-binomial mixture reaches 20.5 >= 1/alpha)
    assert [look["units"] for look in looks["test_claim"]["looks"]] == [5, 10, 15, 20]
    assert looks["test_claim"]["looks"][-1]["state"] == {"part a": "REPRODUCED"}
    assert looks["test_claim"]["stopped"] == "decided at look 4 of 6 (20 units)"
    assert looks["test_claim"]["schedule"] == [5, 10, 15, 20, 25, 30]
    # 0 of 15 control units passing shows its rate below 0.3 (mixture 43.9 >= 20)
    assert [look["units"] for look in looks["test_control"]["looks"]] == [5, 10, 15]
    assert claim["parts"][0]["rate"]["method"] == "beta-binomial confidence sequence"
    assert claim["parts"][0]["rate"]["n"] == 20
    text = _markdown(pytester)
    assert "**Looks** (units added in batches; the decision was asked after each)" in text
    assert "  - look 4, 20 units: part a: REPRODUCED" in text
    assert "| 20/20 = 1.00 [0.80, 1.00] anytime (units run 20/30, 15/30) |" in text
    assert (
        "units added in batches, decided after each, stopped when decided or at the cap: ci: 5 at a time up to 30"
        in text
    )
    assert "Decided at family-wise alpha = 0.05 per direction" in text
    result.stdout.fnmatch_lines(
        ["*a: REPRODUCED: 20/20 = 1.00 [[]0.80, 1.00] anytime*", "*looks: units run 20/30, 15/30*"]
    )


def test_the_looks_survive_the_trip_on_the_test_report() -> None:
    rec = ClaimRecorder("T2", protocol=TWO_PARTS, schedule=[5, 10], stopped="decided at look 1 of 2 (5 units)")
    rec.looks.append(Look(5, ["0", "1", "2", "3", "4"], {"part a": "REPRODUCED"}))
    back = ClaimRecorder.from_json(rec.to_json())
    assert back.looks == rec.looks and back.schedule == [5, 10] and back.stopped == rec.stopped


@pytest.mark.slow  # two pytest-xdist workers import torch: 20-50 s on a shared machine
def test_the_looks_travel_from_xdist_workers(pytester: pytest.Pytester) -> None:
    _sequential(pytester, fail={3})
    result = pytester.runpytest_subprocess("-n", "2", "--claim-report", "-p", "no:randomly")
    assert result.ret in (0, 1)
    claim = _claim(pytester)
    runs = {run["test"].split("::")[1]: run for run in claim["looks"]}
    assert set(runs) == {"test_claim", "test_control"}
    # one failure among the first units: 24 of 25 shows the rate above 0.8 only at look 6 (29 of 30 would too)
    assert runs["test_claim"]["looks"][0]["state"] == {"part a": "INCONCLUSIVE"}
    assert claim["parts"][0]["rate"]["n"] == runs["test_claim"]["looks"][-1]["units"]


def test_a_claim_below_its_bar_stops_as_not_reproduced(pytester: pytest.Pytester) -> None:
    _sequential(pytester, fail=set(range(0, 30, 2)))  # every other unit fails: a true rate of 0.5
    pytester.runpytest("--claim-report", "-p", "no:randomly")
    claim = _claim(pytester)
    assert claim["verdict"] == "NOT REPRODUCED"
    run = next(r for r in claim["looks"] if r["test"].endswith("test_claim"))
    assert run["looks"][-1]["state"] == {"part a": "NOT REPRODUCED"} and run["looks"][-1]["units"] < 30


def test_a_test_may_stop_by_its_own_rule_and_says_so(pytester: pytest.Pytester) -> None:
    _sequential(pytester, stop_after=2)
    pytester.runpytest("--claim-report", "-p", "no:randomly")
    claim = _claim(pytester)
    run = next(r for r in claim["looks"] if r["test"].endswith("test_claim"))
    assert run["stopped"] == "stopped by the test's own rule after look 2 (10 units)"
    assert [look["units"] for look in run["looks"]] == [5, 10]
    assert claim["verdict"] == "INCONCLUSIVE"  # 10 of 10 cannot show 0.8 under optional stopping


def test_a_check_without_its_unit_is_refused_in_a_batched_test(pytester: pytest.Pytester) -> None:
    _sequential(pytester, unit="None")
    result = pytester.runpytest("--claim-report", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "record each check of a batched claim test with unit=seed" in _markdown(pytester)


def test_a_budget_without_a_schedule_keeps_one_look_and_the_exact_rule(pytester: pytest.Pytester) -> None:
    _sequential(pytester)
    pytester.runpytest("--claim-report", "--claim-budget", "standard", "-p", "no:randomly")
    claim = _claim(pytester)
    assert claim["looks"] == []
    rate = claim["parts"][0]["rate"]
    assert rate["method"] == "exact" and rate["n"] == 12 and rate["low"] == pytest.approx(0.05 ** (1 / 12))


MEAN_MODULE = """
import numpy as np
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(Part("rho", "the mean rho is above 0.3", (Stat("rho", ">", 0.3),), rule="mean", bounds=(-1.0, 1.0)),),
    controls=(Control("shuffled", "rho", "no association once shuffled"),),
    seeds=Seeds("C9-v1", 1000, {{"ci": 60, "standard": 12}}, batch={{"ci": 10}}),
)
CLAIM = pytest.mark.claim("C9", "toy mean", "Sec. 9", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("rho", float(np.random.default_rng(s).uniform({low}, {high})), part="rho", unit=s)


@CLAIM
def test_control(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("rho", float(np.random.default_rng(s).uniform(-0.2, 0.2)), control="shuffled", unit=s)
"""


@pytest.mark.parametrize(("budget", "method"), [("ci", "betting confidence sequence"), ("standard", "Student-t")])
def test_a_mean_part_is_decided_by_betting_over_looks_and_by_student_t_at_one(
    pytester: pytest.Pytester, budget: str, method: str
) -> None:
    pytester.makepyfile(test_toy=MEAN_MODULE.format(low=0.5, high=0.9))
    pytester.runpytest("--claim-report", "--claim-budget", budget, "-p", "no:randomly")
    claim = _claim(pytester)
    assert claim["verdict"] == "REPRODUCED"
    mean = claim["parts"][0]["estimates"][0]
    assert mean["interval"].startswith(method) and mean["low"] > 0.3
    assert claim["controls"][0]["status"] == "fails as required"
    if budget == "ci":
        assert claim["looks"][0]["stopped"] == "decided at look 3 of 6 (30 units)"  # the mean 0.65 [0.36, 0.72]
    text = _markdown(pytester)
    assert "- mean: rho = " in text and "Units that failed" not in text


def test_a_mean_part_below_its_threshold_is_not_reproduced(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=MEAN_MODULE.format(low=-0.1, high=0.3))
    pytester.runpytest("--claim-report", "-p", "no:randomly")
    claim = _claim(pytester)
    assert claim["verdict"] == "NOT REPRODUCED" and claim["parts"][0]["estimates"][0]["high"] < 0.3


# --- protocols ------------------------------------------------------------------------------------


def _proto(**kw: Any) -> ClaimProtocol:
    parts = kw.pop("parts", (Part("a", "a", (Stat("s", "<=", 1.0),)),))
    seeds = kw.pop("seeds", Seeds("T-v1", 1000, {"ci": 10}))
    return ClaimProtocol("T", 1, parts, (Control("c", "a", "why"),), seeds, **kw)


def test_a_protocol_states_its_level_one_way() -> None:
    assert _proto().alpha == 0.05 and _proto().level == 0.90
    assert _proto(alpha=0.025).level == pytest.approx(0.95)
    assert _proto(level=0.95).alpha == pytest.approx(0.025)
    with pytest.raises(ConfigError, match="level = 1 - 2 alpha"):
        _proto(alpha=0.025, level=0.8)
    with pytest.raises(ConfigError, match="multiplicity must be one of"):
        _proto(multiplicity="sidak")


def test_a_schedule_needs_statistics_a_confidence_sequence_can_follow() -> None:
    batched = Seeds("T-v1", 1000, {"ci": 30}, batch={"ci": 10})
    with pytest.raises(ConfigError, match="rule 'estimate', which one look computes"):
        _proto(parts=(Part("a", "a", (Stat("s", "<=", 1.0),), rule="estimate"),), seeds=batched)
    with pytest.raises(ConfigError, match="needs bounds"):
        _proto(parts=(Part("a", "a", (Stat("s", "<=", 1.0),), rule="mean"),), seeds=batched)
    with pytest.raises(ConfigError, match="which units does not cap"):
        Seeds("T-v1", 1000, {"ci": 30}, batch={"standard": 10})
    assert batched.looks("ci", 3) == [10, 20, 30] and Seeds("x", 0, {"ci": 25}, batch={"ci": 10}).looks("ci", 3) == [
        10,
        20,
        25,
    ]
    assert Seeds("x", 0, {"ci": 25}).looks("ci", 3) == [25]


def test_a_protocol_without_the_new_settings_keeps_its_fingerprint() -> None:
    # defaults add nothing to what the fingerprint hashes, so protocols written before alpha, multiplicity,
    # prior and batch existed keep their fingerprints
    assert _proto()._decision_settings() == {}
    assert _proto(multiplicity="bonferroni").fingerprint() != _proto().fingerprint()
    assert _proto(seeds=Seeds("T-v1", 1000, {"ci": 10}, batch={"ci": 5})).fingerprint() != _proto().fingerprint()


# --- measured family-wise error -------------------------------------------------------------------

TWO_PARTS = ClaimProtocol(
    "T2",
    1,
    parts=(
        Part("a", "effect a is positive", (Stat("x", ">", 0.0),), rule="mean"),
        Part("b", "effect b is positive", (Stat("y", ">", 0.0),), rule="mean"),
    ),
    controls=(Control("c", "a", "no effect here"),),
    seeds=Seeds("T2-v1", 2000, {"ci": 10}),
)


def _two_part_claims(runs: int, seed: int) -> list[Any]:
    """Decide ``runs`` claims whose two parts sit exactly on their thresholds (mean 0) over 10 units each."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(runs):
        rec = ClaimRecorder("T2", protocol=TWO_PARTS)
        a, b, c = rng.normal(0, 1, (3, 10))
        for u in range(10):
            rec.check("x", a[u], part="a", unit=u)
            rec.check("y", b[u], part="b", unit=u)
            rec.check("x", c[u] - 3, control="c", unit=u)
        out.append(decide([TestOutcome("t", "T2", "", "", "passed", rec, protocol=TWO_PARTS.to_dict())], TWO_PARTS))
    return out


def test_a_claim_of_two_parts_on_their_bars_is_decided_at_the_stated_family_wise_level() -> None:
    """Both parts on the bar: NOT REPRODUCED is a false finding; so is REPRODUCED. 2,000 claims.

    Measured (seed 5; exact 90% intervals): NOT REPRODUCED 0.034 [0.028, 0.041] under Holm at 0.05 over
    the three "fails" hypotheses (two parts, and the control's "passes too often", which holds no weight
    here, so Holm starts at 0.05/3 for two true nulls: about 2 x 0.0167); each part tested at 0.05 alone
    would give 0.091 [0.081, 0.102]; REPRODUCED 0.0015 [0.0004, 0.0039] (IUT: both must hold).
    """
    results = _two_part_claims(2000, seed=5)
    verdicts = np.array([r.verdict.value for r in results])
    family_wise = clopper_pearson(int((verdicts == "NOT REPRODUCED").sum()), verdicts.size, 0.90)
    assert family_wise.low < 0.05 and family_wise.rate == pytest.approx(0.034, abs=0.012)
    alone = np.array([min(p for part in r.parts for p in part.p_fail) <= 0.05 for r in results])
    unadjusted = clopper_pearson(int(alone.sum()), alone.size, 0.90)
    assert unadjusted.low > 0.05  # without the multiplicity rule the claim's error would be about doubled
    assert (verdicts == "REPRODUCED").mean() < 0.01
    assert all(r.family == 3 and r.alpha == 0.05 for r in results[:5])
    assert all(r.controls[0].status == "fails as required" for r in results[:5])


def test_a_look_inside_a_test_decides_with_the_controllers_rule() -> None:
    rec = ClaimRecorder("T2", protocol=TWO_PARTS)
    for u in range(10):
        rec.check("x", 1.0 + 0.1 * u, part="a", unit=u)
    alone = decide([TestOutcome("t", "T2", "", "", "passed", rec, protocol=TWO_PARTS.to_dict())], TWO_PARTS)
    assert alone.family == 3  # the parts and controls this test did not record still count, with p = 1
    assert [p.verdict for p in alone.parts] == [Verdict.REPRODUCED, Verdict.INCONCLUSIVE]


def test_shown_below_is_true_once_a_part_is_shown_below_its_bar_and_not_before() -> None:
    from claimcheck.decide.schedule import shown_below

    holds, falls = ClaimRecorder("T2", protocol=TWO_PARTS), ClaimRecorder("T2", protocol=TWO_PARTS)
    for s in range(10):
        holds.check("x", 1.0 + 0.1 * s, part="a", unit=s)
        falls.check("x", -1.0 - 0.1 * s, part="a", unit=s)  # every unit below 0: part a NOT REPRODUCED
    assert not shown_below(holds) and shown_below(falls)
    assert not shown_below(ClaimRecorder("T2"))  # no protocol: nothing to decide
