"""Load SST-2 as GLUE distributes it, and draw reproducible label-balanced samples from it.

GLUE's ``SST-2/train.tsv`` and ``dev.tsv`` are UTF-8, LF-terminated, with the header
``sentence<TAB>label``, labels ``0`` (negative) or ``1`` (positive), and a trailing space at the
end of every sentence, which the loader strips. A file may be gzipped (detected by its magic
bytes, whatever its name). Every malformed line raises ``Sst2FormatError`` naming the file, the
line number and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from claimcheck.errors import ConfigError, DataError, DataUnavailable, quote_line
from qin2025.data.capped import BadGzip, TooLarge, read_capped
from qin2025.data.choice import Rejected, passed_over, rejection

SST2_DIR = "sst2"  # sub-folder of the data directory
HEADER = "sentence\tlabel"
SPLITS = ("train", "dev")
SOURCE_HINT = (
    "run `claimcheck-fetch sst2` (it checks each file's sha256), or put GLUE's SST-2 train.tsv (or "
    "train.tsv.gz) and dev.tsv under <data dir>/sst2/ and point --claim-data-dir (ini "
    "claim_data_dir, or $CLAIMCHECK_DATA_DIR) at <data dir>"
)
# The most bytes an SST-2 file may hold (after gzip): GLUE's train file is 3.8 MB, so 64 MiB leaves room and stops a
# gzip bomb or a stray file from exhausting memory; a file past it is an invalid candidate, passed over.
MAX_TEXT_BYTES = 64 * 2**20
_SAMPLE_TAG = 0x5572  # mixed into the sample's seed so it differs from other streams of the same seed


class Sst2FormatError(DataError):
    """An SST-2 file does not follow GLUE's format."""


@dataclass(frozen=True)
class Sst2Split:
    """One SST-2 split: sentences (trailing spaces stripped) and their 0/1 labels, in file order."""

    sentences: tuple[str, ...]
    labels: np.ndarray  # (N,) int64, 0 negative, 1 positive
    path: Path

    def __len__(self) -> int:
        return len(self.sentences)


@dataclass(frozen=True)
class Sst2Sample:
    """A label-balanced sample of a split: the rows drawn, in a seeded random order."""

    sentences: tuple[str, ...]
    labels: np.ndarray  # (n,) int64 in {0, 1}, exactly n/2 of each
    rows: np.ndarray  # (n,) int64, 0-based row of each sentence in the split (header excluded)
    seed: int
    name: str  # what a report shows, e.g. "SST-2 train.tsv.gz, 64 balanced, sample seed 3"

    def targets(self) -> np.ndarray:
        """Return the labels as +-1 float64 targets (1 positive, -1 negative)."""
        return 2.0 * self.labels.astype(np.float64) - 1.0


@dataclass(frozen=True)
class Sst2Choice:
    """The file of a split a claim reads, why, and the candidates passed over as invalid."""

    path: Path
    reason: str  # ends with the files passed over, if any
    rejected: tuple[Rejected, ...] = ()


def choose_sst2(data_dir: Path, split: str = "train") -> Sst2Choice:
    """Return the valid file of ``split`` under ``data_dir``/sst2/ with the most rows (``.tsv`` on a tie).

    Each candidate (``<split>.tsv``, ``<split>.tsv.gz``) is parsed (``load_sst2``, cached); one that
    fails is listed in ``rejected`` and never hides a valid one. Raise DataUnavailable, with the
    fix, when neither file exists, and Sst2FormatError listing each problem when none is valid.
    """
    if split not in SPLITS:
        raise ConfigError(f"SST-2 split must be one of {', '.join(SPLITS)}, got {split!r}")
    folder = Path(data_dir) / SST2_DIR
    candidates = [folder / name for name in (f"{split}.tsv", f"{split}.tsv.gz") if (folder / name).is_file()]
    if not candidates:
        raise DataUnavailable(
            f"SST-2 {split} split not found: neither {folder}/{split}.tsv nor {split}.tsv.gz exists; {SOURCE_HINT}"
        )
    rejected: list[Rejected] = []
    best: tuple[int, Path] | None = None
    for path in candidates:
        try:
            rows = len(load_sst2(path))
        except DataError as e:
            rejected.append(rejection(path, e))
            continue
        if best is None or rows > best[0]:
            best = rows, path
    if best is None:
        problems = "; ".join(f"{r.path.name}: {r.problem}" for r in rejected)
        raise Sst2FormatError(f"{folder}: no valid SST-2 {split} file: {problems}")
    why = f"{best[1].name}: {best[0]:,} labelled rows, the valid {split} file with the most rows"
    return Sst2Choice(best[1], why + passed_over(rejected), tuple(rejected))


