"""Issue 51: claimcheck writes over, or removes, only the files its manifests record it wrote, and says why it cannot.

Ownership of an output file is proven by what claimcheck recorded when it wrote it (the manifest
beside it, with the file's sha256), never inferred from the file's name or content: a run JSON
given as ``-o``, a details file that opens with claimcheck's mark, a report whose manifest is
stale are the user's. A write that cannot happen (a full disk, a folder that is read-only, a
name too long, a path that is no file) is one line naming the option and the file, never a
traceback; and the committed reference report shows its figures with relative links only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from claimcheck.commands.cli import main
from claimcheck.record import ClaimRecorder
from claimcheck.reportfiles import write_report
from claimcheck.rundata import RunData
from claimcheck.verdicts import TestOutcome


def _run(run_id: str = "r1", claims: int = 1) -> RunData:
    tests = []
    for i in range(claims):
        rec = ClaimRecorder(claim_id=f"C{i + 1}", seed=0)
        rec.check("toy statistic", 0.5, "<=", 1.0)
        tests.append(TestOutcome(f"test_toy.py::test_c{i + 1}", f"C{i + 1}", "toy", "Sec. 9", "passed", record=rec))
    return RunData(title="toy", env={"run id": run_id, "date": "today", "budget": "ci: toy"}, tests=tests)


def _run_json(where: Path, run_id: str = "r1") -> Path:
    write_report(_run(run_id), where / "claim-report.md", figures=False)
    return where / "claim-report.json"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# 1. -o onto a run JSON: a kept baseline is not claimcheck's output because it is a run file


@pytest.mark.parametrize("command", ["compare", "render", "matrix"])
def test_o_onto_a_run_json_claimcheck_did_not_write_there_is_refused_and_the_json_kept(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path / "run")
    base = tmp_path / "baseline.json"
    base.write_bytes(run.read_bytes())  # a kept baseline: a run file, copied by the user
    before = _sha(base)
    args = {"compare": [str(base), str(run)], "render": [str(run)], "matrix": [str(run)]}[command]
    assert main([command, *args, "-o", str(base)]) == 2
    assert _sha(base) == before
    err = capsys.readouterr().err
    assert f"-o {base}" in err and "--force" in err and "Traceback" not in err
    assert main([command, *args, "-o", str(base), "--force"]) == 0  # the user's choice
    assert _sha(base) != before


def test_o_onto_the_run_json_itself_is_refused(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    before = _sha(run)
    assert main(["matrix", str(run), "-o", str(run)]) == 2
    assert main(["render", str(run), "-o", str(run)]) == 2
    assert _sha(run) == before


def test_o_onto_its_own_earlier_output_named_json_needs_no_force(tmp_path: Path) -> None:
    run = _run_json(tmp_path / "run")
    out = tmp_path / "matrix.json"
    assert main(["matrix", str(run), "-o", str(out)]) == 0
    assert main(["matrix", str(run), "-o", str(out)]) == 0  # recorded when written: claimcheck's own
