"""Faults at the edges of files (issue 51): locks held by stopped sessions or replaced by links, data files
that inflate without bound or carry another record's name, offline fetch instructions, the undecided
estimate's wording, and baseline numbers too large to convert or to subtract."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from toys import K

import claimcheck.store.filelock as filelock
from claimcheck.report.rundata import RunData
from claimcheck.report.write import ReportWriteError, write_report
from claimcheck.store.cache import CacheLockWarning, CacheWriteWarning, ResultCache
from claimcheck.store.filelock import LockTimeout


def _compute(calls: list[int]):  # type: ignore[no-untyped-def]
    def compute() -> tuple[dict[str, np.ndarray], dict[str, int]]:
        calls.append(1)
        return {"v": np.zeros(2)}, {"n": 1}

    return compute


def _hold_in_child(lock: Path) -> subprocess.Popen[str]:
    """Start a process that takes ``lock`` as the store does, says so, and sleeps (a stopped session)."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from claimcheck.store.filelock import hold
        with hold(Path({str(lock)!r})):
            print("held", flush=True)
            time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_a_lock_held_by_a_stopped_session_times_out_naming_the_file_and_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResultCache(tmp_path, lock_timeout=1.0)
    notes: list[str] = []
    cache.note = notes.append
    monkeypatch.setattr(filelock, "NOTE_AFTER_S", 0.2)
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    child = _hold_in_child(lock)
    try:
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as seen, pytest.raises(LockTimeout) as raised:
            warnings.simplefilter("always")
            cache.memo(key, _compute([]))
        assert time.monotonic() - started < 10
    finally:
        child.kill()
        child.wait()
    message = str(raised.value)
    assert str(lock) in message and f"pid {child.pid}" in message and "kill -CONT" in message
    assert "delete the lock file" in message
    assert len(notes) == 1 and str(lock) in notes[0] and f"pid {child.pid}" in notes[0] and "waits up to" in notes[0]
    assert [str(w.message) for w in seen if w.category is CacheLockWarning] == [notes[0].removeprefix("claimcheck: ")]
    calls: list[int] = []  # the holder gone, the lock is free again
    assert ResultCache(tmp_path, lock_timeout=1.0).memo(key, _compute(calls))[1] == {"n": 1} and calls == [1]


def test_an_entry_lock_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "victim"
    target.parent.mkdir()
    lock.symlink_to(target)
    calls: list[int] = []
    with pytest.warns(CacheWriteWarning, match="is a symbolic link; it is not followed"):
        _, meta = cache.memo(key, _compute(calls))
    assert meta == {"n": 1} and calls == [1] and cache.counts.unsaved == 1
    assert not target.exists() and not os.path.lexists(cache.path(key.digest))


def test_an_entry_lock_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    os.mkfifo(lock)
    with pytest.warns(CacheWriteWarning, match="is not a regular file"):
        assert cache.memo(key, _compute([]))[1] == {"n": 1}


# --- data files: size caps, candidate caps, the chosen file described by its dates ----------------


def _jena_csv(stamps: list[str]) -> str:
    """Return a Jena-layout CSV with one row per timestamp (14 features, values varying)."""
    from qin2025.data.jena import FEATURES

    lines = ['"Date Time",' + ",".join(f'"{f}"' for f in FEATURES)]
    for i, stamp in enumerate(stamps):
        lines.append(",".join([stamp, *(f"{10 * j + (i * 7 + j * 3) % 11 * 0.37:.2f}" for j in range(14))]))
    return "\n".join(lines) + "\n"


def _steps(start: str, rows: int) -> list[str]:
    from datetime import datetime, timedelta

    t0 = datetime.strptime(start, "%d.%m.%Y %H:%M:%S")
    return [(t0 + timedelta(minutes=10 * i)).strftime("%d.%m.%Y %H:%M:%S") for i in range(rows)]


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """Return about 200 KB of gzip that inflates to 200 MiB of zeros (past both loaders' caps)."""
    import gzip
    import io

    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as g:
        for _ in range(200):
            g.write(bytes(2**20))
    return out.getvalue()


