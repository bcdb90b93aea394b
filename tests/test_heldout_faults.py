"""Held-out variants of issue 36's faults: no file outside claimcheck's own lost, no verdict from an unchecked byte.

These are not the inputs the fixes were written against (tests/test_own_files.py,
tests/test_store_trust.py, tests/test_cli_output.py) but new ones in the same classes: report
manifest entries, the cache's ``clear``, writes over the user's files, the store's trust, and the
Jena and SST-2 loaders. Each test snapshots the tree it works in before and after, and asserts
that nothing but claimcheck's own files changed; a variant that the code does not yet handle is
marked xfail (strict) with the defect in one line (none is left: every variant found was fixed).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from test_cache_faults import CLAIM as CACHED
from toys import K

from claimcheck.cli import main as cli
from claimcheck.cli.main import main
from claimcheck.decide.record import ClaimRecorder, Curve
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.errors import DataError
from claimcheck.report.figures import FIGURE_SEAL, cached_group, clear_figure_cache, figure_key
from claimcheck.report.fileset import manifest_path, recover
from claimcheck.report.rundata import RunData
from claimcheck.report.write import ReportWriteError, write_report
from claimcheck.store import cachefile
from claimcheck.store.cache import SEAL, ResultCache, encode, open_entry
from qin2025.data.jena import FEATURES, JenaError, load_jena, locate_jena, require_features
from qin2025.data.sst2 import Sst2FormatError, load_sst2

# --- helpers -------------------------------------------------------------------------------------------------------


def snapshot(root: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple[str, bytes]]:
    """Return each entry under ``root``, links not followed, as (kind, content or link target); ``skip`` left out."""
    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", b"")
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", path.read_bytes())
            else:
                out[rel] = (stat.filemode(st.st_mode)[0], b"")
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _put(path: Path, text: str = "the user's") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _run(run_id: str, curve: str = "toy curve", tests: int = 1) -> RunData:
    out = []
    for i in range(tests):
        rec = ClaimRecorder(claim_id=f"C{9 + i}", seed=0)
        rec.check("toy statistic " + "x" * 40 * (tests > 1), 0.5, "<=", 1.0)
        rec.curve("loss", [1.0, 0.5], group=curve)
        out.append(TestOutcome(f"test_toy.py::test_claim{i}", f"C{9 + i}", "toy", "Sec. 9", "passed", record=rec))
    return RunData(title="toy", env={"run id": run_id, "date": "today"}, tests=out)


def _edit_manifest(report: Path, **changes: object) -> None:
    data = json.loads(manifest_path(report).read_text())
    data.update(changes)
    manifest_path(report).write_text(json.dumps(data))


def _add_entries(report: Path, entries: dict[str, str]) -> None:
    """Add ``entries`` (name -> sha256) to the report's manifest, as a pull request could."""
    data = json.loads(manifest_path(report).read_text())
    _edit_manifest(report, files=[*data["files"], *entries], sha256={**data["sha256"], **entries})


OWN = ("reports",)  # the report folder: claimcheck's own files live there and change with each run


