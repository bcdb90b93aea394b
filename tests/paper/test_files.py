"""Files the suite writes are readable by whom the umask allows, not only by their owner."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from claimcheck.files import write_atomic

CLAIM = """
import pytest
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig

@pytest.mark.claim("T1", "a toy value stays below one", "toy")
def test_value(claim_record, claim_seed, claim_train):
    traj = claim_train(ModelConfig(d=4, d_qk=2), TrainConfig(steps=3, power_iters=5), make_synthetic(2, 3, 4, 1, 0), 0)
    claim_record.check("final loss", float(traj.loss[-1]), ">=", 0.0, label="toy")
    claim_record.curve("loss", traj.loss.tolist(), group="toy curve")
    claim_record.check("final loss", -1.0, ">=", 0.0, control="negated", label="toy")
"""


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "want"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_an_atomic_write_gives_the_mode_the_umask_allows(tmp_path: Path, umask: None, mask: int, want: int) -> None:
    os.umask(mask)
    write_atomic(tmp_path / "new.txt", "text")
    assert _mode(tmp_path / "new.txt") == want
    assert [p.name for p in tmp_path.iterdir()] == ["new.txt"]  # no temporary file left


def test_report_json_figures_cache_entries_and_locks_are_readable_by_others(
    pytester: pytest.Pytester, umask: None
) -> None:
    pytester.makepyfile(test_toy=CLAIM)
    pytester.runpytest("--claim-report", "--claim-cache-dir=cache").assert_outcomes(passed=3)
    written = [
        p for p in pytester.path.rglob("*") if p.is_file() and p.suffix in (".md", ".json", ".png", ".npz", ".lock")
    ]
    kinds = {p.suffix for p in written}
    assert kinds == {".md", ".json", ".png", ".npz", ".lock"}, kinds
    assert {str(p.relative_to(pytester.path)): oct(_mode(p)) for p in written if _mode(p) != 0o644} == {}


TOY_CLAIM = """
import pytest

@pytest.mark.claim("C9", "toy", "Sec. 9")
def test_claim(claim_record, claim_seed):
    claim_record.check("toy statistic", 0.5, "<=", 1.0)
    claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")
"""


def test_the_report_names_each_data_file_with_its_hash_and_whether_it_is_published(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY_CLAIM)
    data = pytester.path / "data" / "sst2"
    data.mkdir(parents=True)
    (data / "dev.tsv").write_text("sentence\tlabel\nnot the real file \t1\n")
    pytester.runpytest("--claim-report", f"--claim-data-dir={data.parent}")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "**Data files**" in text and "sst2/dev.tsv" in text and "differs from published" in text
