"""Progress on long runs: per claim, units done of units planned and the time left, as lines on the terminal."""

from __future__ import annotations

import json

import pytest

from claimcheck.pytest import progress
from claimcheck.pytest.progress import Progress, clock_text, recorded_units

TOY = """
import time

import pytest

CLAIM = pytest.mark.claim("C9", "a toy claim", "toy")


@CLAIM
def test_each_seed(claim_record, claim_seed):
    time.sleep(0.05)
    claim_record.check("value", 0.5, "<=", 1.0, label="toy")


@CLAIM
def test_all_seeds(claim_record, claim_seeds):
    time.sleep(0.05)
    for s in claim_seeds:
        claim_record.check("value", 0.5, "<=", 1.0, label="toy", unit=s)


@CLAIM
def test_in_batches(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("value", 0.5, "<=", 1.0, label="toy", unit=s)


def test_not_a_claim():
    pass
"""


def _left(p: Progress) -> float:
    e = p.estimate()
    assert e is not None
    return e.seconds


EVERY_TEST = """
import claimcheck.pytest.progress as progress

progress.MIN_SECONDS = 0.0  # print a line for every test, however quick
progress.LOG_EVERY = progress.TTY_EVERY = 0.0
"""


def test_a_claim_that_has_started_is_estimated_at_its_own_pace_and_the_rest_at_the_runs() -> None:
    p = Progress(started=0.0)
    for claim, units in (("C1", 10), ("C1", 10), ("C2", 5)):
        p.plan(claim, units)
    p.plan(None)  # a test of no claim
    p.finish("C1", 10, 20.0)  # 2 s a unit
    assert p.done_of_planned() == (10, 25, "units")
    assert _left(p) == pytest.approx(10 * 2.0 + 5 * 2.0)
    p.finish("C2", 5, 1.0)  # C2 is done; C1 keeps its own pace
    assert _left(p) == pytest.approx(10 * 2.0)
    line = p.line(30.0, tty=False, claim="C1")
    assert line.startswith("claimcheck progress 60%: C1 10/20 units (1/2 tests, 20.0 s)")
    assert "run 15/25 units, 0:30 elapsed, about 0:20 left" in line


def test_a_claim_not_yet_started_is_estimated_at_its_pace_in_an_earlier_cold_run() -> None:
    p = Progress(started=0.0, pace={"C6": 20.0})
    p.plan("C1", 10)
    p.plan("C6", 3)
    p.finish("C1", 10, 5.0)
    assert _left(p) == pytest.approx(3 * 20.0)  # not 3 * 0.5, the run's pace so far
    p.finish("C6", 3, 30.0, cold=False)  # read from the cache: not a pace to remember
    assert p.paces() == {"C1": 0.5}


def test_a_test_is_estimated_at_its_own_earlier_pace_scaled_by_how_this_run_compares() -> None:
    # the issue-37 case: cheap claims finish first; the run's pace would put C6 at their cost
    p = Progress(started=0.0, test_pace={"c1": 1.0, "c6": 100.0, "c6-ctl": 5.0})
    p.plan("C1", 2, "c1")
    p.plan("C6", 6, "c6")
    p.plan("C6", 6, "c6-ctl")
    p.finish("C1", 2, 4.0, nodeid="c1")  # twice as slow as last time: the machine is busier
    assert p.load() == pytest.approx(2.0)
    assert _left(p) == pytest.approx(2.0 * (6 * 100.0 + 6 * 5.0))  # not (6 + 6) * 2.0, the run's pace so far
    p.finish("C6", 6, 1200.0, nodeid="c6")
    assert _left(p) == pytest.approx(2.0 * 6 * 5.0)  # the control at its own pace, not its claim's 200 s a unit
    assert p.finished_paces == {"c1": 2.0, "c6": 200.0}


def test_a_claim_no_run_has_timed_is_named_beside_the_estimate() -> None:
    p = Progress(started=0.0)
    p.plan("C1", 10, "c1")
    p.plan("C6", 6, "c6")
    p.finish("C1", 10, 5.0, nodeid="c1")
    e = p.estimate()
    assert e is not None and e.seconds == pytest.approx(3.0) and e.untimed == ("C6",)
    assert "about 0:03 left (or more: C6 not timed yet, counted at the run's pace)" in p.line(5.0, tty=False)


