"""Tests of the Jena Climate loader, windowing and file lookup, on files the tests write themselves."""

from __future__ import annotations

import gzip
import math
import os
import zipfile
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.errors import DataError, DataUnavailable
from qin2025.data.jena import (
    FEATURES,
    JENA_FILE_ENV,
    KERAS_NAME,
    JenaCellError,
    JenaCompressionError,
    JenaEmptyError,
    JenaError,
    JenaHeaderError,
    JenaNotFound,
    JenaRowError,
    JenaTimeError,
    JenaWindowError,
    WindowSpec,
    load_jena,
    locate_jena,
    window_jena,
)

START = datetime(2009, 1, 1, 0, 10)
# The shared data folder as CI sets it ($CLAIMCHECK_DATA_DIR), else ../shared/data beside the checkout.
SHARED = Path(os.environ.get("CLAIMCHECK_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data")


def stamp(i: int) -> str:
    """Return the Keras timestamp of row ``i`` (10-minute steps from 01.01.2009 00:10:00)."""
    return (START + timedelta(minutes=10 * i)).strftime("%d.%m.%Y %H:%M:%S")


def value(i: int, j: int) -> str:
    """Return a deterministic, non-constant cell for row ``i``, feature ``j``."""
    return f"{10 * j + 3 * math.sin(0.3 * i + j) + 0.01 * i:.2f}"


def csv_text(
    rows: int = 20,
    columns: Sequence[str] = FEATURES,
    *,
    quoted: bool = True,
    index: bool = False,
    final_newline: bool = True,
    times: Sequence[str] | None = None,
    cell: Callable[[int, int], str] = value,
) -> str:
    """Return a Jena-layout CSV with ``rows`` rows of ``columns``."""
    names = ["Date Time", *columns]
    head = ",".join(f'"{n}"' if quoted else n for n in names)
    if index:
        head = "," + head
    lines = [head]
    for i in range(rows):
        t = times[i] if times is not None else stamp(i)
        cells = [t, *(cell(i, j) for j in range(len(columns)))]
        lines.append((f"{i}," if index else "") + ",".join(cells))
    return "\n".join(lines) + ("\n" if final_newline else "")


def write(tmp_path: Path, text: str, name: str = "jena.csv") -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def edit(text: str, line: int, old: str, new: str) -> str:
    """Return ``text`` with the first ``old`` on 1-based ``line`` replaced by ``new``."""
    lines = text.split("\n")
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


# --- reading -------------------------------------------------------------------------------------


def test_reads_the_keras_layout_with_quoted_header(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(20)))
    assert rec.rows == 20
    assert rec.columns == FEATURES
    assert rec.values.shape == (20, 14)
    assert rec.span() == ("01.01.2009 00:10:00", "01.01.2009 03:20:00")
    assert rec.segments == ((0, 20),)
    assert rec.values[3, 1] == pytest.approx(float(value(3, 1)))


def test_gzipped_and_plain_files_load_the_same(tmp_path: Path) -> None:
    text = csv_text(15)
    plain = load_jena(write(tmp_path, text, "a.csv"))
    packed = load_jena(write(tmp_path, text, "a.csv.gz"))
    np.testing.assert_array_equal(plain.values, packed.values)
    np.testing.assert_array_equal(plain.times, packed.times)


def test_reads_unquoted_header_subset_of_columns_and_no_final_newline(tmp_path: Path) -> None:
    cols = FEATURES[:11]
    rec = load_jena(write(tmp_path, csv_text(12, cols, quoted=False, final_newline=False)))
    assert rec.columns == cols
    assert rec.rows == 12


def test_drops_a_leading_unnamed_index_column(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(10, index=True, quoted=False)))
    assert rec.index_column
    assert rec.columns == FEATURES
    assert rec.values[0, 0] == pytest.approx(float(value(0, 0)))


def test_columns_argument_picks_and_orders_features(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(10)), columns=["T (degC)", "p (mbar)"])
    assert rec.columns == ("T (degC)", "p (mbar)")
    assert rec.values[2, 0] == pytest.approx(float(value(2, 1)))


def test_errors_are_data_errors_that_name_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, edit(csv_text(10), 5, value(3, 1), "abc"))
    with pytest.raises(JenaCellError) as info:
        load_jena(path)
    err = info.value
    assert isinstance(err, DataError)
    assert (err.path, err.line, err.column) == (path, 5, "T (degC)")
    assert str(path) in str(err) and "line 5" in str(err) and "'T (degC)'" in str(err)
    assert "non-numeric value 'abc'" in str(err)


# --- header --------------------------------------------------------------------------------------


