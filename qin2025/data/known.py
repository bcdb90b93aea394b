"""Say where each data file came from: its size, sha256, and whether it is the published file.

``PUBLISHED`` holds the files the data folder's ``SOURCES.md`` describes, with the sha256 it publishes
for each (and for a gzipped file, the sha256 of its content), and the repository each was copied
from. ``provenance(path)`` hashes a file and matches it against the table by content, so a
renamed or decompressed copy is still recognised, and a file that has a published name but other
bytes is called out.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from claimcheck.files import sha256_file

SOURCES = "$CLAIMCHECK_DATA_DIR/SOURCES.md"  # the data folder's own notes, beside the files


@dataclass(frozen=True)
class Published:
    """A data file as SOURCES.md publishes it."""

    name: str  # path relative to the data folder
    sha256: str  # of the file as saved
    size: int | None  # bytes, where SOURCES.md states it
    source: str  # repository, commit and path it was copied from
    content_sha256: str | None = None  # of the decompressed bytes, for a gzipped file


_JENA_2024 = (
    "DavidCastro88/WeatherPredictionLSTM datasets/mpi_roof.csv @ 82e8750eb60778af4f977fe0da9c6e7fd3eb4ed3 "
    "(MPI-BGC Jena roof station; 14 standard columns kept, one repeated row dropped)"
)
_GLUE = "eyalbd2/Reproducing-AutoPrompt glue_data/SST-2/{} @ 6288fb5bec9c572f2492875ae0111df5b6daed11 (GLUE SST-2)"

PUBLISHED: tuple[Published, ...] = (
    Published(
        "jena/jena_climate_2024-01-01_to_2024-05-15.csv.gz",
        "927959187a09ed2cf36577bd8a1266ec141d92fefae75733b2dcded6a9030176",
        632_231,
        _JENA_2024,
        content_sha256="c8b412f4dfd4261ecba963d4e5b0686cad86740636dbf316b144b5367c53d7e3",
    ),
    Published(
        "jena/jena_climate_2024-01-01_to_2024-05-15.csv",
        "c8b412f4dfd4261ecba963d4e5b0686cad86740636dbf316b144b5367c53d7e3",
        1_991_305,
        _JENA_2024 + ", uncompressed",
    ),
    Published(
        "jena_partial/jena_climate_2009-01-01_to_2009-01-28_12features.csv",
        "4f8858d6a054d939e04969bf1a3fcb175e99a211c767853bf937de1ed47b0ab1",
        None,
        "stakeda55/Finance-and-Technology jena_climate.csv @ 4c55bd3b8d8bc633f99dba2065c87d23eb87bbec "
        "(first 4,000 rows of Keras' 2009-2016 file, 11 of 14 features)",
    ),
    Published(
        "jena_partial/jena_climate_2016-12-25_to_2017-01-01_last1000rows.csv",
        "0a7e3a0b7801ac9339ef3060f06972bd6d6ff335d0be399682c1428cf310725a",
        None,
        "EsaLaboratory/RAG data/raw_data/jena_climate_small.csv @ d426fe6ff04393d8d260e0d4bd9e6edefc050c99 "
        "(last 1,000 rows of Keras' 2009-2016 file)",
    ),
    Published(
        "sst2/train.tsv.gz",
        "1c4843303462f8f93e006ff618a9e61d207468cafd030046d7d7fd6b78af342b",
        None,
        _GLUE.format("train_full.tsv"),
        content_sha256="48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1",
    ),
    Published(
        "sst2/train.tsv",
        "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1",
        3_806_081,
        _GLUE.format("train_full.tsv") + ", uncompressed",
    ),
    Published(
        "sst2/dev.tsv",
        "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0",
        None,
        _GLUE.format("dev.tsv"),
    ),
    Published(
        "sst2/test.tsv",
        "4c395e34c8ae196d76abc3724c42336f2e17ad6dab6977be7a690f4c36b140ca",
        None,
        "GLUE SST-2 test sentences (eyalbd2/Reproducing-AutoPrompt) with the standard SST binary test labels "
        "(awake020/pytorch_Bert_sst2 @ ce2ab1719d32182e6233b24b2de246bd32814fde)",
    ),
)


def published(name: str) -> Published:
    """Return the published file at ``name`` (relative to the data folder); KeyError names the ones there are."""
    for p in PUBLISHED:
        if p.name == name:
            return p
    raise KeyError(f"{name} is not in PUBLISHED; the published files are {', '.join(p.name for p in PUBLISHED)}")


@dataclass(frozen=True)
class Provenance:
    """One file's size and sha256, and the published file it is (or claims to be by its name)."""

    path: Path
    size: int
    sha256: str
    content_sha256: str | None  # of the decompressed bytes, for a gzipped file
    match: Published | None  # the published file with these bytes (or this content)
    named: Published | None  # the published file with this name, when the bytes are not it

    @property
    def status(self) -> str:
        """Return ``published``, ``differs from published`` (a published name, other bytes) or ``not published``."""
        if self.match is not None:
            return "published"
        return "differs from published" if self.named is not None else "not published"

    def describe(self) -> str:
        """Return one line: name, size, sha256 prefix and what it matches, e.g. for a report's data section."""
        text = f"{self.path.name}: {self.size:,} B, sha256 {self.sha256[:12]}"
        if self.match is not None:
            same = "same content as" if self.sha256 != self.match.sha256 else "matches"
            return f"{text}, {same} the published {self.match.name} ({self.match.source})"
        if self.named is not None:
            return f"{text}, DIFFERS from the published {self.named.name} (sha256 {self.named.sha256[:12]}; {SOURCES})"
        return f"{text}, not a file {SOURCES} publishes"


def provenance(path: Path | str, published: Iterable[Published] = PUBLISHED) -> Provenance:
    """Hash ``path`` (and its content, when gzipped) and match it against ``published`` by bytes, then by name.

    A file matches when its sha256 is a published file's sha256 or content sha256, or when it is gzip
    whose content is a published file's bytes; ``named`` is set when it does not match but its name
    ends like a published file's path (say ``sst2/dev.tsv``). Raises OSError if it cannot be read.
    """
    path = Path(path)
    digest, size = sha256_file(path), path.stat().st_size
    content = None
    with path.open("rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    if gzipped:  # hashed in a stream: a stray gzip that inflates to gigabytes is hashed in 1 MiB pieces
        try:
            h = hashlib.sha256()
            with gzip.open(path, "rb") as g:
                while piece := g.read(2**20):
                    h.update(piece)
            content = h.hexdigest()
        except (OSError, EOFError, zlib.error):
            content = None
    table = tuple(published)
    hashes = {digest, content} - {None}
    match = next((p for p in table if hashes & {p.sha256, p.content_sha256}), None)
    posix = path.as_posix()
    named = None if match else next((p for p in table if posix.endswith("/" + p.name) or posix == p.name), None)
    return Provenance(path, size, digest, content, match, named)


def folder_provenance(data_dir: Path) -> list[Provenance]:
    """Return ``provenance`` of every file under ``data_dir``, recursively and sorted; hidden and .md files skipped."""
    files = sorted(
        p for p in Path(data_dir).rglob("*") if p.is_file() and not p.name.startswith(".") and p.suffix != ".md"
    )
    return [provenance(p) for p in files]
