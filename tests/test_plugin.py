"""The plugin seen from outside: options, verdicts, and the report it writes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

CLAIM_MODULE = """
import pytest

CLAIM = pytest.mark.claim("C9", "A toy claim | with <markup> and `ticks`", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.set_regime("toy", value={value}, seed=claim_seed)
    claim_record.check("toy statistic", {value}, "<=", 1.0, label="toy")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", {control}, "<=", 1.0, control="toy control", label="toy")
"""


def _claims(pytester: pytest.Pytester, value: float = 0.5, control: float = 2.0) -> None:
    pytester.makepyfile(test_toy=CLAIM_MODULE.format(value=value, control=control))


def _report(pytester: pytest.Pytester) -> str:
    return (pytester.path / "reports" / "claim-report.md").read_text()


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*claimcheck*", "*--claim-report*", "*--claim-seed*", "*--claim-budget*"])


def test_report_shows_a_reproduced_claim_and_its_control(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=6)
    text = _report(pytester)
    assert "| [C9](#claim-c9) |" in text and "**REPRODUCED**" in text
    assert "1/1 fail as required" in text and "| toy control |" in text
    assert "| base seed " in text
    result.stdout.fnmatch_lines(["*claim report written to*claim-report.md*"])


def test_report_is_written_when_a_claim_fails_and_shows_the_value(pytester: pytest.Pytester) -> None:
    _claims(pytester, value=1.75)
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=6)  # units that miss are results, not failed tests: the verdict decides
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a NOT REPRODUCED claim nobody expected fails the session
    text = _report(pytester)
    assert "**NOT REPRODUCED**" in text
    assert "seed 0: toy statistic = 1.75 (needs &lt;= 1) at toy" in text
    assert "--claim-seed 0 --claim-budget ci" in text  # the rerun command
    result.stdout.fnmatch_lines(["*C9: NOT REPRODUCED*", "*deviation: C9 is NOT REPRODUCED*"])


def test_a_control_that_does_not_fail_makes_the_claim_an_error(pytester: pytest.Pytester) -> None:
    _claims(pytester, control=0.1)
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # any ERROR verdict fails the session
    text = _report(pytester)
    assert "**ERROR**" in text and "cannot discriminate" in text


def test_a_crash_is_an_error_not_a_miss(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_crash="""
        import pytest

        @pytest.mark.claim("C9", "toy", "Sec. 9")
        def test_claim(claim_record):
            raise RuntimeError("boom")
        """
    )
    pytester.runpytest("--claim-report").assert_outcomes(failed=1)
    text = _report(pytester)
    assert "**ERROR**" in text and "RuntimeError: boom" in text


def test_a_skipped_claim_is_skipped_with_its_reason(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_skip="""
        import pytest

        @pytest.mark.claim("C9", "toy", "Sec. 9")
        def test_claim(claim_record):
            pytest.skip("no data: run claimcheck-fetch")
        """
    )
    pytester.runpytest("--claim-report").assert_outcomes(skipped=1)
    text = _report(pytester)
    assert "SKIPPED" in text and "no data: run claimcheck-fetch" in text


def test_a_claim_without_a_control_is_not_reproduced_as_proven(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_nocontrol="""
        import pytest

        @pytest.mark.claim("C9", "toy", "Sec. 9")
        def test_claim(claim_record):
            claim_record.check("s", 0.0, "<=", 1.0)
        """
    )
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the report says ERROR, so pytest does not exit 0
    assert "no negative control ran" in _report(pytester)


def test_no_flag_no_report(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.runpytest().assert_outcomes(passed=6)
    assert not (pytester.path / "reports").exists()


def test_report_path_can_be_given(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.runpytest("--claim-report=out/r.md").assert_outcomes(passed=6)
    assert "C9" in (pytester.path / "out" / "r.md").read_text()


def test_ini_pins_the_report_and_budget(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.makeini("[pytest]\nclaim_report = pinned.md\nclaim_budget = standard\nclaim_seed = 7\n")
    pytester.runpytest().assert_outcomes(passed=20)  # standard budget: 10 seeds
    text = (pytester.path / "pinned.md").read_text()
    assert re.search(r"\| base seed +\| 7 +\|", text) and "standard" in text


def test_markup_in_claim_text_cannot_break_the_table(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.runpytest("--claim-report")
    row = next(line for line in _report(pytester).splitlines() if line.startswith("| [C9]"))
    assert "A toy claim \\| with &lt;markup&gt; and \\`ticks\\`" in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 10  # nine cells, no stray separator


def test_seeds_follow_the_base_seed(pytester: pytest.Pytester) -> None:
    from claimcheck.protocol.spec import block_seed

    _claims(pytester)
    result = pytester.runpytest("--claim-seed", "40", "--collect-only", "-q")
    first = block_seed(40, 0, 0)  # a claim with no protocol: the exploratory pool of base seed 40's block
    result.stdout.fnmatch_lines([f"*test_claim[[]seed{first}]*", f"*test_claim[[]seed{first + 2}]*"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--claim-seed", "-3"], "--claim-seed: expected a non-negative integer seed, got -3"),
        (["--claim-seed", "abc"], "--claim-seed: expected a non-negative integer seed, got 'abc'"),
        (["--claim-budget", "huge"], "--claim-budget: unknown budget 'huge'; choose one of ci, standard, paper"),
        (["--claim-device", "tpu"], "--claim-device: expected auto, cpu, cuda or cuda:N, got 'tpu'"),
        (["--claim-device", "cuda:7"], "--claim-device: 'cuda:7' asks for GPU 7 but 0 CUDA device(s) are visible*"),
        (["--claim-data-dir", "nowhere"], "--claim-data-dir: data directory *nowhere does not exist*"),
        (["--claim-data-dir="], "--claim-data-dir: empty; name the folder that holds jena/*"),
        (["--claim-model-dir", "nowhere"], "--claim-model-dir: model directory *nowhere does not exist*"),
        (["--claim-baseline", "."], "--claim-baseline: baseline * is a folder, not a file; give the .json*"),
        (["--claim-report=."], "--claim-report: * is a directory*"),
        (["--claim-threads", "0"], "--claim-threads: expected a positive number of threads or auto, got '0'"),
        (["--claim-cache", "maybe"], "--claim-cache: expected one of on, off, clear, got 'maybe'"),
        (["--claim-baseline-fail"], "--claim-baseline-fail: no --claim-baseline given, so nothing would be compared*"),
        (["--claim-baseline-update"], "--claim-baseline-update: no --claim-baseline given*"),
        (
            ["--claim-baseline=", "--claim-baseline-fail=worse"],
            "--claim-baseline: empty, so nothing would be compared*",
        ),
        (
            ["--claim-baseline-fail=worse", "--claim-baseline-exact"],
            "--claim-baseline-fail, --claim-baseline-exact: no --claim-baseline given*",
        ),
        (
            ["--claim-tolerance", "x"],
            "--claim-tolerance: expected SAME*finite relative tolerances >= 0 like 0,0.05*, got 'x'",
        ),
    ],
)
def test_bad_options_are_rejected_naming_the_option(pytester: pytest.Pytester, args: list[str], needle: str) -> None:
    _claims(pytester)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{needle}*"])


def test_bad_ini_value_names_the_ini_key(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.makeini("[pytest]\nclaim_budget = fast\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*ini claim_budget: unknown budget 'fast'*"])


def test_unwritable_report_folder_is_rejected(pytester: pytest.Pytester, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    _claims(pytester)
    if os.access(locked, os.W_OK):  # root can write anywhere
        pytest.skip("running as a user who can write to a read-only folder")
    result = pytester.runpytest(f"--claim-report={locked}/r.md")
    result.stderr.fnmatch_lines(["*--claim-report: cannot write under*"])


def test_report_under_a_file_is_rejected(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.makefile(".txt", blocker="x")
    result = pytester.runpytest("--claim-report=blocker.txt/r.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *blocker.txt is a file*"])


def test_a_known_not_reproduced_claim_keeps_its_verdict_and_the_session_green(pytester: pytest.Pytester) -> None:
    _claims(pytester, value=1.75)
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "NOT REPRODUCED"\n')
    result = pytester.runpytest("--claim-report", "--claim-expectations=expected.toml")
    result.assert_outcomes(passed=6)
    assert result.ret == 0
    text = _report(pytester)
    assert "**NOT REPRODUCED** (known)" in text
    assert "toy statistic = 1.75" in text  # the reason is the current evidence, not a stored string
    result.stdout.fnmatch_lines(["*C9: NOT REPRODUCED (known)*", "*do not hold as REPRODUCED in this run: C9*"])


def test_a_known_claim_that_changes_verdict_fails_the_session(pytester: pytest.Pytester) -> None:
    _claims(pytester, value=0.5)
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "NOT REPRODUCED"\n')
    result = pytester.runpytest("--claim-expectations=expected.toml")
    result.assert_outcomes(passed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*deviation: C9 is REPRODUCED, expected.toml expects NOT REPRODUCED*"])


def test_expectations_apply_to_their_budget_only(pytester: pytest.Pytester) -> None:
    _claims(pytester, value=1.75)
    pytester.makefile(".toml", expected='[standard.C9]\nverdict = "NOT REPRODUCED"\n')
    result = pytester.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*expected.toml has no pins for budget ci (its budgets: standard): no verdict or statistic is held to a pin*"]
    )


def test_a_pinned_control_or_part_this_run_does_not_have_is_a_deviation(pytester: pytest.Pytester) -> None:
    _claims(pytester, value=0.5)
    pins = '[ci.C9]\nverdict = "REPRODUCED"\ncontrols = { "renamed control" = "fails as required" }\n'
    pytester.makefile(".toml", expected=pins + 'parts = { "gone" = "REPRODUCED" }\n')
    result = pytester.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*deviation: C9 part 'gone' is pinned in expected.toml but not in this run*",
            "*deviation: C9 control 'renamed control' is pinned in expected.toml but not in this run*",
        ]
    )


def test_a_negative_tolerance_in_the_pins_is_rejected(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    stat = '[ci.C9.stats]\n"claim / x" = { met = 1, n = 1, median = 0.5, rtol = -1 }\n'
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "REPRODUCED"\n' + stat)
    result = pytester.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected.toml: [[]ci.C9] stats 'claim / x' rtol: must be >= 0*"])


def test_a_malformed_expectations_file_is_rejected_naming_it(pytester: pytest.Pytester) -> None:
    _claims(pytester)
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "FINE"\n')
    result = pytester.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-expectations: *expected.toml: [[]ci.C9]: verdict must be one of*'FINE'*"])


def test_a_known_claim_that_is_skipped_for_lack_of_data_does_not_fail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_skip="""
        import pytest

        @pytest.mark.claim("C9", "toy", "Sec. 9")
        def test_claim(claim_record):
            pytest.skip("no data")
        """
    )
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "NOT REPRODUCED"\n')
    result = pytester.runpytest("--claim-expectations=expected.toml")
    assert result.ret == 0


@pytest.mark.parametrize(
    ("device", "worker", "count", "expected"),
    [
        ("cuda", "gw0", 4, "cuda:0"),
        ("cuda", "gw5", 4, "cuda:1"),
        ("cuda", None, 4, "cuda"),
        ("cuda:2", "gw1", 4, "cuda:2"),
        ("cpu", "gw1", 4, "cpu"),
        ("cuda", "gw3", 1, "cuda"),
    ],
)
def test_xdist_workers_spread_over_the_visible_gpus(device: str, worker: str | None, count: int, expected: str) -> None:
    from claimcheck.pytest.options import spread_device

    assert spread_device(device, worker, count) == expected
