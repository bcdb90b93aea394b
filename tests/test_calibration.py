"""Calibration in the core: a part's decision on cases whose answer is known, the claim rule on known rates,
the record the report reads, and controls by kind. Toy decisions only: nothing here knows a paper."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from claimcheck.cli.main import main
from claimcheck.decide.calibration import (
    FLOOR,
    accepts,
    calibrate_part,
    case_rng,
    decide_case,
    ledger_results,
    part_mark,
    rule_verdict,
    simulate_rule,
    undecided,
)
from claimcheck.decide.evidence import rate_evidence
from claimcheck.decide.record import ClaimRecorder, ProtocolDrift
from claimcheck.decide.verdicts import Verdict
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import Case, ClaimProtocol, Control, Estimate, Family, Part, Seeds, Stat, from_dict
from claimcheck.provenance.ledger import calibration_entries, load_ledger, record_in_ledger

X = Stat("x", "<=", 1.0)


def below_one(value: float) -> dict[str, float]:
    """Return the toy statistic: the value itself."""
    return {"x": value}


def uniform(low: float, high: float, rng: np.random.Generator) -> Case:
    v = float(rng.uniform(low, high))
    return Case({"value": v}, {"value": v})


def family(name: str, expect: str, low: float, high: float, cases: int = 200) -> Family:
    return Family(name, expect, lambda rng: uniform(low, high, rng), cases, f"value {low}..{high}")  # type: ignore[arg-type]


def toy_part(*families: Family, decision: object = below_one, stats: tuple[Stat, ...] = (X,)) -> Part:
    return Part("p", "toy: x stays at or below 1", stats, decision=decision, calibration=families)  # type: ignore[arg-type]


def test_a_decision_that_separates_its_families_is_calibrated() -> None:
    part = toy_part(family("small", "pass", 0.0, 0.9), family("large", "fail", 1.1, 2.0))
    result = calibrate_part("T1", part)
    assert result.status == "calibrated"
    assert (result.sensitivity.passed, result.sensitivity.n) == (200, 200)
    assert (result.specificity.passed, result.specificity.n) == (200, 200)
    assert result.sensitivity.low == pytest.approx(0.05 ** (1 / 200))  # all right: the exact one-sided 95% bound
    assert result.summary() == "calibrated: 200/200 must-fail rejected, 200/200 must-pass accepted"


def test_a_family_the_decision_accepts_fails_calibration_and_shows_its_worst_cases() -> None:
    part = toy_part(family("small", "pass", 0.0, 0.9), family("straddles", "fail", 0.5, 1.5))
    result = calibrate_part("T1", part)
    fam = result.families[1]
    assert result.status == "failing calibration" and result.specificity.low < FLOOR
    assert 60 < fam.right < 140  # about half of 0.5..1.5 lies above 1
    assert fam.wrong_ranges["value"][0] >= 0.5 and fam.wrong_ranges["value"][1] <= 1.0
    worst = [w.params["value"] for w in fam.wrong]
    assert worst == sorted(worst) and len(worst) == 5  # the most confidently accepted first: the smallest values
    assert "worst: straddles" in result.summary()


def test_the_same_case_comes_back_in_any_order_and_on_every_run() -> None:
    first = [case_rng(0, "T1", "p", "f", i).random() for i in range(5)]
    backwards = [case_rng(0, "T1", "p", "f", i).random() for i in reversed(range(5))]
    assert first == backwards[::-1]
    assert case_rng(1, "T1", "p", "f", 0).random() != first[0]


def test_a_decision_that_raises_gets_the_case_wrong_and_keeps_the_message() -> None:
    def fragile(value: float) -> dict[str, float]:
        if value > 0.8:
            raise ValueError("too few steps above the floor")
        return {"x": value}

    result = calibrate_part("T1", toy_part(family("small", "pass", 0.0, 1.0), decision=fragile))
    fam = result.families[0]
    assert fam.errors == fam.cases - fam.right > 0
    assert fam.wrong[0].error == "ValueError: too few steps above the floor"
    assert result.status == "uncalibrated"  # no must-fail cases


def test_a_decision_returning_a_statistic_the_part_does_not_state_is_a_config_error() -> None:
    part = toy_part(family("small", "pass", 0.0, 1.0), decision=lambda value: {"y": value})
    with pytest.raises(ConfigError, match="returned 'y', which is not one of its statistics"):
        calibrate_part("T1", part)


def test_an_estimate_is_accepted_only_when_its_whole_interval_meets() -> None:
    part = Part("e", "toy effect above 0", (Stat("effect", ">", 0.0),), rule="estimate")
    assert accepts(part, {"effect": Estimate(0.5, 0.1, 0.9, "t")})
    assert not accepts(part, {"effect": Estimate(0.5, -0.1, 0.9, "t")})
    assert not accepts(part, {"effect": Estimate(math.nan, math.nan, math.nan, "t")})
    assert not accepts(part, {})


def sample(mean: float, units: int, rng: np.random.Generator) -> Case:
    return Case({"mean": mean}, {"units": [{"value": float(v)} for v in rng.normal(mean, 0.5, units)]})


def test_a_mean_part_is_calibrated_on_samples_by_the_one_look_test_of_its_mean() -> None:
    def fam(name: str, expect: str, mean: float) -> Family:
        return Family(name, expect, lambda rng: sample(mean, 10, rng), 200)  # type: ignore[arg-type]

    part = Part("m", "toy: the mean stays below 1", (X,), rule="mean", decision=below_one)
    part = replace(part, calibration=(fam("well below", "pass", 0.0), fam("on the bar", "fail", 1.0)))
    result = calibrate_part("T1", part)
    assert result.sensitivity.passed >= 195  # t(9) at 0.05: the mean 0 is 6 standard errors below 1
    assert 180 <= result.specificity.passed <= 200  # on the threshold the one-sided test accepts about 5%
    stats = decide_case(part, {"units": [{"value": 0.0}, {"value": 0.2}, {"value": 0.4}]})
    assert isinstance(stats["x"], Estimate) and stats["x"].value == pytest.approx(0.2)
    assert stats["x"].high == pytest.approx(0.2 + 2.919986 * 0.2 / math.sqrt(3), rel=1e-5)  # t_{0.95, 2}
    with pytest.raises(ConfigError, match=r"holds \{'units'"):
        decide_case(part, {"value": 0.0})


def test_a_mean_sample_that_decides_neither_way_is_right_in_a_zone_family_and_in_a_fail_family() -> None:
    """Undecided (the interval straddles the bar) is the right answer of a zone family; shown past it is not.

    A fail family counts a sample right when it is not accepted (specificity of acceptance), undecided or not.
    """

    def fam(name: str, expect: str, mean: float, units: int = 10) -> Family:
        return Family(name, expect, lambda rng: sample(mean, units, rng), 200)  # type: ignore[arg-type]

    part = Part("m", "toy: the mean stays below 1", (X,), rule="mean", decision=below_one)
    on_bar, above = fam("on the bar", "zone", 1.0), fam("well above", "zone", 2.0)
    part = replace(part, calibration=(on_bar, above, fam("on the bar", "fail", 1.0)))
    result = calibrate_part("T1", part)
    on_zone, above_zone, on_fail = result.families
    assert 160 <= on_zone.right <= 195 and on_zone.zone == on_zone.right  # about 5% shown either way
    assert above_zone.right == 0  # every sample is shown above the bar: decided, so wrong in a zone family
    assert on_fail.right >= 180 and on_fail.zone == on_zone.zone  # not accepted is right; undecided ones are counted
    assert above_zone.zone == 0
    assert undecided(part, {"x": Estimate(1.0, 0.5, 1.5, "t")})
    assert not undecided(part, {"x": Estimate(2.0, 1.5, 2.5, "t")})  # shown past the bar
    assert not undecided(part, {"x": Estimate(0.0, -0.5, 0.5, "t")})  # accepted
    assert not undecided(part, {"x": 1.0})  # one unit's value: only a sample is undecided


def _protocol(part: Part, units: int = 10) -> ClaimProtocol:
    return ClaimProtocol("T1", 1, (part,), (Control("c", "p", "toy"),), Seeds("T1-v1", 1000, {"ci": units}))


def test_the_recorder_scores_a_unit_with_the_parts_decision() -> None:
    rec = ClaimRecorder("T1", seed=3, protocol=_protocol(toy_part()))
    assert rec.score({"value": 0.5}, part="p", label="size a") == {"x": 0.5}
    rec.score({"value": 2.0}, control="c")
    assert [(c.statistic, c.value, c.threshold, c.part, c.control, c.unit, c.met) for c in rec.checks] == [
        ("x", 0.5, 1.0, "p", None, "3", True),
        ("x", 2.0, 1.0, "p", "c", "3", False),
    ]


def test_the_recorder_records_an_estimate_parts_decision_as_estimates() -> None:
    def effect(values: list[float]) -> dict[str, Estimate]:
        return {"effect": Estimate(float(np.mean(values)), -1.0, 2.0, "toy interval", label="all seeds")}

    part = Part("p", "toy", (Stat("effect", ">", 0.0),), rule="estimate", decision=effect)
    rec = ClaimRecorder("T1", protocol=_protocol(part))
    rec.score({"values": [0.0, 1.0]}, part="p")
    (c,) = rec.checks
    assert (c.value, c.low, c.high, c.interval, c.label, c.unit) == (
        0.5,
        -1.0,
        2.0,
        "toy interval",
        "all seeds",
        "pooled",
    )


def test_scoring_a_part_without_a_decision_says_what_to_do() -> None:
    rec = ClaimRecorder("T1", protocol=_protocol(Part("p", "toy", (X,))))
    with pytest.raises(ProtocolDrift, match=r"declares no decision; give it Part\(decision=\.\.\.\)"):
        rec.score({"value": 0.5}, part="p")


def test_families_need_a_decision_to_run_on() -> None:
    with pytest.raises(ConfigError, match="calibration families need a decision"):
        Part("p", "toy", (X,), calibration=(family("small", "pass", 0.0, 1.0),))


def test_the_protocol_carries_its_decisions_identity_in_json_not_the_function() -> None:
    proto = _protocol(toy_part(family("small", "pass", 0.0, 1.0)))
    data = json.loads(json.dumps(proto.to_dict()))
    assert "decision" not in data["parts"][0] and "calibration" not in data["parts"][0]
    back = from_dict(data)
    assert back.parts[0].decision_id == proto.parts[0].decision_id
    assert back.parts[0].decision_id.startswith("test_calibration:below_one ")
    assert back.fingerprint() == proto.fingerprint()


def test_the_claim_rule_simulation_uses_the_controllers_decision() -> None:
    part = toy_part()
    sim = simulate_rule(_protocol(part, units=29), part, reps=200, rates=[0.0, 1.0])
    zero, one = sim.rows
    assert zero.counts == {"NOT REPRODUCED": 200} and one.counts == {"REPRODUCED": 200}
    assert rule_verdict([True] * 28 + [False], 0.8) is Verdict.REPRODUCED  # 28/29: exact lower bound 0.847
    assert rule_verdict([True] * 27 + [False] * 2, 0.8) is Verdict.INCONCLUSIVE  # 27/29: 0.798


def test_the_scheduled_claim_rule_stops_where_the_evidence_at_each_look_decides() -> None:
    rng = np.random.default_rng(5)
    looks = list(range(10, 101, 10))
    for rate in (0.5, 0.7, 0.8, 0.9, 1.0):
        for _ in range(20):
            units = (rng.random(100) < rate).tolist()
            want = Verdict.INCONCLUSIVE
            for n in looks:  # the controller's evidence, asked look by look
                ev = rate_evidence(units[:n], 0.8, 0.05, len(looks))
                if ev.p_above <= 0.05 or ev.p_below <= 0.05:
                    want = Verdict.REPRODUCED if ev.p_above <= 0.05 else Verdict.NOT_REPRODUCED
                    break
            assert rule_verdict(units, 0.8, 0.05, looks) is want
    assert rule_verdict([], 0.8, 0.05, looks) is Verdict.INCONCLUSIVE


def test_the_ledger_records_calibrations_and_a_changed_decision_shows_changed_since(tmp_path: Path) -> None:
    part = toy_part(family("small", "pass", 0.0, 0.9), family("large", "fail", 1.1, 2.0))
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    assert len(record_in_ledger(ledger, [calibrate_part("T1", part)])) == 1
    assert record_in_ledger(ledger, [calibrate_part("T1", part)]) == []  # the same result adds no entry
    entries = calibration_entries(load_ledger(ledger))
    assert part_mark(entries, "T1", part).startswith("calibrated: 200/200 must-fail rejected")
    moved = toy_part(stats=(Stat("x", "<=", 1.5),))  # the same code, another threshold: another decision
    assert part_mark(entries, "T1", moved) == "uncalibrated (changed since)"
    assert part_mark(entries, "T2", part) == "uncalibrated (no calibration recorded)"
    assert part_mark(entries, "T1", Part("p", "toy", (X,))) == "uncalibrated (no decision declared)"
    assert len(record_in_ledger(ledger, [calibrate_part("T1", moved)])) == 1  # appended, the first one kept
    entries = calibration_entries(load_ledger(ledger))
    assert part_mark(entries, "T1", moved) != "uncalibrated (changed since)"
    assert part_mark(entries, "T1", part).startswith("calibrated: 200/200 must-fail rejected")


SUITE_HEAD = '''
import pytest
from claimcheck.protocol.spec import Case, ClaimProtocol, Control, Family, Part, Seeds, Stat


def decide(value):
    """Return the value as the statistic."""
    return {"x": value}


def draw(low, high):
    def gen(rng):
        v = float(rng.uniform(low, high))
        return Case({"value": v}, {"value": v})
    return gen
'''
TOY_SUITE = (
    SUITE_HEAD
    + """


