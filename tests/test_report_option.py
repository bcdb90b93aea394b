"""``--claim-report`` never overwrites a file it did not write, and every natural spelling does what it says.

The option's value may be left out, so argparse takes the word after it as the report path: a
test module or folder there is the test path the user meant, and the default report is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toys import toy

TOY = toy()
OUTSIDE = "def test_outside_the_folder():\n    raise AssertionError('this folder was not asked for')\n"


def _suite(pytester: pytest.Pytester) -> Path:
    """Make ``claims/test_toy.py`` (a claim) and ``test_other.py`` (a test that fails if it is collected)."""
    claims = pytester.mkdir("claims")
    (claims / "test_toy.py").write_text(TOY)
    pytester.makepyfile(test_other=OUTSIDE)
    return claims / "test_toy.py"


def _default_report(pytester: pytest.Pytester) -> Path:
    return pytester.path / "reports" / "claim-report.md"


@pytest.mark.parametrize(
    "args",
    [
        ["--claim-report", "claims/test_toy.py"],
        ["--claim-report", "claims/"],
        ["--claim-report", "claims"],
        ["claims/", "--claim-report"],
        ["--claim-report", "claims/test_toy.py::test_claim", "claims/test_toy.py::test_control"],
    ],
    ids=["module after the option", "folder after the option", "folder without slash", "option last", "node ids"],
)
def test_a_test_path_after_the_option_is_run_and_the_default_report_written(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    module = _suite(pytester)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert module.read_text() == TOY  # the test module is not the report
    result.assert_outcomes(passed=6)  # the claim's tests ran; test_other.py was not collected
    assert "**1 REPRODUCED" in _default_report(pytester).read_text()
    assert not list(module.parent.glob("*.json")) and not list(module.parent.glob(".*lock"))


def test_an_explicit_report_path_that_is_a_test_module_is_refused(pytester: pytest.Pytester) -> None:
    module = _suite(pytester)
    result = pytester.runpytest("--claim-report=claims/test_toy.py", "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *test_toy.py ends in .py, a test module's name*"])
    assert module.read_text() == TOY


@pytest.mark.parametrize("spelling", ["equals", "space"])
def test_an_existing_file_claimcheck_did_not_write_is_never_overwritten(
    pytester: pytest.Pytester, spelling: str
) -> None:
    _suite(pytester)
    notes = pytester.path / "notes.md"
    notes.write_text("# my notes\n")
    args = ["--claim-report=notes.md"] if spelling == "equals" else ["--claim-report", "notes.md"]
    result = pytester.runpytest(*args, "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *notes.md exists and was not written by claimcheck*"])
    assert notes.read_text() == "# my notes\n" and not (pytester.path / "notes.json").exists()


def test_a_sidecar_path_holding_a_file_claimcheck_did_not_write_is_refused(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    package = pytester.path / "package.json"
    package.write_text('{"name": "mine"}')
    result = pytester.runpytest("--claim-report=package.md", "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *package.json exists and was not written by claimcheck*"])
    assert package.read_text() == '{"name": "mine"}'


def test_a_report_path_ending_in_py_is_refused(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = pytester.runpytest("--claim-report", "claims/test_new.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report: *test_new.py ends in .py*"])
    assert not (pytester.path / "claims" / "test_new.py").exists()


def test_a_report_claimcheck_wrote_is_written_again(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    assert pytester.runpytest("--claim-report=out/r.md", "claims").ret == pytest.ExitCode.OK
    first = (pytester.path / "out" / "r.md").read_text()
    assert pytester.runpytest("--claim-report", "out/r.md", "claims").ret == pytest.ExitCode.OK
    assert (pytester.path / "out" / "r.md").read_text() != first  # a new run id


def test_a_report_that_no_manifest_records_is_not_taken_for_claimcheck_s_by_its_content(
    pytester: pytest.Pytester,
) -> None:
    """Ownership is what claimcheck recorded when it wrote the file, never guessed from the file (issue 51)."""
    _suite(pytester)
    assert pytester.runpytest("--claim-report=r.md", "claims").ret == pytest.ExitCode.OK
    for manifest in pytester.path.glob(".r.md.manifest*"):
        manifest.unlink()
    before = (pytester.path / "r.md").read_text()
    result = pytester.runpytest("--claim-report=r.md", "claims")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-report:*r.md exists and was not written by claimcheck*"])
    assert (pytester.path / "r.md").read_text() == before


def test_collect_only_with_a_module_after_the_option_touches_nothing(pytester: pytest.Pytester) -> None:
    module = _suite(pytester)
    result = pytester.runpytest("--co", "--claim-report", "claims/test_toy.py")
    assert result.ret == pytest.ExitCode.OK
    assert module.read_text() == TOY and not (pytester.path / "claims" / "test_toy.json").exists()
    result.stdout.fnmatch_lines(["*test_claim*"])
    assert "test_outside_the_folder" not in result.stdout.str()
