"""Load, validate and window the Jena Climate weather record (Keras' ``jena_climate_2009_2016.csv``).

The Keras file has a quoted header ``"Date Time","p (mbar)",...,"wd (deg)"``, timestamps
``dd.mm.yyyy HH:MM:SS`` at 10-minute steps and 14 numeric features. ``load_jena`` also reads
shorter contiguous pieces of the same record or of the same station's later files: plain or
gzipped, quoted or unquoted header, any subset of the 14 features, and an optional leading
unnamed index column (a pandas re-write). Every problem raises a ``JenaError`` naming the file,
the line (1 = the header) and the column, and saying what to do.

Rules the loader applies, stated once:

- **Duplicates.** A row whose timestamp repeats the previous row's with identical values is a
  logger repeat: it is dropped and counted. A repeat with different values is an error
  (``irregular="error"``) or keeps the first row (``irregular="split"``), counted.
- **Gaps.** Any step other than +10 minutes (a gap, an off-grid time, a step back) is an error
  (``irregular="error"``) or ends a contiguous segment (``irregular="split"``); windows never
  cross a segment boundary.
- **Sentinels.** ``-9999`` marks a missing reading. In the wind speeds ``wv (m/s)`` and
  ``max. wv (m/s)`` it is replaced by 0.0 (``sentinels="zero_wind"``, the rule of the TensorFlow
  time-series tutorial: a wind speed cannot be negative, and calm is the neutral value) and
  counted; anywhere else, or with ``sentinels="error"``, it is an error.
- **Cells.** Empty, NaN, infinite and non-numeric cells are errors.

``window_jena`` cuts the record into N windows of n tokens (one token = one row every
``every`` rows) with the target feature ``horizon`` tokens ahead of each token, and normalises
every feature with the mean and standard deviation of the training windows only.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import torch

from claimcheck.errors import DataError, DataUnavailable, quote_line
from qin2025.data.capped import BadGzip, TooLarge, read_capped
from qin2025.data.choice import Rejected, passed_over, rejection
from qin2025.data.synthetic import TensorData

TIME_COLUMN = "Date Time"
TIME_FORMAT = "%d.%m.%Y %H:%M:%S"
STEP_SECONDS = 600  # the record's 10-minute sampling step
FEATURES: tuple[str, ...] = (
    "p (mbar)",
    "T (degC)",
    "Tpot (K)",
    "Tdew (degC)",
    "rh (%)",
    "VPmax (mbar)",
    "VPact (mbar)",
    "VPdef (mbar)",
    "sh (g/kg)",
    "H2OC (mmol/mol)",
    "rho (g/m**3)",
    "wv (m/s)",
    "max. wv (m/s)",
    "wd (deg)",
)
SENTINEL = -9999.0  # the station logger's missing-value marker
WIND_COLUMNS = ("wv (m/s)", "max. wv (m/s)")
KERAS_NAME = "jena_climate_2009_2016.csv"  # the file inside Keras' jena_climate_2009_2016.csv.zip
# The most bytes a Jena file may hold as CSV (after gzip): Keras' full 2009-2016 record is about 43 MB, and parsing
# takes about 15 times the text in memory, so this is 3 times the real record and about 2 GB to parse. A file past it
# (a gzip bomb, a stray) is an invalid candidate, passed over.
MAX_TEXT_BYTES = 128 * 2**20
MAX_CANDIDATES = 32  # the most files of one group locate_jena loads; the rest are passed over, named in its reason
JENA_FILE_ENV = "CLAIMCHECK_JENA_FILE"  # choose the file C5 trains on (absolute or relative to the data dir)

Irregular = Literal["error", "split"]
Sentinels = Literal["zero_wind", "error"]


class JenaError(DataError):
    """A Jena Climate file is malformed; the message names the file, line, column and the fix."""

    def __init__(self, path: Path | str, problem: str, fix: str, *, line: int | None = None, column: str = "") -> None:
        self.path, self.line, self.column = Path(path), line, column
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if column:
            where += f", column {column!r}"
        super().__init__(f"{where}: {problem}. {fix}")


class JenaEmptyError(JenaError):
    """The file is empty or holds a header and no data rows."""


class JenaCompressionError(JenaError):
    """The file cannot be decompressed (corrupt or truncated gzip, or not what its name says)."""


class JenaTooLargeError(JenaError):
    """The file, or what its gzip inflates to, is past ``MAX_TEXT_BYTES``: not read whole (a gzip bomb, a stray)."""


class JenaHeaderError(JenaError):
    """The header is missing, malformed, or names unknown, duplicate or missing columns."""


class JenaRowError(JenaError):
    """A row has the wrong number of fields, is blank, or cannot be read as CSV (a field past the limit)."""


class JenaCellError(JenaError):
    """A cell is empty, NaN, infinite, non-numeric or a sentinel the rules do not allow."""


class JenaTimeError(JenaError):
    """A timestamp does not parse, repeats, goes back, or leaves a gap."""


class JenaWindowError(JenaError):
    """The record cannot supply the windows asked for."""


class JenaNotFound(DataUnavailable):
    """No Jena Climate file is in the data directory (claims that need one are skipped)."""


@dataclass(frozen=True)
class JenaRecord:
    """A validated Jena record: timestamps, feature values and what the rules changed."""

    path: Path
    times: np.ndarray  # (rows,) datetime64[s], strictly increasing within each segment
    values: np.ndarray  # (rows, k) float64, columns in ``columns`` order
    columns: tuple[str, ...]  # the features kept, in file order
    segments: tuple[tuple[int, int], ...]  # [start, stop) row ranges with 10-minute steps throughout
    breaks: tuple[str, ...] = ()  # one sentence per gap or irregular step that split the record
    dropped_repeats: int = 0  # exact logger repeats dropped
    dropped_conflicts: int = 0  # repeated timestamps with other values dropped (irregular="split")
    sentinels_zeroed: dict[str, int] = field(default_factory=dict)  # wind column -> -9999 cells set to 0
    index_column: bool = False  # the file had a leading unnamed index column (dropped)

    @property
    def rows(self) -> int:
        """Return the number of rows kept."""
        return int(self.times.shape[0])

    def span(self) -> tuple[str, str]:
        """Return the first and last timestamps in the file's own format."""
        return _fmt(self.times[0]), _fmt(self.times[-1])

    def describe(self) -> str:
        """Return e.g. ``jena.csv.gz: 19,536 rows, 01.01.2024 00:10:00 -> 15.05.2024 16:00:00, 14 features``."""
        start, end = self.span()
        text = f"{self.path.name}: {self.rows:,} rows, {start} -> {end}, {len(self.columns)} features"
        extras = []
        if len(self.segments) > 1:
            extras.append(f"{len(self.segments)} contiguous segments")
        if self.dropped_repeats:
            extras.append(f"{self.dropped_repeats} exact repeats dropped")
        if self.dropped_conflicts:
            extras.append(f"{self.dropped_conflicts} conflicting repeats dropped")
        zeroed = sum(self.sentinels_zeroed.values())
        if zeroed:
            extras.append(f"{zeroed} wind -9999 set to 0")
        return text + (f" ({'; '.join(extras)})" if extras else "")


