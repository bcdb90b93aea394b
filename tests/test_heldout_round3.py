"""Held-out variants of issue 51's faults, written by someone who did not fix them."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_faults_io import _hold_in_child
from test_faults_outputs import _run, _run_json
from test_faults_trust import REG, _commit, _confirm, _git, _key, _verified
from toys import K, toy

import claimcheck.store.filelock as filelock
from claimcheck.cli.main import main
from claimcheck.provenance.ledger import LedgerError, append, load_ledger
from claimcheck.report.fileset import DETAILS_MARK
from claimcheck.report.write import ReportWriteError, write_report
from claimcheck.store import cachefile
from claimcheck.store.cache import CacheWriteWarning, ResultCache
from claimcheck.store.filelock import LockTimeout


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- fault 1: -o onto a file claimcheck did not write -------------------------------------------------------------


def test_compare_o_onto_a_users_baseline_through_a_relative_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path / "run")
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "base-2026.json").write_bytes(run.read_bytes())
    before = _sha(kept / "base-2026.json")
    monkeypatch.chdir(kept)
    assert main(["compare", "base-2026.json", str(run), "-o", "base-2026.json"]) == 2
    assert _sha(kept / "base-2026.json") == before
    err = capsys.readouterr().err
    assert "--force" in err and "Traceback" not in err


def test_matrix_o_onto_a_run_json_spelled_through_dot_dot_is_refused(tmp_path: Path) -> None:
    run = _run_json(tmp_path / "run")
    (tmp_path / "sub").mkdir()
    user = tmp_path / "mine.json"
    user.write_bytes(run.read_bytes())
    before = _sha(user)
    assert main(["matrix", str(run), "-o", str(tmp_path / "sub" / ".." / "mine.json")]) == 2
    assert _sha(user) == before


def test_render_o_onto_a_relative_symlink_to_a_run_json_keeps_the_target(tmp_path: Path) -> None:
    run = _run_json(tmp_path / "run")
    kept = tmp_path / "kept.json"
    kept.write_bytes(run.read_bytes())
    before = _sha(kept)
    link = tmp_path / "out" / "report.md"
    link.parent.mkdir()
    link.symlink_to(os.path.join("..", "kept.json"))
    assert main(["render", str(run), "-o", str(link)]) == 2
    assert _sha(kept) == before and link.is_symlink()


def test_matrix_o_onto_its_own_output_the_user_edited_since_keeps_the_edit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(tmp_path / "run")
    out = tmp_path / "matrix.md"
    assert main(["matrix", str(run), "-o", str(out)]) == 0
    edited = out.read_text() + "\nmy notes on this matrix\n"
    out.write_text(edited)
    assert main(["matrix", str(run), "-o", str(out)]) == 2
    assert out.read_text() == edited
    assert "Traceback" not in capsys.readouterr().err


# --- fault 2: a user's details file next to a report ---------------------------------------------------------------


def test_a_users_details_file_of_another_stem_without_the_mark_survives_two_reports(tmp_path: Path) -> None:
    report = tmp_path / "results.md"
    mine = tmp_path / "results-details.md"
    mine.write_text("# my details\n\nwritten by hand before any report\n")
    write_report(_run("one"), report, figures=False)
    write_report(_run("two"), report, figures=False)
    assert mine.read_text() == "# my details\n\nwritten by hand before any report\n"


def test_a_details_file_copied_from_another_sets_folder_is_not_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claimcheck.report.markdown import render

    monkeypatch.setattr("claimcheck.report.write.MAX_CHARS", len(render(_run())) + 200)
    other = write_report(_run("split", claims=3), tmp_path / "a" / "claim-report.md", figures=False)
    assert other.details is not None
    here = tmp_path / "b"
    here.mkdir()
    write_report(_run("whole"), here / "claim-report.md", figures=False)
    copied = here / "claim-report-details.md"
    copied.write_bytes(other.details.read_bytes())  # claimcheck's bytes, but not written here by claimcheck
    before = _sha(copied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("whole again"), here / "claim-report.md", figures=False)
    assert copied.exists() and _sha(copied) == before
    assert copied.read_text().startswith(DETAILS_MARK)


# --- fault 3: the cache key ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o660, 0o644, 0o610, 0o601])
def test_a_key_with_group_or_other_bits_in_other_combinations_is_refused(tmp_path: Path, mode: int) -> None:
    key = _key(tmp_path)
    os.chmod(key, mode)
    with pytest.raises(OSError) as err:
        cachefile.cache_secret(tmp_path / "cache")
    assert str(key) in str(err.value) and "chmod 600" in str(err.value)


def test_entries_under_a_key_made_group_writable_later_are_not_read(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    key = K({"claim": "C3", "seed": 1})
    cache.memo(key, lambda: ({"loss": np.ones(2)}, {"seed": 1}))
    secret = tmp_path / "cache" / cachefile.KEY_FILE
    os.chmod(secret, 0o660)  # a group member could now forge entries it vouches for
    again = ResultCache(tmp_path / "cache")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        arrays, _ = again.memo(key, lambda: ({"loss": np.zeros(2)}, {"seed": 1}))
    assert again.counts.cached == 0 and again.counts.computed == 1 and float(arrays["loss"].sum()) == 0.0
    said = " ".join(str(w.message) for w in seen)
    assert str(secret) in said and "chmod 600" in said


# --- fault 4: a confirmation git does not bear out ------------------------------------------------------------------


def test_a_confirmation_naming_a_real_commit_older_than_the_registration_is_not_confirmed(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "code.py").write_text("x = 1\n")
    earlier = _commit(tmp_path, "before the claim was registered")
    path = tmp_path / "ledger" / "C1.toml"
    reg = append(path, "register", REG)
    _commit(tmp_path, "register C1 v1")
    append(path, "confirm", _confirm(reg.hash, earlier))
    _commit(tmp_path, "a confirmation by a commit from before the registration")
    with pytest.raises(LedgerError, match=r"does not descend from .*not shown to come after the registration"):
        _verified(tmp_path / "ledger")  # refused outright: never read as confirmed


def test_a_confirmation_naming_an_abbreviated_unknown_commit_is_not_confirmed(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "code.py").write_text("x = 1\n")
    _commit(tmp_path, "the claim")
    path = tmp_path / "ledger" / "C1.toml"
    reg = append(path, "register", REG)
    _commit(tmp_path, "register C1 v1")
    append(path, "confirm", _confirm(reg.hash, "abc1234"))
    _commit(tmp_path, "a short made-up commit")
    ledger, _ = _verified(tmp_path / "ledger")
    assert ledger.state("C1", "f" * 64).kind != "confirmed"
    assert load_ledger(path).entries[-1].kind == "confirm"


# --- fault 5: a lock held by a stopped session -----------------------------------------------------------------------


def test_a_report_lock_of_another_stem_held_by_a_stopped_session_times_out_naming_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filelock, "TIMEOUT_S", 1.0)
    lock = tmp_path / "sub" / ".nightly.md.lock"
    lock.parent.mkdir()
    child = _hold_in_child(lock)
    try:
        with pytest.raises(ReportWriteError) as raised:
            write_report(_run("n1"), tmp_path / "sub" / "nightly.md", figures=False)
    finally:
        child.kill()
        child.wait()
    assert f"pid {child.pid}" in str(raised.value) and ".nightly.md.lock" in str(raised.value)
    assert not (tmp_path / "sub" / "nightly.md").exists()


def test_two_entries_held_by_a_stopped_session_each_time_out(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, lock_timeout=0.5)
    cache.note = lambda _: None
    for n in (7, 8):
        key = K({"other": n})
        lock = cache.path(key.digest).with_suffix(".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        child = _hold_in_child(lock)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(LockTimeout, match=re.escape(lock.name)):
                    cache.memo(key, lambda: ({"v": np.zeros(1)}, {"n": 1}))
        finally:
            child.kill()
            child.wait()


# --- fault 6: a gzip bomb among data files ---------------------------------------------------------------------------


def test_a_multi_member_gzip_bomb_among_the_jena_files_is_passed_over(tmp_path: Path) -> None:
    from qin2025.data import jena

    member = io.BytesIO()
    with gzip.GzipFile(fileobj=member, mode="wb", compresslevel=9, mtime=0) as g:
        for _ in range(20):
            g.write(bytes(2**20))
    folder = tmp_path / "jena"
    folder.mkdir()
    (folder / "m_members.csv.gz").write_bytes(member.getvalue() * 10)  # ten members, 200 MiB in all
    with pytest.raises(jena.JenaTooLargeError, match=r"m_members\.csv\.gz"):
        jena.load_jena(folder / "m_members.csv.gz")


# --- fault 7: non-UTF-8 bytes in other path options ------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--claim-baseline", "--claim-data-dir", "--claim-ledger"])
def test_a_non_utf8_path_in_another_option_is_a_usage_error_naming_it(pytester: pytest.Pytester, option: str) -> None:
    (pytester.mkdir("claims") / "test_toy.py").write_text(toy())
    name = os.fsdecode(b"d\xfe\xfe" + (b".json" if option == "--claim-baseline" else b""))
    result = pytester.runpytest(f"{option}={pytester.path / name}", "claims")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert option in text and "Traceback" not in text and "UnicodeEncodeError" not in text


# --- fault 8: a lock that is a symbolic link -------------------------------------------------------------------------


def test_an_entry_lock_linked_to_an_existing_user_file_leaves_it_unchanged(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    key = K({"linked": 2})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me\n")
    lock.symlink_to(os.path.relpath(victim, lock.parent))
    with pytest.warns(CacheWriteWarning, match="symbolic link"):
        _, meta = cache.memo(key, lambda: ({"v": np.zeros(1)}, {"n": 2}))
    assert meta == {"n": 2} and victim.read_text() == "keep me\n" and lock.is_symlink()


def test_a_report_lock_of_another_stem_linked_to_a_user_file_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me\n")
    (tmp_path / ".weekly.md.lock").symlink_to("notes.txt")
    with pytest.raises(ReportWriteError, match="symbolic link"):
        write_report(_run("w"), tmp_path / "weekly.md", figures=False)
    assert victim.read_text() == "keep me\n" and not (tmp_path / "weekly.md").exists()
