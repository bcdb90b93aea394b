"""The CLI's ``-o`` writes over only what claimcheck wrote, and ``expectations -o`` keeps the other claims' pins."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from claimcheck.cli.main import main
from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report.rundata import RunData
from claimcheck.report.write import write_report

MODULE = "def test_c2():\n    assert True\n"

EXISTING = """# What this suite is known to give at budget ci (the team's notes stay).

[ci]
base_seed = 0  # the block these pins were measured on
pool = "confirmatory"

[ci.C1]
verdict = "REPRODUCED"
parts = { "claim" = "REPRODUCED" }

[ci.C1.stats]
"claim / toy statistic" = { met = 3, n = 3, median = 0.5, rtol = 0.05 }

[ci.C9]
verdict = "NOT REPRODUCED"

[standard]
base_seed = 0
pool = "confirmatory"

[standard.C5]
verdict = "INCONCLUSIVE"
why = "the Jena file is short"
"""


def _run_json(tmp_path: Path) -> Path:
    rec = ClaimRecorder(claim_id="C9", seed=0)
    rec.check("toy statistic", 0.5, "<=", 1.0)
    test = TestOutcome("test_toy.py::test_claim", "C9", "toy", "Sec. 9", "passed", record=rec)
    run = RunData(title="toy", env={"run id": "r1", "date": "today", "budget": "ci: toy"}, tests=[test])
    write_report(run, tmp_path / "run" / "claim-report.md", figures=False)
    return tmp_path / "run" / "claim-report.json"


def test_render_onto_a_file_claimcheck_did_not_write_is_refused_saying_how_to_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path)
    module = tmp_path / "test_c2_monotone.py"
    module.write_text(MODULE)
    assert main(["render", str(run), "-o", str(module)]) == 2
    assert module.read_text() == MODULE
    err = capsys.readouterr().err
    assert str(module) in err and "--force" in err
    assert main(["render", str(run), "-o", str(module), "--force"]) == 0
    assert "C9" in module.read_text()


def test_render_onto_its_own_earlier_output_needs_no_force(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    out = tmp_path / "again.md"
    assert main(["render", str(run), "-o", str(out)]) == 0
    assert main(["render", str(run), "-o", str(out)]) == 0
    out.write_text("the user's edit")
    assert main(["render", str(run), "-o", str(out)]) == 2
    assert out.read_text() == "the user's edit"


def test_matrix_onto_a_file_claimcheck_did_not_write_is_refused(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    notes = tmp_path / "notes.md"
    notes.write_text("mine")
    assert main(["matrix", str(run), "-o", str(notes)]) == 2
    assert notes.read_text() == "mine"


def test_expectations_into_an_existing_file_keeps_the_other_claims_pins(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    pins = tmp_path / "expectations.toml"
    pins.write_text(EXISTING)
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(pins)]) == 0
    text = pins.read_text()
    data = tomllib.loads(text)
    assert data["ci"]["C1"]["stats"]["claim / toy statistic"]["median"] == 0.5  # another claim's pin is kept
    assert data["ci"]["C9"]["verdict"] != "NOT REPRODUCED"  # this run's claim is updated
    assert data["standard"]["C5"] == {"verdict": "INCONCLUSIVE", "why": "the Jena file is short"}
    assert "the team's notes stay" in text


def test_expectations_into_a_file_that_is_not_an_expectations_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path)
    module = tmp_path / "conftest.py"
    module.write_text(MODULE)
    assert main(["expectations", str(run), "-o", str(module)]) == 2
    assert module.read_text() == MODULE and "--force" in capsys.readouterr().err


def test_expectations_pinned_on_another_block_are_not_merged_into(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    pins = tmp_path / "expectations.toml"
    pins.write_text(EXISTING.replace("[ci]\nbase_seed = 0", "[ci]\nbase_seed = 7"))
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(pins)]) == 2
    assert "base_seed = 7" in pins.read_text()


def test_re_pinning_keeps_a_tolerance_set_by_hand(tmp_path: Path) -> None:
    """An atol (a statistic's resolution, say one sentence of 256) survives a new run's pins; the median moves."""
    run = _run_json(tmp_path)
    pins = tmp_path / "expectations.toml"
    hand = (
        '\n[ci.C9.stats]\n"claim / toy statistic" = { met = 1, n = 1, median = 0.4, rtol = 0.01, atol = 0.00390625 }\n'
    )
    pins.write_text(
        EXISTING.replace('[ci.C9]\nverdict = "NOT REPRODUCED"\n', '[ci.C9]\nverdict = "NOT REPRODUCED"\n' + hand)
    )
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(pins)]) == 0
    got = tomllib.loads(pins.read_text())["ci"]["C9"]["stats"]["claim / toy statistic"]
    assert got == {"met": 1, "n": 1, "median": 0.5, "rtol": 0.01, "atol": 0.00390625}


def test_a_pins_atol_is_a_floor_under_its_relative_tolerance() -> None:
    from claimcheck.provenance.expectations import _moved

    assert _moved(-0.0166015625, -0.017578125, 0.05)  # a quarter sentence of 256 moves 6%: past rtol alone
    assert not _moved(-0.0166015625, -0.017578125, 0.05, 1 / 256)  # within one sentence
    assert _moved(-0.0166015625, -0.0166015625 - 2 / 256, 0.05, 1 / 256)  # two sentences are a change
    assert not _moved(100.0, 104.0, 0.05, 1 / 256)  # a large median keeps its relative tolerance


def _rerun_json(tmp_path: Path, value: float) -> Path:
    """The same block as ``_run_json``'s under other numerics, its one statistic at ``value``."""
    rec = ClaimRecorder(claim_id="C9", seed=0)
    rec.check("toy statistic", value, "<=", 1.0)
    test = TestOutcome("test_toy.py::test_claim", "C9", "toy", "Sec. 9", "passed", record=rec)
    env = {"run id": "r2", "date": "today", "budget": "ci: toy", "numerics": "cpu B; vendor B; 1 thread"}
    write_report(RunData(title="toy", env=env, tests=[test]), tmp_path / "rerun" / "claim-report.md", figures=False)
    return tmp_path / "rerun" / "claim-report.json"


@pytest.mark.parametrize("pinned_median", [0.5, 0.45])
def test_re_pinning_the_same_run_with_more_reruns_keeps_the_spread_measured_before(
    tmp_path: Path, pinned_median: float
) -> None:
    """The spread of earlier reruns (on a host one cannot rerun now) stays when the same run is pinned again;
    pins of another measurement (the median moved) start afresh."""
    run, rerun = _run_json(tmp_path), _rerun_json(tmp_path, 0.51)
    before = (
        f'\n[ci.C9.stats]\n"claim / toy statistic" = {{ met = 1, n = 1, median = {pinned_median}, rtol = 0.05, '
        'rounding = 0.3, chaotic = "measured met 0-1 of 1" }\n'
    )
    pins = tmp_path / "expectations.toml"
    pins.write_text(
        EXISTING.replace(
            '[ci.C9]\nverdict = "NOT REPRODUCED"\n',
            '[ci.C9]\nverdict = "NOT REPRODUCED"\nrounding = ["cpu A; vendor A; 1 thread"]\n' + before,
        )
    )
    assert main(["expectations", str(run), "--budget", "ci", "--rounding", str(rerun), "-o", str(pins)]) == 0
    c9 = tomllib.loads(pins.read_text())["ci"]["C9"]
    got = c9["stats"]["claim / toy statistic"]
    if pinned_median == 0.5:  # the same measurement: both reruns' spread
        assert c9["rounding"] == ["cpu A; vendor A; 1 thread", "cpu B; vendor B; 1 thread"]
        assert (got["rounding"], got["chaotic"]) == (0.3, "measured met 0-1 of 1")
    else:
        assert c9["rounding"] == ["cpu B; vendor B; 1 thread"]
        assert got["rounding"] == pytest.approx(0.02) and "chaotic" not in got


@pytest.mark.parametrize("terminal", [True, False])
def test_audit_prints_its_summary_line_once_on_a_terminal_and_on_stderr_when_stdout_goes_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    run, pins = _run_json(tmp_path), tmp_path / "pins.toml"
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(pins)]) == 0
    capsys.readouterr()
    monkeypatch.setattr("sys.stdout.isatty", lambda: terminal)
    assert main(["audit", str(run), "--expectations", str(pins), "--history", str(tmp_path / "h")]) == 0
    out, err = capsys.readouterr()
    assert "1 of 1 verdicts the same" in out  # the markdown on stdout holds it
    assert ("verdicts the same" in err) is not terminal


def test_audit_refuses_a_budget_the_run_did_not_draw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ci run audited with --budget standard would pair nothing and report moves that never happened."""
    run, pins = _run_json(tmp_path), tmp_path / "pins.toml"
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(pins)]) == 0
    capsys.readouterr()
    assert main(["audit", str(run), "--expectations", str(pins), "--budget", "standard"]) == 2
    err = capsys.readouterr().err
    assert "--budget standard:" in err and "ran budget ci" in err and "leave --budget out" in err
