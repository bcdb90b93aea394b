"""The ledger and the claims' protocols: every protocol in code is registered, versions only grow."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from claimcheck.errors import ConfigError
from claimcheck.ledger import load_ledger
from claimcheck.protocol import ClaimProtocol

ROOT = Path(__file__).resolve().parents[2]
CLAIM_MODULES = sorted((ROOT / "claims").glob("test_c*.py"))


def _protocol(path: Path) -> ClaimProtocol:
    spec = importlib.util.spec_from_file_location(f"_ledger_check_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # module-level dataclasses look their module up there
    spec.loader.exec_module(module)
    proto = getattr(module, "PROTOCOL", None)
    assert isinstance(proto, ClaimProtocol), f"{path.name} declares no PROTOCOL (a ClaimProtocol)"
    return proto


@pytest.mark.parametrize("path", CLAIM_MODULES, ids=[p.stem for p in CLAIM_MODULES])
def test_each_claims_protocol_in_code_is_the_one_registered_in_the_ledger(path: Path) -> None:
    proto = _protocol(path)
    ledger = load_ledger(ROOT / "claims" / "ledger", "claim_ledger")
    status = ledger.status(proto)
    assert not status.startswith("unregistered"), f"{proto.claim_id}: {status}"
    history = ledger.history(proto.claim_id)
    assert history[-1].version == proto.version, (
        f"{proto.claim_id}: code is v{proto.version}, ledger ends at v{history[-1].version}"
    )
    assert [e.version for e in history] == list(range(1, len(history) + 1))


def test_a_ledger_entry_missing_a_field_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "C1.toml"
    bad.write_text('[[version]]\nclaim = "C1"\nversion = 2\n')
    with pytest.raises(ConfigError, match=r"C1.toml: \[\[version\]\] #1 needs fingerprint as str"):
        load_ledger(tmp_path, "claim_ledger")


def test_a_version_recorded_twice_is_refused(tmp_path: Path) -> None:
    row = '[[version]]\nclaim = "C1"\nversion = 1\nfingerprint = "x"\ndate = "d"\nchange = "c"\nmotivated_by = "m"\n'
    (tmp_path / "a.toml").write_text(row)
    (tmp_path / "b.toml").write_text(row)
    with pytest.raises(ConfigError, match="C1 v1 is recorded twice"):
        load_ledger(tmp_path, "claim_ledger")
