"""The session decides each claim once and writes its report set once: every writer reads the same results.

A spy wraps ``verdicts.decide`` (the one function that turns a claim's test outcomes into its
verdict) and counts its calls per claim; a second spy counts the commits of the report set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from claimcheck.decide import verdicts
from claimcheck.report import write as reportfiles

CLAIMS = """
import pytest

ONE = pytest.mark.claim("C1", "a toy claim", "Sec. 1")
TWO = pytest.mark.claim("C2", "another toy claim", "Sec. 2")


@ONE
def test_one(claim_record, claim_seed):
    claim_record.check("s", 0.5, "<=", 1.0, label="toy")
    claim_record.curve("loss", [3.0, 2.0, 1.0], group="C1 loss")


@ONE
def test_one_control(claim_record, claim_seed):
    claim_record.check("s", 2.0, "<=", 1.0, control="shuffled", label="toy")


@TWO
def test_two(claim_record, claim_seed):
    claim_record.check("t", 0.25, "<=", 1.0, label="toy")


@TWO
def test_two_control(claim_record, claim_seed):
    claim_record.check("t", 3.0, "<=", 1.0, control="shuffled", label="toy")
"""


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Counter[str], list[str]]]:
    """Count ``decide`` calls per claim id, and report-set commits by run id."""
    decisions: Counter[str] = Counter()
    commits: list[str] = []
    decide, commit = verdicts.decide, reportfiles.commit

    def spy_decide(tests: Any, *args: Any, **kwargs: Any) -> Any:
        decisions[tests[0].claim_id] += 1
        return decide(tests, *args, **kwargs)

    def spy_commit(report: Any, run_id: str, staged: Any) -> Any:
        commits.append(run_id)
        return commit(report, run_id, staged)

    monkeypatch.setattr(verdicts, "decide", spy_decide)
    monkeypatch.setattr(reportfiles, "commit", spy_commit)
    yield decisions, commits


def test_each_claim_is_decided_once_and_the_set_committed_once(
    pytester: pytest.Pytester, counted: tuple[Counter[str], list[str]]
) -> None:
    decisions, commits = counted
    pytester.makepyfile(test_toy=CLAIMS)
    result = pytester.runpytest_inprocess("--claim-report", "--claim-autosave")
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["C1: REPRODUCED*", "C2: REPRODUCED*", "*claim report written to*1 figures*"])
    assert decisions == {"C1": 1, "C2": 1}  # the JSON, markdown, figures, terminal and history read one decision
    assert len(commits) == 1


def test_with_a_baseline_each_run_is_decided_once(
    pytester: pytest.Pytester, counted: tuple[Counter[str], list[str]]
) -> None:
    decisions, commits = counted
    pytester.makepyfile(test_toy=CLAIMS)
    pytester.runpytest_inprocess("--claim-report=base.md").assert_outcomes(passed=12)
    decisions.clear()
    commits.clear()
    args = ("--claim-report", "--claim-baseline=base.json", "--claim-baseline-fail", "--claim-baseline-update")
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["*claim baseline*", "baseline updated*"])
    # once for this run, once for the baseline read from its file: the pins, the margins check, the comparison,
    # the gate, the report and the accepted baseline all reuse them
    assert decisions == {"C1": 2, "C2": 2}
    assert len(commits) == 1


def test_the_spy_sees_a_second_decision(pytester: pytest.Pytester, counted: tuple[Counter[str], list[str]]) -> None:
    decisions, _ = counted
    pytester.makepyfile(test_toy=CLAIMS)
    pytester.runpytest_inprocess("--claim-report").assert_outcomes(passed=12)
    from claimcheck.report.rundata import load

    run = load(pytester.path / "reports" / "claim-report.json")
    assert decisions == {"C1": 2, "C2": 2}  # the file read back is decided again, once
    run.results()
    run.results()
    assert decisions == {"C1": 2, "C2": 2}  # and its decision kept
    run.decide()
    assert decisions == {"C1": 3, "C2": 3}  # the count would show a writer that decides again


def test_a_record_travels_as_the_same_json_as_to_json() -> None:
    import json

    from claimcheck.decide.record import ClaimRecorder
    from claimcheck.report.rundata import record_json

    rec = ClaimRecorder(claim_id="C1", seed=3)
    rec.check("s", 0.5, "<=", 1.0, label="toy", unit=3)
    rec.check("s", float("nan"), "<=", 1.0, control="shuffled", unit=3)
    rec.curve("loss", [3.0, 2.0, float("inf")], group="C1 loss")
    rec.set_regime("toy", mu=(1, 2))
    assert record_json(rec) == rec.to_json()  # the same text, NaN and inf included
    assert json.loads(record_json(rec))["checks"][0]["value"] == 0.5


def test_one_site_in_the_core_sets_the_sessions_exit_status() -> None:
    """Issue 50: the session's status is set in one place, by the one function that holds the precedence."""
    import ast
    from pathlib import Path

    core = Path(__file__).resolve().parents[1] / "claimcheck"
    sites = []
    for path in sorted(core.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr == "exitstatus":
                        value = node.value
                        called = (
                            value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else ""
                        )
                        sites.append((path.relative_to(core.parent).as_posix(), called))
    assert sites == [("claimcheck/pytest/session.py", "exit_status")]