# --- report manifest entries ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        "figures/../../victim.txt",  # .. in the middle
        "claim-report-figures/../../victim.txt",
        "//" + "victim.txt",  # two slashes: absolute to POSIX
        "..\\victim.txt",  # a Windows separator
        "./../victim.txt",
    ],
)
def test_a_manifest_entry_that_climbs_out_in_another_spelling_removes_nothing(tmp_path: Path, entry: str) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    victim = _put(tmp_path / "victim.txt")
    _add_entries(report, {entry: _sha(victim)})
    before = snapshot(tmp_path, OWN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new", "another curve"), report)
    assert snapshot(tmp_path, OWN) == before and victim.read_text() == "the user's"


def test_a_hard_link_inside_the_report_folder_to_a_users_file_keeps_the_users_file(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    theirs = _put(tmp_path / "theirs" / "thesis.txt", "two years of work")
    os.link(theirs, report.parent / "thesis-link.txt")
    _add_entries(report, {"thesis-link.txt": _sha(theirs)})
    before = snapshot(tmp_path, OWN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new", "another curve"), report)
    assert snapshot(tmp_path, OWN) == before and theirs.read_text() == "two years of work"


def test_a_folder_where_an_old_sets_figure_was_is_left_with_its_files(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old", "old curve"), report)
    figure = report.parent / "claim-report-figures" / "C9-old-curve.png"
    figure.unlink()
    _put(figure / "inside.txt")  # the user made a folder of that name
    with pytest.warns(UserWarning, match="C9-old-curve.png"):
        write_report(_run("new", "new curve"), report)
    assert (figure / "inside.txt").read_text() == "the user's"


def test_a_figure_folder_replaced_by_a_link_to_the_users_folder_is_not_emptied(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old", "old curve"), report)
    figures = report.parent / "claim-report-figures"
    old = figures / "C9-old-curve.png"
    theirs = tmp_path / "photos"
    theirs.mkdir()
    (theirs / old.name).write_bytes(old.read_bytes())  # same name, same bytes: the hash matches
    for p in figures.iterdir():
        p.unlink()
    figures.rmdir()
    figures.symlink_to(theirs, target_is_directory=True)
    before = snapshot(tmp_path, OWN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new", "new curve"), report)
    assert snapshot(tmp_path, OWN) == before
    assert sorted(p.name for p in theirs.iterdir()) == [old.name]  # nothing removed through the link, nothing added


@pytest.mark.parametrize(
    "name",
    ["notes.txt", "baseline.json", "claim-report.md.orig", "claim-report-figures/my photo.png", "x/claim-report.md"],
)
def test_a_manifest_entry_naming_a_users_file_in_the_report_folder_with_its_hash_removes_nothing(
    tmp_path: Path, name: str
) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    users = _put(report.parent / name, "kept by the user")
    _add_entries(report, {name: _sha(users)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new"), report)
    assert users.read_text() == "kept by the user"


@pytest.mark.parametrize("name", ["claim-report-details.md", "claim-report-figures/C9-notes.png"])
def test_a_manifest_entry_under_a_name_of_the_set_with_a_users_content_and_hash_removes_nothing(
    tmp_path: Path, name: str
) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    users = _put(report.parent / name, "kept by the user: not a details file, not a PNG")
    _add_entries(report, {name: _sha(users)})
    with pytest.warns(UserWarning, match="is not a claimcheck"):
        write_report(_run("new"), report)
    assert users.read_text() == "kept by the user: not a details file, not a PNG"


def test_a_manifest_that_vouches_for_a_users_json_at_the_sidecars_path_gets_the_report_refused(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    sidecar = report.with_suffix(".json")
    sidecar.write_text('{"the user": "results"}')
    _add_entries(report, {sidecar.name: _sha(sidecar)})  # the entry is there already: its hash made the user's
    with pytest.raises(ReportWriteError, match="not written by claimcheck"):
        write_report(_run("new"), report)
    assert sidecar.read_text() == '{"the user": "results"}'


@pytest.mark.parametrize(
    "entry",
    [
        "nul\x00byte.png",
        "x" * 300 + ".png",
        "line\nbreak.png",
        "caf\u00e9.png",  # the user's file is the same name in NFD
        "claim-report-figures/" + "y" * 300 + "/z.png",
        "claim-report-figures/" + "y" * 300 + ".png",  # a figure's name, longer than a file name may be
    ],
)
def test_an_odd_manifest_entry_neither_stops_the_report_nor_touches_the_users_files(tmp_path: Path, entry: str) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    nfd = _put(report.parent / "cafe\u0301.png")
    _add_entries(report, {entry: _sha(nfd)})
    before = snapshot(tmp_path, OWN) | {"nfd": ("file", nfd.read_bytes())}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new", "another curve"), report)
        write_report(_run("newer", "a third curve"), report)  # and the run after it
    assert snapshot(tmp_path, OWN) | {"nfd": ("file", nfd.read_bytes())} == before
    assert "run id | newer" in report.read_text()


def test_a_manifest_entry_naming_the_manifest_itself_leaves_a_readable_set(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    own = manifest_path(report)
    _add_entries(report, {own.name: _sha(own)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(_run("new", "another curve"), report)
        write_report(_run("newer"), report)
    data = json.loads(own.read_text())
    assert data["run id"] == "newer" and "claim-report.md" in data["files"]


def test_moves_to_a_target_outside_or_from_a_linked_staging_folder_touch_nothing(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "claim-report.md"
    write_report(_run("old"), report)
    _put(tmp_path / "victim.txt")
    theirs = _put(tmp_path / "theirs" / "f.png", "the user's picture")
    stage = report.parent / ".claim-report.md.evil.staging"
    stage.symlink_to(theirs.parent, target_is_directory=True)
    data = json.loads(manifest_path(report).read_text())
    before = snapshot(tmp_path)
    for moves, files in (
        ([[".claim-report.md.evil.staging/f.png", "claim-report-figures/f.png"]], ["claim-report-figures/f.png"]),
        ([[".claim-report.md.evil.staging/f.png", "../victim.txt"]], ["../victim.txt"]),
        ([[".claim-report.md.evil.staging", "claim-report.md"]], ["claim-report.md"]),
    ):
        sha = dict.fromkeys(files, _sha(theirs))
        _edit_manifest(report, files=data["files"] + files, sha256={**data["sha256"], **sha}, moves=moves, remove=[])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            recover(report)
        after = snapshot(tmp_path)
        assert {k: v for k, v in after.items() if not k.startswith("reports/.claim-report.md.manifest")} == {
            k: v for k, v in before.items() if not k.startswith("reports/.claim-report.md.manifest")
        }


# --- the cache's clear ---------------------------------------------------------------------------------------------


def _entry_name(prefix: str = "ab") -> str:
    return prefix + "0" * 62 + ".npz"


def _real_cache(tmp_path: Path) -> tuple[ResultCache, Path]:
    cache = ResultCache(tmp_path / "cache")
    cache.memo(K({"k": 1}), lambda: ({"v": np.zeros(2)}, {}))
    entry = next((tmp_path / "cache").rglob("*.npz"))
    return cache, entry


@pytest.mark.parametrize(
    "head",
    [b"\x93NUMPY\x01\x00", b"claimcheck-cache-entry/9 other\n", b"%PDF-1.7\n", b"PK\x05\x06" + b"\0" * 18],
    ids=["npy", "another-seal", "pdf", "empty-zip"],
)
def test_clear_keeps_a_file_with_an_entrys_name_but_a_foreign_header(tmp_path: Path, head: bytes) -> None:
    cache, entry = _real_cache(tmp_path)
    foreign = tmp_path / "cache" / "ab" / _entry_name()
    foreign.parent.mkdir(exist_ok=True)
    foreign.write_bytes(head + b"the user's bytes")
    assert cache.clear() == 1 and not entry.exists()
    assert foreign.read_bytes() == head + b"the user's bytes"


def test_clear_keeps_a_users_own_npz_archive_filed_under_an_entrys_name(tmp_path: Path) -> None:
    cache, entry = _real_cache(tmp_path)
    theirs = tmp_path / "cache" / "ab" / _entry_name()
    theirs.parent.mkdir(exist_ok=True)
    buf = io.BytesIO()
    np.savez(buf, weights=np.arange(5.0))  # a zip, as entries before the seal were, but not one of the store's
    theirs.write_bytes(buf.getvalue())
    kept = theirs.read_bytes()
    assert cache.clear() == 1 and not entry.exists()
    assert theirs.read_bytes() == kept


def test_clear_removes_an_entry_from_before_the_seal_that_decodes_as_its_name_says(tmp_path: Path) -> None:
    cache, entry = _real_cache(tmp_path)
    old = ResultCache(tmp_path / "cache").path(K({"k": 3}).digest)
    old.parent.mkdir(exist_ok=True)
    old.write_bytes(encode({"v": np.ones(2)}, {}, K({"k": 3}).digest))  # unsealed, as entries were before the seal
    assert cache.clear() == 2 and not entry.exists() and not old.exists()


def test_clear_does_not_follow_a_shard_folder_linked_out_of_the_cache(tmp_path: Path) -> None:
    cache, entry = _real_cache(tmp_path)
    other = ResultCache(tmp_path / "another-cache")  # entries of someone else's cache, reached through a link
    other.memo(K({"k": 2}), lambda: ({"v": np.ones(2)}, {}))
    theirs = next((tmp_path / "another-cache").rglob("*.npz"))
    link = tmp_path / "cache" / theirs.parent.name
    if link.exists():
        pytest.skip("both entries share a shard folder")
    link.symlink_to(theirs.parent, target_is_directory=True)
    before = snapshot(tmp_path / "another-cache")
    cache.clear()
    assert snapshot(tmp_path / "another-cache") == before and not entry.exists()


def test_clear_keeps_links_folders_fifos_and_nested_look_alikes(tmp_path: Path) -> None:
    cache, entry = _real_cache(tmp_path)
    sealed = entry.read_bytes()
    outside = tmp_path / "outside" / _entry_name("cd")
    outside.parent.mkdir()
    outside.write_bytes(sealed)
    shard = tmp_path / "cache" / "cd"
    shard.mkdir()
    (shard / _entry_name("cd")).symlink_to(outside)  # a link named as an entry, to a sealed file outside
    (shard / _entry_name("cd").replace("0.npz", "1.npz")).mkdir()  # a folder named as an entry
    os.mkfifo(shard / _entry_name("cd").replace("0.npz", "2.npz"))  # a FIFO: must not hang
    for nested in ("cd/ef/" + _entry_name("cd"), "photos/ab/" + _entry_name("ab")):
        path = tmp_path / "cache" / nested
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(sealed)
    before = snapshot(tmp_path, ("cache/" + entry.parent.name,))
    start = time.monotonic()
    assert cache.clear() == 1
    assert time.monotonic() - start < 5 and not entry.exists()
    assert snapshot(tmp_path, ("cache/" + entry.parent.name,)) == before
    assert (tmp_path / "cache" / cachefile.KEY_FILE).is_file()


def test_clearing_the_figure_cache_keeps_links_and_pictures_named_like_figures(tmp_path: Path) -> None:
    folder = tmp_path / "figures"
    curves = [Curve(name="loss", y=[1.0, 0.5])]
    cached_group("C1 figure", curves, cache=folder)
    ours = folder / f"{figure_key('C1 figure', curves, None)}.png"
    sealed = ours.read_bytes()
    _put(tmp_path / "outside" / "sealed.png").write_bytes(sealed)
    (folder / ("a" * 64 + ".png")).symlink_to(tmp_path / "outside" / "sealed.png")
    (folder / ("b" * 64 + ".png")).write_bytes(b"\x89PNG\r\n\x1a\n the user's picture")
    (folder / "sub").mkdir()
    (folder / "sub" / ("c" * 64 + ".png")).write_bytes(sealed)
    before = snapshot(tmp_path, ("figures/" + ours.name,))
    assert clear_figure_cache(folder) == 1 and not ours.exists()
    assert snapshot(tmp_path, ("figures/" + ours.name,)) == before


def test_the_cache_clear_option_removes_only_entries_from_a_folder_with_the_users_files(
    pytester: pytest.Pytester,
) -> None:
    # the second run selects a plain test alone: clear happens, and no claim runs to write entries back (a run of
    # C9's control alone would end in C9 ERROR, "no claim statistic was recorded", and exit 1 by design)
    pytester.makepyfile(test_toy=CACHED + "\n\ndef test_plain():\n    pass\n")
    cache = pytester.path / "cache"
    assert pytester.runpytest(f"--claim-cache-dir={cache}").ret == 0
    entries = sorted(cache.rglob("*.npz"))
    _put(cache / "README.txt")
    _put(cache / entries[0].parent.name / "notes.npz")
    (cache / "ff").mkdir(exist_ok=True)
    (cache / "ff" / _entry_name("ff")).write_bytes(b"\x93NUMPY the user's array")
    before = {k: v for k, v in snapshot(cache).items() if not k.endswith(".npz") or "notes" in k or "ff/" in k}
    result = pytester.runpytest(f"--claim-cache-dir={cache}", "--claim-cache=clear", "-k", "plain")
    assert result.ret == 0
    after = snapshot(cache)
    assert all(after.get(k) == v for k, v in before.items() if not k.endswith(".lock"))
    assert not any(p.exists() for p in entries)


# --- writes over the user's files ----------------------------------------------------------------------------------


def _run_json(tmp_path: Path, tests: int = 1) -> Path:
    write_report(_run("r1", tests=tests), tmp_path / "run" / "claim-report.md", figures=False)
    return tmp_path / "run" / "claim-report.json"


def _fake_calibration(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make ``calibrate`` find one protocol and record whether it started calibrating (a run of minutes)."""
    started: list[str] = []

    def calibrate(*args: object, **kwargs: object) -> object:
        started.append("calibrated")
        raise SystemExit("the calibration would run here for minutes")

    monkeypatch.setattr(cli, "load_protocols", lambda paths: [object()])
    monkeypatch.setattr(cli, "calibrate_suite", calibrate)
    return started


@pytest.mark.parametrize("option", ["--json", "-o"])
def test_calibrate_onto_a_users_file_is_refused_before_it_calibrates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    started = _fake_calibration(monkeypatch)
    users = _put(tmp_path / "results.json", '{"mine": true}')
    before = snapshot(tmp_path)
    assert main(["calibrate", str(tmp_path), option, str(users)]) == 2
    assert snapshot(tmp_path) == before and started == []


@pytest.mark.parametrize(
    "command",
    [
        "render",
        "matrix",
        "compare",
        "calibrate",
        "expectations",
    ],
)
def test_every_o_onto_a_link_or_a_dangling_link_changes_nothing_behind_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    _fake_calibration(monkeypatch)
    run = _run_json(tmp_path)
    theirs = _put(tmp_path / "theirs" / "keep.md", "the user's")
    for i, target in enumerate((theirs, tmp_path / "theirs" / "absent.md")):
        link = tmp_path / f"out{i}.md"
        link.symlink_to(target)
        before = snapshot(tmp_path, ("run",))
        args = {
            "render": ["render", str(run)],
            "matrix": ["matrix", str(run)],
            "compare": ["compare", str(run), str(run)],
            "calibrate": ["calibrate", str(tmp_path)],
            "expectations": ["expectations", str(run)],
        }[command]
        assert main([*args, "-o", str(link)]) == 2
        assert snapshot(tmp_path, ("run",)) == before


@pytest.mark.parametrize(
    "name",
    [
        "README.md",
        "pyproject.toml",
        "data.bin",
    ],
)
def test_expectations_into_a_file_that_is_not_toml_pins_is_refused(tmp_path: Path, name: str) -> None:
    run = _run_json(tmp_path)
    content = {"README.md": "# my project\n", "pyproject.toml": '[project]\nname = "x"\n', "data.bin": "\xff\x00"}
    users = tmp_path / name
    users.write_bytes(content[name].encode("latin-1"))
    before = snapshot(tmp_path)
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(users)]) == 2
    assert snapshot(tmp_path) == before


def test_render_of_a_split_report_does_not_write_over_the_users_details_file(tmp_path: Path) -> None:
    run = _run_json(tmp_path, tests=60)  # a report past MAX_CHARS: its sections go to <stem>-details.md
    out = tmp_path / "out.md"
    details = _put(tmp_path / "out-details.md", "the user's notes on the details")
    assert main(["render", str(run), "-o", str(out), "--no-figures"]) == 2
    assert details.read_text() == "the user's notes on the details"


@pytest.mark.parametrize("command", ["stability", "mutants"])
def test_the_suite_commands_summary_does_not_write_over_a_users_file_in_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setattr(cli, "run_seeds", lambda *args, **kwargs: [])
    monkeypatch.setattr(cli, "run_catalogue", lambda *args, **kwargs: ({}, []))
    monkeypatch.setattr(cli, "render_catalogue", lambda *args, **kwargs: "the catalogue\n")
    out = tmp_path / "out"
    users = _put(out / f"{command}.md", "the user's summary")
    extra = ["ref.py:m", "mut.py:m"] if command == "mutants" else ["--base-seeds", "1"]
    assert main([command, *extra, "--out", str(out)]) == 2
    assert users.read_text() == "the user's summary"


# what the refusals above still allow: claimcheck's own earlier output, and --force


def test_render_of_a_split_report_again_replaces_its_own_details_file_and_force_the_users(tmp_path: Path) -> None:
    run = _run_json(tmp_path, tests=60)
    out = tmp_path / "out.md"
    assert main(["render", str(run), "-o", str(out), "--no-figures"]) == 0
    assert main(["render", str(run), "-o", str(out), "--no-figures"]) == 0  # its own details file: no --force
    details = _put(tmp_path / "out-details.md", "the user's notes on the details")
    assert main(["render", str(run), "-o", str(out), "--no-figures"]) == 2
    assert main(["render", str(run), "-o", str(out), "--no-figures", "--force"]) == 0
    assert details.read_text() != "the user's notes on the details"


def test_the_suite_commands_write_their_summary_again_over_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "run_seeds", lambda *args, **kwargs: [])
    monkeypatch.setattr(cli, "run_catalogue", lambda *args, **kwargs: ({}, []))
    monkeypatch.setattr(cli, "render_catalogue", lambda *args, **kwargs: "the catalogue\n")
    out = tmp_path / "out"
    for command, extra in (("stability", ["--base-seeds", "1"]), ("mutants", ["ref.py:m", "mut.py:m"])):
        assert main([command, *extra, "--out", str(out)]) == 0
        assert main([command, *extra, "--out", str(out)]) == 0
        _put(out / f"{command}.md", "the user's summary")
        assert main([command, *extra, "--out", str(out), "--force"]) == 0
        assert (out / f"{command}.md").read_text() != "the user's summary"


@pytest.mark.parametrize("text", ["my notes\n", '{"run": "fast"}', "[1, 2]"], ids=["text", "strings", "list"])
def test_mutants_into_a_folder_with_a_users_timings_file_is_refused_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    started: list[str] = []
    monkeypatch.setattr(cli, "run_catalogue", lambda *args, **kwargs: started.append("ran") or ({}, []))
    monkeypatch.setattr(cli, "render_catalogue", lambda *args, **kwargs: "the catalogue\n")
    users = _put(tmp_path / "out" / "timings.json", text)
    before = snapshot(tmp_path)
    assert main(["mutants", "ref.py:m", "mut.py:m", "--out", str(users.parent)]) == 2
    assert snapshot(tmp_path) == before and started == []


def test_calibrate_writes_its_json_and_markdown_again_over_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Suite:
        parts: tuple[object, ...] = ()
        failing: tuple[object, ...] = ()

        def to_dict(self) -> dict[str, object]:
            return {"parts": []}

    monkeypatch.setattr(cli, "load_protocols", lambda paths: [object()])
    monkeypatch.setattr(cli, "calibrate_suite", lambda *args, **kwargs: Suite())
    monkeypatch.setattr(cli, "render_calibration", lambda suite: "# calibration\n")
    args = ["calibrate", str(tmp_path), "--json", str(tmp_path / "c.json"), "-o", str(tmp_path / "c.md")]
    assert main(args) == 0 and main(args) == 0
    assert json.loads((tmp_path / "c.json").read_text()) == {"parts": []}


def test_accepting_a_baseline_onto_a_users_file_or_link_keeps_what_was_there(tmp_path: Path) -> None:
    run = _run_json(tmp_path)
    theirs = _put(tmp_path / "theirs" / "base.json", '{"the user": 1}')
    link = tmp_path / "base.json"
    link.symlink_to(theirs)
    notes = _put(tmp_path / "notes.txt")
    for target in (link, notes):
        assert main(["baseline", "accept", str(run), str(target)]) == 0
    assert theirs.read_text() == '{"the user": 1}'
    assert any(p.read_text() == "the user's" for p in tmp_path.glob("notes.*.txt"))


def test_a_report_whose_sidecar_is_a_link_or_hard_link_to_the_baseline_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CACHED.replace("claim_cache(expensive, x=claim_seed)", "expensive(claim_seed)"))
    assert pytester.runpytest("--claim-report=out/x.md").ret == 0
    sidecar = pytester.path / "out" / "x.json"
    baseline = pytester.path / "kept" / "base.json"
    baseline.parent.mkdir()
    os.link(sidecar, baseline)
    (pytester.path / "link.json").symlink_to(sidecar)
    before = snapshot(pytester.path, ("__pycache__", ".pytest_cache"))
    for given in (baseline, pytester.path / "link.json", pytester.path / "out" / ".." / "out" / "x.json"):
        result = pytester.runpytest("--claim-report=out/x.md", f"--claim-baseline={given}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert snapshot(pytester.path, ("__pycache__", ".pytest_cache")) == before


def test_a_collection_only_run_with_every_writing_option_changes_no_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CACHED)
    cache = pytester.path / "cache"
    assert pytester.runpytest("--claim-report=r.md", f"--claim-cache-dir={cache}").ret == 0
    (pytester.path / "base.json").write_bytes((pytester.path / "r.json").read_bytes())
    summary = _put(pytester.path / "summary.md", "earlier steps\n")
    before = snapshot(pytester.path, ("__pycache__", ".pytest_cache"))
    mp = pytest.MonkeyPatch()
    mp.setenv("GITHUB_STEP_SUMMARY", str(summary))
    try:
        result = pytester.runpytest(
            "--co",
            "--claim-report=r.md",
            "--claim-baseline=base.json",
            "--claim-baseline-update",
            "--claim-autosave",
            "--claim-cache=clear",
            f"--claim-cache-dir={cache}",
        )
    finally:
        mp.undo()
    assert result.ret == 0
    assert snapshot(pytester.path, ("__pycache__", ".pytest_cache")) == before


# --- the store: only what it can vouch for -------------------------------------------------------------------------

PARTS = {"claim": "C2", "seed": 3}


def _result() -> tuple[dict[str, np.ndarray], dict[str, object]]:
    return {"loss": np.linspace(1.0, 0.1, 50)}, {"seed": 3}


def _stored(tmp_path: Path, parts: dict[str, object] = PARTS) -> tuple[ResultCache, Path]:
    cache = ResultCache(tmp_path / "cache")
    cache.memo(K(parts), _result)
    return cache, cache.path(K(parts).digest)


def _forged() -> tuple[dict[str, np.ndarray], dict[str, object]]:
    arrays, meta = _result()
    return {"loss": arrays["loss"] * 50}, meta


def _recomputed(tmp_path: Path, parts: dict[str, object] = PARTS) -> ResultCache:
    """Read ``parts`` from a fresh cache; assert the result is the true one (recomputed, never the forged one)."""
    calls: list[int] = []

    def compute() -> tuple[dict[str, np.ndarray], dict[str, object]]:
        calls.append(1)
        return _result()

    again = ResultCache(tmp_path / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrays, meta = again.memo(K(parts), compute)
    assert np.array_equal(arrays["loss"], _result()[0]["loss"]) and meta == {"seed": 3}
    assert calls == [1] and again.counts.cached == 0
    return again


def test_sealed_entries_swapped_between_keys_are_both_recomputed(tmp_path: Path) -> None:
    cache, a = _stored(tmp_path)
    other = {"claim": "C2", "seed": 4}
    cache.memo(K(other), _forged)
    b = cache.path(K(other).digest)
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    assert _recomputed(tmp_path).counts.corrupt == 1


def test_an_entry_sealed_with_another_caches_key_is_not_trusted(tmp_path: Path) -> None:
    _, path = _stored(tmp_path)
    foreign_secret = cachefile.cache_secret(tmp_path / "elsewhere")
    path.write_bytes(cachefile.seal(SEAL, encode(*_forged(), K(PARTS).digest), foreign_secret))
    assert _recomputed(tmp_path).counts.unauthenticated == 1


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.replace(SEAL, b"claimcheck-cache-entry/2 hmac-sha256\n", 1),  # an older format's header
        lambda d: d[: len(SEAL)] + d[len(SEAL) + 65 :],  # the seal line cut out
        lambda d: d[: len(SEAL)] + d[len(SEAL) : len(SEAL) + 64].upper() + d[len(SEAL) + 64 :],  # the MAC in capitals
        lambda d: d + b"\0",  # a byte appended
        lambda d: b"\n" + d,  # a byte prepended
    ],
    ids=["old-header", "no-seal-line", "upper-mac", "appended", "prepended"],
)
def test_an_entry_whose_seal_line_is_altered_is_not_used(tmp_path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    _, path = _stored(tmp_path)
    path.write_bytes(edit(path.read_bytes()))
    again = _recomputed(tmp_path)
    assert again.counts.corrupt + again.counts.unauthenticated == 1


def test_an_entry_whose_payload_is_an_npy_claiming_a_terabyte_is_refused_at_once(tmp_path: Path) -> None:
    cache, path = _stored(tmp_path)
    key = K(PARTS).digest
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (137438953472,), }"
    npy = b"\x93NUMPY\x01\x00" + len(header + b"\n").to_bytes(2, "little") + header + b"\n" + b"\0" * 64
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in (("a_loss.npy", npy), ("meta.npy", npy), ("key.npy", npy), ("checksum.npy", npy)):
            zf.writestr(name, data)
    path.write_bytes(cachefile.seal(SEAL, buf.getvalue(), cache.secret()))
    start = time.monotonic()
    hit, status = open_entry(path.read_bytes(), key, cache.secret())
    assert hit is None and status == "corrupt" and time.monotonic() - start < 5
    _recomputed(tmp_path)


def test_a_folder_in_place_of_an_entry_is_recomputed_and_the_result_kept(tmp_path: Path) -> None:
    _, path = _stored(tmp_path)
    path.unlink()
    _put(path / "inside.txt")
    again = _recomputed(tmp_path)
    assert again.counts.corrupt == 1 and (path / "inside.txt").read_text() == "the user's"


def test_a_device_node_in_place_of_an_entry_is_not_read(tmp_path: Path) -> None:
    _, path = _stored(tmp_path)
    path.unlink()
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("making a device node needs root")
    assert _recomputed(tmp_path).counts.corrupt == 1


def test_a_link_to_a_huge_sparse_file_in_place_of_an_entry_is_not_followed(tmp_path: Path) -> None:
    _, path = _stored(tmp_path)
    huge = tmp_path / "huge.npz"
    with open(huge, "wb") as f:
        f.truncate(8 * 2**30)  # 8 GiB, sparse
    path.unlink()
    path.symlink_to(huge)
    assert _recomputed(tmp_path).counts.corrupt == 1


@pytest.mark.parametrize("how", ["folder", "link-to-another-key", "fifo", "short"])
def test_entries_are_not_trusted_when_the_caches_key_cannot_be_read(tmp_path: Path, how: str) -> None:
    _, path = _stored(tmp_path)
    other = cachefile.cache_secret(tmp_path / "elsewhere")
    path.write_bytes(cachefile.seal(SEAL, encode(*_forged(), K(PARTS).digest), other))
    key = tmp_path / "cache" / cachefile.KEY_FILE
    key.unlink()
    if how == "folder":
        key.mkdir()
    elif how == "link-to-another-key":
        key.symlink_to(tmp_path / "elsewhere" / cachefile.KEY_FILE)
    elif how == "fifo":
        os.mkfifo(key)
    else:
        key.write_text("abc\n")
    _recomputed(tmp_path)


def test_a_cache_shared_read_only_without_its_key_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = _stored(tmp_path)
    path.write_bytes(encode(*_forged(), K(PARTS).digest))  # an unsealed entry, as a sharer could leave
    (tmp_path / "cache" / cachefile.KEY_FILE).unlink()

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("claimcheck.store.cachefile.tempfile.mkstemp", read_only)  # the key cannot be made
    _recomputed(tmp_path)


@pytest.mark.parametrize("how", ["truncated", "link", "resealed-other-key", "folder"])
def test_a_cached_figure_that_does_not_check_is_drawn_again(tmp_path: Path, how: str) -> None:
    folder = tmp_path / "figures"
    a = [Curve(name="loss", y=[1.0, 0.5, 0.25])]
    b = [Curve(name="loss", y=[1.0, 2.0, 4.0])]
    png_a, _ = cached_group("C1 figure", a, cache=folder)
    png_b, _ = cached_group("C2 figure", b, cache=folder)
    entry_a, entry_b = (folder / f"{figure_key(t, c, None)}.png" for t, c in (("C1 figure", a), ("C2 figure", b)))
    data = entry_b.read_bytes()
    entry_b.unlink()
    if how == "truncated":
        entry_b.write_bytes(data[: len(data) // 2])
    elif how == "link":
        entry_b.symlink_to(entry_a)
    elif how == "resealed-other-key":
        payload = entry_a.read_bytes()[len(FIGURE_SEAL) + 65 :]
        entry_b.write_bytes(cachefile.seal(FIGURE_SEAL, payload, cachefile.cache_secret(tmp_path / "elsewhere")))
    else:
        entry_b.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again, _ = cached_group("C2 figure", b, cache=folder)
    assert again == png_b != png_a


FORGE = """
import numpy as np

from claimcheck.store.keys import Key
from claimcheck.store.cache import ResultCache, encode
from claimcheck.store import cachefile

ROOT = {root!r}


def pytest_configure(config):
    cache = ResultCache(__import__("pathlib").Path(ROOT))
    for path in sorted(cache.root.rglob("*.npz")):
        key = path.stem
        path.write_bytes(encode({{"value": np.array([1e6])}}, {{"memo": "forged"}}, key))  # the right key and checksum
"""


def test_a_claim_never_takes_its_verdict_from_forged_cache_entries(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CACHED)
    cache = pytester.path / "cache"
    assert pytester.runpytest(f"--claim-cache-dir={cache}").ret == 0
    pytester.makeconftest(FORGE.format(root=str(cache)))
    result = pytester.runpytest("--claim-report", f"--claim-cache-dir={cache}", "-W", "always")
    assert result.ret == pytest.ExitCode.OK  # the forged 1e6 would fail the check "<= 100"
    result.stdout.fnmatch_lines(["*fails authentication*"])
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "**1 REPRODUCED" in text


# --- inputs: the Jena and SST-2 loaders ----------------------------------------------------------------------------


def _jena(rows: int = 30, features: tuple[str, ...] = FEATURES) -> str:
    lines = [",".join(['"Date Time"', *(f'"{f}"' for f in features)])]
    for i in range(rows):
        day, minute = divmod(10 * (i + 1), 24 * 60)
        stamp = f"{1 + day:02d}.01.2009 {minute // 60:02d}:{minute % 60:02d}:00"
        lines.append(",".join([stamp, *(f"{1.0 + 0.01 * i + j:.2f}" for j in range(len(features)))]))
    return "\n".join(lines) + "\n"


def _short(e: BaseException) -> None:
    """Assert that an error message quotes at most a line: no line break, and short."""
    text = str(e)
    assert "\n" not in text and len(text) < 1200, (len(text), text[:300])


def test_a_jena_file_without_a_feature_cannot_reach_c5(tmp_path: Path) -> None:
    path = _put(tmp_path / "jena.csv", _jena(features=FEATURES[:-1]))
    record = load_jena(path)
    with pytest.raises(JenaError, match="wd \\(deg\\)") as e:
        require_features(record, FEATURES, "C5")
    _short(e.value)


@pytest.mark.parametrize(
    ("old", "new"),
    [('"T (degC)"', '"T (C)"'), ('"wd (deg)"', '"wd (deg)","extra"'), ('"Date Time"', '"Datetime"')],
    ids=["renamed", "extra", "time-renamed"],
)
def test_a_jena_file_with_a_renamed_or_extra_column_is_refused_in_one_line(tmp_path: Path, old: str, new: str) -> None:
    text = _jena()
    head, rest = text.split("\n", 1)
    if new.endswith('"extra"'):
        rest = "\n".join(line + ",1.0" for line in rest.splitlines()) + "\n"
    path = _put(tmp_path / "jena.csv", head.replace(old, new) + "\n" + rest)
    with pytest.raises(JenaError) as e:
        load_jena(path)
    _short(e.value)


@pytest.mark.parametrize("end", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_a_jena_file_with_other_line_ends_gives_the_same_numbers(tmp_path: Path, end: str) -> None:
    lf = load_jena(_put(tmp_path / "lf.csv", _jena()))
    path = tmp_path / "other.csv"
    path.write_bytes(_jena().replace("\n", end).encode())
    other = load_jena(path)
    assert np.array_equal(other.values, lf.values) and np.array_equal(other.times, lf.times)


@pytest.mark.parametrize("bad", [b"1.\xff3", b"\xc3\x28", b"1\x002"], ids=["latin-1 byte", "broken utf-8", "nul"])
def test_a_jena_cell_with_bytes_that_are_no_number_is_refused_in_one_line(tmp_path: Path, bad: bytes) -> None:
    raw = _jena().encode().replace(b"1.05", bad, 1)
    path = tmp_path / "jena.csv"
    path.write_bytes(raw)
    with pytest.raises(JenaError) as e:
        load_jena(path)
    _short(e.value)


@pytest.mark.parametrize("where", ["header", "cell", "no-newline"])
def test_a_jena_file_with_a_gigantic_line_is_refused_quoting_at_most_a_line(tmp_path: Path, where: str) -> None:
    giant = "9" * 5_000_000
    text = _jena()
    if where == "header":
        text = text.replace('"wd (deg)"', '"' + "w" * 5_000_000 + '"')
    elif where == "cell":
        text = text.replace("1.05", giant, 1)
    else:
        text = "Date Time," + giant
    path = _put(tmp_path / "jena.csv", text)
    with pytest.raises(JenaError) as e:
        load_jena(path)
    _short(e.value)


def test_a_stray_jena_file_with_a_gigantic_cell_does_not_hide_the_good_one(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "jena"
    good = _put(folder / "a_good.csv", _jena(rows=40))
    _put(folder / "zz_stray.csv", _jena(rows=80).replace("1.05", "9" * 200_000, 1))
    choice = locate_jena(tmp_path / "data")
    assert choice.path == good and "zz_stray.csv" in choice.reason


SST2 = "sentence\tlabel\na fine film \t1\na dull film \t0\nwonderful \t1\n"


@pytest.mark.parametrize(
    "text",
    [
        "sentence\na fine film\n",
        "sentence\tlabel\tidx\na fine film\t1\t0\n",
        "text\tlabel\na fine film\t1\n",
        "label\tsentence\n1\ta fine film\n",
        "sentence\tlabel\na fine film\tpositive\n",
        "sentence\tlabel\na fine film\t\uff11\n",  # a full-width digit one
        "sentence\tlabel\na fine\tfilm\t1\n",
        "sentence\tlabel\n\t1\n",
    ],
    ids=["no-label", "extra", "renamed", "swapped", "word-label", "wide-digit", "tab-in-sentence", "empty"],
)
def test_an_sst2_file_with_missing_extra_or_renamed_columns_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    path = _put(tmp_path / "train.tsv", text)
    with pytest.raises(Sst2FormatError) as e:
        load_sst2(path)
    _short(e.value)


def test_an_sst2_file_with_crlf_line_ends_gives_the_same_rows(tmp_path: Path) -> None:
    lf = load_sst2(_put(tmp_path / "lf.tsv", SST2))
    crlf = load_sst2(_put(tmp_path / "crlf.tsv", SST2.replace("\n", "\r\n")))
    assert crlf.sentences == lf.sentences and np.array_equal(crlf.labels, lf.labels)


@pytest.mark.parametrize(
    "raw",
    [
        SST2.encode().replace(b"dull", b"d\xfcll"),  # latin-1
        SST2.encode().replace(b"dull", b"\xed\xa0\x80"),  # a UTF-8 surrogate
        b"\xef\xbb\xbf" + SST2.encode()[:3] + b"\xff" + SST2.encode()[3:],
        gzip.compress(SST2.encode())[:-6],  # a truncated gzip
    ],
    ids=["latin-1", "surrogate", "bom-and-ff", "truncated-gzip"],
)
def test_an_sst2_file_with_bytes_that_are_not_utf8_is_refused_in_one_line(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "train.tsv"
    path.write_bytes(raw)
    with pytest.raises(Sst2FormatError) as e:
        load_sst2(path)
    _short(e.value)


@pytest.mark.parametrize("where", ["header", "row", "cr-only-row", "three-fields"])
def test_an_sst2_file_with_a_gigantic_line_is_refused_quoting_at_most_a_line(tmp_path: Path, where: str) -> None:
    giant = "word " * 1_000_000
    text = {
        "header": giant,
        "row": SST2 + giant + "\t7\n",
        "cr-only-row": SST2 + (giant + "\t1\r") * 3,
        "three-fields": SST2 + giant + "\t" + giant + "\t1\n",
    }[where]
    path = _put(tmp_path / "train.tsv", text)
    with pytest.raises(DataError) as e:
        load_sst2(path)
    _short(e.value)
