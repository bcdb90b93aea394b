"""The mutation catalogue: reading it, patching a copy of the checkout, and judging what caught each entry."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from claimcheck.cli.mutants import (
    CatalogueError,
    judge,
    load_catalogue,
    patched_checkout,
    render_catalogue,
    run_catalogue,
)
from claimcheck.cli.suite_runs import RunRefused
from claimcheck.report.rundata import RunData, load

# T1 holds when its value is small; every seed draws its own noise, so a shift shows seed by seed.
CLAIMS = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "T1", 1, (Part("", "value stays small", (Stat("value", "<=", 1.0),), bar=0.5),),
    (Control("shifted", "", "the value is shifted past one", max_pass_rate=0.3),), Seeds("T1-v1", 1000, {{"ci": 12}}),
)
CLAIM = pytest.mark.claim("T1", "value stays small", "toy", protocol=PROTOCOL)


@CLAIM
def test_t1(claim_record, claim_seed):
    claim_record.check("value", {shift} + 0.01 * ((7 * claim_seed) % 11))
{premise}

@CLAIM
def test_t1_control(claim_record, claim_seed):
    claim_record.check("value", 5.0, control="shifted")
"""
PREMISE = '    claim_record.set_regime("model under test", **{"premises broken": "a causal mask"})'

CATALOGUE = """
[reference]
model = "healthy"

[[mutant]]
name = "shifted"
what = "the value moves up by 0.3 in every seed"
model = "shifted"
expect = ["gate"]

[[mutant]]
name = "masked"
what = "a premise broken, nothing else"
model = "masked"
expect = ["first screen"]

[[mutant]]
name = "refused"
what = "stopped at start"
model = "refused"
expect = ["claims"]

[[mutant]]
name = "silent"
what = "changes nothing the claims see"
model = "silent"
uncovered = "no claim looks there"

[[benign]]
name = "same"
what = "the same math"
model = "same"
"""


def _run(pytester: pytest.Pytester, name: str, shift: float = 0.2, premise: bool = False) -> RunData:
    pytester.makepyfile(test_toy=CLAIMS.format(shift=shift, premise=PREMISE if premise else ""))
    pytester.runpytest(f"--claim-report={name}.md")
    return load(pytester.path / f"{name}.json")


@pytest.fixture
def runs(pytester: pytest.Pytester) -> dict[str, RunData | Exception]:
    healthy = _run(pytester, "healthy")
    return {
        "healthy": healthy,
        "shifted": _run(pytester, "shifted", shift=0.5),
        "masked": _run(pytester, "masked", premise=True),
        "refused": RunRefused("ERROR: --claim-model refused: 2 of 4 parameters get no gradient"),
        "silent": healthy,
        "same": healthy,
    }


