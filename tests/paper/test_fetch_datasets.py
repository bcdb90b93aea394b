"""``claimcheck-fetch sst2`` and ``jena`` end to end, against a loopback HTTP server serving the real files."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from qin2025 import fetch, sources
from qin2025.data.jena import load_jena, locate_jena
from qin2025.data.sst2 import find_sst2, load_sst2

ROOT = Path(__file__).parents[2]
FILES = [a.path for assets in sources.DATASETS.values() for a in assets]


def _real_data() -> Path:
    """Return the folder holding the real files (CI's shared data), or skip the test."""
    candidates = [os.environ.get("CLAIMCHECK_DATA_DIR", ""), str(ROOT.parent / "shared" / "data")]
    for c in filter(None, candidates):
        folder = Path(c)
        if all((folder / f).is_file() for f in FILES):
            return folder
    pytest.skip(f"the real data files ({', '.join(FILES)}) are not in $CLAIMCHECK_DATA_DIR or ../shared/data")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Serve the folder ``tmp_path/www`` on a loopback port; yield (base URL, folder)."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(QuietHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", www
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def mirror(www: Path, real: Path) -> None:
    for f in FILES:
        (www / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real / f, www / f)


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_mirror_gives_byte_identical_files_the_loaders_find(
    tmp_path: Path, served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    real = _real_data()
    base, www = served
    mirror(www, real)
    data = tmp_path / "data"
    assert fetch.main(["sst2", "--data-dir", str(data), "--base-url", base]) == 0
    assert fetch.main(["jena", "--data-dir", str(data), "--base-url", base + "/"]) == 0
    for f in FILES:
        assert (data / f).read_bytes() == (real / f).read_bytes(), f
    assert leftovers(data) == sorted(FILES)  # no temporary files left
    assert find_sst2(data, "train") == data / "sst2" / "train.tsv.gz"
    assert len(load_sst2(find_sst2(data, "dev"))) == 872
    assert locate_jena(data).path == data / sources.JENA_2024
    assert f"--claim-data-dir {data}" in capsys.readouterr().out


def test_the_mirror_can_come_from_the_environment(
    tmp_path: Path, served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _real_data()
    base, www = served
    mirror(www, real)
    monkeypatch.setenv(fetch.BASE_URL_ENV, base)
    monkeypatch.setenv("CLAIMCHECK_DATA_DIR", str(tmp_path / "env-data"))
    assert fetch.main(["jena"]) == 0
    assert sha(tmp_path / "env-data" / sources.JENA_2024) == sources.JENA[0].sha256


def test_a_corrupted_file_fails_on_its_hash_and_leaves_nothing(
    tmp_path: Path, served: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    real = _real_data()
    base, www = served
    mirror(www, real)
    dev = www / "sst2" / "dev.tsv"
    dev.write_bytes(dev.read_bytes().replace(b"\t1\n", b"\t0\n", 1))
    data = tmp_path / "data"
    assert fetch.main(["sst2", "--data-dir", str(data), "--base-url", base]) == 1
    err = capsys.readouterr().err
    assert f"sst2/dev.tsv from {base}/sst2/dev.tsv: sha256 {sha(dev)} differs from the expected" in err
    assert "Nothing was written to sst2/dev.tsv" in err
    assert leftovers(data) == ["sst2/train.tsv.gz"]  # the verified file before it stays; no part of dev.tsv


def test_the_public_homes_are_converted_into_the_reference_files(
    tmp_path: Path, served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _real_data()
    base, www = served
    # What the public homes serve: GLUE's train.tsv uncompressed, dev.tsv, and the station's own file.
    (www / "train_full.tsv").write_bytes(gzip.decompress((real / "sst2" / "train.tsv.gz").read_bytes()))
    shutil.copyfile(real / "sst2" / "dev.tsv", www / "dev.tsv")
    station = station_file(gzip.decompress((real / sources.JENA_2024).read_bytes()))
    (www / "mpi_roof.csv").write_bytes(station)
    train, dev, test = sources.SST2
    monkeypatch.setitem(
        fetch.DATASETS,
        "sst2",
        (
            dataclasses.replace(train, url=f"{base}/train_full.tsv"),
            dataclasses.replace(dev, url=f"{base}/dev.tsv"),
            test,
        ),
    )
    (jena,) = sources.JENA
    roof = dataclasses.replace(jena, url=f"{base}/mpi_roof.csv", source_sha256=hashlib.sha256(station).hexdigest())
    monkeypatch.setitem(fetch.DATASETS, "jena", (roof,))
    data = tmp_path / "data"
    assert fetch.main(["sst2", "--data-dir", str(data)]) == 0
    assert fetch.main(["jena", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "sst2/test.tsv: skipped: the labelled test split was assembled" in out
    for f in ("sst2/train.tsv.gz", "sst2/dev.tsv", sources.JENA_2024):
        assert (data / f).read_bytes() == (real / f).read_bytes(), f
    assert load_jena(locate_jena(data).path).rows == 19_536


def test_a_station_file_that_differs_from_the_known_one_is_refused(
    tmp_path: Path, served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base, www = served
    (www / "mpi_roof.csv").write_bytes(STATION_HEAD)
    monkeypatch.setitem(fetch.DATASETS, "jena", (dataclasses.replace(sources.JENA[0], url=f"{base}/mpi_roof.csv"),))
    assert fetch.main(["jena", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "the source file from" in err and "differs from the expected 23751e26" in err
    assert leftovers(tmp_path) == ["www/mpi_roof.csv"]


def test_a_file_already_there_is_verified_not_downloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _real_data()
    (tmp_path / "jena").mkdir()
    shutil.copyfile(real / sources.JENA_2024, tmp_path / sources.JENA_2024)

    def offline(url: str, timeout: float) -> object:
        raise AssertionError("the network must not be used")

    monkeypatch.setattr(fetch, "urlopen", offline)
    said: list[str] = []
    assert fetch.fetch_dataset("jena", tmp_path, say=said.append) == [tmp_path / sources.JENA_2024]
    assert said == [f"{tmp_path / sources.JENA_2024}: already there, sha256 matches"]
    (tmp_path / sources.JENA_2024).write_bytes(b"not it")
    with pytest.raises(fetch.HashMismatch, match="run claimcheck-fetch jena --force to replace it"):
        fetch.fetch_dataset("jena", tmp_path, say=said.append)


# The first lines of MPI-BGC's mpi_roof.csv as served at the pinned commit (latin-1, padded, 22 columns).
STATION_HEAD = (
    '"Date Time","p (mbar)","T (degC)","Tpot (K)","Tdew (degC)","rh (%)","VPmax (mbar)","VPact (mbar)",'
    '"VPdef (mbar)","sh (g/kg)","H2OC (mmol/mol)","rho (g/m**3)","wv (m/s)","max. wv (m/s)","wd (deg)",'
    '"rain (mm)","raining (s)","SWDR (W/m\u00b2)","PAR (\u00b5mol/m\u00b2/s)","max. PAR (\u00b5mol/m\u00b2/s)",'
    '"Tlog (degC)","CO2 (ppm)"\n'
    "01.01.2024 00:10:00,  979.65,    7.63,  282.43,    2.83,   71.53,   10.47,    7.49,    2.98,    4.77,"
    "    7.64, 1211.93,    3.37,    5.04,  209.00,    0.00,    0.00,    0.00,    0.00,    0.00,   15.38,  428.80\n"
    "01.01.2024 00:20:00,  979.56,    7.63,  282.45,    2.76,   71.18,   10.47,    7.45,    3.02,    4.75,"
    "    7.61, 1211.82,    2.63,    4.50,  204.50,    0.00,    0.00,    0.00,    0.00,    0.00,   15.42,  428.10\n"
).encode("latin-1")


def station_file(keras: bytes) -> bytes:
    """Return a file in the station's format whose conversion must give ``keras`` back.

    The 7 extra columns hold placeholders, and the row of 13.04.2024 06:00:00 is repeated, as
    the logger repeats it in the real file.
    """
    header = STATION_HEAD.split(b"\n")[0].decode("latin-1")
    lines = [header]
    for row in keras.decode("ascii").split("\n")[1:]:
        time, *values = row.split(",")
        line = ",".join([time, *(f"{v:>8}" for v in values), *(["    0.00"] * 6), "  420.00"])
        lines.append(line)
        if time == "13.04.2024 06:00:00":
            lines.append(line)
    return ("\n".join(lines) + "\n").encode("latin-1")


def test_the_station_head_converts_to_the_reference_head() -> None:
    keras = sources.mpi_roof_to_keras(STATION_HEAD).decode()
    assert keras.split("\n") == [
        '"Date Time","p (mbar)","T (degC)","Tpot (K)","Tdew (degC)","rh (%)","VPmax (mbar)","VPact (mbar)",'
        '"VPdef (mbar)","sh (g/kg)","H2OC (mmol/mol)","rho (g/m**3)","wv (m/s)","max. wv (m/s)","wd (deg)"',
        "01.01.2024 00:10:00,979.65,7.63,282.43,2.83,71.53,10.47,7.49,2.98,4.77,7.64,1211.93,3.37,5.04,209.00",
        "01.01.2024 00:20:00,979.56,7.63,282.45,2.76,71.18,10.47,7.45,3.02,4.75,7.61,1211.82,2.63,4.50,204.50",
    ]


def test_a_station_file_without_a_feature_cannot_be_converted() -> None:
    broken = STATION_HEAD.replace(b'"wd (deg)"', b'"wind dir"')
    with pytest.raises(sources.ConversionError, match="header lacks wd \\(deg\\)"):
        sources.mpi_roof_to_keras(broken)


def test_gzip_n9_matches_gnu_gzip_on_the_reference_files() -> None:
    real = _real_data()
    for f in ("sst2/train.tsv.gz", sources.JENA_2024):
        raw = (real / f).read_bytes()
        assert sources.gzip_n9(gzip.decompress(raw)) == raw, f


def test_the_default_data_folder_is_the_same_in_code_help_and_the_usage_guide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CLAIMCHECK_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fetch.default_data_dir() == tmp_path / "xdg" / "claimcheck" / "data"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert fetch.default_data_dir() == tmp_path / "home" / ".cache" / "claimcheck" / "data"
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit):
        fetch.main(["--help"])
    assert "$XDG_CACHE_HOME/claimcheck/data (~/.cache/claimcheck/data when XDG_CACHE_HOME is unset)" in (
        capsys.readouterr().out
    )
    usage = " ".join((ROOT / "docs" / "usage.md").read_text().split())
    assert "`$XDG_CACHE_HOME/claimcheck/data` (`~/.cache/claimcheck/data` when `XDG_CACHE_HOME` is unset)" in usage
    assert "../shared" not in usage + (ROOT / "README.md").read_text()