PROTOCOL = ClaimProtocol(
    "T7",
    1,
    (Part("", "toy", (Stat("x", "<=", 1.0),), decision=decide,
          calibration=(Family("small", "pass", draw(0, 0.9), 20), Family("near", "fail", draw(0.9, 1.2), 20))),),
    (Control("shuffle", "", "toy", kind="sanity"),),
    Seeds("T7-v1", 1000, {"ci": 10}),
)
"""
)


def test_claimcheck_calibrate_writes_every_count_records_the_results_and_fails_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_toy.py").write_text(TOY_SUITE)
    out = tmp_path / "c.json"
    assert main(["calibrate", str(suite), "--json", str(out), "--record", str(suite / "ledger"), "--reps", "50"]) == 0
    text = capsys.readouterr().out
    assert "| T7 | failing calibration | 20/20 = 1.000 [0.861] |" in text
    assert "T7: **NO DISCRIMINATING CONTROL**" in text
    data = json.loads(out.read_text())
    (part,) = data["parts"]
    assert [f["cases"] for f in part["families"]] == [20, 20] and data["failing"] == ["T7/"]
    assert data["claim_rule"][0]["rows"][0]["units"] == 10
    assert 'kind = "calibrate"' in (suite / "ledger" / "T7.toml").read_text()
    assert main(["calibrate", str(suite), "--fail", "--reps", "10"]) == 1
    assert main(["calibrate", str(tmp_path / "nowhere")]) == 2
    capsys.readouterr()
    assert main(["calibrate", str(suite), "--only", "t7"]) == 2  # an id not in the suite, named as such
    err = capsys.readouterr().err
    assert "--only: no claim t7 under" in err and "its claims: T7" in err


def test_calibrate_record_without_a_path_writes_claims_ledger_as_its_help_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_toy.py").write_text(TOY_SUITE)
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", "suite", "--record", "--reps", "10"]) == 0
    assert "in the ledger claims/ledger " in capsys.readouterr().err
    assert 'kind = "calibrate"' in (tmp_path / "claims" / "ledger" / "T7.toml").read_text()
    assert not (suite / "ledger").exists()


REPORTED_SUITE = (
    SUITE_HEAD
    + """


