"""Tests of ``claimcheck-fetch``: offline failure, sha256 checks, extraction, on local file:// URLs."""

from __future__ import annotations

import hashlib
import urllib.error
import zipfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qin2025 import fetch
from qin2025.data.jena import FEATURES, KERAS_NAME, load_jena


def jena_zip(folder: Path, rows: int = 30, *, member: str = KERAS_NAME, shift: float = 0.0) -> Path:
    """Write a small zip shaped like Keras' download; return its path."""
    start = datetime(2009, 1, 1, 0, 10)
    lines = [",".join(f'"{c}"' for c in ("Date Time", *FEATURES))]
    for i in range(rows):
        t = (start + timedelta(minutes=10 * i)).strftime("%d.%m.%Y %H:%M:%S")
        lines.append(",".join([t, *(f"{j + 0.01 * i + shift:.2f}" for j in range(len(FEATURES)))]))
    path = folder / f"upstream-{shift:g}.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, "\n".join(lines))
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    folder = tmp_path / "upstream"
    folder.mkdir()
    return jena_zip(folder)


def test_fetch_downloads_extracts_and_records_the_hash(
    tmp_path: Path, upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert fetch.main(["jena", "--record", "2009-2016", "--data-dir", str(data), "--url", upstream.as_uri()]) == 0
    out = capsys.readouterr().out
    assert load_jena(data / "jena" / KERAS_NAME).rows == 30
    assert fetch.read_sums(data / "jena" / fetch.SUMS) == {fetch.JENA_ZIP: sha(upstream)}
    assert "first download: nothing to verify it against yet" in out
    assert f"--claim-data-dir {data}" in out
    assert sorted(p.name for p in (data / "jena").iterdir()) == [fetch.SUMS, KERAS_NAME, fetch.JENA_ZIP]


def test_offline_fetch_fails_cleanly_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def offline(url: str, timeout: float) -> Any:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(fetch, "urlopen", offline)
    data = tmp_path / "data"
    assert fetch.main(["jena", "--record", "2009-2016", "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert "could not download https://storage.googleapis.com/" in err
    assert "seems to be offline" in err
    assert f"copy it to {data / 'jena' / fetch.JENA_ZIP}" in err
    assert list((data / "jena").iterdir()) == []  # no partial download left behind


def test_http_error_names_the_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(url: str, timeout: float) -> Any:
        raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]

    monkeypatch.setattr(fetch, "urlopen", missing)
    with pytest.raises(fetch.OfflineError, match="answered HTTP 404 Not Found"):
        fetch.fetch_keras_jena(tmp_path, say=lambda s: None)


def test_sha256_mismatch_is_refused_and_nothing_is_kept(
    tmp_path: Path, upstream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    wrong = "0" * 64
    assert (
        fetch.main(
            ["jena", "--record", "2009-2016", "--data-dir", str(data), "--url", upstream.as_uri(), "--sha256", wrong]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert f"sha256 {sha(upstream)} differs from the expected {wrong}" in err
    assert list((data / "jena").iterdir()) == []


def test_matching_sha256_is_accepted(tmp_path: Path, upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "jena",
        "--record",
        "2009-2016",
        "--data-dir",
        str(tmp_path),
        "--url",
        upstream.as_uri(),
        "--sha256",
        sha(upstream).upper(),
    ]
    assert fetch.main(args) == 0
    assert "matches --sha256" in capsys.readouterr().out


def test_malformed_sha256_is_a_usage_error(tmp_path: Path, upstream: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        fetch.main(
            [
                "jena",
                "--record",
                "2009-2016",
                "--data-dir",
                str(tmp_path),
                "--url",
                upstream.as_uri(),
                "--sha256",
                "abc",
            ]
        )
        == 1
    )
    assert "--sha256: expected 64 hexadecimal digits, got 'abc'" in capsys.readouterr().err


def test_a_later_download_must_match_the_recorded_hash(tmp_path: Path, upstream: Path) -> None:
    fetch.fetch_keras_jena(tmp_path, url=upstream.as_uri(), say=lambda s: None)
    first = sha(tmp_path / "jena" / fetch.JENA_ZIP)
    changed = jena_zip(upstream.parent, shift=1.0)
    with pytest.raises(fetch.HashMismatch, match=r"recorded in .*SHA256SUMS at the first download"):
        fetch.fetch_keras_jena(tmp_path, url=changed.as_uri(), force=True, say=lambda s: None)
    assert sha(tmp_path / "jena" / fetch.JENA_ZIP) == first  # the verified copy is untouched


def test_a_zip_already_there_is_verified_without_the_network(
    tmp_path: Path, upstream: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch.fetch_keras_jena(tmp_path, url=upstream.as_uri(), say=lambda s: None)
    (tmp_path / "jena" / KERAS_NAME).unlink()

    def offline(url: str, timeout: float) -> Any:
        raise AssertionError("the network must not be used")

    monkeypatch.setattr(fetch, "urlopen", offline)
    said: list[str] = []
    assert fetch.fetch_keras_jena(tmp_path, say=said.append) == tmp_path / "jena" / KERAS_NAME
    assert any("matches" in s for s in said)
    assert load_jena(tmp_path / "jena" / KERAS_NAME).rows == 30


def test_a_copied_zip_that_differs_from_the_record_is_refused(tmp_path: Path, upstream: Path) -> None:
    fetch.fetch_keras_jena(tmp_path, url=upstream.as_uri(), say=lambda s: None)
    (tmp_path / "jena" / fetch.JENA_ZIP).write_bytes(jena_zip(upstream.parent, shift=2.0).read_bytes())
    with pytest.raises(fetch.HashMismatch):
        fetch.fetch_keras_jena(tmp_path, say=lambda s: None)


def test_zip_without_the_csv_is_reported(tmp_path: Path, upstream: Path) -> None:
    odd = jena_zip(upstream.parent, member="other.csv", shift=3.0)
    with pytest.raises(fetch.FetchError, match=f"holds no {KERAS_NAME} \\(it has other.csv\\)"):
        fetch.fetch_keras_jena(tmp_path, url=odd.as_uri(), say=lambda s: None)


def test_default_data_dir_is_the_environment_setting(
    tmp_path: Path, upstream: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAIMCHECK_DATA_DIR", str(tmp_path))
    assert fetch.main(["jena", "--record", "2009-2016", "--url", upstream.as_uri()]) == 0
    assert (tmp_path / "jena" / KERAS_NAME).is_file()


def test_unknown_dataset_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as info:
        fetch.main(["mnist"])
    assert info.value.code == 2
