"""Smaller faults: a unit past its time limit, infinite tolerances, a report path through a link, machine paths."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from toys import toy

from claimcheck.errors import ConfigError
from claimcheck.pytest.deadline import UnitTimeout, deadline
from claimcheck.pytest.options import parse_timeout, parse_tolerance
from claimcheck.report.paths import Places

TOY = """
import time

import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed):
    if claim_seed == 1:
        time.sleep(30)  # a unit ten times slower than the rest
    claim_record.check("toy statistic", 0.5, "<=", 1.0)


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")
"""


def test_a_unit_past_the_time_limit_is_an_error_naming_it_and_the_limit(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest("--claim-report", "--claim-timeout=0.5")
    assert result.duration < 20
    result.assert_outcomes(passed=5, failed=1)
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "**ERROR**" in text
    assert "UnitTimeout: test_toy.py::test_claim\\[seed1\\] ran past --claim-timeout 0.5 s" in text


def test_the_time_limit_has_an_ini_twin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    pytester.makeini("[pytest]\nclaim_timeout = 0.5\n")
    result = pytester.runpytest("--claim-report")
    result.assert_outcomes(passed=5, failed=1)


@pytest.mark.parametrize("text", ["0.5", "3", "0"])
def test_a_time_limit_is_a_finite_number_of_seconds(text: str) -> None:
    assert parse_timeout(text, "--claim-timeout") == float(text)


@pytest.mark.parametrize("text", ["-1", "inf", "nan", "soon"])
def test_a_time_limit_that_is_not_a_finite_number_of_seconds_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--claim-timeout: expected a number of seconds"):
        parse_timeout(text, "--claim-timeout")


@pytest.mark.parametrize("text", ["inf,inf", "1e-6,inf", "inf", "nan", "1e-6,nan", "-inf,0.05"])
def test_a_tolerance_that_is_not_finite_is_refused(text: str) -> None:
    with pytest.raises(
        ConfigError, match=r"--claim-tolerance: expected SAME\[,CROSS\] finite relative tolerances >= 0"
    ):
        parse_tolerance(text, "--claim-tolerance")


def test_an_infinite_tolerance_stops_the_session_at_start(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest("--claim-tolerance=inf,inf")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--claim-tolerance: expected SAME[[],CROSS[]] finite relative tolerances >= 0*, got 'inf,inf'*"]
    )


QUICK = toy()


def test_a_report_path_through_a_symbolic_link_is_followed_and_said_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=QUICK)
    assert pytester.runpytest("--claim-report=out/real.md").ret == pytest.ExitCode.OK
    link = pytester.path / "link.md"
    link.symlink_to(pytester.path / "out" / "real.md")
    result = pytester.runpytest("--claim-report=link.md")
    assert result.ret == pytest.ExitCode.OK
    assert link.is_symlink() and not (pytester.path / "link.json").exists()
    text = (pytester.path / "out" / "real.md").read_text()
    assert "| report path | link.md is a symbolic link to out/real.md: the set is written beside the target |" in text
    result.stdout.fnmatch_lines(["*claim report written to*out/real.md*through the symbolic link*link.md*"])


def test_a_link_to_a_file_claimcheck_did_not_write_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=QUICK)
    notes = pytester.path / "notes.md"
    notes.write_text("mine")
    (pytester.path / "link.md").symlink_to(notes)
    result = pytester.runpytest("--claim-report=link.md")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert notes.read_text() == "mine"


def test_machine_paths_are_written_relative_to_the_project_home_data_folder_and_environment(tmp_path: Path) -> None:
    root, home, data, venv = tmp_path / "proj", tmp_path / "home", tmp_path / "shared" / "data", tmp_path / "venv"
    places = Places.of(root, home=home, data_dir=data, data_source="$CLAIMCHECK_DATA_DIR", venv=venv)
    text = (
        f"file={data}/jena/x.csv; model from {venv}/lib/site-packages/m; test {root}/claims/test_c1.py; "
        f"cache {home}/.cache/claimcheck; cwd {root}; other {root}x/y; {tmp_path}/elsewhere"
    )
    assert places.shorten(text) == (
        "file=$CLAIMCHECK_DATA_DIR/jena/x.csv; model from $VIRTUAL_ENV/lib/site-packages/m; test claims/test_c1.py; "
        f"cache ~/.cache/claimcheck; cwd .; other {root}x/y; {tmp_path}/elsewhere"
    )


DATA_CLAIM = """
import os

import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed, claim_settings):
    claim_record.set_regime("data", file=str(claim_settings.data_dir / "jena" / "x.csv"), cwd=os.getcwd())
    claim_record.check("toy statistic", 2.0, "<=", 1.0)


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 3.0, "<=", 1.0, control="toy control")
"""


def test_the_report_carries_no_absolute_path_of_the_machine_that_made_it(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path_factory.mktemp("shared-data")
    monkeypatch.setenv("CLAIMCHECK_DATA_DIR", str(data))
    pytester.makepyfile(test_toy=DATA_CLAIM)
    cache = pytester.path / "cache"
    pytester.runpytest_subprocess("--claim-report", f"--claim-cache-dir={cache}", f"--rootdir={pytester.path}")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    json_text = (pytester.path / "reports" / "claim-report.json").read_text()
    for absolute in (str(data), str(pytester.path)):
        assert absolute not in text and absolute not in json_text
    assert "file=$CLAIMCHECK_DATA_DIR/jena/x.csv" in text and "| data dir | $CLAIMCHECK_DATA_DIR |" in text
    rerun = next(line for line in text.splitlines() if "rerun: `pytest" in line)
    assert '--claim-data-dir "$CLAIMCHECK_DATA_DIR"' in rerun
    assert os.environ["CLAIMCHECK_DATA_DIR"] == str(data)


def test_a_nested_limit_never_outlives_the_one_around_it_and_gives_it_back() -> None:
    with pytest.raises(UnitTimeout, match=r"outer ran past --claim-timeout 0\.3 s"):
        with deadline(0.3, "outer"), deadline(5, "inner"):
            time.sleep(3)
    with pytest.raises(UnitTimeout, match="inner ran past"):
        with deadline(5, "outer"), deadline(0.2, "inner"):
            time.sleep(3)
    start = time.monotonic()
    with pytest.raises(UnitTimeout, match="outer ran past"):
        with deadline(0.6, "outer"):
            with deadline(0.2, "inner"):
                pass
            time.sleep(3)
    assert time.monotonic() - start < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
