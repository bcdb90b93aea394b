"""Verdicts from protocols: pass rates with exact intervals, INCONCLUSIVE, exclusions, pinned checks, schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.provenance.expectations import pins_of, render_pins
from claimcheck.report.rundata import RunFileError, from_dict, load

PROTOCOL_MODULE = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(
        Part("a", "toy part a", (Stat("s", "<=", 1.0),), bar={bar}, premise="the toy premise"),
        Part("b", "toy part b", (Stat("t", ">=", 0.0),), bar={bar}),
    ),
    controls=(Control("ctl", "a", "the toy claim should not hold here", max_pass_rate=0.3),),
    seeds=Seeds("C9-v1", 1000, {{"ci": {units}}}),
)
CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9", protocol=PROTOCOL)
FAIL_A = {fail_a}
FAIL_B = {fail_b}
EXCLUDE = {exclude}


@CLAIM
def test_claim(claim_record, claim_seed):
    i = claim_seed - 1000
    if i in EXCLUDE:
        claim_record.exclude("left the toy premise", part="a")
    claim_record.check("s", 2.0 if i in FAIL_A else 0.5, part="a")
    claim_record.check("t", -1.0 if i in FAIL_B else 1.0, part="b")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("s", 2.0, control="ctl")
"""


def _protocol_claims(
    pytester: pytest.Pytester,
    *,
    units: int = 10,
    bar: float = 0.8,
    fail_a: set[int] | None = None,
    fail_b: set[int] | None = None,
    exclude: set[int] | None = None,
) -> None:
    pytester.makepyfile(
        test_toy=PROTOCOL_MODULE.format(
            units=units, bar=bar, fail_a=fail_a or set(), fail_b=fail_b or set(), exclude=exclude or set()
        )
    )


def _run_json(pytester: pytest.Pytester) -> dict[str, object]:
    return json.loads((pytester.path / "reports" / "claim-report.json").read_text())  # type: ignore[no-any-return]


def _part(data: dict[str, object], name: str) -> dict[str, object]:
    claim = data["claims"][0]  # type: ignore[index]
    return next(p for p in claim["parts"] if p["name"] == name)  # type: ignore[no-any-return]