def test_first_column_must_be_date_time(tmp_path: Path) -> None:
    with pytest.raises(JenaHeaderError, match=r"line 1: column 1 should be 'Date Time', found 'When'"):
        load_jena(write(tmp_path, csv_text(5).replace('"Date Time"', '"When"')))


def test_a_file_without_header_is_reported(tmp_path: Path) -> None:
    body = csv_text(5).split("\n", 1)[1]
    with pytest.raises(JenaHeaderError, match="no header row: line 1 is data"):
        load_jena(write(tmp_path, body))


def test_unknown_column_is_named_with_a_suggestion(tmp_path: Path) -> None:
    text = csv_text(5).replace('"T (degC)"', '"T (degc)"')
    with pytest.raises(JenaHeaderError, match=r"column 3 is 'T \(degc\)', not a Jena feature \(did you mean 'T"):
        load_jena(write(tmp_path, text))


def test_duplicate_and_unnamed_columns_are_rejected(tmp_path: Path) -> None:
    dup = csv_text(5, ["p (mbar)", "p (mbar)"])
    with pytest.raises(JenaHeaderError, match="column 3 repeats 'p \\(mbar\\)'"):
        load_jena(write(tmp_path, dup, "dup.csv"))
    unnamed = csv_text(5, ["p (mbar)", ""])
    with pytest.raises(JenaHeaderError, match="column 3 has no name"):
        load_jena(write(tmp_path, unnamed, "unnamed.csv"))


def test_missing_requested_column_lists_what_the_file_has(tmp_path: Path) -> None:
    path = write(tmp_path, csv_text(5, FEATURES[:11]))
    with pytest.raises(JenaHeaderError, match=r"missing column\(s\) 'wv \(m/s\)'; the file has p \(mbar\)"):
        load_jena(path, columns=["T (degC)", "wv (m/s)"])


# --- rows and cells ------------------------------------------------------------------------------


def test_row_with_extra_field_names_its_line(tmp_path: Path) -> None:
    text = edit(csv_text(6), 4, value(2, 0), value(2, 0) + ",1.0")
    with pytest.raises(JenaRowError, match="line 4: 16 fields, but the header has 15"):
        load_jena(write(tmp_path, text))


def test_blank_line_inside_data_is_rejected(tmp_path: Path) -> None:
    lines = csv_text(6).split("\n")
    lines.insert(3, "")
    with pytest.raises(JenaRowError, match="line 4: blank line"):
        load_jena(write(tmp_path, "\n".join(lines)))


@pytest.mark.parametrize(
    ("cell", "problem"),
    [("NaN", "missing value 'NaN'"), ("", "empty cell"), ("inf", "infinite value 'inf'"), ("1,2", "fields")],
)
def test_bad_cells_are_reported(tmp_path: Path, cell: str, problem: str) -> None:
    text = edit(csv_text(6), 3, value(1, 4), cell)
    with pytest.raises((JenaCellError, JenaRowError), match=problem):
        load_jena(write(tmp_path, text))


def test_wind_sentinel_is_set_to_zero_and_counted(tmp_path: Path) -> None:
    text = csv_text(8)
    text = edit(text, 3, value(1, 11), "-9999.00")
    text = edit(text, 6, value(4, 12), "-9999")
    rec = load_jena(write(tmp_path, text))
    assert rec.sentinels_zeroed == {"wv (m/s)": 1, "max. wv (m/s)": 1}
    assert rec.values[1, 11] == 0.0 and rec.values[4, 12] == 0.0
    assert "2 wind -9999 set to 0" in rec.describe()


def test_sentinel_outside_wind_speed_is_an_error(tmp_path: Path) -> None:
    text = edit(csv_text(8), 5, value(3, 1), "-9999.0")
    with pytest.raises(JenaCellError, match=r"line 5, column 'T \(degC\)': sentinel -9999"):
        load_jena(write(tmp_path, text))


def test_sentinels_error_rule_rejects_wind_sentinels_too(tmp_path: Path) -> None:
    text = edit(csv_text(8), 3, value(1, 11), "-9999.00")
    with pytest.raises(JenaCellError, match="sentinels='error'"):
        load_jena(write(tmp_path, text), sentinels="error")


# --- timestamps ----------------------------------------------------------------------------------


def test_unparsable_timestamp_names_its_line(tmp_path: Path) -> None:
    text = edit(csv_text(6), 4, stamp(2), "2009-01-01 00:30")
    with pytest.raises(JenaTimeError, match=r"line 4, column 'Date Time': timestamp '2009-01-01 00:30' does not"):
        load_jena(write(tmp_path, text))


