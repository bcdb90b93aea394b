"""The example user model and its mutants, run through the whole claim suite at the CI budget.

This is the slowest test (about 5 suite runs, two at a time, some 5 minutes on 2 cores), so it is
marked ``slow`` and left out of the default ``pytest tests``; ``pytest tests -m slow`` runs it, and
CI runs it after the fast tests. It writes the mutant table to the pytest temporary folder and
prints it; docs/mutants.md holds the table from the reference machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.commands.cli import main as cli_main
from claimcheck.commands.mutants import damage
from claimcheck.rundata import load
from claimcheck.verdicts import Verdict

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "tinyformer"
REFERENCE = f"{EXAMPLE / 'claim_adapter.py'}:build"
MUTANTS = ["no_residual", "softmax_wrong_axis", "attention_detached", "scaled_step"]
REFUSED = {"no_residual": "beta", "softmax_wrong_axis": "sum"}  # the start-up probe catches these two

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mutants")
    specs = [f"{EXAMPLE / 'mutants.py'}:{m}" for m in MUTANTS]
    args = ["mutants", REFERENCE, *specs, "--out", str(out), "--jobs", "2", "--targets", str(ROOT / "claims")]
    assert cli_main([*args, "--", f"--rootdir={ROOT}"]) == 0
    print((out / "mutants.md").read_text())
    return out


def test_the_example_model_runs_every_claim_it_can(mutant_runs: Path) -> None:
    ref = {r.claim_id: r for r in load(mutant_runs / "model-0.json").results()}
    for cid in ("C1", "C2", "C3"):
        assert ref[cid].verdict is Verdict.REPRODUCED, f"{cid}: {ref[cid].reason}"
    assert ref["C8"].verdict in (Verdict.REPRODUCED, Verdict.INCONCLUSIVE), ref["C8"].reason  # 6 units at ci
    assert ref["C4"].verdict is Verdict.SKIPPED and "lacks qk_init" in ref["C4"].tests[0].message
    assert ref["C6"].verdict is Verdict.SKIPPED and "lacks paper-model" in ref["C6"].tests[0].message
    assert ref["C7"].verdict is not Verdict.ERROR


def test_each_mutant_is_judged_or_refused_at_start_and_the_table_names_it(mutant_runs: Path) -> None:
    table = (mutant_runs / "mutants.md").read_text()
    for i, name in enumerate(MUTANTS, start=1):
        assert f"mutants.py:{name}` |" in table
        if name in REFUSED:
            row = next(line for line in table.splitlines() if f"mutants.py:{name}` |" in line)
            assert "refused at start" in row and REFUSED[name] in row, row
            continue
        verdicts = {r.verdict for r in load(mutant_runs / f"model-{i}.json").results()}
        assert Verdict.ERROR not in verdicts, f"{name}: a mutant should be judged, not crash the suite"


def test_a_detached_attention_breaks_some_claim_or_moves_a_statistic(mutant_runs: Path) -> None:
    i = MUTANTS.index("attention_detached") + 1
    dmg = damage(load(mutant_runs / "model-0.json"), load(mutant_runs / f"model-{i}.json"))
    assert all(d.after is not Verdict.ERROR for d in dmg)
