"""Stability over base seeds: flips and control failures, counted and run."""

from __future__ import annotations

from pathlib import Path

from claimcheck.cli.stability import render_stability, run_seeds, stability
from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report.rundata import RunData


def _run(claim_value: float, control_value: float) -> RunData:
    rec = ClaimRecorder("C1", seed=0)
    rec.check("s", claim_value, "<=", 1.0)
    rec.check("s", control_value, "<=", 1.0, control="ctl")
    return RunData("r", {}, [TestOutcome("t.py::t", "C1", "t", "s", "passed", rec)])


def test_flips_count_runs_that_differ_from_the_majority() -> None:
    rows = stability([_run(0.5, 2.0), _run(0.5, 2.0), _run(1.5, 2.0)])
    (s,) = rows
    assert s.verdicts == {"REPRODUCED": 2, "NOT REPRODUCED": 1}
    assert s.flips == 1
    assert (s.controls_failed, s.controls_total, s.runs_with_every_control_failing) == (3, 3, 3)


def test_a_control_that_passes_is_counted() -> None:
    (s,) = stability([_run(0.5, 2.0), _run(0.5, 0.5)])
    assert (s.controls_failed, s.controls_total, s.runs_with_every_control_failing) == (1, 2, 1)
    assert s.verdicts == {"REPRODUCED": 1, "ERROR": 1}


def test_render_lists_every_claim() -> None:
    text = render_stability(stability([_run(0.5, 2.0)]), [0], "ci")
    assert "| C1 | REPRODUCED x1 | 1/1 | 0/1 | 0/1 | 1/1 | 1/1 |" in text


def test_inconclusive_is_a_move_not_a_flip() -> None:
    from claimcheck.cli.stability import flips

    assert flips(["REPRODUCED", "INCONCLUSIVE", "REPRODUCED"]) == 0
    assert flips(["NOT REPRODUCED", "INCONCLUSIVE", "REPRODUCED", "NOT REPRODUCED"]) == 1


def test_run_seeds_runs_pytest_per_base_seed(tmp_path: Path) -> None:
    claims = tmp_path / "test_toy.py"
    claims.write_text(
        "import pytest\n"
        "@pytest.mark.claim('T1', 'toy', 'toy')\n"
        "def test_t(claim_record, claim_seed):\n"
        "    claim_record.check('seed', claim_seed, '<=', 3)\n"
        "    claim_record.check('seed', 10, '<=', 3, control='big')\n"
    )
    runs = run_seeds([0, 2], tmp_path / "out", "ci", ["--claim-cache=off", f"--rootdir={tmp_path}"], [str(claims)])
    (s,) = stability(runs)
    # base seed 0 runs seeds 0-2 (all <= 3); base seed 2 runs its own block, 2 x 8 x 2**24 on: the verdict flips
    assert s.verdicts == {"REPRODUCED": 1, "NOT REPRODUCED": 1} and s.flips == 1
    assert s.independent == 2  # the two runs share no unit seed
