"""Issue 51: what the cache key and the ledger trust, each fault shown before its fix.

The cache's key is used only when it is the user's own and private; a key that changes under
entries sealed with another is said. A ledger confirmation counts only when git shows its run's
commit after its registration; the ledger's whole history is walked, every parent of a merge
included; nothing of an earlier verification is kept to skip the checks; a ledger file that cannot
be read (a link out of the repository, TOML nested past the recursion limit) is a usage error
naming --claim-ledger and the file, never an INTERNALERROR.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import types
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from test_integrity import CONFTEST, MODULE
from toys import K

from claimcheck.cli.main import main
from claimcheck.errors import ConfigError
from claimcheck.provenance.ledger import (
    Ledger,
    LedgerError,
    append,
    check_git,
    check_history,
    content_hash,
    load_ledger,
)
from claimcheck.pytest import session as controller
from claimcheck.pytest.options import Settings
from claimcheck.store import cachefile
from claimcheck.store.cache import CacheReadWarning, ResultCache

REG = {
    "claim": "C1", "version": 1, "fingerprint": "f" * 64, "scheme": "claimcheck-code/2", "block": "C1-v1",
    "change": "first", "motivated_by": "the paper", "date": "2026-12-01",
}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _confirm(registration: str, commit: str) -> dict[str, object]:
    return {
        "claim": "C1", "registration": registration, "budget": "ci", "base_seed": 0, "pool": "confirmatory",
        "seeds": "1-20", "commit": commit, "engine": "e", "date": "2026-12-02", "verdict": "REPRODUCED", "result": "r",
    }  # fmt: skip


def _rewrite(path: Path, rows: list[dict[str, object]]) -> None:
    """Write ``rows`` as a whole new chain, each prev and hash recomputed, as a forger would."""
    path.unlink(missing_ok=True)
    for row in rows:
        append(path, str(row["kind"]), {k: v for k, v in row.items() if k not in ("kind", "prev", "hash")})


def _verified(path: Path) -> tuple[Ledger, list[str]]:
    ledger = load_ledger(path)
    notes = check_history(ledger) + check_git(ledger)
    return ledger, notes


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose ledger C1.toml registers C1 v1 (committed), then confirms it by a real later commit."""
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "code.py").write_text("x = 1\n")
    _commit(tmp_path, "the claim")
    ledger = tmp_path / "ledger" / "C1.toml"
    reg = append(ledger, "register", REG)
    registered = _commit(tmp_path, "register C1 v1")
    append(ledger, "confirm", _confirm(reg.hash, registered))
    _commit(tmp_path, "confirm C1 v1")
    return tmp_path


# --- 2: a confirmation counts only on git's evidence ------------------------------------------------------------


def test_a_confirmation_naming_a_commit_git_has_not_reads_registered_unconfirmed(repo: Path) -> None:
    path = repo / "ledger" / "C1.toml"
    reg = load_ledger(path).entries[0]
    append(path, "confirm", {**_confirm(reg.hash, "1234567" * 5 + "89abc"), "budget": "standard"})
    _commit(repo, "a hand-written confirmation at standard")
    ledger, notes = _verified(repo / "ledger")
    state = ledger.state("C1", "f" * 64)
    assert state.kind == "confirmed"  # the ci confirmation, by a real commit, stands
    assert "also confirmed at standard" not in state.text
    assert any("12345671234567" in n and "not in this repository's history" in n for n in notes)


