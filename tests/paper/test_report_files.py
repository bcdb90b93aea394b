"""The report's files: JSON sidecar, figures, re-rendering, baselines, xdist, CI step summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.cli.main import main as cli_main
from claimcheck.gate.decision import EXIT_UNDECIDED, EXIT_WORSE

TRAINING_CLAIM = """
import pytest
from qin2025.c2.monotone import regime_of
from qin2025.curves import contraction, log_linear_fit
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig, train

CLAIM = pytest.mark.claim("T1", "a tiny model trains linearly", "toy")


def record_linear_rate(rec, traj, label, control=None):
    rec.set_regime(label, **regime_of(traj))
    rec.check("worst-step envelope T*log10(c)", contraction(traj.loss).orders, "<=", -2.0, control=control, label=label)
    rec.check("log-linear fit R^2", log_linear_fit(traj.loss).r2, ">=", 0.9, control=control, label=label)
    rec.curve(label, traj.loss.tolist(), group="training loss per GD step")


@CLAIM
@pytest.mark.parametrize("d", [24, 32])
def test_rate(claim_record, claim_seed, d):
    data = make_synthetic(2, 4, d, 1, claim_seed)
    traj = train(ModelConfig(d=d, d_qk=4), TrainConfig(steps={steps}, power_iters=50), data, claim_seed)
    record_linear_rate(claim_record, traj, label=f"d={{d}}")


@CLAIM
def test_control(claim_record, claim_seed):
    data = make_synthetic(16, 8, 4, 1, claim_seed)
    traj = train(ModelConfig(d=4, d_qk=2), TrainConfig(steps={steps}, power_iters=50), data, claim_seed)
    record_linear_rate(claim_record, traj, label="d=4", control="underparameterised")
"""


CHEAP_CLAIM = """
import numpy as np
import pytest

CLAIM = pytest.mark.claim("T1", "a cheap statistic stays below one", "toy")


@CLAIM
def test_value(claim_record, claim_seed):
    value = {scale} * np.random.default_rng(claim_seed).random()
    claim_record.check("scaled uniform", value, "<=", 1.0, label="toy")
    claim_record.curve("value", [value, value / 2], group="toy curve")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("scaled uniform", 2.0 + claim_seed, "<=", 1.0, control="shifted", label="toy")
