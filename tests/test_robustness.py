"""Robustness: interrupted runs, crashed workers, undefined statistics, hostile text, no pickle."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _report(pytester: pytest.Pytester) -> str:
    return (pytester.path / "reports" / "claim-report.md").read_text()


def test_ctrl_c_leaves_a_report_marked_incomplete_listing_what_did_not_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_stop="""
        import pytest

        @pytest.mark.claim("T1", "toy", "toy")
        def test_a(claim_record):
            claim_record.check("s", 0, "<=", 1)
            claim_record.check("s", 2, "<=", 1, control="c")

        @pytest.mark.claim("T2", "toy", "toy")
        def test_b():
            raise KeyboardInterrupt

        @pytest.mark.claim("T3", "toy", "toy")
        def test_c():
            pass
        """
    )
    result = pytester.runpytest("--claim-report", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = _report(pytester)
    assert "**INCOMPLETE RUN**" in text
    assert "did not run or finish: test_stop.py::test_c" in text
    assert "| [T1](#claim-t1) |" in text


def test_a_crashed_xdist_worker_is_an_error_and_the_report_is_still_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_crash="""
        import os
        import pytest

        @pytest.mark.claim("T1", "toy", "toy")
        def test_dies(claim_record):
            os._exit(3)

        @pytest.mark.claim("T2", "toy", "toy")
        def test_lives(claim_record):
            claim_record.check("s", 0, "<=", 1)
            claim_record.check("s", 2, "<=", 1, control="c")
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "--claim-report")
    assert result.ret != 0
    text = _report(pytester)
    assert re.search(r"\| \[T2\]\(#claim-t2\) \|.*\*\*REPRODUCED\*\*", text)
    assert re.search(r"\| \[T1\]\(#claim-t1\) \|.*\*\*ERROR\*\*", text)  # the crashed test's claim has a row
    assert "worker 'gw" in text and "crashed while running" in text


def test_an_undefined_control_statistic_does_not_count_as_failing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_nan="""
        import pytest

        @pytest.mark.claim("T1", "toy", "toy")
        def test_a(claim_record):
            claim_record.check("s", 0, "<=", 1)
            claim_record.check("s", float("nan"), "<=", 1, control="c")
        """
    )
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "**ERROR**" in _report(pytester)


def test_markup_in_notes_and_messages_is_escaped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_text="""
        import pytest

        @pytest.mark.claim("T1", "toy", "toy")
        def test_a(claim_record):
            claim_record.note("sentence with | pipe, <b>tag</b> and `tick`")
            claim_record.check("s", 0, "<=", 1, label="a|b")
            claim_record.check("s", 2, "<=", 1, control="c")
            pytest.fail("bad <script> | text `x`")
        """
    )
    pytester.runpytest("--claim-report")
    text = _report(pytester)
    assert "<b>" not in text and "<script>" not in text
    assert "sentence with \\| pipe, &lt;b&gt;tag&lt;/b&gt; and \\`tick\\`" in text


def test_nothing_in_the_package_unpickles() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "claimcheck").rglob("*.py"))
    assert "import pickle" not in sources
    assert "allow_pickle=True" not in sources
    for call in re.findall(r"torch\.load\([^)]*\)", sources):
        assert "weights_only=True" in call, call
