"""The example user model and part of its mutation catalogue, run through the whole claim suite at the CI budget.

This is one of the slowest tests (four suite runs and a refusal, some 6 minutes on 2 cores), so it is
marked ``slow`` and left out of the default ``pytest tests``; ``pytest tests -m slow`` runs it, and
CI runs it after the fast tests. The whole catalogue is a longer, separate run: docs/mutants.md.

A mutant is judged (its claims run and give verdicts) or refused at start by the probe, which
names what is wrong; it never crashes into ERROR. A detached attention output leaves W_Q, W_K and
W_V without a gradient, so the probe refuses it at start and names those weights.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.cli.main import main as cli_main
from claimcheck.decide.verdicts import Verdict
from claimcheck.report.rundata import NOT_STARTED, load

ROOT = Path(__file__).parents[2]
CATALOGUE = ROOT / "examples" / "tinyformer" / "catalogue.toml"
ENTRIES = ["hard_argmax", "attention_detached", "causal_mask", "renamed_modules"]
REFUSED = {  # the probe refuses these at start, naming the weights that get no gradient
    "hard_argmax": ["net.blocks.0.query.weight", "net.blocks.0.key.weight"],
    "attention_detached": ["net.blocks.0.query.weight", "net.blocks.0.key.weight", "net.blocks.0.value.weight"],
}

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


def test_each_mutant_is_judged_or_refused_at_start_and_the_table_names_it(catalogue_run: Path) -> None:
    table = (catalogue_run / "mutants.md").read_text()
    for name in ENTRIES:
        row = _row(table, name)
        sidecar = catalogue_run / f"{name}.json"
        if name in REFUSED:
            refused = load(sidecar)  # the refused run's report: no claim ran, and it says why (issue 49)
            assert not refused.tests and refused.incomplete[0].startswith(NOT_STARTED), f"{name}: ran claims"
            assert "**probe**: " in row and "get no gradient" in row and "| killed |" in row, row
            continue
        verdicts = {r.claim_id: r.verdict for r in load(sidecar).results()}
        crashed = [cid for cid, v in verdicts.items() if v is Verdict.ERROR]
        assert not crashed, f"{name}: a mutant should be judged, not crash the suite ({crashed} ERROR)"


def test_a_detached_attention_is_refused_at_start_naming_the_weights_that_get_no_gradient(
    catalogue_run: Path,
) -> None:
    table = (catalogue_run / "mutants.md").read_text()
    for name, weights in REFUSED.items():
        seen = table.split(f"<summary>{name}</summary>", 1)[1].split("</details>", 1)[0]  # every check's findings
        assert "- probe: " in seen and all(w in seen for w in weights), seen
        assert "claim_honours" not in seen  # the refusal never suggests a way around the bug


def test_each_entry_is_caught_by_its_expected_check_or_passes(catalogue_run: Path) -> None:
    table = (catalogue_run / "mutants.md").read_text()
    assert "**first screen**: " in _row(table, "causal_mask") and "a causal mask" in _row(table, "causal_mask")
    assert "| passed |" in _row(table, "renamed_modules")
