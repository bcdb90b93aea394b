"""Locating data: a stray or broken file never hides a valid one, and the choice lists what it passed over."""

from __future__ import annotations

import gzip
import os
import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from qin2025.data.jena import (
    FEATURES,
    KERAS_NAME,
    JenaError,
    JenaNotFound,
    JenaTimeError,
    JenaWindowError,
    WindowSpec,
    load_jena,
    locate_jena,
    window_jena,
)
from qin2025.data.sst2 import Sst2FormatError, choose_sst2, find_sst2

SHARED = Path(os.environ.get("CLAIMCHECK_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data")
REAL_JENA = SHARED / "jena" / "jena_climate_2024-01-01_to_2024-05-15.csv.gz"
START = datetime(2024, 1, 1, 0, 10)


def jena_csv(rows: int, order: list[int] | None = None, bad_line: int | None = None) -> str:
    """Return a Jena-layout CSV of ``rows`` 10-minute rows (in ``order``), with a non-numeric cell on ``bad_line``."""
    lines = ['"Date Time",' + ",".join(f'"{f}"' for f in FEATURES)]
    for i in order if order is not None else range(rows):
        stamp = (START + timedelta(minutes=10 * i)).strftime("%d.%m.%Y %H:%M:%S")
        cells = [f"{10 * j + (i * 7 + j * 3) % 11 * 0.37:.2f}" for j in range(len(FEATURES))]
        lines.append(",".join([stamp, *cells]))
    if bad_line is not None:
        lines[bad_line - 1] = lines[bad_line - 1].rsplit(",", 1)[0] + ",oops"
    return "\n".join(lines) + "\n"


def put(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


# --- Jena ------------------------------------------------------------------------------------------


def test_an_empty_stray_file_does_not_hide_the_jena_record(tmp_path: Path) -> None:
    good = put(tmp_path / "jena", "jena_2024.csv", jena_csv(200))
    put(tmp_path / "jena", "zz_broken.csv", "")
    choice = locate_jena(tmp_path, "")
    assert choice.path == good
    assert [(r.path.name, "the file is empty" in r.problem) for r in choice.rejected] == [("zz_broken.csv", True)]
    assert "passed over 1 invalid file(s): zz_broken.csv (the file is empty" in choice.reason


def test_a_longer_but_broken_file_is_passed_over(tmp_path: Path) -> None:
    good = put(tmp_path / "jena", "a_good.csv", jena_csv(100))
    put(tmp_path / "jena", "b_long.csv", jena_csv(400, bad_line=250))
    choice = locate_jena(tmp_path, "")
    assert choice.path == good
    assert choice.rejected[0].path.name == "b_long.csv" and "line 250" in choice.rejected[0].problem


def test_a_broken_keras_file_falls_back_and_says_so(tmp_path: Path) -> None:
    put(tmp_path / "jena", KERAS_NAME, "garbage\n")
    later = put(tmp_path / "jena", "jena_2024.csv.gz", jena_csv(50))
    choice = locate_jena(tmp_path, "")
    assert choice.path == later and "no valid copy of Keras' 2009-2016 file" in choice.reason
    assert [r.path.name for r in choice.rejected] == [KERAS_NAME]


def test_a_file_with_shuffled_timestamps_loses_to_a_contiguous_one(tmp_path: Path) -> None:
    order = list(range(300))
    random.Random(0).shuffle(order)
    put(tmp_path / "jena", "a_shuffled.csv", jena_csv(300, order=order))
    contiguous = put(tmp_path / "jena", "b_contiguous.csv", jena_csv(100))
    assert locate_jena(tmp_path, "").path == contiguous  # ranked by the longest contiguous stretch


def test_when_every_candidate_is_broken_the_error_lists_each(tmp_path: Path) -> None:
    put(tmp_path / "jena", "one.csv", "")
    put(tmp_path / "jena_partial", "two.csv", jena_csv(30, bad_line=5))
    with pytest.raises(JenaError) as info:
        locate_jena(tmp_path, "")
    assert not isinstance(info.value, JenaNotFound)  # broken data is an error, not a skip
    assert "one.csv: " in str(info.value) and "two.csv: line 5" in str(info.value)


def test_out_of_order_rows_are_not_blamed_on_the_file_length(tmp_path: Path) -> None:
    order = list(range(600))
    random.Random(1).shuffle(order)
    record = load_jena(put(tmp_path, "shuffled.csv", jena_csv(600, order=order)), irregular="split")
    with pytest.raises(JenaWindowError) as info:
        window_jena(record, WindowSpec(n_windows=8, n_tokens=4))
    text = str(info.value)
    assert "longer file" not in text and "out of order" in text and "Sort the rows by timestamp" in text
    with pytest.raises(JenaTimeError, match=r"out of order.*Sort the rows by timestamp"):
        load_jena(tmp_path / "shuffled.csv")


def test_conflicting_repeated_timestamps_are_not_blamed_on_the_file_length(tmp_path: Path) -> None:
    text = jena_csv(400)
    lines = text.splitlines()
    head, body = lines[0], lines[1:]
    twice = [row for pair in zip(body[::2], body[::2], strict=True) for row in pair]  # every other stamp twice ...
    twice = [row if k % 2 == 0 else row[:-4] + "9.99" for k, row in enumerate(twice)]  # ... with other values
    record = load_jena(put(tmp_path, "conflicts.csv", "\n".join([head, *twice]) + "\n"), irregular="split")
    assert record.dropped_conflicts == 200
    with pytest.raises(JenaWindowError) as info:
        window_jena(record, WindowSpec(n_windows=8, n_tokens=6))
    message = str(info.value)
    assert "longer file" not in message and "repeated timestamp(s) with other values" in message


def test_a_short_regular_file_still_asks_for_a_longer_one(tmp_path: Path) -> None:
    record = load_jena(put(tmp_path, "short.csv", jena_csv(60)))
    with pytest.raises(JenaWindowError, match="Use a longer file"):
        window_jena(record, WindowSpec(n_windows=8, n_tokens=6))


@pytest.mark.skipif(not REAL_JENA.is_file(), reason="the shared Jena 2024 file is not present")
def test_the_real_record_is_found_beside_a_stray_file(tmp_path: Path) -> None:
    (tmp_path / "jena").mkdir()
    (tmp_path / "jena" / REAL_JENA.name).symlink_to(REAL_JENA)
    (tmp_path / "jena" / "zz_broken.csv").write_text("")
    (tmp_path / "jena" / "zz_longer.csv").write_text(jena_csv(30000, bad_line=2))
    choice = locate_jena(tmp_path, "")
    assert choice.path.name == REAL_JENA.name
    assert sorted(r.path.name for r in choice.rejected) == ["zz_broken.csv", "zz_longer.csv"]


# --- SST-2 -----------------------------------------------------------------------------------------

SST2 = "sentence\tlabel\n" + "".join(f"a {'good' if i % 2 else 'bad'} film number {i} \t{i % 2}\n" for i in range(20))


def test_an_empty_plain_sst2_file_does_not_hide_the_gzipped_one(tmp_path: Path) -> None:
    put(tmp_path / "sst2", "train.tsv", "")
    gz = put(tmp_path / "sst2", "train.tsv.gz", SST2)
    choice = choose_sst2(tmp_path, "train")
    assert choice.path == gz == find_sst2(tmp_path)
    assert [r.path.name for r in choice.rejected] == ["train.tsv"] and "the file is empty" in choice.rejected[0].problem
    assert "passed over 1 invalid file(s): train.tsv" in choice.reason


def test_the_sst2_file_with_more_rows_wins(tmp_path: Path) -> None:
    put(tmp_path / "sst2", "train.tsv", "\n".join(SST2.splitlines()[:5]) + "\n")  # truncated, still valid
    gz = put(tmp_path / "sst2", "train.tsv.gz", SST2)
    assert choose_sst2(tmp_path).path == gz and choose_sst2(tmp_path).rejected == ()


def test_when_both_sst2_files_are_broken_the_error_lists_each(tmp_path: Path) -> None:
    put(tmp_path / "sst2", "train.tsv", "sentence\tlabel\nfine \t7\n")
    (tmp_path / "sst2" / "train.tsv.gz").write_bytes(b"\x1f\x8b\x08not gzip")
    with pytest.raises(Sst2FormatError, match=r"no valid SST-2 train file: train\.tsv: .*label '7'.*train\.tsv\.gz: "):
        choose_sst2(tmp_path)
