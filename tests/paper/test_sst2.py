"""The SST-2 loader reads GLUE's format, says what is wrong with a bad file, and samples reproducibly."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from claimcheck.errors import ConfigError, DataUnavailable
from qin2025.data.sst2 import Sst2FormatError, Sst2Split, balanced_sample, find_sst2, load_sst2

GLUE_LINES = [
    "sentence\tlabel",
    "hide new secretions from the parental units \t0",
    "contains no wit , only labored gags \t0",
    "that loves its characters \t1",
    "remains utterly satisfied to remain the same throughout \t0",
    "a gorgeous , witty , seductive movie . \t1",
]


def _write(path: Path, lines: list[str], *, gz: bool = False) -> Path:
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _split(n_neg: int, n_pos: int) -> Sst2Split:
    labels = np.array([0] * n_neg + [1] * n_pos, dtype=np.int64)
    return Sst2Split(tuple(f"sentence {i}" for i in range(labels.size)), labels, Path("train.tsv"))


def test_glue_file_loads_with_trailing_spaces_stripped(tmp_path: Path) -> None:
    split = load_sst2(_write(tmp_path / "train.tsv", GLUE_LINES))
    assert len(split) == 5
    assert split.sentences[0] == "hide new secretions from the parental units"
    assert split.labels.tolist() == [0, 0, 1, 0, 1]


def test_gzipped_file_loads_the_same_rows(tmp_path: Path) -> None:
    plain = load_sst2(_write(tmp_path / "train.tsv", GLUE_LINES))
    gz = load_sst2(_write(tmp_path / "train.tsv.gz", GLUE_LINES, gz=True))
    assert gz.sentences == plain.sentences
    assert gz.labels.tolist() == plain.labels.tolist()


def test_crlf_line_endings_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "train.tsv"
    path.write_bytes(("\r\n".join(GLUE_LINES) + "\r\n").encode())
    assert load_sst2(path).labels.tolist() == [0, 0, 1, 0, 1]


def test_corrupt_gzip_names_the_file_and_the_fix(tmp_path: Path) -> None:
    data = gzip.compress(("\n".join(GLUE_LINES) + "\n").encode())
    path = tmp_path / "train.tsv.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(Sst2FormatError, match=r"train\.tsv\.gz: corrupt or truncated gzip.*fetch the file again"):
        load_sst2(path)


def test_wrong_header_is_reported_on_line_1(tmp_path: Path) -> None:
    path = _write(tmp_path / "train.tsv", ["index\tsentence", "0\tgood"])
    with pytest.raises(Sst2FormatError, match=r"train\.tsv:1: header is 'index\\tsentence'"):
        load_sst2(path)


def test_label_other_than_0_or_1_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "train.tsv", [*GLUE_LINES[:3], "fine \t2"])
    with pytest.raises(Sst2FormatError, match=r"train\.tsv:4: label '2' is not 0 or 1; fix or remove the line"):
        load_sst2(path)


@pytest.mark.parametrize("line", ["no tab at all", "too\tmany\tcolumns"])
def test_missing_or_extra_columns_name_the_line(tmp_path: Path, line: str) -> None:
    path = _write(tmp_path / "train.tsv", [*GLUE_LINES[:2], line])
    with pytest.raises(Sst2FormatError, match=r"train\.tsv:3: expected 2 tab-separated columns"):
        load_sst2(path)


def test_empty_sentence_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "train.tsv", [*GLUE_LINES[:2], "   \t1"])
    with pytest.raises(Sst2FormatError, match=r"train\.tsv:3: empty sentence"):
        load_sst2(path)


def test_empty_file_and_header_only_file_are_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    with pytest.raises(Sst2FormatError, match="the file is empty"):
        load_sst2(empty)
    with pytest.raises(Sst2FormatError, match="no rows follow"):
        load_sst2(_write(tmp_path / "header.tsv", GLUE_LINES[:1]))


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "train.tsv"
    path.write_bytes(b"sentence\tlabel\ncaf\xe9 \t1\n")
    with pytest.raises(Sst2FormatError, match=r"train\.tsv:2: not UTF-8"):
        load_sst2(path)


def test_find_sst2_prefers_plain_then_gz_and_explains_a_missing_split(tmp_path: Path) -> None:
    folder = tmp_path / "sst2"
    folder.mkdir()
    with pytest.raises(DataUnavailable, match=r"neither .*train\.tsv nor train\.tsv\.gz.*--claim-data-dir"):
        find_sst2(tmp_path)
    _write(folder / "train.tsv.gz", GLUE_LINES, gz=True)
    assert find_sst2(tmp_path).name == "train.tsv.gz"
    _write(folder / "train.tsv", GLUE_LINES)
    assert find_sst2(tmp_path).name == "train.tsv"
    with pytest.raises(ConfigError, match="split must be one of train, dev"):
        find_sst2(tmp_path, "test")


def test_balanced_sample_has_half_of_each_label_and_no_repeats() -> None:
    split = _split(300, 700)
    sample = balanced_sample(split, 64, seed=3)
    assert int(sample.labels.sum()) == 32
    assert len(set(sample.rows.tolist())) == 64
    assert [split.sentences[i] for i in sample.rows] == list(sample.sentences)
    assert sample.targets().tolist() == [1.0 if v else -1.0 for v in sample.labels]


def test_balanced_sample_is_reproducible_per_seed_and_differs_across_seeds() -> None:
    split = _split(300, 700)
    a, b, c = balanced_sample(split, 32, 5), balanced_sample(split, 32, 5), balanced_sample(split, 32, 6)
    assert a.rows.tolist() == b.rows.tolist()
    assert a.rows.tolist() != c.rows.tolist()


def test_balanced_sample_rejects_odd_or_oversized_requests() -> None:
    split = _split(10, 100)
    with pytest.raises(ConfigError, match="even size"):
        balanced_sample(split, 7, 0)
    with pytest.raises(ConfigError, match="needs 15 rows labelled 0, the file has 10"):
        balanced_sample(split, 30, 0)