def test_gap_is_an_error_or_splits_the_record(tmp_path: Path) -> None:
    times = [stamp(i) for i in range(5)] + [stamp(i) for i in range(8, 13)]
    path = write(tmp_path, csv_text(10, times=times))
    with pytest.raises(JenaTimeError, match=r"line 7.*leaves a gap of 3 missing 10-minute step\(s\)"):
        load_jena(path)
    rec = load_jena(path, irregular="split")
    assert rec.segments == ((0, 5), (5, 10))
    assert len(rec.breaks) == 1 and "line 7" in rec.breaks[0]


def test_off_grid_and_backward_steps_are_reported(tmp_path: Path) -> None:
    off = [stamp(0), stamp(1), "01.01.2009 00:35:00", stamp(3)]
    with pytest.raises(JenaTimeError, match="off the 10-minute grid"):
        load_jena(write(tmp_path, csv_text(4, times=off), "off.csv"))
    back = [stamp(0), stamp(1), stamp(2), stamp(1)]
    with pytest.raises(JenaTimeError, match=r"line 5.*goes back 10 min \(out of order\)"):
        load_jena(write(tmp_path, csv_text(4, times=back), "back.csv"))


def test_exact_repeat_is_dropped_and_counted(tmp_path: Path) -> None:
    lines = csv_text(6).split("\n")
    lines.insert(4, lines[3])  # the logger writes line 4 twice
    rec = load_jena(write(tmp_path, "\n".join(lines)))
    assert rec.rows == 6 and rec.dropped_repeats == 1
    assert rec.segments == ((0, 6),)


def test_conflicting_repeat_is_an_error_or_keeps_the_first(tmp_path: Path) -> None:
    lines = csv_text(6).split("\n")
    lines.insert(4, lines[3].replace(value(2, 0), "1.23", 1))
    path = write(tmp_path, "\n".join(lines))
    with pytest.raises(JenaTimeError, match=r"line 5.*repeats line 4 with different values"):
        load_jena(path)
    rec = load_jena(path, irregular="split")
    assert rec.rows == 6 and rec.dropped_conflicts == 1
    assert rec.values[2, 0] == pytest.approx(float(value(2, 0)))


# --- files ---------------------------------------------------------------------------------------


def test_empty_file_and_header_only_file(tmp_path: Path) -> None:
    with pytest.raises(JenaEmptyError, match="the file is empty"):
        load_jena(write(tmp_path, "", "empty.csv"))
    with pytest.raises(JenaEmptyError, match="a header but no data rows"):
        load_jena(write(tmp_path, csv_text(0), "header.csv"))


def test_truncated_gzip_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(csv_text(50).encode())[:-30])
    with pytest.raises(JenaCompressionError, match="corrupt or truncated gzip"):
        load_jena(path)


def test_gz_name_without_gzip_data_and_zip_archives_are_reported(tmp_path: Path) -> None:
    with pytest.raises(JenaCompressionError, match=r"named \.gz but is not gzip data"):
        load_jena(write(tmp_path, csv_text(3), "plain.csv.gz.txt").rename(tmp_path / "plain.csv.gz"))
    archive = tmp_path / "jena.csv"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(KERAS_NAME, csv_text(3))
    with pytest.raises(JenaCompressionError, match="is a zip archive"):
        load_jena(archive)


def test_missing_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(JenaNotFound):
        load_jena(tmp_path / "nope.csv")


# --- windows -------------------------------------------------------------------------------------


def test_windows_have_the_spec_shapes_and_next_token_targets(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(400)))
    spec = WindowSpec(n_windows=5, n_tokens=4, every=3, horizon=1, train_fraction=0.5)
    w = window_jena(rec, spec)
    assert w.train.x.shape == (5, 4, 14) and w.train.y.shape == (5, 4, 1)
    assert w.heldout.count == 5
    t = FEATURES.index("T (degC)")
    s = int(w.train.starts[1])
    raw_target = rec.values[s + 2 * 3 + 3, t]  # token 2's target: one token (3 rows) later
    assert w.train.y[1, 2, 0] * w.std["T (degC)"] + w.mean["T (degC)"] == pytest.approx(raw_target)
    assert w.train.x[1, 3, t] == pytest.approx(w.train.y[1, 2, 0])  # the next token's own temperature