def test_the_protocol_sets_the_units_and_seeds_from_its_block(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=4)
    result = pytester.runpytest("--claim-seed", "5", "--collect-only", "-q")
    first = 5 * 8 * 2**24 + 1000  # block of base seed 5 at budget position 0, from the protocol's start
    result.stdout.fnmatch_lines([f"*test_claim[[]seed{first}]*", f"*test_claim[[]seed{first + 3}]*"])
    result = pytester.runpytest("--claim-pool", "exploratory", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_claim[[]seed0]*", "*test_claim[[]seed3]*"])


def test_twenty_passing_units_reproduce_against_a_bar_of_0_8(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=20)
    result = pytester.runpytest("--claim-report")
    assert result.ret == 0
    data = _run_json(pytester)
    assert data["claims"][0]["verdict"] == "REPRODUCED"  # type: ignore[index]
    rate = _part(data, "a")["rate"]
    assert rate["passed"] == 20 and rate["n"] == 20 and rate["low"] == pytest.approx(0.05 ** (1 / 20))  # type: ignore[index]


def test_one_failing_seed_in_ten_is_not_a_non_reproduction(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=10, fail_a={3})
    pytester.runpytest("--claim-report")
    data = _run_json(pytester)
    part = _part(data, "a")
    assert part["verdict"] == "INCONCLUSIVE"  # 9/10: [0.61, 0.99] straddles 0.8
    assert data["claims"][0]["verdict"] == "INCONCLUSIVE"  # type: ignore[index]
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "seed 1003: s = 2 (needs &lt;= 1)" in text and "test_claim\\[seed1003\\]" not in text
    assert "pytest 'test_toy.py::test_claim[seed1003]'" in text  # the failing unit's rerun command


def test_an_interval_below_the_bar_is_not_reproduced(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=10, fail_b={0, 1, 2, 3, 4, 5})
    pytester.runpytest("--claim-report")
    data = _run_json(pytester)
    assert _part(data, "a")["verdict"] == "REPRODUCED" or _part(data, "a")["verdict"] == "INCONCLUSIVE"
    # 4/10 against 0.8: P(K <= 4) = 0.0064, below 0.05/3 (Holm's first step over 2 parts and 1 control)
    assert _part(data, "b")["verdict"] == "NOT REPRODUCED"
    assert data["claims"][0]["verdict"] == "NOT REPRODUCED"  # type: ignore[index]


def test_a_part_below_the_bar_at_alpha_but_not_at_holms_level_is_inconclusive(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=10, fail_b={0, 1, 2, 3, 4})
    pytester.runpytest("--claim-report")
    data = _run_json(pytester)
    # 5/10 against 0.8: P(K <= 5) = 0.033 is below alpha = 0.05 but not below 0.05/3, which Holm needs
    # first in a family of three "fails" hypotheses (parts a and b, control ctl)
    part = _part(data, "b")
    assert part["verdict"] == "INCONCLUSIVE" and part["p_fail"] == [pytest.approx(0.0328, abs=1e-4)]
    assert "short of the multiplicity-adjusted level" in part["reason"]  # type: ignore[operator]
    assert data["claims"][0]["verdict"] == "INCONCLUSIVE"  # type: ignore[index]


def test_excluded_units_are_listed_and_not_counted(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=10, fail_a={2}, exclude={2, 7})
    pytester.runpytest("--claim-report")
    part = _part(_run_json(pytester), "a")
    assert part["rate"]["n"] == 8 and part["rate"]["passed"] == 8  # type: ignore[index]
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "Units excluded (outside the premise; not counted)" in text
    assert "- seed 1002: left the toy premise. rerun: `pytest 'test_toy.py::test_claim[seed1002]'" in text
    assert "- seed 1007: left the toy premise." in text
    assert "2 excluded (left the premise)" in text


def test_a_unit_cannot_be_excluded_from_a_part_without_a_premise(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=3)
    text = (pytester.path / "test_toy.py").read_text().replace('part="a")\n    claim', 'part="b")\n    claim', 1)
    (pytester.path / "test_toy.py").write_text(text.replace("EXCLUDE = set()", "EXCLUDE = {0}"))
    result = pytester.runpytest("--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "states no premise" in (pytester.path / "reports" / "claim-report.md").read_text()


def test_a_control_that_passes_too_often_is_an_error(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=10)
    path = pytester.path / "test_toy.py"
    path.write_text(path.read_text().replace('check("s", 2.0, control="ctl")', 'check("s", 0.1, control="ctl")'))
    result = pytester.runpytest("--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = _run_json(pytester)
    assert data["claims"][0]["verdict"] == "ERROR"  # type: ignore[index]
    assert data["claims"][0]["controls"][0]["status"] == "passes too often"  # type: ignore[index]


def test_a_threshold_that_drifts_from_the_protocol_is_refused(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=3)
    path = pytester.path / "test_toy.py"
    path.write_text(path.read_text().replace('else 0.5, part="a")', 'else 0.5, "<=", 2.0, part="a")'))
    result = pytester.runpytest("--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*ProtocolDrift*the protocol states <= 1*"])


def test_a_sub_check_regression_inside_a_known_non_reproduction_fails_the_session(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=20, fail_b=set(range(12)))  # part a holds, part b does not
    pytester.runpytest("--claim-report")
    run = load(pytester.path / "reports" / "claim-report.json")
    (pytester.path / "expected.toml").write_text(render_pins("ci", pins_of(run.results())))
    assert pytester.runpytest("--claim-expectations=expected.toml").ret == 0

    _protocol_claims(pytester, units=20, fail_a={0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, fail_b=set(range(12)))
    result = pytester.runpytest("--claim-expectations=expected.toml", "--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # still NOT REPRODUCED, but part a regressed
    result.stdout.fnmatch_lines(
        [
            "*C9: NOT REPRODUCED (known)*",
            "*deviation: C9 part a is NOT REPRODUCED, expected.toml expects REPRODUCED*",
            "*deviation: C9 a / s: met 9/20, expected.toml pins 20/20*",
        ]
    )


def test_an_old_schema_sidecar_is_refused_naming_its_version(tmp_path: Path) -> None:
    with pytest.raises(RunFileError, match=r"older schema 'claimcheck-run/1'.*reads 'claimcheck-run/3'"):
        from_dict({"schema": "claimcheck-run/1", "title": "t", "env": {}, "tests": []}, "old.json")


def test_an_old_schema_baseline_stops_the_session_naming_the_file(pytester: pytest.Pytester) -> None:
    _protocol_claims(pytester, units=3)
    pytester.makefile(".json", old=json.dumps({"schema": "claimcheck-run/1", "title": "t", "env": {}, "tests": []}))
    result = pytester.runpytest("--claim-baseline=old.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*old.json: a run file of the older schema 'claimcheck-run/1'*"])


def test_the_fingerprint_follows_what_decides_a_verdict_not_the_prose() -> None:
    from dataclasses import replace

    from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

    base = ClaimProtocol(
        "C9", 1, (Part("", "toy", (Stat("s", "<=", 1.0, why="one reason"),)),), (Control("c", "", "why"),),
        Seeds("C9-v1", 1000, {"ci": 10}), regime="one regime",
    )  # fmt: skip
    reworded = replace(base, regime="another wording", parts=(Part("", "reworded", (Stat("s", "<=", 1.0, why="x"),)),))
    moved = replace(base, parts=(Part("", "toy", (Stat("s", "<=", 1.5),)),))
    assert reworded.fingerprint() == base.fingerprint()
    assert moved.fingerprint() != base.fingerprint()
    assert replace(base, seeds=Seeds("C9-v1", 2000, {"ci": 10})).fingerprint() != base.fingerprint()


def test_a_claim_whose_parts_differ_names_the_split_everywhere_its_word_is_given(pytester: pytest.Pytester) -> None:
    # part a holds 20/20, part b fails 20/20: the claim's word is NOT REPRODUCED, and every headline
    # says part a held (a reader of one line must not take b's failure for the whole claim's)
    _protocol_claims(pytester, units=20, fail_b=set(range(20)))
    result = pytester.runpytest("--claim-report")
    want = "NOT REPRODUCED at b; REPRODUCED at a"
    result.stdout.fnmatch_lines([f"C9: NOT REPRODUCED ({want}) *"])
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert f"**0 REPRODUCED, 1 NOT REPRODUCED, 0 INCONCLUSIVE, 0 ERROR, 0 SKIPPED (C9 {want})**" in text
    assert f"**NOT REPRODUCED** ({want}) |" in text
    _protocol_claims(pytester, units=20)  # parts that agree: no split named
    pytester.runpytest("--claim-report").stdout.no_fnmatch_line("*REPRODUCED at*")


ZONE_PART_MODULE = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

STOPS = Part(
    "stops",
    "toy: the rate falls to a stall",
    (Stat("trend", "<=", -0.1), Stat("far end", "<=", -3.0, resolves=True)),
    rule="mean",
    unresolved="stopping not resolved up to 256 d",
)
PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(Part("slows", "toy: it slows", (Stat("s", "<=", 1.0),)), STOPS),
    controls=(Control("level-off", "stops", "levels off: the trend is flat", max_pass_rate=0.3),),
    seeds=Seeds("C9-v1", 1000, {{"ci": 20}}),
)
CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_seed):
    wobble = (claim_seed % 5) * 0.01
    claim_record.check("s", 0.5, part="slows")
    claim_record.check("trend", {trend} + wobble, part="stops")
    claim_record.check("far end", {far} + wobble, part="stops")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("trend", 0.0 + (claim_seed % 5) * 0.01, control="level-off")
    claim_record.check("far end", -9.0, control="level-off")  # at a stall: would pass if it counted
"""


@pytest.mark.parametrize(
    ("trend", "far", "verdict", "unresolved"),
    [
        (-0.8, -1.3, "INCONCLUSIVE", "stopping not resolved up to 256 d"),  # still falling, far from a stall
        (-0.8, -6.0, "REPRODUCED", None),  # at a stall: resolved
        (0.0, -1.3, "NOT REPRODUCED", None),  # levelled off: the bound fails
    ],
)
def test_a_zone_part_is_undecided_while_only_its_bounds_hold_and_its_control_is_judged_by_them(
    pytester: pytest.Pytester, trend: float, far: float, verdict: str, unresolved: str | None
) -> None:
    pytester.makepyfile(test_toy=ZONE_PART_MODULE.format(trend=trend, far=far))
    result = pytester.runpytest("--claim-report")
    data = _run_json(pytester)
    stops = _part(data, "stops")
    assert stops["verdict"] == verdict and stops.get("unresolved") == unresolved
    claim = data["claims"][0]  # type: ignore[index]
    assert claim["controls"][0]["status"] == "fails as required"  # the stall statistic does not let it pass
    if unresolved:
        assert "not resolved: stopping not resolved up to 256 d" in str(stops["reason"])
        want = "INCONCLUSIVE at stops (stopping not resolved up to 256 d); REPRODUCED at slows"
        result.stdout.fnmatch_lines([f"C9: INCONCLUSIVE ({want}) *"])
        text = (pytester.path / "reports" / "claim-report.md").read_text()
        assert f"(C9 {want})" in text
        why = "part stops: stopping not resolved up to 256 d; its tested range cannot resolve it, and more units do not"
        assert why in text and "units would decide" not in text  # more units are not the answer to a range


def test_a_zone_part_must_say_what_it_cannot_resolve_and_what_resolves_it() -> None:
    from claimcheck.errors import ConfigError
    from claimcheck.protocol.spec import Part, Stat

    bound, resolving = Stat("trend", "<=", -0.1), Stat("far end", "<=", -3.0, resolves=True)
    with pytest.raises(ConfigError, match="states what it cannot resolve"):
        Part("stops", "toy", (bound, resolving), rule="mean")
    with pytest.raises(ConfigError, match="states what it cannot resolve"):
        Part("stops", "toy", (bound,), rule="mean", unresolved="not resolvable")
    with pytest.raises(ConfigError, match="rule 'mean' or 'estimate'"):
        Part("stops", "toy", (bound, resolving), unresolved="not resolvable")
    with pytest.raises(ConfigError, match="does not resolve it too"):
        Part("stops", "toy", (resolving,), rule="mean", unresolved="not resolvable")