def test_a_sequential_claim_says_how_long_it_may_take_if_it_runs_to_its_cap() -> None:
    p = Progress(started=0.0)
    p.plan("C1", 2, "c1")
    p.plan("C2", 4, "c2", cap=12)  # looks of 4 up to 12
    p.finish("C1", 2, 2.0, nodeid="c1")
    e = p.estimate()
    assert e is not None and e.sequential == ("C2",)
    assert (e.seconds, e.at_cap) == pytest.approx((4.0, 12.0))
    assert "about 0:04 left (or more: C2 not timed yet" in p.line(2.0, tty=False)
    assert "; up to 0:12 if C2 run to the cap (sequential)" in p.line(2.0, tty=False)
    p.finish("C2", 8, 8.0, nodeid="c2")  # it looked twice: the plan grew to what it ran
    assert _left(p) == 0.0 and p.claims["C2"].units == 8


def test_on_a_terminal_the_line_carries_a_bar() -> None:
    p = Progress(started=0.0)
    p.plan("C1", 4)
    p.finish("C1", 1, 1.0)
    assert p.line(1.0, tty=True).startswith("claimcheck [#####...............]  25% run 1/4 units")


def test_without_a_plan_of_units_the_run_is_measured_in_tests() -> None:
    p = Progress(started=0.0)
    for _ in range(4):
        p.plan(None)
    p.finish("C1", 7, 3.0)
    assert p.done_of_planned() == (1, 4, "tests")
    assert _left(p) == pytest.approx(9.0)
    assert "C1 7 units (1/1 tests, 3.0 s), run 1/4 tests" in p.line(3.0, tty=False, claim="C1")
    assert Progress().estimate() is None


def test_times_read_as_minutes_and_hours() -> None:
    assert [clock_text(s) for s in (0, 59.2, 61, 3600, 3725)] == ["0:00", "1:00", "1:01", "1:00:00", "1:02:05"]


def test_a_payload_names_its_claim_and_distinct_units() -> None:
    record = json.dumps({"checks": [{"unit": "1"}, {"unit": "1"}, {"unit": "2"}], "exclusions": [{"unit": "3"}]})
    assert recorded_units(json.dumps({"claim_id": "C5", "record": record})) == ("C5", 3, True)
    warm = {"claim_id": "C5", "record": None, "counts": {"cached": 4}}
    assert recorded_units(json.dumps(warm)) == ("C5", 0, False)
    assert recorded_units("not json") == (None, 0, False)  # the plan counts it


def _unthrottled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line for every test and every look, however quick."""
    for name in ("MIN_SECONDS", "LOG_EVERY", "TTY_EVERY"):
        monkeypatch.setattr(progress, name, 0.0)


def test_a_serial_run_prints_units_done_of_planned_per_claim(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_toy=TOY)
    _unthrottled(monkeypatch)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=6)
    lines = [line for line in result.stdout.lines if line.startswith("claimcheck progress")]
    assert lines, result.stdout.str()
    result.stdout.fnmatch_lines(["claimcheck progress *: C9 1/9 units (1/5 tests, *s), run 1/9 units, * elapsed, *"])
    assert "C9 9/9 units (5/5 tests" in lines[-2]  # the last claim test (its 3 units in batches); then the plain test
    assert "about 0:00 left" in lines[-1]


SEQUENTIAL = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(Part("a", "toy part a", (Stat("s", "<=", 1.0),), bar=0.8),),
    controls=(Control("ctl", "a", "the toy claim should not hold here", max_pass_rate=0.3),),
    seeds=Seeds("C9-v1", 1000, {"ci": 12}, batch={"ci": 4}),
)
CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9", protocol=PROTOCOL)


@CLAIM
def test_claim_one_look(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:
            claim_record.check("s", 0.5, part="a", unit=s)
        break  # stops after its first look


@CLAIM
def test_control_every_unit(claim_record, claim_units):
    for s in claim_units.seeds:  # all 12 units, in one go
        claim_record.check("s", 2.0, control="ctl", unit=s)
"""


def test_a_sequential_claim_plans_its_first_look_and_counts_the_units_it_ran(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_toy=SEQUENTIAL)
    _unthrottled(monkeypatch)
    result = pytester.runpytest("-p", "no:randomly", "--claim-exploratory")
    lines = [line for line in result.stdout.lines if line.startswith("claimcheck progress")]
    assert lines, result.stdout.str()
    assert "C9 4/8 units (1/2 tests" in lines[0]  # each test plans a look of 4, not the cap of 12
    assert "if C9 run to the cap (sequential)" in lines[0]  # but the line says it may run to 12
    assert "C9 16/16 units (2/2 tests" in lines[-1]  # the second test ran all 12: the plan grew