def test_normalisation_uses_training_windows_only(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(600)))
    w = window_jena(rec, WindowSpec(n_windows=6, n_tokens=5, every=2, train_fraction=0.5))
    np.testing.assert_allclose(w.train.x.reshape(-1, 14).mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(w.train.x.reshape(-1, 14).std(axis=0), 1.0, atol=1e-12)
    assert int(w.train.starts.max()) + WindowSpec(n_tokens=5, every=2).rows_per_window <= 300
    assert int(w.heldout.starts.min()) >= 300
    assert abs(w.heldout.x.reshape(-1, 14).mean(axis=0)).max() > 0.1  # the drift shows: not re-centred


def test_windows_never_cross_a_gap(tmp_path: Path) -> None:
    times = [stamp(i) for i in range(30)] + [stamp(i) for i in range(40, 70)]
    rec = load_jena(write(tmp_path, csv_text(60, times=times)), irregular="split")
    spec = WindowSpec(n_windows=20, n_tokens=3, every=2, train_fraction=1.0)
    w = window_jena(rec, spec)
    for s in w.train.starts:
        assert s + spec.rows_per_window <= 30 or s >= 30


def test_too_short_record_says_how_many_windows_fit(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(40)))
    with pytest.raises(JenaWindowError, match=r"only \d+ training window\(s\) of 49 contiguous rows"):
        window_jena(rec, WindowSpec(n_windows=4, n_tokens=8, every=6))


def test_constant_feature_is_reported(tmp_path: Path) -> None:
    text = csv_text(60, ["p (mbar)", "T (degC)"], cell=lambda i, j: "5.00" if j == 0 else value(i, j))
    rec = load_jena(write(tmp_path, text))
    with pytest.raises(JenaWindowError, match="'p \\(mbar\\)' is constant over the training windows"):
        window_jena(rec, WindowSpec(n_windows=3, n_tokens=3, every=1))


def test_tensor_data_is_float64_and_named(tmp_path: Path) -> None:
    rec = load_jena(write(tmp_path, csv_text(200)))
    data = window_jena(rec, WindowSpec(n_windows=4, n_tokens=3, every=2)).tensor_data("jena test")
    assert data.x.dtype == data.y.dtype == torch.float64
    assert data.name == "jena test" and tuple(data.x.shape) == (4, 3, 14)


# --- finding the file ----------------------------------------------------------------------------


def test_lookup_prefers_keras_file_then_later_record_then_longest_fragment(tmp_path: Path) -> None:
    (tmp_path / "jena_partial").mkdir()
    write(tmp_path / "jena_partial", csv_text(30), "short.csv")
    write(tmp_path / "jena_partial", csv_text(50), "long.csv")
    assert locate_jena(tmp_path, "").path.name == "long.csv"
    (tmp_path / "jena").mkdir()
    write(tmp_path / "jena", csv_text(40), "jena_climate_2024.csv.gz")
    choice = locate_jena(tmp_path, "")
    assert choice.path.name == "jena_climate_2024.csv.gz" and "longest real record" in choice.reason
    write(tmp_path / "jena", csv_text(20), KERAS_NAME)
    assert locate_jena(tmp_path, "").path.name == KERAS_NAME


def test_lookup_honours_the_chosen_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, csv_text(5), "mine.csv")
    monkeypatch.setenv(JENA_FILE_ENV, "mine.csv")
    assert locate_jena(tmp_path).path == tmp_path / "mine.csv"
    monkeypatch.setenv(JENA_FILE_ENV, "other.csv")
    with pytest.raises(JenaError, match=r"does not exist\. Fix or unset the variable"):
        locate_jena(tmp_path)


def test_lookup_without_data_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(JenaNotFound) as info:
        locate_jena(tmp_path / "empty", "")
    assert isinstance(info.value, DataUnavailable)
    text = str(info.value)
    assert "claimcheck-fetch jena" in text and "CLAIMCHECK_DATA_DIR" in text and "--claim-data-dir" in text


# --- the real files, where the shared data is present --------------------------------------------

REAL = [
    (
        "jena/jena_climate_2024-01-01_to_2024-05-15.csv.gz",
        19_536,
        14,
        False,
        "01.01.2024 00:10:00",
        "15.05.2024 16:00:00",
    ),
    (
        "jena_partial/jena_climate_2009-01-01_to_2009-01-28_12features.csv",
        4_000,
        11,
        False,
        "01.01.2009 00:10:00",
        "28.01.2009 18:40:00",
    ),
    (
        "jena_partial/jena_climate_2016-12-25_to_2017-01-01_last1000rows.csv",
        1_000,
        14,
        True,
        "25.12.2016 01:30:00",
        "01.01.2017 00:00:00",
    ),
]


@pytest.mark.parametrize(("name", "rows", "features", "index", "start", "end"), REAL)
def test_reads_the_shared_real_files(name: str, rows: int, features: int, index: bool, start: str, end: str) -> None:
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (set CLAIMCHECK_DATA_DIR to the shared data folder)")
    rec = load_jena(path)
    assert (rec.rows, len(rec.columns), rec.index_column, rec.span()) == (rows, features, index, (start, end))
    assert rec.segments == ((0, rows),) and rec.dropped_repeats == 0 and not rec.sentinels_zeroed
    assert np.isfinite(rec.values).all()
