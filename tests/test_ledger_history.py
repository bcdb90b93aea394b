"""The ledger is anchored in git: every committed version of a ledger file is a prefix of the file now."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from claimcheck.cli.main import main
from claimcheck.provenance.ledger import (
    HEADER,
    SCHEMA,
    LedgerError,
    append,
    check_git,
    check_history,
    content_hash,
    load_ledger,
    render_entry,
)

REG = {
    "claim": "C1", "version": 1, "fingerprint": "f" * 64, "scheme": "claimcheck-code/2", "block": "C1-v1",
    "change": "first", "motivated_by": "the paper", "date": "2026-12-01",
}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _confirm(registration: str, verdict: str = "REPRODUCED") -> dict[str, object]:
    return {
        "claim": "C1", "registration": registration, "budget": "ci", "base_seed": 0, "pool": "confirmatory",
        "seeds": "1-20", "commit": "0" * 40, "engine": "e", "date": "2026-12-02", "verdict": verdict, "result": "r",
    }  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    ledger = tmp_path / "ledger" / "C1.toml"
    reg = append(ledger, "register", REG)
    append(ledger, "confirm", _confirm(reg.hash))
    append(ledger, "calibrate", {"claim": "C1", "part": "", "fingerprint": "c" * 64, "date": "2026-12-02"})
    _commit(tmp_path, "register, confirm and calibrate C1")
    return tmp_path


def _rewrite(path: Path, rows: list[dict[str, object]]) -> None:
    """Write ``rows`` as a whole new chain: each prev and hash recomputed, as a forger would."""
    prev, out = "", []
    for row in rows:
        row = {k: v for k, v in row.items() if k not in ("prev", "hash")} | {"prev": prev}
        row["hash"] = prev = content_hash(row)
        out.append(render_entry(row))
    path.write_text(HEADER.format(schema=SCHEMA) + "\n".join(out), encoding="utf-8")


def _rows(path: Path) -> list[dict[str, object]]:
    return list(tomllib.loads(path.read_text(encoding="utf-8"))["entry"])


def test_an_untouched_committed_ledger_passes_and_its_confirmation_stands(repo: Path) -> None:
    ledger = load_ledger(repo / "ledger")
    assert check_history(ledger) == []
    assert ledger.state("C1", "f" * 64).kind == "confirmed"


def test_a_committed_truncation_is_refused_naming_the_file_and_the_commit(repo: Path) -> None:
    path = repo / "ledger" / "C1.toml"
    _rewrite(path, _rows(path)[:2])
    cut = _commit(repo, "drop the calibration")
    ledger = load_ledger(repo / "ledger")  # the chain itself still holds
    with pytest.raises(LedgerError) as err:
        check_history(ledger)
    assert str(path) in str(err.value) and cut[:12] in str(err.value) and "entry #3 was removed" in str(err.value)


def test_an_edited_and_rehashed_entry_is_refused_when_committed(repo: Path) -> None:
    path = repo / "ledger" / "C1.toml"
    rows = _rows(path)
    rows[1]["verdict"], rows[1]["seeds"] = "REPRODUCED (forged)", "1-40"
    _rewrite(path, rows)
    forged = _commit(repo, "a better result")
    with pytest.raises(LedgerError, match=rf"diverges in commit {forged[:12]}.*entry #2 was edited, re-hashed"):
        check_history(load_ledger(repo / "ledger"))


def test_reordered_entries_are_refused_when_committed(repo: Path) -> None:
    path = repo / "ledger" / "C1.toml"
    rows = _rows(path)
    _rewrite(path, [rows[0], rows[2], rows[1]])
    moved = _commit(repo, "tidy")
    with pytest.raises(LedgerError, match=rf"{moved[:12]}.*entry #2"):
        check_history(load_ledger(repo / "ledger"))


def test_an_uncommitted_rewrite_is_refused_naming_the_working_tree(repo: Path) -> None:
    path = repo / "ledger" / "C1.toml"
    _rewrite(path, _rows(path)[:1])
    with pytest.raises(LedgerError, match=r"diverges in the working tree \(not committed\)"):
        check_history(load_ledger(repo / "ledger"))


def test_a_confirmation_not_committed_yet_is_pending_not_confirmed(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    path = tmp_path / "ledger" / "C1.toml"
    reg = append(path, "register", REG)
    _commit(tmp_path, "register C1")
    append(path, "confirm", _confirm(reg.hash))
    ledger = load_ledger(tmp_path / "ledger")
    check_history(ledger)
    state = ledger.state("C1", "f" * 64)
    assert state.kind == "registered" and "pending" in state.text and state.confirmation is None
    _commit(tmp_path, "confirm C1")
    ledger = load_ledger(tmp_path / "ledger")
    check_history(ledger)
    assert ledger.state("C1", "f" * 64).kind == "confirmed"


def test_ledger_verify_exits_1_on_a_committed_truncation(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "ledger" / "C1.toml"
    _rewrite(path, _rows(path)[:2])
    cut = _commit(repo, "drop the calibration")
    assert main(["ledger", "verify", str(repo / "ledger")]) == 1
    out = capsys.readouterr().out
    assert cut[:12] in out and str(path) in out


def test_outside_git_the_history_check_says_it_did_not_run(tmp_path: Path) -> None:
    path = tmp_path / "C1.toml"
    append(path, "register", REG)
    notes = check_history(load_ledger(path))
    assert len(notes) == 1 and "not in a git work tree" in notes[0]


def test_an_entry_of_awkward_plain_data_reads_back_as_the_content_it_hashed(tmp_path: Path) -> None:
    awkward = {
        "text": 'quote " backslash \\ newline \n DEL \x7f NUL \x00 é', "nan": float("nan"), "inf": float("-inf"),
        "table": {"a key with spaces": [1, 2.5], "empty": {}}, "rows": [{"a": 1}, {"b": "2"}], "flag": False,
    }  # fmt: skip
    entry = append(tmp_path / "C1.toml", "calibrate", {**REG, "part": "p", "results": awkward})
    row = _rows(tmp_path / "C1.toml")[0]
    assert content_hash(row) == entry.hash == row["hash"]
    assert tomllib.loads(render_entry(row))["entry"][0]["results"]["text"] == awkward["text"]


def test_check_git_finds_the_registrations_first_commit_and_refuses_one_committed_otherwise(tmp_path: Path) -> None:
    # check_git reads a registration whose committed bytes are the file's now without parsing them; a first
    # committed version whose row carries the same hash over other content is parsed and refused
    _git(tmp_path, "init", "-q")
    path = tmp_path / "ledger" / "C1.toml"
    reg = append(path, "register", REG)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('change = "first"', 'change = "other"', 1), encoding="utf-8")  # its hash kept
    _commit(tmp_path, "register C1, another text under the same hash")
    path.write_text(text, encoding="utf-8")
    append(path, "confirm", _confirm(reg.hash))
    _commit(tmp_path, "the registration as hashed, and its confirmation")
    with pytest.raises(LedgerError, match=r"entry #1 \(register C1 v1.*differs from the entry committed in"):
        check_git(load_ledger(tmp_path / "ledger"))
    _git(tmp_path, "checkout", "-q", "--orphan", "clean")
    _git(tmp_path, "rm", "-q", "-r", "--cached", ".")
    _commit(tmp_path, "register and confirm C1 in one commit")
    notes = check_git(load_ledger(tmp_path / "ledger"))  # found committed unchanged; only the run's commit is unknown
    assert len(notes) == 1 and "names commit 0000000000000000000000000000000000000000, not in this" in notes[0]