def test_a_gzip_bomb_among_the_jena_files_is_passed_over_without_inflating_it(tmp_path: Path, bomb: bytes) -> None:
    import tracemalloc

    from qin2025.data import jena

    folder = tmp_path / "jena"
    folder.mkdir()
    good = folder / "a_2024.csv"
    good.write_text(_jena_csv(_steps("01.01.2024 00:10:00", 50)))
    (folder / "zz_stray.csv.gz").write_bytes(bomb)
    tracemalloc.start()
    try:
        with pytest.raises(jena.JenaTooLargeError) as raised:
            jena.load_jena(folder / "zz_stray.csv.gz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < jena.MAX_TEXT_BYTES + 16 * 2**20  # never the 200 MiB inflated, nor its text
    message = str(raised.value)
    assert "zz_stray.csv.gz" in message and "inflate to more than" in message and "Remove it" in message
    choice = jena.locate_jena(tmp_path, "")
    assert choice.path == good and [r.path.name for r in choice.rejected] == ["zz_stray.csv.gz"]
    assert "passed over 1 invalid file(s): zz_stray.csv.gz" in choice.reason


def test_a_plain_jena_file_past_the_cap_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qin2025.data import jena

    path = tmp_path / "big.csv"
    path.write_text(_jena_csv(_steps("01.01.2024 00:10:00", 50)))
    monkeypatch.setattr(jena, "MAX_TEXT_BYTES", 1000)
    with pytest.raises(jena.JenaTooLargeError, match=r"big\.csv: the file is [0-9,]+ bytes, over the loader's limit"):
        jena.load_jena(path)


def test_past_the_candidate_cap_the_rest_are_named_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qin2025.data import jena

    monkeypatch.setattr(jena, "MAX_CANDIDATES", 3)
    folder = tmp_path / "jena"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.csv").write_text(_jena_csv(_steps("01.01.2024 00:10:00", 20 + 10 * i)))
    loaded: list[str] = []
    real = jena.load_jena
    monkeypatch.setattr(jena, "load_jena", lambda path, **kw: loaded.append(Path(path).name) or real(path, **kw))
    choice = jena.locate_jena(tmp_path, "")
    assert loaded == ["f0.csv", "f1.csv", "f2.csv"] and choice.path.name == "f2.csv"
    assert "2 more candidate file(s) not loaded, from f3.csv on: at most 3 are tried" in choice.reason
    assert "CLAIMCHECK_JENA_FILE" in choice.reason


def test_an_sst2_gzip_bomb_is_passed_over(tmp_path: Path, bomb: bytes) -> None:
    from qin2025.data.sst2 import choose_sst2

    folder = tmp_path / "sst2"
    folder.mkdir()
    (folder / "train.tsv").write_text("sentence\tlabel\na good film \t1\na bad film \t0\n")
    (folder / "train.tsv.gz").write_bytes(bomb)
    choice = choose_sst2(tmp_path, "train")
    assert choice.path.name == "train.tsv" and [r.path.name for r in choice.rejected] == ["train.tsv.gz"]
    assert "inflate to more than" in choice.rejected[0].problem


def test_the_provenance_of_a_gzip_bomb_is_hashed_in_a_stream(tmp_path: Path, bomb: bytes) -> None:
    import tracemalloc

    from qin2025.data.known import provenance

    path = tmp_path / "stray.csv.gz"
    path.write_bytes(bomb)
    tracemalloc.start()
    try:
        found = provenance(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.status == "not published" and found.content_sha256 is not None and peak < 32 * 2**20


def test_a_2024_record_under_the_keras_name_is_not_called_the_papers_dataset(tmp_path: Path) -> None:
    from qin2025.data.jena import KERAS_NAME, locate_jena

    folder = tmp_path / "jena"
    folder.mkdir()
    (folder / KERAS_NAME).write_text(_jena_csv(_steps("01.01.2024 00:10:00", 60)))
    choice = locate_jena(tmp_path, "")
    assert choice.path.name == KERAS_NAME
    assert "the paper's dataset" not in choice.reason and "not the paper's 2009-2016 record" in choice.reason
    assert "01.01.2024 00:10:00 -> 01.01.2024 10:00:00" in choice.reason
    # a file whose rows do span 2009-2016 (with a gap between) is the paper's dataset, by its dates
    stamps = _steps("01.01.2009 00:10:00", 30) + _steps("31.12.2016 23:50:00", 2)
    (folder / KERAS_NAME).write_text(_jena_csv(stamps))
    choice = locate_jena(tmp_path, "")
    assert choice.reason.startswith("Keras' full 2009-2016 record, the paper's dataset: its rows run 01.01.2009")


def test_a_later_record_is_described_by_its_dates(tmp_path: Path) -> None:
    from qin2025.data.jena import locate_jena

    folder = tmp_path / "jena"
    folder.mkdir()
    (folder / "some.csv").write_text(_jena_csv(_steps("01.03.2031 00:00:00", 40)))
    assert "its rows run 01.03.2031 00:00:00 -> " in locate_jena(tmp_path, "").reason


# --- claimcheck-fetch offline: what to copy where, for the dataset asked for ------------------------


def _offline(url: str, timeout: float) -> object:
    import urllib.error

    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def test_fetching_sst2_offline_says_to_copy_the_plain_file_under_its_plain_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from qin2025 import fetch

    monkeypatch.setattr(fetch, "urlopen", _offline)
    assert fetch.main(["sst2", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "train_full.tsv" in err and f"to {tmp_path / 'sst2' / 'train.tsv'}:" in err
    assert "uncompressed" in err and "train.tsv.gz alike" in err
    assert f"copy it to {tmp_path / 'sst2' / 'train.tsv.gz'}" not in err
    assert "jena" not in err and "already holds sst2/train.tsv.gz" in err


def test_fetching_a_converted_jena_file_offline_does_not_say_to_copy_the_raw_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from qin2025 import fetch, sources

    monkeypatch.setattr(fetch, "urlopen", _offline)
    assert fetch.main(["jena", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "serves another format" in err and "on a machine that is online" in err
    assert f"already holds {sources.JENA_2024}" in err and "jena_climate_2009_2016" not in err


def test_fetching_a_plain_file_offline_says_to_copy_it_as_it_lands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qin2025 import fetch, sources

    monkeypatch.setattr(fetch, "urlopen", _offline)
    dev = sources.SST2[1]
    with pytest.raises(fetch.OfflineError) as raised:
        fetch.fetch_asset(dev, tmp_path, say=lambda s: None)
    assert f"copy it to {tmp_path / 'sst2' / 'dev.tsv'}, then run claimcheck-fetch sst2" in str(raised.value)


# --- the undecided line: a projection past every cap is not "no budget decides it" ----------------


def test_a_projection_past_every_cap_says_it_assumes_the_effect_stays_and_names_the_caps() -> None:
    from claimcheck.decide.undecided import budget_for

    # C5 at ci: 24 units, about 6,401 at the measured rate; standard (460, 10 a look) decided it at 140
    text = budget_for({"ci": 24, "standard": 460, "paper": 460}, 6401, 24, {"standard": 10, "paper": 10})
    assert "more than any budget runs" not in text
    assert "only if the effect stays as measured on these 24 units" in text
    assert "ci 24, standard 460 (10 a look), paper 460 (10 a look)" in text
    # standard and paper cap at the same 460: the cheaper one is named (an outside user's hunt, 7 December)
    assert "a larger budget can still decide it (--claim-budget standard)" in text


# --- baseline files: an integer too long to convert, values whose differences overflow ----------


def test_a_baseline_with_an_integer_of_5000_digits_names_the_file_and_the_field(tmp_path: Path) -> None:
    import json

    from claimcheck.report.rundata import RunFileError, load

    raw = {"title": "t", "env": {}, "tests": [{"nodeid": "a::b", "claim_id": "C1", "title": "", "source": "",
                                               "outcome": "passed", "duration": 0.5, "record": None}]}  # fmt: skip
    text = json.dumps(raw).replace('"duration": 0.5', '"duration": 1' + "0" * 5000)
    path = tmp_path / "baseline.json"
    path.write_text(text)
    with pytest.raises(RunFileError) as raised:
        load(path)
    message = str(raised.value)
    assert str(path) in message and "tests[0].duration" in message and "5,001 digits" in message


def test_a_large_improvement_between_values_near_the_float_limit_is_decided() -> None:
    from claimcheck.gate.paired import Movement, paired_test

    before = [1.5e308, 1.6e308, 1.7e308, 1.55e308, 1.65e308]  # larger is worse: far better
    after = [-1.5e308, -1.4e308, -1.6e308, -1.45e308, -1.55e308]
    test = paired_test(before, after, 1e307, +1)
    assert test.movement() is Movement.BETTER and test.p_better == 1 / 32  # 5 pairs: the sign-flip floor
    assert paired_test(after, before, 1e307, +1).movement() is Movement.WORSE
    assert paired_test(before, list(before), 1e307, +1).movement() is Movement.EQUIVALENT
    single = paired_test([1.5e308], [-1.5e308], 1e307, +1, halfwidths=(1e300, 1e300))
    assert single.movement() is Movement.BETTER


def test_a_report_lock_held_by_a_stopped_session_times_out_and_the_report_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report set's lock is the entries' lock: a stopped holder is not waited on for ever, and is named."""
    monkeypatch.setattr(filelock, "TIMEOUT_S", 1.0)
    report = tmp_path / "claim-report.md"
    child = _hold_in_child(tmp_path / ".claim-report.md.lock")
    try:
        with pytest.raises(ReportWriteError) as raised:
            write_report(RunData("r", {"run id": "r1"}), report, figures=False)
    finally:
        child.kill()
        child.wait()
    assert f"pid {child.pid}" in str(raised.value) and not report.exists()
    write_report(RunData("r", {"run id": "r2"}), report, figures=False)  # the holder gone, it is written
    assert report.exists()


def test_a_report_lock_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    (tmp_path / ".claim-report.md.lock").symlink_to(target)
    with pytest.raises(ReportWriteError, match="symbolic link"):
        write_report(RunData("r", {"run id": "r1"}), tmp_path / "claim-report.md", figures=False)
    assert not target.exists()