"""


def _toy(pytester: pytest.Pytester, steps: int = 100) -> None:
    pytester.makepyfile(test_tiny=TRAINING_CLAIM.format(steps=steps))


def _cheap(pytester: pytest.Pytester, scale: float = 0.5) -> None:
    pytester.makepyfile(test_tiny=CHEAP_CLAIM.format(scale=scale))


def _json(pytester: pytest.Pytester, name: str = "reports/claim-report.json") -> dict:  # type: ignore[type-arg]
    return json.loads((pytester.path / name).read_text())  # type: ignore[no-any-return]


def test_json_sidecar_and_figures_hold_every_value(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    pytester.runpytest("--claim-report").assert_outcomes(passed=9)
    data = _json(pytester)
    assert data["schema"] == "claimcheck-run/3"
    for key in ("python", "torch", "numpy", "cpu", "torch threads", "cuda", "gpu", "git commit", "git tree dirty"):
        assert key in data["env"]
    assert data["claims"][0]["verdict"] == "REPRODUCED"
    values = [c["value"] for t in data["tests"] for c in t["record"]["checks"]]
    assert len(values) == 2 * 9  # two statistics per run, 6 claim runs + 3 controls
    assert all(t["record"]["regime"] for t in data["tests"] if "rate" in t["nodeid"])
    figure = pytester.path / "reports" / "claim-report-figures" / "T1-training-loss-per-gd-step.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "](claim-report-figures/T1-training-loss-per-gd-step.png)" in text


def test_json_round_trips_into_the_same_markdown(pytester: pytest.Pytester, tmp_path: Path) -> None:
    _cheap(pytester, scale=3.0)
    pytester.runpytest("--claim-report")
    out = tmp_path / "claim-report.md"
    assert cli_main(["render", str(pytester.path / "reports" / "claim-report.json"), "-o", str(out)]) == 0
    assert out.read_text() == (pytester.path / "reports" / "claim-report.md").read_text()
    assert (tmp_path / "claim-report-figures" / "T1-toy-curve.png").exists()


def test_xdist_and_serial_runs_agree(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    serial = pytester.runpytest_subprocess("--claim-report=serial.md")
    serial.assert_outcomes(passed=9)
    parallel = pytester.runpytest_subprocess("-n", "2", "--claim-report=parallel.md")
    parallel.assert_outcomes(passed=9)
    a, b = _json(pytester, "serial.json"), _json(pytester, "parallel.json")
    assert a["claims"] == b["claims"]

    def checks(data: dict) -> dict:  # type: ignore[type-arg]
        return {t["nodeid"]: t["record"]["checks"] for t in data["tests"]}

    assert checks(a) == checks(b)


def test_baseline_flags_a_moved_statistic_and_a_changed_verdict(pytester: pytest.Pytester) -> None:
    _cheap(pytester, scale=0.5)
    pytester.runpytest("--claim-report=base.md").assert_outcomes(passed=6)
    _cheap(pytester, scale=3.0)  # the statistic triples: T1 no longer reproduces
    result = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json")
    text = (pytester.path / "now.md").read_text()
    assert "## Comparison with baseline" in text
    assert "T1: REPRODUCED -> **NOT REPRODUCED** (regression)" in text
    assert "| T1 | scaled uniform | 0.2" in text  # the statistic's row: baseline median, now, paired change
    result.stdout.fnmatch_lines(["claim baseline: FAIL — *", "*worse: T1: REPRODUCED -> NOT REPRODUCED*"])


def test_a_move_within_the_margin_passes_the_gate_and_fails_only_the_exact_check(pytester: pytest.Pytester) -> None:
    _cheap(pytester, scale=0.5)
    pytester.runpytest("--claim-report=base.md").assert_outcomes(passed=6)
    _cheap(pytester, scale=0.51)  # still reproduces; the statistic moves by 2%, far less than seed to seed
    gate = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-fail")
    assert gate.ret == 0
    gate.stdout.fnmatch_lines(["claim baseline: PASS — 2 equivalent, 0 changed (worse 0, better 0), 0 undecided"])
    report = (pytester.path / "now.md").read_text()
    assert report.index("**claim baseline: PASS") < report.index("## Environment")
    assert report.index("## Comparison with baseline") < report.index("## Environment")
    gate_json = _json(pytester, "now.json")["gate"]
    assert gate_json["status"] == "PASS" and gate_json["statistics"][0]["detectable"] is None  # 3 units: no change
    assert "none: too few units" in report  # is shown on 3 units (the sign-flip test's floor, 1/8), and it says so
    exact = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-exact")
    assert exact.ret == pytest.ExitCode.TESTS_FAILED
    exact.stdout.fnmatch_lines(["*not bit-identical to the baseline: T1 scaled uniform: 3 of 3 values differ*"])
    same = pytester.runpytest("--claim-report=again.md", "--claim-baseline=now.json", "--claim-baseline-exact")
    assert same.ret == 0
    assert "No verdict changed." in (pytester.path / "again.md").read_text()


def test_baseline_fail_holds_a_run_to_the_baselines_verdicts(pytester: pytest.Pytester) -> None:
    _cheap(pytester, scale=3.0)
    base = pytester.runpytest("--claim-report=base.md")
    base.assert_outcomes(passed=6)
    assert base.ret == pytest.ExitCode.TESTS_FAILED  # T1 NOT REPRODUCED, and nothing says it is known
    same = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-fail")
    same.assert_outcomes(passed=6)  # known from the trusted run: not a regression
    assert same.ret == 0
    _cheap(pytester, scale=0.5)
    better = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-fail=worse")
    assert better.ret == 0  # a verdict that got better is reported, not failed
    assert "deviation:" not in better.stdout.str()
    better.stdout.fnmatch_lines(["*better (fails nothing): T1: NOT REPRODUCED -> REPRODUCED*"])
    _cheap(pytester, scale=3.0)
    pytester.runpytest("--claim-report=base.md")
    _cheap(pytester, scale=0.5)
    pytester.runpytest("--claim-report=base.md")  # a reproducing baseline; now the verdict falls
    _cheap(pytester, scale=3.0)
    worse = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-fail=worse")
    assert worse.ret == EXIT_WORSE
    worse.stdout.fnmatch_lines(["*deviation: T1 is NOT REPRODUCED, the baseline base.json expects REPRODUCED*"])
    worse.stdout.fnmatch_lines(["*rerun with --claim-baseline-update, or `claimcheck baseline accept*"])


def test_a_baseline_of_another_claim_set_is_undecided_not_a_pass(pytester: pytest.Pytester) -> None:
    _cheap(pytester)
    pytester.runpytest("--claim-report=base.md")
    pytester.makepyfile(test_tiny=CHEAP_CLAIM.format(scale=0.5).replace('"T1"', '"T2"'))
    for mode in ("--claim-baseline-fail", "--claim-baseline-fail=worse"):
        result = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", mode)
        assert result.ret == EXIT_UNDECIDED, mode
        result.stdout.fnmatch_lines(
            ["claim baseline: UNDECIDED — 0 equivalent, 0 changed (worse 0, better 0), 0 undecided",
             "*undecided: 0 statistics compared*", "*missing: T1 is in the baseline but not in this run*"]
        )  # fmt: skip


def test_the_gate_runs_without_a_report_and_a_bare_fail_option_leaves_the_test_path_alone(
    pytester: pytest.Pytester,
) -> None:
    _cheap(pytester)
    pytester.runpytest("--claim-report=base.md")
    pytester.makepyfile(other="def test_other():\n    assert False\n")
    result = pytester.runpytest("--claim-baseline=base.json", "--claim-baseline-fail", "test_tiny.py")
    result.assert_outcomes(passed=6)  # test_tiny.py was the path, not the mode; other.py did not run
    assert result.ret == 0
    result.stdout.fnmatch_lines(["claim baseline: PASS — *"])


def test_baseline_update_accepts_the_run_and_keeps_the_old_baseline(pytester: pytest.Pytester) -> None:
    _cheap(pytester, scale=0.5)
    pytester.runpytest("--claim-report=base.md")
    old = (pytester.path / "base.json").read_text()
    _cheap(pytester, scale=3.0)
    result = pytester.runpytest("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-update")
    result.stdout.fnmatch_lines(["*baseline updated: this run's JSON is now *base.json; the old one is kept as *"])
    (kept,) = pytester.path.glob("base.*.json")
    assert kept.read_text() == old
    assert _json(pytester, "base.json")["env"]["run id"] == _json(pytester, "now.json")["env"]["run id"]
    again = pytester.runpytest("--claim-report=again.md", "--claim-baseline=base.json", "--claim-baseline-fail")
    assert again.ret == 0  # the accepted run is the baseline now


def test_a_margin_for_a_statistic_the_baseline_lacks_is_a_usage_error_naming_the_option(
    pytester: pytest.Pytester,
) -> None:
    _cheap(pytester)
    pytester.runpytest("--claim-report=base.md")
    pytester.makeini("[pytest]\nclaim_baseline_margins =\n    T1.scaled uniform=0.1\n    T1.scaled unifrom=0.1\n")
    result = pytester.runpytest("--claim-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini claim_baseline_margins: 'T1.scaled unifrom' names no statistic*"])


def test_baseline_of_the_wrong_schema_is_rejected_naming_the_file(pytester: pytest.Pytester) -> None:
    _cheap(pytester)
    pytester.makefile(".json", old='{"schema": "something-else/9"}')
    result = pytester.runpytest("--claim-report", "--claim-baseline=old.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*old.json: not a claimcheck run file of schema 'claimcheck-run/3'*"])


def test_step_summary_is_appended_and_small(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = pytester.path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    _cheap(pytester, scale=3.0)
    pytester.runpytest("--claim-report")
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert "| [T1](#claim-t1) |" in text and "| **NOT REPRODUCED** |" in text
    assert "rerun: `pytest test_tiny.py --claim-seed 0" in text
    assert len(text.encode()) < 1024 * 1024


def test_matrix_lines_up_runs_per_claim(
    pytester: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cheap(pytester, scale=0.5)
    pytester.runpytest("--claim-report=a.md")
    _cheap(pytester, scale=3.0)
    pytester.runpytest("--claim-report=b.md")
    assert cli_main(["matrix", str(pytester.path / "a.json"), str(pytester.path / "b.json")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| T1 |"))
    assert "**REPRODUCED**" in row and "**NOT REPRODUCED**" in row and row.endswith("| **no** |")


def test_cli_names_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert cli_main(["render", str(bad)]) == 2
    assert "bad.json: not valid JSON at line 1" in capsys.readouterr().err
