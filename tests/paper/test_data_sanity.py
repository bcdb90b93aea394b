"""Data provenance (published sha256) and sanity: plausible Jena weather, SST-2 labels that carry sentiment."""

from __future__ import annotations

import gzip
import hashlib
import os
import random
from pathlib import Path

import numpy as np
import pytest

from claimcheck.errors import DataError, DataUnavailable
from claimcheck.store.cache import ResultCache
from qin2025.data.jena import FEATURES, load_jena
from qin2025.data.jena_sanity import JenaSanityError, check_jena
from qin2025.data.known import PUBLISHED, Published, folder_provenance, provenance
from qin2025.data.sst2 import Sst2Split, load_sst2
from qin2025.data.sst2_sanity import MIN_ACCURACY, Sst2SanityError, check_sst2, check_sst2_data, ridge_predict
from qin2025.engine.encoder import Pretrained, load_pretrained

SHARED = Path(os.environ.get("CLAIMCHECK_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data")
JENA_2024 = SHARED / "jena" / "jena_climate_2024-01-01_to_2024-05-15.csv.gz"
SST2_TRAIN, SST2_DEV = SHARED / "sst2" / "train.tsv.gz", SHARED / "sst2" / "dev.tsv"
needs_jena = pytest.mark.skipif(not JENA_2024.is_file(), reason="the shared Jena 2024 file is not present")
needs_sst2 = pytest.mark.skipif(not SST2_DEV.is_file(), reason="the shared SST-2 files are not present")


# --- provenance ------------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_provenance_matches_by_content_and_flags_a_published_name_with_other_bytes(tmp_path: Path) -> None:
    body = b"sentence\tlabel\nfine \t1\n"
    gz = gzip.compress(body, mtime=0)
    table = (
        Published("sst2/train.tsv.gz", _sha(gz), len(gz), "repo @ abc", content_sha256=_sha(body)),
        Published("sst2/dev.tsv", _sha(b"dev"), 3, "repo @ abc"),
    )
    (tmp_path / "sst2").mkdir()
    (tmp_path / "sst2" / "train.tsv.gz").write_bytes(gz)
    (tmp_path / "renamed.tsv").write_bytes(body)  # the published content, decompressed and renamed
    (tmp_path / "sst2" / "dev.tsv").write_bytes(b"dev, edited")
    (tmp_path / "mine.csv").write_bytes(b"x")

    same = provenance(tmp_path / "sst2" / "train.tsv.gz", table)
    assert (same.status, same.size, same.sha256, same.content_sha256) == ("published", len(gz), _sha(gz), _sha(body))
    assert "matches the published sst2/train.tsv.gz (repo @ abc)" in same.describe()
    renamed = provenance(tmp_path / "renamed.tsv", table)
    assert renamed.status == "published" and "same content as the published sst2/train.tsv.gz" in renamed.describe()
    edited = provenance(tmp_path / "sst2" / "dev.tsv", table)
    assert edited.status == "differs from published" and "DIFFERS from the published sst2/dev.tsv" in edited.describe()
    assert provenance(tmp_path / "mine.csv", table).status == "not published"


def test_the_table_holds_each_published_file_of_sources_md() -> None:
    names = {p.name for p in PUBLISHED}
    assert {"sst2/train.tsv.gz", "sst2/train.tsv", "sst2/dev.tsv", "sst2/test.tsv"} <= names
    assert sum(n.startswith("jena_partial/") for n in names) == 2 and sum(n.startswith("jena/") for n in names) == 2
    assert all(len(p.sha256) == 64 and p.source for p in PUBLISHED)


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared data folder is not present")
def test_every_shared_data_file_is_the_published_one() -> None:
    found = folder_provenance(SHARED)
    assert found and {p.path.name: p.status for p in found if p.status != "published"} == {}


# --- Jena sanity -----------------------------------------------------------------------------------


def _physical_csv(rows: int, seed: int = 0) -> str:
    """Return a Jena CSV whose columns obey the station's relations, with smooth 10-minute temperatures."""
    rng = np.random.default_rng(seed)
    t = 5 + 8 * np.sin(np.arange(rows) * 2 * np.pi / 144) + np.cumsum(rng.normal(0, 0.05, rows))
    p = 990 + 5 * np.sin(np.arange(rows) / 500)
    vpmax = 6.1078 * np.exp(17.27 * t / (t + 237.3))
    vpact = 0.7 * vpmax
    cols = {
        "p (mbar)": p,
        "T (degC)": t,
        "Tpot (K)": (t + 273.15) * (1000 / p) ** 0.286,
        "VPmax (mbar)": vpmax,
        "VPact (mbar)": vpact,
        "VPdef (mbar)": vpmax - vpact,
        "H2OC (mmol/mol)": vpact / p * 1000,
        "rh (%)": np.full(rows, 70.0),
    }
    head = ",".join(["Date Time", *cols])
    lines = [head]
    for i in range(rows):
        stamp = f"{1 + i // 144:02d}.01.2009 {(i % 144) // 6:02d}:{(i % 6) * 10:02d}:00"
        lines.append(",".join([stamp, *(f"{v[i]:.2f}" for v in cols.values())]))
    return "\n".join(lines) + "\n"


def test_a_physically_consistent_record_passes(tmp_path: Path) -> None:
    (tmp_path / "ok.csv").write_text(_physical_csv(2000))
    sanity = check_jena(load_jena(tmp_path / "ok.csv"))
    assert "Tpot = (T + 273.15)(1000/p)^0.286: 2,000/2,000 rows within 0.5 K" in sanity.describe()
    assert any(line.startswith("lag-1 autocorrelation of T: 0.99") for line in sanity.checks)


def _real_lines() -> list[str]:
    return gzip.decompress(JENA_2024.read_bytes()).decode().split("\n")


@needs_jena
def test_the_real_jena_files_pass() -> None:
    for path in (JENA_2024, *sorted((SHARED / "jena_partial").glob("*.csv"))):
        check_jena(load_jena(path, irregular="split"))


@needs_jena
def test_a_header_with_t_and_tpot_swapped_fails(tmp_path: Path) -> None:
    lines = _real_lines()
    lines[0] = lines[0].replace('"T (degC)"', '"@@"').replace('"Tpot (K)"', '"T (degC)"').replace('"@@"', '"Tpot (K)"')
    (tmp_path / "swapped.csv").write_text("\n".join(lines))
    with pytest.raises(JenaSanityError, match=r"'Tpot \(K\)' lies outside its plausible range") as info:
        check_jena(load_jena(tmp_path / "swapped.csv"))
    assert "Tpot = (T + 273.15)(1000/p)^0.286 fails on 19,536 of 19,536 rows" in str(info.value)
    assert isinstance(info.value, DataError)


@needs_jena
def test_noise_features_fail(tmp_path: Path) -> None:
    lines = _real_lines()
    rng = np.random.default_rng(0)
    noisy = [lines[0]]
    for line in lines[1:]:
        stamp = line.split(",", 1)[0]
        noisy.append(",".join([stamp, *(f"{v:.2f}" for v in rng.normal(0, 1, len(FEATURES)))]))
    (tmp_path / "noise.csv").write_text("\n".join(noisy))
    with pytest.raises(JenaSanityError, match=r"plausible range.*VPdef = VPmax - VPact fails.*autocorrelation of T"):
        check_jena(load_jena(tmp_path / "noise.csv"))


@needs_jena
def test_shuffled_rows_fail(tmp_path: Path) -> None:
    lines = _real_lines()
    body = lines[1:]
    random.Random(0).shuffle(body)
    (tmp_path / "shuffled.csv").write_text("\n".join([lines[0], *body]))
    record = load_jena(tmp_path / "shuffled.csv", irregular="split")
    with pytest.raises(JenaSanityError, match=r"lag-1 autocorrelation of T in file order is -?0\.0\d+, below 0\.9"):
        check_jena(record)


# --- SST-2 sanity ----------------------------------------------------------------------------------


def test_the_ridge_probe_splits_at_the_midpoint_of_balanced_classes() -> None:
    # x = 0, 1, 3, 4 with labels 0, 0, 1, 1: standardised z = (x - 2) / sqrt(2.5), targets -1, -1, 1, 1;
    # the slope is sum(z t) / (sum(z^2) + ridge) > 0 and the intercept sum(t) / (4 + ridge) = 0, so the
    # boundary is x = 2.
    x, y = np.array([[0.0], [1.0], [3.0], [4.0]]), np.array([0, 0, 1, 1])
    assert ridge_predict(x, y, np.array([[1.9], [2.1], [-5.0], [9.0]]), ridge=1.0).tolist() == [0, 1, 0, 1]
    assert ridge_predict(x, 1 - y, np.array([[1.9], [2.1]]), ridge=1.0).tolist() == [1, 0]


@pytest.fixture(scope="module")
def pretrained() -> Pretrained:
    try:
        return load_pretrained(None)
    except DataUnavailable as e:
        pytest.skip(f"the pretrained encoder is not installed: {e}")


@needs_sst2
def test_real_sst2_labels_pass_the_probe(pretrained: Pretrained) -> None:
    result = check_sst2_data(pretrained, SHARED, SST2_TRAIN)
    assert result.accuracy >= MIN_ACCURACY and result.test_source == "dev.tsv"
    assert result.accuracy == pytest.approx(0.705)  # the fixed sample seed's measured value


@needs_sst2
@pytest.mark.parametrize("fault", ["shuffled labels", "random words"])
def test_faulty_sst2_fails_the_probe(pretrained: Pretrained, fault: str) -> None:
    train, dev = load_sst2(SST2_TRAIN), load_sst2(SST2_DEV)
    if fault == "shuffled labels":
        faulty = Sst2Split(train.sentences, np.random.default_rng(0).permutation(train.labels), train.path)
    else:
        words = sorted({w for s in dev.sentences for w in s.split()})
        rng = random.Random(0)
        text = tuple(" ".join(rng.choices(words, k=8)) for _ in train.sentences)
        faulty = Sst2Split(text, train.labels, train.path)
    with pytest.raises(Sst2SanityError, match=r"the labels do not follow the sentences' sentiment: a linear probe"):
        check_sst2(pretrained, faulty, dev)


@needs_sst2
def test_the_probe_runs_once_per_data_file_and_its_result_is_held_every_time(
    pretrained: Pretrained, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qin2025.data import sst2_sanity

    cache = ResultCache(tmp_path)
    first = check_sst2_data(pretrained, SHARED, SST2_TRAIN, cache)
    monkeypatch.setattr(sst2_sanity, "probe_sst2", lambda *a, **k: pytest.fail("the probe ran again"))
    assert check_sst2_data(pretrained, SHARED, SST2_TRAIN, cache) == first
    assert (cache.counts.computed, cache.counts.cached) == (1, 1)
    monkeypatch.setattr(sst2_sanity, "MIN_ACCURACY", first.accuracy + 0.01)  # the bar is held on a cached result
    with pytest.raises(Sst2SanityError, match="the labels do not follow"):
        check_sst2_data(pretrained, SHARED, SST2_TRAIN, cache)
