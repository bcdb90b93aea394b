"""This paper's calibration: every part of every claim runs its decision on its families, the decisions give the
numbers the claims recorded, and docs/calibration.md's example runs. Failing parts are findings, not test failures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from claimcheck.cli.calibrate import load_protocols
from claimcheck.cli.main import main
from claimcheck.decide.calibration import calibrate_suite, part_mark
from claimcheck.provenance.ledger import calibration_entries, load_ledger
from qin2025.c2.monotone import monotone_decision

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = ROOT / "claims"
REFERENCE = ROOT / "reports" / "reference" / "claim-report.json"
DOC = ROOT / "docs" / "calibration.md"


@pytest.fixture(scope="module")
def protocols() -> list[Any]:
    return load_protocols([CLAIMS])


def test_every_part_of_every_claim_declares_a_decision_and_families(protocols: list[Any]) -> None:
    assert [p.claim_id for p in protocols] == ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"]
    for proto in protocols:
        for part in proto.parts:
            assert part.decision is not None, f"{proto.claim_id}/{part.name}"
            design = {f.expect for f in part.calibration if f.origin == "design"}
            assert {"pass", "fail"} <= design <= {"pass", "fail", "zone"}, f"{proto.claim_id}/{part.name}"


def test_every_part_has_its_current_decisions_calibration_recorded(protocols: list[Any]) -> None:
    # A decision changed without `claimcheck calibrate --record` shows "uncalibrated (changed since)" on the
    # report's first screen beside a verdict it decided (C7 v8's governs part did, for a day).
    entries = calibration_entries(load_ledger(CLAIMS / "ledger"))
    marks = {f"{p.claim_id}/{part.name}": part_mark(entries, p.claim_id, part) for p in protocols for part in p.parts}
    stale = {k: m for k, m in marks.items() if m.startswith("uncalibrated")}
    assert not stale, f"record them: claimcheck calibrate claims --only IDS --record ({stale})"


def test_a_quick_calibration_of_the_suite_lists_every_part_with_its_counts(protocols: list[Any]) -> None:
    suite = calibrate_suite(protocols, cases=4, reps=20)
    data = suite.to_dict()
    assert len(data["parts"]) == sum(len(p.parts) for p in protocols) == 19  # C5 v5 and v6 have 4 parts, C7 3
    for entry in data["parts"]:
        fams = entry["families"]
        design = [f for f in fams if f.get("origin", "design") == "design"]
        assert entry["sensitivity"]["n"] == 4 * sum(f["expect"] == "pass" for f in design)
        assert entry["specificity"]["n"] == 4 * sum(f["expect"] == "fail" for f in design)
        assert entry["status"] in ("calibrated", "failing calibration") and entry["decision"]
    pass_rate = {f"C{k}" for k in range(1, 9)} - {"C6"}  # C6 v3 and v4: every part is a mean part
    assert {r["claim"] for r in data["claim_rule"]} == pass_rate
    assert not [c["claim"] for c in data["controls"] if c["flag"]]  # each claim has a discriminating control


@pytest.mark.slow
def test_claimcheck_calibrate_runs_the_whole_suite_with_its_challenge_families(tmp_path: Path) -> None:
    """The command end to end over every claim and every family, design and challenge, each at 20 cases.

    Not timed: the full counts take some 330 s of CPU (docs/calibration.md); 20 cases a family run
    every decision on every family through the command at about a tenth of that.
    """
    out = tmp_path / "calibration.json"
    args = ["calibrate", str(CLAIMS), "--cases", "20", "--reps", "200", "--json", str(out)]
    assert main([*args, "-o", str(tmp_path / "calibration.md")]) == 0
    data = json.loads(out.read_text())
    assert len(data["parts"]) == 19  # C5 v5 and v6 have 4 parts, C7 3
    for entry in data["parts"]:
        design = [f for f in entry["families"] if f.get("origin", "design") == "design"]
        assert entry["sensitivity"]["n"] == sum(f["cases"] for f in design if f["expect"] == "pass")
        assert entry["specificity"]["n"] == sum(f["cases"] for f in design if f["expect"] == "fail")
    listed = {f"{e['claim']}/{e['part']}" for e in data["parts"] if e["status"] == "failing calibration"}
    assert set(data["failing"]) == listed  # every failing part is listed, none hidden


def _reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())  # type: ignore[no-any-return]


def _test(data: dict[str, Any], needle: str) -> dict[str, Any]:
    return next(t["record"] for t in data["tests"] if needle in t["nodeid"])  # type: ignore[no-any-return]


def test_the_monotone_decision_gives_the_numbers_c2_recorded() -> None:
    data = _reference()
    c2 = _test(data, "test_c2_loss_never_rises_below_bound")
    values = [(c["statistic"], c["value"]) for c in c2["checks"]]
    assert values == [kv for curve in c2["curves"] for kv in monotone_decision(curve["y"]).items()]


def test_the_example_in_docs_calibration_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/calibration.md has no python example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
    assert "octave ratio" in capsys.readouterr().out