def test_each_entry_is_judged_by_what_caught_it(tmp_path: Path, runs: dict[str, RunData | Exception]) -> None:
    (tmp_path / "c.toml").write_text(CATALOGUE)
    catalogue = load_catalogue(tmp_path / "c.toml")

    def runner(name: str, report: Path, args: Sequence[str], cwd: Path | None) -> tuple[RunData | Exception, float]:
        return runs[args[0].split("=", 1)[1]], 60.0

    refs, judgements = run_catalogue(catalogue, tmp_path, tmp_path, runner)
    by = {j.entry.name: j for j in judgements}
    assert list(by["shifted"].killers) == ["gate"] and by["shifted"].result() == "killed"
    assert (
        "T1 value: median 0.245 -> 0.545, mean paired change +0.3 [+0.3, +0.3] over 12 units"
        in by["shifted"].killers["gate"][0]
    )
    assert list(by["masked"].killers) == ["first screen"] and by["masked"].as_expected
    assert list(by["refused"].killers) == ["probe"]
    assert by["refused"].result() == "killed, not by the expected claims"
    assert by["silent"].result() == "survived: no claim covers it (no claim looks there)"
    assert by["same"].result() == "passed"
    text = render_catalogue(catalogue, refs, judgements)
    assert "**Mutants killed: 3 of 4** (2 by their expected killer; 1 survived where no claim" in text
    assert "**Benign edits falsely flagged: 0 of 1.**" in text
    assert "| `silent` | mutant | changes nothing the claims see | none: no claim looks there | nothing |" in text
    grid = text.split("## Verdicts per claim\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert grid[0] == "| run | T1 |" and grid[1] == "|---|---|" and len(grid) == 2 + len(refs) + len(judgements)
    assert "| `refused` | refused |" in grid
    bare = render_catalogue(catalogue, {}, [])  # no claims: the grid is one column, no empty cell after it
    assert "## Verdicts per claim\n\n| run |\n|---|\n\n" in bare


def test_a_benign_edit_that_moves_a_statistic_is_a_false_alarm(runs: dict[str, RunData | Exception]) -> None:
    from claimcheck.cli.mutants import Entry

    healthy, shifted = runs["healthy"], runs["shifted"]
    assert isinstance(healthy, RunData)
    j = judge(Entry("b", "benign", "an edit", "m"), healthy, shifted)
    assert j.caught and j.result() == "**falsely flagged**"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[mutant]]\nname = "a"\nwhat = "x"\nexpect = ["gate"]', "give a model"),
        ('[[mutant]]\nname = "a"\nwhat = "x"\nmodel = "m"', "names what should catch it"),
        ('[[mutant]]\nname = "a"\nwhat = "x"\nmodel = "m"\nexpect = ["oracle"]', re.escape("expect names ['oracle']")),
        ('[[benign]]\nname = "a"\nwhat = "x"\nmodel = "m"\n[[benign]]\nname = "a"\nwhat = "y"\nmodel = "m"', "unique"),
    ],
)
def test_a_bad_catalogue_is_refused_naming_the_entry(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(CatalogueError, match=message):
        load_catalogue(tmp_path / "c.toml")


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "model.py").write_text("total = (r * r).sum()\n")
    (repo / "reports").mkdir()
    (repo / "reports" / "big.json").write_text("{}")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def test_an_edit_is_applied_to_a_copy_of_the_checkout_and_never_to_it(tmp_path: Path) -> None:
    from claimcheck.cli.mutants import Edit

    repo = _checkout(tmp_path)
    copy = patched_checkout(repo, [Edit("pkg/model.py", "(r * r).sum()", "(r * r).mean()")], "entry")
    assert (copy / "pkg" / "model.py").read_text() == "total = (r * r).mean()\n"
    assert (repo / "pkg" / "model.py").read_text() == "total = (r * r).sum()\n"
    assert not (copy / "reports").exists()  # reports are not copied


def test_an_edit_that_no_longer_applies_names_the_entry_and_the_file(tmp_path: Path) -> None:
    from claimcheck.cli.mutants import Edit

    with pytest.raises(CatalogueError, match=r"entry: the edit of pkg/model.py does not apply: its text occurs 0"):
        patched_checkout(_checkout(tmp_path), [Edit("pkg/model.py", "mean()", "sum()")], "entry")


def test_the_repositorys_catalogue_reads_and_its_edits_apply_to_this_checkout() -> None:
    root = Path(__file__).parents[1]
    catalogue = load_catalogue(root / "examples" / "tinyformer" / "catalogue.toml")
    kinds = {e.kind for e in catalogue.entries}
    assert kinds == {"mutant", "benign"} and len(catalogue.entries) >= 20
    for e in catalogue.entries:
        for edit in e.edits:
            assert (root / edit.file).read_text().count(edit.old) == 1, (e.name, edit.file)


def test_a_run_refused_at_start_reads_as_its_refusal_though_it_wrote_a_report(tmp_path: Path) -> None:
    """A refused model writes a report that says why (issue 49); the mutants' runner still sees a refusal."""
    from claimcheck.cli.suite_runs import reused
    from claimcheck.report.rundata import NOT_STARTED, RunData, dumps

    report = tmp_path / "m.md"
    refused = RunData("t", {}, incomplete=[NOT_STARTED + "--claim-model refused: W_Q gets no gradient"])
    report.with_suffix(".json").write_text(dumps(refused))
    got = reused(report)
    assert isinstance(got, RunRefused) and "W_Q gets no gradient" in str(got)
    report.with_suffix(".json").write_text(dumps(RunData("t", {}, incomplete=["C1 was interrupted"])))
    assert isinstance(reused(report), RunData)  # an interrupted run is a run
