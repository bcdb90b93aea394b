"""The ledger: every claim's code is registered, the chain holds, the migration kept the old ledger, entries
round-trip."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol
from claimcheck.provenance.fingerprint import code_fingerprint
from claimcheck.provenance.ledger import LedgerError, append, append_calibration, load_ledger, migrate, read_file
from qin2025.plugin import pytest_claimcheck_engine

ROOT = Path(__file__).resolve().parents[2]
CLAIM_MODULES = sorted((ROOT / "claims").glob("test_c*.py"))


def _fingerprint(path: Path, engine: bool) -> tuple[ClaimProtocol, str]:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # module-level dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    proto = getattr(module, "PROTOCOL", None)
    assert isinstance(proto, ClaimProtocol), f"{path.name} declares no PROTOCOL (a ClaimProtocol)"
    if engine:
        return proto, code_fingerprint(path, path.stem, vars(module), pytest_claimcheck_engine(None)).digest  # type: ignore[arg-type]
    return proto, code_fingerprint(path, path.stem, vars(module)).digest


@pytest.mark.parametrize("path", CLAIM_MODULES, ids=[p.stem for p in CLAIM_MODULES])
def test_each_claims_code_is_a_registered_version(path: Path) -> None:
    proto, digest = _fingerprint(path, engine=True)
    state = load_ledger(ROOT / "claims" / "ledger").state(proto.claim_id, digest)
    assert state.kind != "changed", (
        f"{state.text}: run `claimcheck ledger register claims --change ... --motivated-by ...`"
    )
    assert state.registration is not None and state.registration.get("version") == proto.version


@pytest.mark.parametrize("name", ["test_min_norm.py", "test_width.py"])
def test_the_example_suites_code_is_registered_in_its_own_ledger(name: str) -> None:
    proto, digest = _fingerprint(ROOT / "examples" / "gdfacts" / name, engine=False)
    state = load_ledger(ROOT / "examples" / "gdfacts" / "ledger.toml").state(proto.claim_id, digest)
    assert state.kind != "changed", state.text


def test_the_migration_kept_the_old_ledgers_bytes_in_history() -> None:
    """Each migrate entry names the sha256 of the file it replaced; git still holds that file."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git history here (an installed package): nothing to compare with")
    for path in [*sorted((ROOT / "claims" / "ledger").glob("*.toml")), ROOT / "examples" / "gdfacts" / "ledger.toml"]:
        (entry,) = [e for e in read_file(path) if e.kind == "migrate"]
        rel = path.relative_to(ROOT).as_posix()
        commits = subprocess.run(["git", "rev-list", "HEAD", "--", rel], cwd=ROOT, capture_output=True, text=True)
        olds = [
            subprocess.run(["git", "show", f"{c}:{rel}"], cwd=ROOT, capture_output=True).stdout
            for c in commits.stdout.split()
        ]
        assert entry.get("source_sha256") in {hashlib.sha256(b).hexdigest() for b in olds}, path
        assert all(row["legacy"] is True for row in entry.get("legacy"))


def test_an_entry_missing_a_field_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "C1.toml"
    bad.write_text('[[entry]]\nkind = "register"\nclaim = "C1"\nprev = ""\nhash = "x"\n')
    with pytest.raises(ConfigError, match=r"C1.toml: \[\[entry\]\] #1 \(register\) needs version as int"):
        load_ledger(tmp_path, "claim_ledger")


def test_a_calibration_entry_round_trips_with_its_results_table(tmp_path: Path) -> None:
    results = {
        "geometric": {"cases": 200, "passed": 198, "sensitivity": 0.99, "low": 0.97},
        "offset power law": {"cases": 200, "failed": 200, "specificity": 1.0, "low": 0.985, "tau": [10, 2000]},
        "note": "a NaN survives: " + repr(math.nan),
    }
    entry = append_calibration(tmp_path, "C1", "claim", "f" * 64, results, date="2026-12-01")
    assert (tmp_path / "C1.toml").is_file() and entry.kind == "calibrate" and entry.get("results") == results
    again = append_calibration(tmp_path, "C1", "claim", "f" * 64, {"geometric": {"cases": 1}})
    assert again.prev == entry.hash and again.index == 2
    with pytest.raises(ConfigError, match="a confirm entry needs"):
        append(tmp_path / "C1.toml", "confirm", {"claim": "C1"})


def test_reordering_entries_breaks_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "C1.toml"
    for n in (1, 2):
        append_calibration(path, "C1", f"part {n}", "f" * 64, {"n": n})
    head, first, second = path.read_text().split("\n[[entry]]\n")
    path.write_text("\n[[entry]]\n".join([head, second, first]))
    with pytest.raises(LedgerError, match=r"C1.toml: entry #1 \(calibrate C1\) follows"):
        load_ledger(path)


def test_an_old_ledger_is_refused_with_the_command_that_migrates_it(tmp_path: Path) -> None:
    old = tmp_path / "C9.toml"
    old.write_text(
        '[[version]]\nclaim = "C9"\nversion = 1\nfingerprint = "abc"\ndate = "d"\nchange = "c"\nmotivated_by = "m"\n'
    )
    with pytest.raises(ConfigError, match=r"older format.*claimcheck ledger migrate"):
        load_ledger(tmp_path)
    before = hashlib.sha256(old.read_bytes()).hexdigest()
    entry = migrate(old, date="2026-12-01")
    assert entry.get("source_sha256") == before and entry.get("legacy")[0]["fingerprint"] == "abc"
    assert load_ledger(tmp_path).state("C9", "abc").kind == "changed"  # a legacy fingerprint confirms nothing