def test_a_second_run_remembers_each_claim_s_cold_pace(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    pytester.runpytest("-p", "no:randomly")
    cache = pytester.parseconfigure().cache
    assert cache is not None
    pace = cache.get("claimcheck/pace/v2/default", None)
    assert set(pace) == {"C9"} and pace["C9"] > 0
    per_test = cache.get("claimcheck/pace/v3-tests/default", None)
    assert set(per_test) == {f"test_toy.py::{t}" for t in ("test_all_seeds", "test_in_batches")} | {
        f"test_toy.py::test_each_seed[seed{i}]" for i in range(3)
    }


def test_a_session_without_claim_tests_prints_no_progress(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    _unthrottled(monkeypatch)
    assert "claimcheck progress" not in pytester.runpytest().stdout.str()


def test_a_quick_run_prints_no_progress(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest()
    assert "claimcheck progress" not in result.stdout.str()


def test_under_xdist_the_controller_prints_a_line_per_finished_claim_test(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_toy=TOY)
    pytester.makeconftest(EVERY_TEST)  # the controller is another process: patch it from its conftest
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly")
    result.assert_outcomes(passed=6)
    # the workers' plan reached the controller: it counts units, as a serial run does
    result.stdout.fnmatch_lines(["claimcheck progress *: C9 */9 units (*/5 tests, *s), run */9 units, *"])
    lines = [line for line in result.stdout.lines if line.startswith("claimcheck progress")]
    # one line per finished test, but for the plain test when it ends before any claim test is seen
    assert len(lines) in (5, 6) and any("run 9/9 units" in line for line in lines)


def test_under_xdist_a_sequential_claim_says_it_may_run_to_its_cap(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_toy=SEQUENTIAL)
    pytester.makeconftest(EVERY_TEST)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "--claim-exploratory")
    lines = [line for line in result.stdout.lines if line.startswith("claimcheck progress")]
    assert lines, result.stdout.str()
    first = lines[0]  # the first test to finish, whichever it is: the plan (4 + 4 units, caps 12 + 12) is the workers'
    assert "units (1/2 tests" in first and "if C9 run to the cap (sequential)" in first, first


def test_a_worker_s_plan_is_adopted_only_before_any_test_has_finished() -> None:
    plan = {"t.py::a": ("C1", 4, 12), "t.py::b": (None, 1, 1)}
    p = Progress(started=0.0)
    p.plan(None)
    p.plan(None)  # what an xdist controller plans from the test ids alone
    assert p.adopt(plan) and p.by_units and p.tests == 2
    assert (p.claims["C1"].units, p.claims["C1"].cap) == (4, 12)
    assert not p.adopt(plan)  # once
    q = Progress(started=0.0)
    q.plan(None)
    q.finish(None, 1, 0.1)
    assert not q.adopt(plan) and not q.by_units  # a finished test would be lost: keep counting tests


def test_a_plan_that_cannot_be_read_is_ignored() -> None:
    assert progress.read_plan("not json") == {}
    assert progress.read_plan(json.dumps({"a": 1})) == {}
    assert progress.read_plan(json.dumps({"t.py::a": ["C1", 4, 12]})) == {"t.py::a": ("C1", 4, 12)}


SEQUENTIAL_TO_CAP = (
    SEQUENTIAL.split("@CLAIM")[0]
    + """
@CLAIM
def test_claim_to_cap(claim_record, claim_units):
    for seeds in claim_units.batches():
        for s in seeds:  # four in five pass: on the bar of 0.8, so no look of 12 units decides
            claim_record.check("s", 2.0 if s % 5 == 0 else 0.5, part="a", unit=s)
"""
)


def test_a_serial_run_says_how_far_a_sequential_test_still_running_has_looked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_toy=SEQUENTIAL_TO_CAP)
    _unthrottled(monkeypatch)
    result = pytester.runpytest("-p", "no:randomly", "--claim-exploratory")
    looked = [line for line in result.stdout.lines if line.startswith("claimcheck: C9 still running")]
    assert [line.split(": ", 2)[2].split(",")[0] for line in looked] == [
        "4 of up to 12 units looked at",
        "8 of up to 12 units looked at",
    ], result.stdout.str()
    assert "undecided so far (sequential)" in looked[0] and "in this test" in looked[0]
    assert "Captured stdout" not in result.stdout.str()  # written past the test's capture, not into it


def test_under_xdist_a_worker_says_how_far_its_sequential_test_has_looked_on_the_controllers_stderr(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_toy=SEQUENTIAL_TO_CAP)
    pytester.makeconftest(EVERY_TEST)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "--claim-exploratory")
    looked = [line for line in result.stderr.lines if "claimcheck: C9 still running" in line]
    assert [line.split(": ", 2)[2].split(",")[0] for line in looked] == [
        "4 of up to 12 units looked at",
        "8 of up to 12 units looked at",
    ], result.stderr.str()
    assert all(line.startswith("[gw") for line in looked)  # the worker that runs it says so