def _fmt(t: np.datetime64) -> str:
    return str(pd.Timestamp(t).strftime(TIME_FORMAT))


def read_text(path: Path | str) -> str:
    """Return the text of a plain or gzipped file; raise JenaError if it is empty or undecodable."""
    path = Path(path)
    try:
        raw, gzipped = read_capped(path, MAX_TEXT_BYTES)
    except FileNotFoundError:
        raise JenaNotFound(f"{path}: no such file; check the path or the data directory") from None
    except TooLarge as e:
        raise JenaTooLargeError(
            path,
            str(e),
            "Remove it from the data folder (the real 2009-2016 record is about 43 MB as CSV); if it is a real "
            f"Jena record, raise qin2025.data.jena.MAX_TEXT_BYTES ({MAX_TEXT_BYTES:,} bytes)",
        ) from None
    except BadGzip as e:
        raise JenaCompressionError(
            path, f"corrupt or truncated gzip data ({e})", "Copy or download the file again (claimcheck-fetch jena)"
        ) from None
    if not gzipped and path.suffix == ".gz":
        raise JenaCompressionError(
            path, "named .gz but is not gzip data", "Rename it without .gz if it is plain CSV, or download it again"
        )
    elif not gzipped and raw[:4] == b"PK\x03\x04":
        raise JenaCompressionError(
            path, "is a zip archive", f"Extract {KERAS_NAME} from it (claimcheck-fetch jena does this)"
        )
    if not raw.strip():
        raise JenaEmptyError(path, "the file is empty", "Download it again (claimcheck-fetch jena) or pick another")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # the MPI station's own files are latin-1


