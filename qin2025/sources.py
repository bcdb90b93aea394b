"""Name where each dataset file comes from, its sha256, and how the public copy becomes our file.

Every file lands at ``<data dir>/<path>``, the layout the loaders read (``qin2025.data.sst2``,
``qin2025.data.jena``). The hashes are those of the files the known results were measured on,
read from the one table of them (``qin2025.data.known.PUBLISHED``); only the station file the 2024
Jena record is converted from, not a data file of ours, has its hash here. Where the public home
serves something else (SST-2's train split uncompressed, the 2024 Jena record in the station's own
22-column format), ``convert`` turns it into our file and both ends are checked: ``source_sha256``
before converting, ``content_sha256`` (the uncompressed bytes) and ``sha256`` after.
"""

from __future__ import annotations

import csv
import io
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from qin2025.data.jena import FEATURES, TIME_COLUMN
from qin2025.data.known import published

GITHUB_RAW = "https://raw.githubusercontent.com"
_SST2_REPO = f"{GITHUB_RAW}/eyalbd2/Reproducing-AutoPrompt/6288fb5bec9c572f2492875ae0111df5b6daed11/glue_data/SST-2"
_MPI_ROOF = (
    f"{GITHUB_RAW}/DavidCastro88/WeatherPredictionLSTM/82e8750eb60778af4f977fe0da9c6e7fd3eb4ed3/datasets/mpi_roof.csv"
)
JENA_2024 = "jena/jena_climate_2024-01-01_to_2024-05-15.csv.gz"


@dataclass(frozen=True)
class Asset:
    """One file of a dataset: where it lands, its sha256, and its public home."""

    path: str  # relative to the data directory, e.g. "sst2/dev.tsv"
    sha256: str  # of the file as it lands
    url: str | None  # the public home; None: only a mirror (--base-url) has it as is
    source_sha256: str | None = None  # of what ``url`` serves, when that differs from the file
    convert: Callable[[bytes], bytes] | None = None  # what ``url`` serves -> the file's uncompressed bytes
    content_sha256: str | None = None  # of the uncompressed bytes, for a .gz file
    note: str = ""  # why the public home is what it is, shown when it matters


def gzip_n9(data: bytes) -> bytes:
    """Return ``data`` gzipped as ``gzip -n -9`` does: no name, no time, level 9.

    zlib at level 9 with memLevel 9 gives GNU gzip's deflate stream byte for byte for the files
    here; the header is gzip's for a Unix host with no name and mtime 0.
    """
    c = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    body = c.compress(data) + c.flush()
    trailer = zlib.crc32(data).to_bytes(4, "little") + (len(data) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes.fromhex("1f8b0800000000000203") + body + trailer


class ConversionError(ValueError):
    """The public copy does not have the format the conversion expects."""


def mpi_roof_to_keras(raw: bytes) -> bytes:
    """Return MPI-BGC's roof-station ``mpi_roof.csv`` in Keras' Jena layout.

    The station file is latin-1, with a quoted header of 22 columns and space-padded cells. Keep
    the time and the 14 Keras features in Keras' order, strip the padding, drop a line that
    repeats the line before it byte for byte (the logger repeats one now and then), quote the
    header as Keras does, join with LF and end without a final newline, as Keras' file does.
    No value is changed. Raise ConversionError when a column is missing or a row is short.
    """
    lines = raw.decode("latin-1").replace("\r\n", "\n").split("\n")
    header = [h.strip() for h in next(csv.reader(io.StringIO(lines[0])))]
    wanted = (TIME_COLUMN, *FEATURES)
    missing = [c for c in wanted if c not in header]
    if missing:
        raise ConversionError(f"the station file's header lacks {', '.join(missing)}; it has {', '.join(header)}")
    index = [header.index(c) for c in wanted]
    out = ['"' + '","'.join(wanted) + '"']
    previous = None
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line == previous:
            continue
        previous = line
        cells = line.split(",")
        if len(cells) != len(header):
            raise ConversionError(f"line {number} has {len(cells)} cells, the header {len(header)}")
        out.append(",".join(cells[i].strip() for i in index))
    return "\n".join(out).encode("ascii")


def _same(data: bytes) -> bytes:
    return data


def _sha(name: str) -> str:
    return published(name).sha256


SST2 = (
    Asset(
        "sst2/train.tsv.gz",
        _sha("sst2/train.tsv.gz"),
        f"{_SST2_REPO}/train_full.tsv",
        source_sha256=_sha("sst2/train.tsv"),  # the public home serves the uncompressed file
        convert=_same,
        content_sha256=published("sst2/train.tsv.gz").content_sha256,
        note="GLUE's SST-2 train.tsv, gzipped here",
    ),
    Asset("sst2/dev.tsv", _sha("sst2/dev.tsv"), f"{_SST2_REPO}/dev.tsv"),
    Asset(
        "sst2/test.tsv",
        _sha("sst2/test.tsv"),
        None,
        note=(
            "the labelled test split was assembled (GLUE's test sentences, SST's binary labels) and has no "
            "public home as is; no claim reads it"
        ),
    ),
)

JENA = (
    Asset(
        JENA_2024,
        _sha(JENA_2024),
        _MPI_ROOF,
        source_sha256="23751e269b4d3dc8c0cdb7ff3529e8fc0f2f9872e55ad9df5936f4329ee97c96",  # the station's own file
        convert=mpi_roof_to_keras,
        content_sha256=published(JENA_2024).content_sha256,
        note="MPI-BGC's roof-station file of 2024, converted to Keras' 14-feature layout",
    ),
)

DATASETS: dict[str, tuple[Asset, ...]] = {"sst2": SST2, "jena": JENA}
