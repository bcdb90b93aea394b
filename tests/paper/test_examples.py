"""The example user model and part of its mutation catalogue, run through the whole claim suite at the CI budget.

This is one of the slowest tests (four suite runs, some 6 minutes on 2 cores), so it is marked
``slow`` and left out of the default ``pytest tests``; ``pytest tests -m slow`` runs it, and CI
runs it after the fast tests. The whole catalogue is a longer, separate run: docs/mutants.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.commands.cli import main as cli_main
from claimcheck.rundata import load
from claimcheck.verdicts import Verdict

ROOT = Path(__file__).parents[2]
CATALOGUE = ROOT / "examples" / "tinyformer" / "catalogue.toml"
ENTRIES = ["hard_argmax", "causal_mask", "renamed_modules"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def catalogue_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mutants")
    args = ["mutants", "--catalogue", str(CATALOGUE), "--only", ",".join(ENTRIES), "--out", str(out)]
    assert cli_main([*args, "--targets", str(ROOT / "claims"), "--", f"--rootdir={ROOT}"]) == 0
    print((out / "mutants.md").read_text())
    return out


def _row(table: str, name: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(f"| `{name}` | "))


def test_the_example_model_runs_every_claim_it_can(catalogue_run: Path) -> None:
    ref = {r.claim_id: r for r in load(catalogue_run / "reference-claim-adapter-py-build.json").results()}
    for cid in ("C1", "C2", "C3"):
        assert ref[cid].verdict is Verdict.REPRODUCED, f"{cid}: {ref[cid].reason}"
    assert ref["C4"].verdict is not Verdict.SKIPPED  # the adapter honours qk_init
    assert ref["C6"].verdict is Verdict.SKIPPED and "lacks paper-model" in ref["C6"].tests[0].message
    assert all(r.verdict is not Verdict.ERROR for r in ref.values())


def test_each_entry_is_caught_by_its_expected_check_or_passes(catalogue_run: Path) -> None:
    table = (catalogue_run / "mutants.md").read_text()
    assert "| killed |" in _row(table, "hard_argmax") and "net.blocks.0.query.weight" in _row(table, "hard_argmax")
    assert "**first screen**: " in _row(table, "causal_mask") and "a causal mask" in _row(table, "causal_mask")
    assert "| passed |" in _row(table, "renamed_modules")