FAMILIES = (Family("small", "pass", draw(0, 0.9), 40), Family("large", "fail", draw(1.1, 2), 40))
PROTOCOL = ClaimProtocol(
    "T8",
    1,
    (Part("", "toy", (Stat("x", "<=", 1.0),), decision=decide, calibration=FAMILIES),),
    (Control("shuffle", "", "toy", max_pass_rate=0.0, kind="sanity"),),
    Seeds("T8-v1", 1000, {"ci": 3}),
)
CLAIM = pytest.mark.claim("T8", "toy", "Sec. 8", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.score({"value": 0.5})


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.score({"value": 2.0}, control="shuffle")
"""
)


def test_the_report_marks_each_part_from_the_record_and_flags_a_claim_without_a_discriminating_control(
    pytester: pytest.Pytester,
) -> None:
    from claimcheck.cli.calibrate import load_protocols

    pytester.makepyfile(test_toy=REPORTED_SUITE)
    (proto,) = load_protocols([pytester.path / "test_toy.py"])
    record_in_ledger(pytester.path / "ledger.toml", [calibrate_part("T8", proto.parts[0])])
    result = pytester.runpytest("--claim-report", "--claim-ledger=ledger.toml")
    result.stdout.fnmatch_lines(["*no discriminating control: every control it ran fails by construction*"])
    first = (pytester.path / "reports" / "claim-report.md").read_text().split("## Environment")[0]
    row = next(line for line in first.splitlines() if line.startswith("| [T8]"))
    assert "calibrated: 40/40 must-fail rejected, 40/40 must-pass accepted" in row
    assert "**no discriminating control** (+1 sanity, not counted)" in row


# --- challenge families and declared zones ---------------------------------------------------------


def zoned(value: float) -> dict[str, float]:
    """Return the toy statistic, undecided (NaN, zone 1.0) between 0.9 and 1.1: a declared zone."""
    if 0.9 < value < 1.1:
        return {"x": math.nan, "zone": 1.0}
    return {"x": value}


def _family(name: str, expect: str, low: float, high: float, origin: str = "design") -> Family:
    return replace(family(name, expect, low, high), origin=origin, why=f"{name}: known by construction")  # type: ignore[arg-type]


def test_a_zone_answer_is_right_in_a_zone_family_and_wrong_in_every_other() -> None:
    part = toy_part(
        _family("small", "pass", 0.0, 0.8),
        _family("large", "fail", 1.2, 2.0),
        _family("near one", "zone", 0.95, 1.05),
        _family("straddles", "pass", 0.5, 1.0, origin="challenge"),
        decision=zoned,
    )
    result = calibrate_part("T1", part)
    near, straddles = result.families[2], result.families[3]
    assert (near.right, near.zone, near.verb) == (200, 200, "left undecided")
    assert straddles.zone == straddles.cases - straddles.right > 0  # undecided where a pass was due: wrong
    assert "undecided" in straddles.describe()
    assert result.rate("zone").passed == 200 and result.rate("pass", "challenge").passed == straddles.right
    assert result.status == "failing calibration"  # the challenge family's sensitivity is short of the floor
    assert "; challenge: 0" not in result.summary() and "; challenge: " in result.summary()
    assert "200/200 in-zone left undecided" in result.summary()
    assert accepts(part, {"x": math.nan, "zone": 1.0}) is False


def test_a_decision_that_never_leaves_a_case_undecided_fails_a_zone_family() -> None:
    part = toy_part(_family("small", "pass", 0.0, 0.8), _family("large", "fail", 1.2, 2.0))
    assert calibrate_part("T1", part).status == "calibrated"
    with_zone = replace(part, calibration=(*part.calibration, _family("near one", "zone", 0.95, 1.05, "challenge")))
    result = calibrate_part("T1", with_zone)
    assert result.families[2].right == 0 and result.status == "failing calibration"
    assert result.to_entry()["challenge"]["zone"]["passed"] == 0


def test_design_families_serialise_as_before_origins_and_zones_existed() -> None:
    part = toy_part(family("small", "pass", 0.0, 0.9), family("large", "fail", 1.1, 2.0))
    result = calibrate_part("T1", part)
    entry, ledger = result.to_entry(), ledger_results(result)
    assert list(entry) == [
        *("kind", "claim", "part", "decision", "status", "summary", "sensitivity", "specificity"),
        *("floor", "level", "families", "seed", "seconds", "date"),
    ]
    assert list(entry["families"][0]) == [
        *("name", "expect", "cases", "right", "errors", "grid", "why", "wrong_ranges", "worst_wrong"),
    ]
    assert list(ledger) == ["decision", "status", "summary", "sensitivity", "specificity", "floor", "seed", "families"]
    assert ledger["families"][0] == {"name": "small", "expect": "pass", "cases": 200, "right": 200}


def test_a_challenge_family_carries_its_origin_and_a_zone_family_its_count() -> None:
    part = toy_part(
        _family("small", "pass", 0.0, 0.8),
        _family("large", "fail", 1.2, 2.0),
        _family("near one", "zone", 0.95, 1.05, "challenge"),
        decision=zoned,
    )
    fams = ledger_results(calibrate_part("T1", part))["families"]
    assert fams[2] == {
        "name": "near one",
        "expect": "zone",
        "cases": 200,
        "right": 200,
        "origin": "challenge",
        "zone": 200,
    }  # type: ignore[index]


def test_a_family_refuses_an_unknown_expectation_or_origin() -> None:
    with pytest.raises(ConfigError, match="expect must be one of"):
        Family("f", "maybe", lambda rng: uniform(0, 1, rng))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="origin must be one of"):
        Family("f", "pass", lambda rng: uniform(0, 1, rng), origin="referee")  # type: ignore[arg-type]


def test_a_design_familys_origin_leaves_the_fingerprint_as_it_was() -> None:
    from claimcheck.provenance.fingerprint import decides

    design = family("small", "pass", 0.0, 0.9)
    assert "origin" not in decides(design)
    assert decides(replace(design, origin="challenge"))["origin"] == "challenge"


def test_a_mean_sample_whose_every_unit_is_in_the_zone_is_in_the_zone() -> None:
    part = Part("m", "toy: the mean stays below 1", (X,), rule="mean", decision=zoned)
    assert decide_case(part, {"units": [{"value": 1.0}, {"value": 1.05}]})["zone"] == 1.0
    mixed = decide_case(part, {"units": [{"value": 1.0}, {"value": 0.2}, {"value": 0.4}]})
    assert "zone" not in mixed and isinstance(mixed["x"], Estimate) and mixed["x"].value == pytest.approx(0.3)


def test_the_markdown_shows_challenge_columns_zones_and_each_family_below_the_floor_with_why() -> None:
    from claimcheck.cli.calibrate import render_calibration
    from claimcheck.decide.calibration import SuiteCalibration

    part = toy_part(
        _family("small", "pass", 0.0, 0.8),
        _family("large", "fail", 1.2, 2.0),
        _family("near one", "zone", 0.95, 1.05, "challenge"),
        _family("straddles", "fail", 0.5, 1.5, "challenge"),
        decision=zoned,
    )
    text = render_calibration(SuiteCalibration((calibrate_part("T1", part),), (), (), 0.0, 0))
    assert "| challenge sensitivity | challenge specificity | outside sensitivity | outside specificity | zone" in text
    row = next(line for line in text.splitlines() if line.startswith("| T1/p |"))
    assert "| 200/200 = 1.000 [0.985] | - |" in row and "c 200/200 = 1.000 [0.985]" in row
    assert "**Families below 0.9**" in text
    assert "T1/p (challenge) straddles:" in text and "answer known because straddles: known by construction" in text
    assert "#### design families" in text and "#### challenge families" in text
    assert "- in zone: **near one**: 200/200 left undecided" in text


def test_outside_families_get_their_own_columns_summary_and_section() -> None:
    from claimcheck.cli.calibrate import render_calibration
    from claimcheck.decide.calibration import SuiteCalibration

    part = toy_part(
        _family("small", "pass", 0.0, 0.8),
        _family("large", "fail", 1.2, 2.0),
        _family("referee's miss", "fail", 0.5, 1.5, "outside"),
        decision=zoned,
    )
    result = calibrate_part("T1", part)
    assert result.origins == ("design", "outside") and "; outside: " in result.summary()
    assert result.status == "failing calibration"  # the outside family's rate counts like the others
    assert result.to_entry()["outside"]["specificity"]["n"] == 200
    text = render_calibration(SuiteCalibration((result,), (), (), 0.0, 0))
    row = next(line for line in text.splitlines() if line.startswith("| T1/p |"))
    cells = row.split(" | ")
    assert cells[4:7] == ["-", "-", "-"] and "/200 = " in cells[7]  # no challenge cases; outside: must fail
    assert "#### outside families" in text and "T1/p (outside) referee's miss:" in text