def _header(path: Path, first: list[str]) -> tuple[bool, list[str]]:
    """Validate the header fields; return (has index column, feature names in file order)."""
    names = [f.strip() for f in first]
    fix_header = f'The header must be "{TIME_COLUMN}" followed by some of the 14 Keras features'
    index = bool(names) and names[0] == ""
    if index:
        names = names[1:]
    if not names or names[0] != TIME_COLUMN:
        found = names[0] if names else ""
        if not pd.isna(pd.to_datetime(found, format=TIME_FORMAT, errors="coerce")):
            raise JenaHeaderError(path, "no header row: line 1 is data", fix_header, line=1)
        where = "column 2" if index else "column 1"
        raise JenaHeaderError(path, f"{where} should be {TIME_COLUMN!r}, found {quote_line(found)}", fix_header, line=1)
    features = names[1:]
    if not features:
        raise JenaHeaderError(path, "the header names no feature column", fix_header, line=1)
    seen: set[str] = set()
    for i, name in enumerate(features, start=2 + index):
        if name == "":
            raise JenaHeaderError(path, f"column {i} has no name", fix_header, line=1)
        if name in seen:
            raise JenaHeaderError(path, f"column {i} repeats {quote_line(name)}", "Remove the duplicate column", line=1)
        if name not in FEATURES:
            near = difflib.get_close_matches(name, FEATURES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise JenaHeaderError(
                path,
                f"column {i} is {quote_line(name)}, not a Jena feature{hint}",
                f"Rename or remove it; the known features are {', '.join(FEATURES)}",
                line=1,
            )
        seen.add(name)
    return index, features


def _cell_problem(text: str) -> str:
    s = text.strip()
    if s == "":
        return "empty cell (a missing value or a short row)"
    if s.lower() in ("nan", "na", "n/a", "null", "none", "-nan"):
        return f"missing value {quote_line(s)}"
    if s.lower().lstrip("+-") in ("inf", "infinity"):
        return f"infinite value {quote_line(s)}"
    return f"non-numeric value {quote_line(s)}"


def _numbers(path: Path, cells: Sequence[str], name: str, lines: np.ndarray) -> np.ndarray:
    """Return the column as float64 or raise at its first empty, NaN, infinite or non-numeric cell."""
    try:
        values = np.asarray(cells, dtype=np.float64)  # float() semantics: surrounding spaces allowed
    except ValueError:
        values = pd.to_numeric(pd.Series(cells, dtype=object).str.strip(), errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        more = int(bad.sum()) - 1
        tail = f" ({more} more bad cells in this column)" if more else ""
        raise JenaCellError(
            path,
            _cell_problem(cells[first]) + tail,
            "Fix or remove the row; the loader does not impute values",
            line=int(lines[first]),
            column=name,
        )
    return values


def _parse(path: Path) -> tuple[list[str] | None, list[list[str]], np.ndarray]:
    """Return the header (None for an empty file), the data rows and the line each row starts on.

    Raise JenaRowError naming the line when the CSV reader refuses it (a field past its limit of
    ``csv.field_size_limit()`` characters, a quote left open).
    """
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        first = next(reader, None)
        rows = list(reader)
        if reader.line_num == len(rows) + 1:
            line_no = np.arange(2, len(rows) + 2, dtype=np.int64)  # one row per line: row i is on line i + 2
        else:  # a quoted field spans lines: count again, row by row
            reader = csv.reader(io.StringIO(text, newline=""))
            next(reader)
            line_no = np.asarray([reader.line_num for _ in reader], dtype=np.int64)
    except csv.Error as e:
        raise JenaRowError(
            path,
            f"the line cannot be read as CSV ({quote_line(str(e))})",
            f"Fix the line: no field of a Jena file holds more than {csv.field_size_limit():,} characters "
            "or leaves a quote open",
            line=max(reader.line_num, 1),
        ) from None
    return first, rows, line_no


def load_jena(
    path: Path | str,
    *,
    columns: Sequence[str] | None = None,
    irregular: Irregular = "error",
    sentinels: Sentinels = "zero_wind",
) -> JenaRecord:
    """Read and validate a Jena Climate CSV (plain or gzipped); return the record.

    ``columns`` picks features (each must be in the file; default: every feature the file has).
    ``irregular`` says what a gap, an off-grid or backward step, or a conflicting repeated
    timestamp does: ``"error"`` raises, ``"split"`` keeps the contiguous segments. The module
    docstring states the duplicate and sentinel rules. Raises a ``JenaError`` subclass naming the
    file, the line and the column, or ``JenaNotFound`` if the file does not exist.
    """
    path = Path(path)
    if irregular not in ("error", "split"):
        raise ValueError(f"irregular must be 'error' or 'split', got {irregular!r}")
    if sentinels not in ("zero_wind", "error"):
        raise ValueError(f"sentinels must be 'zero_wind' or 'error', got {sentinels!r}")
    first, rows, line_no = _parse(path)
    if first is None or not any(f.strip() for f in first):
        raise JenaHeaderError(path, "line 1 is blank; expected the header", "Remove the blank line", line=1)
    index, header = _header(path, first)
    width = len(first)
    for i in (i for i, fields in enumerate(rows) if len(fields) != width):
        fields, line = rows[i], int(line_no[i])
        if not any(f.strip() for f in fields):
            raise JenaRowError(path, "blank line inside the data", "Remove the blank line", line=line)
        raise JenaRowError(
            path,
            f"{len(fields)} fields, but the header has {width}",
            "Fix the row or the header so that every row has one field per column",
            line=line,
        )
    if not rows:
        raise JenaEmptyError(path, "a header but no data rows", "Use a file with data (claimcheck-fetch jena)")
    wanted = list(header) if columns is None else list(columns)
    missing = [c for c in wanted if c not in header]
    if missing:
        raise JenaHeaderError(
            path,
            f"missing column(s) {', '.join(map(repr, missing))}; the file has {', '.join(header)}",
            "Ask for columns the file has, or use a file with all 14 features",
            line=1,
        )
    table = list(zip(*rows, strict=True))  # one tuple of cells per file column
    if index:
        _numbers(path, table[0], "(index)", line_no)
    t_col = int(index)
    parsed = pd.to_datetime(pd.Series(table[t_col]).str.strip(), format=TIME_FORMAT, errors="coerce")
    nat = parsed.isna().to_numpy()
    if nat.any():
        i = int(np.flatnonzero(nat)[0])
        raise JenaTimeError(
            path,
            f"timestamp {quote_line(table[t_col][i])} does not parse as dd.mm.yyyy HH:MM:SS",
            "Fix the timestamp (the Keras format, e.g. 01.01.2009 00:10:00)",
            line=int(line_no[i]),
            column=TIME_COLUMN,
        )
    times = parsed.to_numpy().astype("datetime64[s]")
    positions = {name: t_col + 1 + i for i, name in enumerate(header)}
    values = np.stack([_numbers(path, table[positions[c]], c, line_no) for c in wanted], axis=1)

    zeroed: dict[str, int] = {}
    hits = values == SENTINEL
    for j in np.flatnonzero(hits.any(axis=0)):
        name = wanted[j]
        if sentinels == "zero_wind" and name in WIND_COLUMNS:
            zeroed[name] = int(hits[:, j].sum())
            values[hits[:, j], j] = 0.0
            continue
        i = int(np.flatnonzero(hits[:, j])[0])
        rule = "only the wind speeds may hold it (set to 0)" if sentinels == "zero_wind" else "sentinels='error'"
        raise JenaCellError(
            path,
            f"sentinel {SENTINEL:g} (missing reading); {rule}",
            "Remove the row, or drop this column with columns=...",
            line=int(line_no[i]),
            column=name,
        )

    keep, segments, breaks, repeats, conflicts = _timeline(path, times, values, line_no, irregular)
    return JenaRecord(
        path=path,
        times=times[keep],
        values=values[keep],
        columns=tuple(wanted),
        segments=segments,
        breaks=breaks,
        dropped_repeats=repeats,
        dropped_conflicts=conflicts,
        sentinels_zeroed=zeroed,
        index_column=index,
    )


def _timeline(
    path: Path, times: np.ndarray, values: np.ndarray, lines: np.ndarray, irregular: Irregular
) -> tuple[np.ndarray, tuple[tuple[int, int], ...], tuple[str, ...], int, int]:
    """Apply the duplicate and gap rules; return (rows kept, segments, breaks, repeats, conflicts)."""
    secs = times.astype(np.int64)
    keep = np.ones(secs.size, dtype=bool)
    repeats = conflicts = 0
    for i in np.flatnonzero(secs[1:] == secs[:-1]) + 1:
        prev = i - 1
        while not keep[prev]:
            prev -= 1
        if np.array_equal(values[i], values[prev]):
            repeats += 1
        elif irregular == "error":
            raise JenaTimeError(
                path,
                f"timestamp {_fmt(times[i])} repeats line {lines[prev]} with different values",
                "Remove one of the rows, or load with irregular='split' to keep the first",
                line=int(lines[i]),
                column=TIME_COLUMN,
            )
        else:
            conflicts += 1
        keep[i] = False
    kept = np.flatnonzero(keep)
    step = np.diff(secs[kept])
    odd = np.flatnonzero(step != STEP_SECONDS)
    breaks = []
    for j in odd:
        a, b = kept[j], kept[j + 1]
        gap = int(step[j])
        if gap < 0:
            what = f"goes back {-gap // 60} min (out of order)"
        elif gap % STEP_SECONDS:
            what = f"is {gap / 60:g} min after the previous row, off the 10-minute grid"
        else:
            what = f"leaves a gap of {gap // STEP_SECONDS - 1} missing 10-minute step(s)"
        sentence = f"line {lines[b]}: {_fmt(times[b])} {what} (previous row: line {lines[a]}, {_fmt(times[a])})"
        if irregular == "error":
            fix = "Sort the rows by timestamp" if gap < 0 else "Use a contiguous file"
            raise JenaTimeError(
                path,
                f"{_fmt(times[b])} {what} after {_fmt(times[a])} (line {lines[a]})",
                f"{fix}, or load with irregular='split' to keep the contiguous segments",
                line=int(lines[b]),
                column=TIME_COLUMN,
            )
        breaks.append(sentence)
    cuts = [0, *(int(j) + 1 for j in odd), int(kept.size)]
    segments = tuple((cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1))
    return kept, segments, tuple(breaks), repeats, conflicts


# --- windows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowSpec:
    """How to cut a record into samples; every field is a documented, configurable choice."""

    n_windows: int = 32  # N training windows (samples)
    n_tokens: int = 8  # n tokens per window; one token = one row
    every: int = 6  # rows between consecutive tokens (6 rows = 1 hour, as Keras' sampling_rate=6)
    horizon: int = 1  # the target of token k is the target feature at token k + horizon
    target: str = "T (degC)"  # the feature predicted (d_out = 1)
    features: tuple[str, ...] | None = None  # input features (d of them); None: all the record has
    train_fraction: float = 0.7  # training windows lie in this first fraction of rows; the rest is held out

    def __post_init__(self) -> None:
        for name in ("n_windows", "n_tokens", "every", "horizon"):
            if getattr(self, name) < 1:
                raise ValueError(f"WindowSpec.{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.train_fraction <= 1:
            raise ValueError(f"WindowSpec.train_fraction must be in (0, 1], got {self.train_fraction}")

    @property
    def rows_per_window(self) -> int:
        """Return the rows a window spans, from its first token to its last target."""
        return (self.n_tokens - 1 + self.horizon) * self.every + 1


@dataclass(frozen=True)
class Windows:
    """Normalised samples cut from one part of a record."""

    x: np.ndarray  # (N, n, d) inputs
    y: np.ndarray  # (N, n, 1) targets
    starts: np.ndarray  # (N,) row of each window's first token

    @property
    def count(self) -> int:
        """Return N."""
        return int(self.x.shape[0])


@dataclass(frozen=True)
class JenaWindows:
    """Training and held-out windows, normalised with the training windows' statistics."""

    train: Windows
    heldout: Windows
    features: tuple[str, ...]  # the d input features, in order
    target: str
    mean: dict[str, float]  # per column, over the training windows' input rows
    std: dict[str, float]
    train_rows: tuple[str, str]  # first and last timestamp the training windows touch
    spec: WindowSpec

    def tensor_data(self, name: str, dtype: torch.dtype = torch.float64) -> TensorData:
        """Return the training windows as a full batch for ``qin2025.engine.train.train``."""
        return TensorData(torch.from_numpy(self.train.x).to(dtype), torch.from_numpy(self.train.y).to(dtype), name)


def _starts(record: JenaRecord, lo: int, hi: int, span: int, count: int) -> np.ndarray:
    """Return up to ``count`` window starts spread evenly over rows [lo, hi), inside segments."""
    pieces = [np.arange(max(a, lo), min(b, hi) - span + 1) for a, b in record.segments]
    valid = np.concatenate([p for p in pieces if p.size] or [np.empty(0, dtype=np.int64)])
    if valid.size <= count:
        return valid.astype(np.int64)
    return valid[np.round(np.linspace(0, valid.size - 1, count)).astype(np.int64)]


def _irregular_cause(record: JenaRecord) -> str:
    """Return why a record long enough for the windows has no contiguous stretch that fits them."""
    back = sum("out of order" in b for b in record.breaks)
    causes = [f"{len(record.breaks):,} irregular time step(s) ({back:,} out of order)"] if record.breaks else []
    if record.dropped_conflicts:
        causes.append(f"{record.dropped_conflicts} repeated timestamp(s) with other values (dropped)")
    first = f" (first break: {record.breaks[0]})" if record.breaks else ""
    return (
        f": the file has {record.rows + record.dropped_conflicts:,} rows, but {' and '.join(causes)} leave "
        f"{len(record.segments):,} contiguous segment(s), the longest {usable_rows(record):,} rows{first}"
    )


def _irregular_fix(record: JenaRecord) -> str:
    """Return the fix for a record that irregular timestamps cut into short pieces."""
    if record.dropped_conflicts or any("out of order" in b for b in record.breaks):
        return "Sort the rows by timestamp and remove repeated ones, or choose another file with $" + JENA_FILE_ENV
    return "Repair the timestamps (the 10-minute grid) or choose another file with $" + JENA_FILE_ENV


def require_features(record: JenaRecord, features: Sequence[str], who: str) -> None:
    """Raise JenaHeaderError unless ``record`` holds every one of ``features`` (those ``who``'s protocol names).

    A verdict on 3 of the 14 features while the report says 14 would be a verdict on another input.
    """
    missing = [f for f in features if f not in record.columns]
    if missing:
        raise JenaHeaderError(
            record.path,
            f"{who} needs all {len(features)} features its protocol names, and the file has {len(record.columns)} "
            f"of them; missing: {', '.join(missing)}",
            "Use the full Jena Climate record (claimcheck-fetch jena), or a file with every one of these columns",
            line=1,
        )


def window_jena(record: JenaRecord, spec: WindowSpec) -> JenaWindows:
    """Cut ``record`` into normalised windows as ``spec`` says; raise JenaWindowError if it cannot.

    Training windows start in the first ``train_fraction`` of rows and end before the cut;
    held-out windows lie wholly after it (up to N of them; none when ``train_fraction`` is 1).
    Starts are spread evenly over every valid start (windows overlap only when N windows do
    not fit side by side). Each feature is shifted and scaled by the mean and standard
    deviation over the training windows' input rows; the target uses its own column's statistics.
    """
    features = tuple(record.columns if spec.features is None else spec.features)
    for name in (*features, spec.target):
        if name not in record.columns:
            raise JenaWindowError(
                record.path,
                f"{name!r} is not among the loaded columns {', '.join(record.columns)}",
                "Pick features and target the file has",
            )
    span = spec.rows_per_window
    cut = math.floor(record.rows * spec.train_fraction)
    starts = _starts(record, 0, cut, span, spec.n_windows)
    if starts.size < spec.n_windows:
        problem = (
            f"only {starts.size} training window(s) of {span} contiguous rows fit in the first "
            f"{cut:,} rows; {spec.n_windows} were asked for"
        )
        whole = math.floor((record.rows + record.dropped_conflicts) * spec.train_fraction)
        if (
            record.breaks or record.dropped_conflicts
        ) and whole - span + 1 >= spec.n_windows:  # long enough, if regular
            raise JenaWindowError(record.path, problem + _irregular_cause(record), _irregular_fix(record))
        raise JenaWindowError(
            record.path, problem, "Use a longer file (claimcheck-fetch jena) or ask for fewer or shorter windows"
        )
    held = _starts(record, cut, record.rows, span, spec.n_windows)
    token = np.arange(spec.n_tokens) * spec.every  # (n,) row offsets of the tokens
    target_offset = token + spec.horizon * spec.every
    col = {name: j for j, name in enumerate(record.columns)}
    feat_idx = [col[f] for f in features]
    t_idx = col[spec.target]
    input_rows = np.unique((starts[:, None] + token[None, :]).ravel())
    mean = record.values[input_rows].mean(axis=0)
    std = record.values[input_rows].std(axis=0)
    for j in (*feat_idx, t_idx):
        if not std[j] > 0:
            raise JenaWindowError(
                record.path,
                f"{record.columns[j]!r} is constant over the training windows",
                "Leave it out with WindowSpec(features=...) or use more or longer windows",
            )
    norm = (record.values - mean) / np.where(std > 0, std, 1.0)

    def cut_out(s: np.ndarray) -> Windows:
        x = norm[s[:, None] + token[None, :]][:, :, feat_idx]  # (N, n, d)
        y = norm[s[:, None] + target_offset[None, :], t_idx][:, :, None]  # (N, n, 1)
        return Windows(np.ascontiguousarray(x), np.ascontiguousarray(y), s)

    last = int(starts[-1]) + span - 1
    return JenaWindows(
        train=cut_out(starts),
        heldout=cut_out(held),
        features=features,
        target=spec.target,
        mean={c: float(mean[j]) for c, j in col.items()},
        std={c: float(std[j]) for c, j in col.items()},
        train_rows=(_fmt(record.times[int(starts[0])]), _fmt(record.times[last])),
        spec=spec,
    )


# --- finding the file ----------------------------------------------------------------------------


@dataclass(frozen=True)
class JenaChoice:
    """The file a claim trains on, why it was chosen, and the candidates passed over as invalid."""

    path: Path
    reason: str  # ends with the files passed over, if any, so a report that shows it lists them
    rejected: tuple[Rejected, ...] = ()


def _csvs(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith((".csv", ".csv.gz")))


def usable_rows(record: JenaRecord) -> int:
    """Return the rows of the record's longest contiguous segment: what windows can use."""
    return max(b - a for a, b in record.segments)


def _best_valid(paths: Sequence[Path], rejected: list[Rejected]) -> tuple[Path, JenaRecord] | None:
    """Return the valid file with the longest contiguous stretch (ties: the first) and its record, or None.

    Add the invalid files to ``rejected``; past ``MAX_CANDIDATES`` files the rest are not loaded, and
    one entry of ``rejected`` (the folder) counts them and says what to do.
    """
    best: tuple[int, Path, JenaRecord] | None = None
    for path in paths[:MAX_CANDIDATES]:
        try:
            record = load_jena(path, irregular="split")
        except DataError as e:  # JenaError, or a file that vanished (JenaNotFound)
            rejected.append(rejection(path, e))
            continue
        rows = usable_rows(record)
        if best is None or rows > best[0]:
            best = rows, path, record
    if len(paths) > MAX_CANDIDATES:
        rest = paths[MAX_CANDIDATES:]
        rejected.append(
            Rejected(
                rest[0].parent,
                f"{len(rest):,} more candidate file(s) not loaded, from {rest[0].name} on: at most {MAX_CANDIDATES} "
                f"are tried; remove the stray files, or choose the record with ${JENA_FILE_ENV}",
            )
        )
    return None if best is None else (best[1], best[2])


def _is_keras_record(record: JenaRecord) -> bool:
    """Return whether ``record``'s rows span Keras' 2009-2016 file, with its 14 features: what the paper trained on."""
    first, last = record.times[0], record.times[-1]
    return bool(
        first <= np.datetime64("2009-01-01T00:10:00")
        and last >= np.datetime64("2016-12-31T23:50:00")
        and set(record.columns) == set(FEATURES)
    )


def _content(record: JenaRecord) -> str:
    """Return what ``record`` holds, from its rows: ``rows run 01.01.2024 00:10:00 -> ... (N rows, k features)``."""
    start, end = record.span()
    return f"its rows run {start} -> {end} ({record.rows:,} rows, {len(record.columns)} features)"


def fix_message(data_dir: Path) -> str:
    """Return the sentence that says how to make a Jena file available in ``data_dir``."""
    return (
        f"Run `claimcheck-fetch jena --data-dir {data_dir}` (the 2024 roof-station record the known result "
        f"used; `--record 2009-2016` fetches Keras' {KERAS_NAME}), or point --claim-data-dir / ini "
        "claim_data_dir / $CLAIMCHECK_DATA_DIR at a folder holding jena/<a Jena CSV>, or set "
        f"${JENA_FILE_ENV} to a Jena CSV file"
    )


def locate_jena(data_dir: Path, choice: str | None = None) -> JenaChoice:
    """Return the Jena file to train on: ``choice``, else the best valid file in ``data_dir``.

    Order: ``choice`` (a path, absolute or relative to ``data_dir``; ``$CLAIMCHECK_JENA_FILE``
    when None; used as given); Keras' full 2009-2016 file (``jena/`` or the top level, plain or
    gz); the other files in ``jena/`` (same station, later years); the fragments in
    ``jena_partial/``. Within the first group that holds a valid file, the one with the longest
    contiguous stretch wins. A candidate is valid when ``load_jena(path, irregular="split")``
    accepts it; the invalid ones tried (a stray empty file, a longer but broken one, one past
    ``MAX_TEXT_BYTES``) are listed in ``rejected`` and at the end of ``reason``, and never hide a
    valid file; at most ``MAX_CANDIDATES`` files of a group are loaded. ``reason`` says what the
    chosen file holds from its rows' dates: only a file spanning 2009-2016 is called the paper's dataset. Raises
    ``JenaNotFound`` when no candidate exists, ``JenaError`` when a chosen file is missing or
    every candidate is invalid (the message lists each file and its problem).
    """
    choice = choice if choice is not None else os.environ.get(JENA_FILE_ENV) or None
    if choice:
        path = Path(choice).expanduser()
        path = path if path.is_absolute() else data_dir / path
        if not path.is_file():
            raise JenaError(path, f"the file chosen by ${JENA_FILE_ENV} does not exist", "Fix or unset the variable")
        return JenaChoice(path, f"chosen by ${JENA_FILE_ENV}")
    keras = [
        f / n for f in (data_dir / "jena", data_dir) for n in (KERAS_NAME, KERAS_NAME + ".gz") if (f / n).is_file()
    ]
    groups = (
        (keras, ""),
        (
            [p for p in _csvs(data_dir / "jena") if not p.name.startswith(KERAS_NAME)],
            "the longest real record here: there is no valid copy of Keras' 2009-2016 file, and this is a file of "
            "the same layout; ",
        ),
        (_csvs(data_dir / "jena_partial"), "only fragments are here (jena_partial/); this is the longest: "),
    )
    rejected: list[Rejected] = []
    for paths, why in groups:
        found = _best_valid(paths, rejected)
        if found is None:
            continue
        best, record = found
        if paths is not keras:
            why += _content(record)
        elif _is_keras_record(record):  # the dates, not the name, make it the paper's dataset
            why = f"Keras' full 2009-2016 record, the paper's dataset: {_content(record)}"
        else:
            why = (
                f"named as Keras' 2009-2016 file ({KERAS_NAME}), which the lookup tries first, but {_content(record)}: "
                "not the paper's 2009-2016 record, whatever its name says"
            )
        return JenaChoice(best, why + passed_over(rejected), tuple(rejected))
    if rejected:
        raise JenaError(
            data_dir,
            f"no valid Jena Climate file: {'; '.join(f'{r.path.name}: {r.problem}' for r in rejected)}",
            f"Fix or remove the files. {fix_message(data_dir)}",
        )
    raise JenaNotFound(f"no Jena Climate file under {data_dir}. {fix_message(data_dir)}")
