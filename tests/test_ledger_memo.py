"""A ledger verified once is read back for the same files on the same git history, and checked again otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ledger_history import REG, _commit, _rewrite, _rows, repo  # noqa: F401 (the fixture)

from claimcheck import ledgermemo
from claimcheck.ledger import Ledger, LedgerError, append, check_git, check_history, load_ledger


def _verify(ledger: Path, cache: Path) -> Ledger:
    return ledgermemo.verified(ledger, "claim_ledger", cache)


def _checks_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> list[str]:
        raise AssertionError("the ledger was checked again")

    monkeypatch.setattr(ledgermemo, "check_history", refuse)
    monkeypatch.setattr(ledgermemo, "check_git", refuse)


def test_an_unchanged_ledger_is_read_back_with_what_its_verification_found(
    repo: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    first = _verify(repo / "ledger", cache)
    plain = load_ledger(repo / "ledger")
    notes = check_history(plain) + check_git(plain)
    assert [e.hash for e in first.entries] == [e.hash for e in plain.entries]
    assert (first.notes, first.committed) == (notes, plain.committed)
    _checks_forbidden(monkeypatch)
    again = _verify(repo / "ledger", cache)
    assert again.entries == first.entries and again.notes == first.notes and again.committed == first.committed
    assert again.state("C1", "f" * 64).kind == "confirmed"


def test_a_rewritten_chain_is_refused_although_the_ledger_before_it_was_kept(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    cache, path = tmp_path / "cache", repo / "ledger" / "C1.toml"
    _verify(repo / "ledger", cache)
    _rewrite(path, _rows(path)[:2])  # a committed entry removed, the chain re-hashed as a forger would
    with pytest.raises(LedgerError, match="history diverges"):
        _verify(repo / "ledger", cache)


def test_a_new_commit_or_an_appended_entry_is_checked_again(
    repo: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    _verify(repo / "ledger", cache)
    append(repo / "ledger" / "C1.toml", "register", REG | {"version": 2, "block": "C1-v2"})
    assert len(_verify(repo / "ledger", cache).entries) == 4  # appended, not committed: checked again
    (repo / "other.txt").write_text("x")
    _commit(repo, "an unrelated commit moves HEAD")
    calls: list[str] = []

    def history(ledger: Ledger) -> list[str]:
        calls.append("history")
        return []

    monkeypatch.setattr(ledgermemo, "check_history", history)
    _verify(repo / "ledger", cache)
    assert calls == ["history"]


def test_a_kept_verification_not_sealed_with_the_caches_key_is_not_used(
    repo: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    notes = _verify(repo / "ledger", cache).notes
    (kept,) = (cache / ledgermemo.FOLDER).iterdir()
    payload = kept.read_bytes().split(b"\n", 2)[2]
    assert b'"notes": [' in payload
    kept.write_bytes(ledgermemo.SEAL + b"0" * 64 + b"\n" + payload.replace(b'"notes": [', b'"notes": ["forged", '))
    calls: list[str] = []

    def history(ledger: Ledger) -> list[str]:
        calls.append("history")
        return []

    monkeypatch.setattr(ledgermemo, "check_history", history)
    assert "forged" not in _verify(repo / "ledger", cache).notes
    assert calls == ["history"] and notes


def test_a_failed_verification_is_not_kept(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    cache, path = tmp_path / "cache", repo / "ledger" / "C1.toml"
    _rewrite(path, _rows(path)[:2])
    with pytest.raises(LedgerError):
        _verify(repo / "ledger", cache)
    assert not (cache / ledgermemo.FOLDER).exists() or not any((cache / ledgermemo.FOLDER).iterdir())


def test_outside_git_nothing_is_kept_and_the_ledger_is_still_read(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger" / "C1.toml"
    append(ledger, "register", REG)
    got = _verify(tmp_path / "ledger", tmp_path / "cache")
    assert len(got.entries) == 1 and not (tmp_path / "cache" / ledgermemo.FOLDER).exists()
    assert got.notes == [
        f"git history not checked: {tmp_path / 'ledger'} is not in a git work tree (or git is missing)"
    ]


def test_clearing_the_cache_removes_kept_verifications_and_no_other_file(repo: Path, tmp_path: Path) -> None:  # noqa: F811
    cache = tmp_path / "cache"
    _verify(repo / "ledger", cache)
    folder = cache / ledgermemo.FOLDER
    (folder / ("a" * 64 + ".json")).write_text('{"mine": true}')  # a file of that name claimcheck did not write
    (folder / "notes.txt").write_text("mine")
    assert ledgermemo.clear(cache) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["a" * 64 + ".json", "notes.txt"]