def test_a_lone_confirmation_by_an_unknown_commit_does_not_confirm(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    path = tmp_path / "ledger" / "C1.toml"
    reg = append(path, "register", REG)
    _commit(tmp_path, "register")
    append(path, "confirm", _confirm(reg.hash, "deadbeef" * 5))
    _commit(tmp_path, "confirm by a commit that exists nowhere")
    ledger, _ = _verified(tmp_path / "ledger")
    state = ledger.state("C1", "f" * 64)
    assert state.kind == "registered" and state.confirmation is None
    assert "registered" in state.text and "deadbeef" in state.text and "not in this repository's history" in state.text


def test_ledger_confirm_records_the_sha256_of_the_run_it_confirms_by(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.5))
    pytester.makeconftest(CONFTEST)
    (pytester.path / "engine.txt").write_text("engine-one\n")
    monkeypatch.chdir(pytester.path)
    _git(pytester.path, "init", "-q")
    register = ["ledger", "register", "test_toy.py", "--change", "first", "--motivated-by", "a test"]
    assert main([*register, "--ledger", "ledger.toml"]) == 0
    _commit(pytester.path, "register T1 v1")
    assert pytester.runpytest("--claim-ledger=ledger.toml", "--claim-report", "-p", "no:randomly").ret == 0
    assert main(["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml"]) == 0
    run = hashlib.sha256((pytester.path / "reports" / "claim-report.json").read_bytes()).hexdigest()
    assert load_ledger(pytester.path / "ledger.toml").entries[-1].get("run_sha256") == run
    entries = len(load_ledger(pytester.path / "ledger.toml").entries)
    confirm = ["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml", "--claim", "T9"]
    assert main(confirm) == 2  # a claim the run does not hold: said, and nothing written
    assert len(load_ledger(pytester.path / "ledger.toml").entries) == entries


# --- 3: no kept verification -------------------------------------------------------------------------------------


def test_a_session_keeps_no_ledger_verification_in_the_cache_and_checks_git_every_time(repo: Path) -> None:
    cache = repo.parent / "cache"
    settings = cast(
        Settings,
        types.SimpleNamespace(ledger=repo / "ledger", ledger_source="--claim-ledger", cache="on", cache_dir=cache),
    )
    controller.verified_ledger(settings)
    controller.verified_ledger(settings)
    assert not (cache / "ledger-checks").exists()


# --- 4: the whole history, every parent ------------------------------------------------------------------------


def test_a_merged_branch_that_re_creates_a_single_file_ledger_is_refused(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "code.py").write_text("x = 1\n")
    fork = _commit(tmp_path, "the claim")
    path = tmp_path / "ledger.toml"
    reg = append(path, "register", REG)
    registered = _commit(tmp_path, "register")
    append(path, "confirm", {**_confirm(reg.hash, registered), "verdict": "NOT REPRODUCED"})
    _commit(tmp_path, "confirm: not reproduced")
    _git(tmp_path, "checkout", "-q", "-b", "side", fork)
    reg2 = append(path, "register", REG)
    side = _commit(tmp_path, "register on a side branch")
    append(path, "confirm", _confirm(reg2.hash, side))
    _commit(tmp_path, "confirm: reproduced")
    _git(tmp_path, "checkout", "-q", "main")
    subprocess.run(["git", "merge", "-q", "side", "-m", "merge"], cwd=tmp_path, capture_output=True, check=False)
    _git(tmp_path, "checkout", "side", "--", "ledger.toml")
    _commit(tmp_path, "merge side, taking its ledger")
    with pytest.raises(LedgerError, match=r"ledger\.toml.*not a prefix"):
        _verified(path)


def test_a_renamed_ledger_file_is_refused_in_a_ledger_folder(repo: Path) -> None:
    _git(repo, "mv", "ledger/C1.toml", "ledger/C1b.toml")
    path = repo / "ledger" / "C1b.toml"
    rows = [{"kind": "register", **REG}, {"kind": "confirm", **_confirm(content_hash({}), "0" * 40)}]
    rows[1]["registration"] = load_ledger(path).entries[0].hash
    _rewrite(path, rows)
    _commit(repo, "tidy the ledger's names")
    with pytest.raises(LedgerError, match=r"C1\.toml.*(deleted|renamed)"):
        _verified(repo / "ledger")