def find_sst2(data_dir: Path, split: str = "train") -> Path:
    """Return the path ``choose_sst2`` picks for ``split``: a broken or stray file never hides a valid one.

    Raise DataUnavailable, with the fix, when neither file exists.
    """
    return choose_sst2(data_dir, split).path


def _read_bytes(path: Path) -> bytes:
    try:
        return read_capped(path, MAX_TEXT_BYTES)[0]
    except TooLarge as e:
        raise Sst2FormatError(
            f"{path}: {e}; remove it (the GLUE SST-2 train file is about 4 MB), or if it is a real SST-2 file "
            f"raise qin2025.data.sst2.MAX_TEXT_BYTES ({MAX_TEXT_BYTES:,} bytes)"
        ) from None
    except BadGzip as e:
        raise Sst2FormatError(
            f"{path}: corrupt or truncated gzip data ({e}); fetch the file again (SOURCES.md gives its sha256)"
        ) from None
    except OSError as e:
        raise Sst2FormatError(f"{path}: cannot read the file ({e}); check the path and its permissions") from None


def load_sst2(path: Path) -> Sst2Split:
    """Parse a GLUE SST-2 file (plain or gzipped) into an Sst2Split; cached per file size and mtime.

    Raise Sst2FormatError for a missing or wrong header, an empty file, a line without exactly one
    tab, an empty sentence, a label other than 0 or 1, or bytes that are not UTF-8.
    """
    path = Path(path)
    try:
        st = path.stat()
    except OSError as e:
        raise DataUnavailable(f"{path}: SST-2 file not found ({e}); {SOURCE_HINT}") from None
    return _parse(path.resolve(), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=4)
def _parse(path: Path, size: int, mtime_ns: int) -> Sst2Split:
    lines = _read_bytes(path).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final LF
    if not lines:
        raise Sst2FormatError(f"{path}: the file is empty; expected the header {HEADER!r} and labelled rows")
    header = _decode(path, 1, lines[0]).rstrip("\r")
    if "\r" in header:
        raise Sst2FormatError(
            f"{path}: its lines end in CR alone (line 1 is {quote_line(header)}); GLUE's files end lines in LF: "
            "convert the line ends (tr '\\r' '\\n') or fetch the file again"
        )
    if header != HEADER:
        raise Sst2FormatError(
            f"{path}:1: header is {quote_line(header)}, expected {HEADER!r} (GLUE's SST-2 train/dev format; "
            "test.tsv has no labels in GLUE and is not read here)"
        )
    sentences: list[str] = []
    labels: list[int] = []
    for number, raw in enumerate(lines[1:], start=2):
        text = _decode(path, number, raw).rstrip("\r")
        fields = text.split("\t")
        if len(fields) != 2:
            raise Sst2FormatError(
                f"{path}:{number}: expected 2 tab-separated columns (sentence, label), found {len(fields)}; "
                "fix or remove the line"
            )
        sentence, label = fields[0].strip(), fields[1].strip()
        if not sentence:
            raise Sst2FormatError(f"{path}:{number}: empty sentence; fix or remove the line")
        if label not in ("0", "1"):
            raise Sst2FormatError(f"{path}:{number}: label {quote_line(label)} is not 0 or 1; fix or remove the line")
        sentences.append(sentence)
        labels.append(int(label))
    if not sentences:
        raise Sst2FormatError(f"{path}: the header is there but no rows follow; the file is truncated, fetch it again")
    return Sst2Split(tuple(sentences), np.asarray(labels, dtype=np.int64), path)


def _decode(path: Path, number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Sst2FormatError(f"{path}:{number}: not UTF-8 ({e}); re-save the file as UTF-8") from None


def balanced_sample(split: Sst2Split, n: int, seed: int) -> Sst2Sample:
    """Draw n/2 negative and n/2 positive rows without replacement, reproducibly from ``seed``.

    The same (split, n, seed) always gives the same rows in the same order; the order is shuffled
    so the labels interleave. Raise ConfigError for an odd n, or one larger than the split allows.
    """
    if n < 2 or n % 2:
        raise ConfigError(f"a balanced SST-2 sample needs an even size >= 2, got {n}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, _SAMPLE_TAG]))
    picked = []
    for label in (0, 1):
        pool = np.flatnonzero(split.labels == label)
        if pool.size < n // 2:
            raise ConfigError(
                f"{split.path}: a balanced sample of {n} needs {n // 2} rows labelled {label}, the file has {pool.size}"
            )
        picked.append(rng.choice(pool, size=n // 2, replace=False))
    rows = rng.permutation(np.concatenate(picked)).astype(np.int64)
    return Sst2Sample(
        sentences=tuple(split.sentences[i] for i in rows),
        labels=split.labels[rows],
        rows=rows,
        seed=seed,
        name=f"SST-2 {split.path.name}, {n} balanced, sample seed {seed}",
    )
