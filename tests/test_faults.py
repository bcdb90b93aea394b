"""Faults that must never cost the report: bad baselines, a .json report path, a killed run, a failing figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toys import toy

from claimcheck.report.rundata import RunFileError, load


def _toy(pytester: pytest.Pytester, last: str = "0.5") -> None:
    pytester.makepyfile(test_toy=toy(last))


def _baseline(pytester: pytest.Pytester) -> dict[str, object]:
    _toy(pytester)
    pytester.runpytest("--claim-report=base.md")
    return json.loads((pytester.path / "base.json").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda d: d["tests"][0]["record"]["checks"][0].update(value="0.5"),
            "checks[0].value: must be a number, got '0.5'",
        ),
        (lambda d: d["tests"][0]["record"]["checks"][0].update(direction="=~"), "checks[0].direction: must be one of"),
        (lambda d: d["tests"][0].update(claim_id=9), "tests[0].claim_id: must be a string, got 9"),
        (lambda d: d["tests"][0].update(outcome="fine"), "tests[0].outcome: must be one of"),
        (lambda d: d["env"].update(seed=[3]), "env: must be an object of strings, numbers and booleans"),
    ],
)
def test_a_bad_baseline_is_refused_at_start_naming_the_field(pytester: pytest.Pytester, edit, needle: str) -> None:  # type: ignore[no-untyped-def]
    data = _baseline(pytester)
    edit(data)
    (pytester.path / "bad.json").write_text(json.dumps(data))
    result = pytester.runpytest("--claim-baseline=bad.json", "--claim-report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*bad.json: *{needle.replace('[', '[[]')}*"])


def test_a_deeply_nested_baseline_is_refused_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RunFileError, match=r"nested too deeply|not a claimcheck run file"):
        load(path)


def test_a_json_report_path_is_refused_so_the_sidecar_survives(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    result = pytester.runpytest("--claim-report=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *r.json ends in .json*give the markdown path (e.g. r.md)*"])


def test_the_report_and_its_sidecar_carry_one_run_id(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    pytester.runpytest("--claim-report")
    data = json.loads((pytester.path / "reports" / "claim-report.json").read_text())
    run_id = data["env"]["run id"]
    assert len(run_id) == 12 and "| run id " in (pytester.path / "reports" / "claim-report.md").read_text()
    assert run_id in (pytester.path / "reports" / "claim-report.md").read_text()


def test_a_run_that_never_finishes_leaves_the_old_report_marked(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    pytester.runpytest("--claim-report")
    report = pytester.path / "reports" / "claim-report.md"
    pytester.makeconftest("def pytest_collection_finish(session):\n    import os\n    os._exit(9)\n")
    pytester.runpytest_subprocess("--claim-report")  # dies after configure, like kill -9
    assert report.read_text().startswith("> **This report is from an earlier run.**")
    (pytester.path / "conftest.py").unlink()
    pytester.runpytest("--claim-report")
    assert not report.read_text().startswith(">")


def test_a_figure_that_cannot_be_drawn_does_not_cost_the_report(pytester: pytest.Pytester) -> None:
    _toy(pytester, last="2.9e272")
    import claimcheck.report.write as session

    def broken(*args: object, **kwargs: object) -> list[Path]:
        raise OverflowError("cannot convert float infinity to integer")

    mp = pytest.MonkeyPatch()
    mp.setattr(session, "draw_figures", broken)
    try:
        result = pytester.runpytest("--claim-report")
    finally:
        mp.undo()
    assert result.ret == 0
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "drawing the figures failed: OverflowError" in text and "**1 REPRODUCED" in text


def test_figures_can_be_turned_off(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    result = pytester.runpytest("--claim-report", "--claim-figures=off")
    assert result.ret == 0
    assert not (pytester.path / "reports" / "claim-report-figures").exists()
    bad = pytester.runpytest("--claim-figures=maybe")
    bad.stderr.fnmatch_lines(["*--claim-figures: expected on or off, got 'maybe'*"])


def test_an_interrupted_run_is_never_reproduced(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_toy="""
        import pytest

        CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


        @CLAIM
        def test_control(claim_record, claim_seed):
            claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")


        @CLAIM
        def test_claim(claim_record, claim_seed):
            claim_record.check("toy statistic", 0.5, "<=", 1.0)
            if claim_seed == 1:
                raise KeyboardInterrupt
        """
    )
    result = pytester.runpytest_subprocess("--claim-report", "-p", "no:randomly")  # Ctrl-C must not reach us
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "INCOMPLETE RUN" in text and "**INCONCLUSIVE**" in text and "**REPRODUCED**" not in text
    assert "did not run or finish: test_toy.py::test_claim\\[seed1\\]" in text  # cut off mid-call
    assert "did not run or finish: test_toy.py::test_claim\\[seed2\\]" in text


def test_the_rerun_command_keeps_the_full_report_and_names_the_data_folder(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_toy="""
        import pytest

        @pytest.mark.claim("C9", "toy", "Sec. 9")
        def test_claim(claim_record, claim_seed):
            claim_record.check("s", 2.0, "<=", 1.0)
            claim_record.check("s", 3.0, "<=", 1.0, control="c")
        """
    )
    data = pytester.mkdir("data")
    pytester.runpytest("--claim-report", f"--claim-data-dir={data}")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    rerun = next(line for line in text.splitlines() if "rerun: `pytest" in line)
    assert "--claim-data-dir data " in rerun and "--claim-report=reports/claim-rerun.md" in rerun  # relative


def test_figures_of_an_earlier_run_are_removed_and_no_file_of_the_users(pytester: pytest.Pytester) -> None:
    _toy(pytester)
    pytester.runpytest("--claim-report=vacation.md")
    figures = pytester.path / "vacation-figures"
    ours = figures / "C9-toy-curve.png"
    beach = figures / "beach.png"
    beach.write_bytes(b"the user's photo")
    assert ours.exists()
    pytester.makepyfile(test_toy=toy().replace('group="toy curve"', 'group="other curve"'))
    pytester.runpytest("--claim-report=vacation.md")
    assert not ours.exists() and (figures / "C9-other-curve.png").exists()  # the earlier run's figure is gone
    assert beach.read_bytes() == b"the user's photo"  # and the user's file is not


def test_a_hostile_baseline_cannot_put_links_or_images_into_the_report(pytester: pytest.Pytester) -> None:
    data = _baseline(pytester)
    test = data["tests"][0]  # type: ignore[index]
    test["claim_id"] = "![x](http://evil.example/x.png)"
    test["record"]["checks"][0]["statistic"] = "[click](http://evil.example)"
    test["message"] = "<script>alert(1)</script>"
    (pytester.path / "evil.json").write_text(json.dumps(data))
    pytester.runpytest("--claim-baseline=evil.json", "--claim-report")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "Comparison with baseline" in text
    assert "![x](" not in text and "[click](" not in text and "<script>" not in text