def test_a_renamed_single_file_ledger_keeps_its_history_under_the_old_name(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    old = tmp_path / "ledger.toml"
    reg = append(old, "register", REG)
    registered = _commit(tmp_path, "register")
    append(old, "confirm", {**_confirm(reg.hash, registered), "verdict": "NOT REPRODUCED"})
    _commit(tmp_path, "confirm: not reproduced")
    _git(tmp_path, "mv", "ledger.toml", "claims-ledger.toml")
    new = tmp_path / "claims-ledger.toml"
    _rewrite(new, [{"kind": "register", **REG}])
    renamed = _commit(tmp_path, "rename the ledger, dropping the confirmation")
    append(new, "confirm", _confirm(reg.hash, renamed))  # a real commit, after the (re-)registration
    _commit(tmp_path, "confirm: reproduced")
    with pytest.raises(LedgerError, match=r"ledger\.toml.*not a prefix"):
        _verified(new)


def test_a_shallow_clone_says_the_history_could_not_be_checked(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = tmp_path_factory.mktemp("shallow") / "c"
    subprocess.run(["git", "clone", "-q", "--depth=1", f"file://{repo}", str(clone)], check=True, capture_output=True)
    _, notes = _verified(clone / "ledger")
    assert any("shallow" in n and "not checked" in n for n in notes)
    assert main(["ledger", "verify", str(clone / "ledger")]) == 0
    out = capsys.readouterr().out
    assert "every committed version is a prefix" not in out and "shallow" in out


# --- 5: unreadable ledger files are usage errors ----------------------------------------------------------------


def test_a_ledger_file_linked_from_outside_the_repository_is_a_usage_error(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "C1.toml"
    append(outside, "register", REG)
    _git(pytester.path, "init", "-q")
    (pytester.path / "ledger").mkdir()
    (pytester.path / "ledger" / "C1.toml").symlink_to(outside)
    pytester.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.5))
    _commit(pytester.path, "a ledger linked from outside")
    result = pytester.runpytest("--claim-ledger=ledger", "--collect-only", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + err
    assert "--claim-ledger" in err and "C1.toml" in err and "outside" in err


def test_a_deeply_nested_ledger_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "ledger.toml").write_text("a=" + "[" * 10000)
    pytester.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.5))
    result = pytester.runpytest("--claim-ledger=ledger.toml", "--collect-only", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + err
    assert "--claim-ledger" in err and "ledger.toml" in err and "too deeply" in err
    with pytest.raises(ConfigError, match="too deeply"):
        load_ledger(pytester.path / "ledger.toml")


# --- 1: the cache key is the user's own and private -------------------------------------------------------------


def _key(tmp_path: Path) -> Path:
    cachefile.cache_secret(tmp_path / "cache")
    return tmp_path / "cache" / cachefile.KEY_FILE


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602])
def test_a_key_readable_or_writable_by_others_is_refused_naming_the_file_and_the_fix(tmp_path: Path, mode: int) -> None:
    key = _key(tmp_path)
    os.chmod(key, mode)
    with pytest.raises(OSError) as err:
        cachefile.cache_secret(tmp_path / "cache")
    text = str(err.value)
    assert str(key) in text and "chmod 600" in text and "--claim-cache off" in text


def test_a_key_owned_by_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _key(tmp_path)
    monkeypatch.setattr(cachefile, "_uid", lambda: os.stat(key).st_uid + 1)
    with pytest.raises(OSError, match=r"owned by another user.*of your own"):
        cachefile.cache_secret(tmp_path / "cache")


def test_a_key_gone_under_sealed_entries_is_said_and_those_entries_are_not_read(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    parts = {"claim": "C2", "seed": 3}
    cache.memo(K(parts), lambda: ({"loss": np.ones(3)}, {"seed": 3}))
    (tmp_path / "cache" / cachefile.KEY_FILE).unlink()  # removed by someone who cannot read it
    with pytest.warns(cachefile.KeyReplacedWarning, match=r"is gone while 1 entries sealed with it"):
        again = ResultCache(tmp_path / "cache")
        with pytest.warns(CacheReadWarning, match="fails authentication"):
            again.memo(K(parts), lambda: ({"loss": np.zeros(3)}, {"seed": 3}))
    assert again.counts.unauthenticated == 1
