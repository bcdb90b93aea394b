"""The example suite (examples/gdfacts) runs on the public API alone and gives its pinned results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "gdfacts"


def test_the_example_suite_gives_its_pinned_results(tmp_path: Path) -> None:
    report = tmp_path / "gd.md"
    cmd = [sys.executable, "-m", "pytest", "-c", str(SUITE / "pytest.ini"), str(SUITE), "-q", "-p", "no:randomly"]
    done = subprocess.run(
        [*cmd, f"--claim-report={report}", "--claim-cache=off"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    text = report.read_text()
    assert text.startswith("# Claim report: two textbook facts about gradient descent")
    assert "| solver " in text and "the paper's Transformer" not in text
    assert "**1 REPRODUCED, 0 NOT REPRODUCED, 1 INCONCLUSIVE, 0 ERROR, 0 SKIPPED**" in text


def test_the_example_suite_imports_nothing_of_the_papers_engine() -> None:
    paper = (
        "qin2025.engine.model",
        "qin2025.engine.train",
        "qin2025.engine.trainer",
        "qin2025.data",
        "qin2025.engine.usermodel",
    )
    for path in SUITE.glob("*.py"):
        text = path.read_text()
        assert not any(f"from {m}" in text or f"import {m}" in text for m in paper), path.name
