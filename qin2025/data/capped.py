"""Read a plain or gzipped data file with a cap on its size, so a stray file cannot exhaust memory.

A 5 MB gzip can inflate to gigabytes; ``read_capped`` reads the file and, when it is gzip, inflates
it in a stream that stops one byte past the cap, raising ``TooLarge`` (a ``ValueError``) instead.
A loader turns that into its own error naming the file, so a locator passes over it as it passes
over any other invalid candidate.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20  # inflated a MiB at a time


class TooLarge(ValueError):
    """A data file (or what it inflates to) is larger than the loader's cap; the message says how large."""


class BadGzip(ValueError):
    """A file starts as gzip but cannot be inflated (corrupt or truncated); the message is gzip's."""


def read_capped(path: Path, limit: int) -> tuple[bytes, bool]:
    """Return the bytes of ``path`` (inflated when they are gzip) and whether they were gzip.

    Raises ``TooLarge`` past ``limit`` bytes (on disk or inflated), ``BadGzip`` on corrupt or
    truncated gzip data, and OSError when the file cannot be read.
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise TooLarge(f"the file is {size:,} bytes, over the loader's limit of {limit:,}")
        raw = f.read(limit + 1)
    if len(raw) > limit:  # grew while read
        raise TooLarge(f"the file is over {limit:,} bytes, the loader's limit")
    if raw[:2] != GZIP_MAGIC:
        return raw, False
    out = io.BytesIO()  # its getvalue() hands over the buffer, not a second copy
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as g:
            while out.tell() <= limit and (piece := g.read(min(CHUNK, limit + 1 - out.tell()))):
                out.write(piece)
    except (OSError, EOFError, zlib.error) as e:
        raise BadGzip(str(e)) from None
    if out.tell() > limit:
        raise TooLarge(
            f"its {len(raw):,} bytes of gzip inflate to more than {limit:,} bytes, the loader's limit (a gzip bomb?)"
        )
    return out.getvalue(), True
