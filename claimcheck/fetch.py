"""Fetch a dataset from its public home into the data directory and check its sha256.

``claimcheck-fetch jena [--data-dir DIR] [--sha256 HEX] [--url URL] [--force]`` downloads Keras'
``jena_climate_2009_2016.csv.zip``, checks it, extracts ``jena_climate_2009_2016.csv`` next to it
in ``DIR/jena/`` and validates it with the loader.

No sha256 of the Keras zip is published (Keras' own ``get_file`` calls for it pass none), so
claimcheck ships no expected hash. The download is checked against the hash given with
``--sha256`` when there is one, and against the hash recorded in ``DIR/jena/SHA256SUMS`` at the
first download (trust on first use): a later download or copy that differs is refused.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from claimcheck.data.jena import KERAS_NAME, load_jena
from claimcheck.errors import ClaimcheckError, ConfigError, DataError
from claimcheck.settings import DATA_ENV, resolve_data_dir

JENA_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/jena_climate_2009_2016.csv.zip"
JENA_ZIP = "jena_climate_2009_2016.csv.zip"
# The size the TensorFlow time-series tutorial's download log shows ("13568290/13568290"). Only a
# warning: a size is no integrity check, and upstream may re-pack the file.
JENA_ZIP_BYTES = 13_568_290
SUMS = "SHA256SUMS"  # sha256sum format: "<hex>  <file name>", one line per file
CHUNK = 1 << 20

Opener = Callable[..., Any]
urlopen: Opener = urllib.request.urlopen  # the network seam; tests replace it


class FetchError(ClaimcheckError):
    """The dataset could not be fetched, verified or extracted; the message says what to do."""


class OfflineError(FetchError):
    """The public home could not be reached."""


class HashMismatch(FetchError, DataError):
    """The file's sha256 differs from the expected one."""


def sha256_of(path: Path) -> str:
    """Return the hex sha256 of the file at ``path``."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def read_sums(path: Path) -> dict[str, str]:
    """Return {file name: hex sha256} from a sha256sum-format file (empty if there is none)."""
    if not path.is_file():
        return {}
    sums = {}
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line.strip())
        if m:
            sums[m.group(2)] = m.group(1)
    return sums


def _write_sums(path: Path, sums: dict[str, str]) -> None:
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items()))
    _atomic(path, lambda f: f.write(text.encode()))


def _atomic(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def download(url: str, dest: Path, *, timeout: float, say: Callable[[str], None], copy_to: Path | None = None) -> str:
    """Stream ``url`` into ``dest`` (via a temporary file in its folder); return the sha256.

    Raises OfflineError when the host cannot be reached or answers with an error; its message
    says to copy the file to ``copy_to`` (default ``dest``) by other means.
    """
    h = hashlib.sha256()
    fallback = f"Download {url} by other means and copy it to {copy_to or dest}, then run claimcheck-fetch jena again"

    def write(f: IO[bytes]) -> None:
        try:
            with urlopen(url, timeout=timeout) as response:
                for block in iter(lambda: response.read(CHUNK), b""):
                    h.update(block)
                    f.write(block)
        except urllib.error.HTTPError as e:
            raise OfflineError(f"{url} answered HTTP {e.code} {e.reason}. {fallback}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise OfflineError(
                f"could not download {url}: {reason}. This machine seems to be offline or the host is "
                f"unreachable. {fallback}, or point ${DATA_ENV} / --claim-data-dir at a folder that already "
                f"holds jena/{KERAS_NAME}"
            ) from None

    say(f"downloading {url}")
    _atomic(dest, write)
    return h.hexdigest()


def _check(digest: str, expected: str | None, recorded: str | None, what: Path) -> None:
    if expected is not None and digest != expected:
        raise HashMismatch(
            f"{what}: sha256 {digest} differs from the expected {expected} (--sha256). The file is corrupt "
            "or not the one you meant; delete it and fetch again, or check the hash you passed"
        )
    if recorded is not None and digest != recorded:
        raise HashMismatch(
            f"{what}: sha256 {digest} differs from {recorded}, recorded in {what.parent / SUMS} at the first "
            "download. The file is corrupt or upstream changed it; fetch again, or delete that line of "
            f"{SUMS} to accept this file"
        )


def fetch_jena(
    data_dir: Path,
    *,
    url: str = JENA_URL,
    sha256: str | None = None,
    force: bool = False,
    timeout: float = 60.0,
    say: Callable[[str], None] = print,
) -> Path:
    """Download, verify and extract Keras' Jena Climate file into ``data_dir/jena``; return the CSV.

    A zip already there is verified and reused unless ``force``. A fresh download is checked
    before it replaces anything: a mismatch deletes it and raises HashMismatch.
    """
    folder = data_dir / "jena"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FetchError(f"cannot create {folder}: {e.strerror}; pass --data-dir with a writable folder") from None
    if not os.access(folder, os.W_OK):
        raise FetchError(f"cannot write to {folder}; pass --data-dir with a writable folder")
    zip_path, csv_path, sums_path = folder / JENA_ZIP, folder / KERAS_NAME, folder / SUMS
    sums = read_sums(sums_path)
    expected = sha256.lower() if sha256 else None
    if expected is not None and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ConfigError(f"--sha256: expected 64 hexadecimal digits, got {sha256!r}")
    if zip_path.is_file() and not force:
        say(f"found {zip_path}; verifying it (pass --force to download again)")
        digest = sha256_of(zip_path)
        _check(digest, expected, sums.get(JENA_ZIP), zip_path)
    else:
        staged = folder / f".{JENA_ZIP}.download"
        try:
            digest = download(url, staged, timeout=timeout, say=say, copy_to=zip_path)
            _check(digest, expected, sums.get(JENA_ZIP), zip_path)
            os.replace(staged, zip_path)
        finally:
            staged.unlink(missing_ok=True)
        size = zip_path.stat().st_size
        if size != JENA_ZIP_BYTES:
            say(f"warning: {size:,} bytes, not the {JENA_ZIP_BYTES:,} the TensorFlow tutorial reports")
    if expected is not None:
        say(f"sha256 {digest} matches --sha256")
    if JENA_ZIP not in sums:
        sums[JENA_ZIP] = digest
        _write_sums(sums_path, sums)
        if expected is None:
            say(
                f"sha256 {digest} recorded in {sums_path} (first download: nothing to verify it against yet; "
                "compare it with a trusted copy, or pass --sha256 next time)"
            )
    elif expected is None:
        say(f"sha256 {digest} matches {sums_path}")
    if force or not csv_path.is_file():
        _extract(zip_path, csv_path)
    record = load_jena(csv_path, irregular="split")
    say(f"ready: {record.describe()}")
    return csv_path


def _extract(zip_path: Path, csv_path: Path) -> None:
    try:
        with zipfile.ZipFile(zip_path) as archive:
            names = [n for n in archive.namelist() if Path(n).name == KERAS_NAME]
            if not names:
                raise FetchError(
                    f"{zip_path} holds no {KERAS_NAME} (it has {', '.join(archive.namelist()) or 'nothing'}); "
                    "delete it and fetch again"
                )
            with archive.open(names[0]) as member:
                _atomic(csv_path, lambda f: _copy(member, f))
    except zipfile.BadZipFile as e:
        raise FetchError(f"{zip_path} is not a valid zip ({e}); delete it and fetch again") from None


def _copy(src: IO[bytes], dst: IO[bytes]) -> None:
    for block in iter(lambda: src.read(CHUNK), b""):
        dst.write(block)


def default_data_dir() -> Path:
    """Return where claims look for data without options: $CLAIMCHECK_DATA_DIR, else the user cache."""
    return resolve_data_dir(None, None, Path.cwd())[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``claimcheck-fetch``; return 0 on success, 1 when fetching or verifying failed."""
    parser = argparse.ArgumentParser(
        prog="claimcheck-fetch",
        description="Fetch a dataset into the claimcheck data directory and verify its sha256.",
    )
    parser.add_argument("dataset", choices=["jena"], help="jena: Keras' Jena Climate 2009-2016 record (13 MB zip)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"folder to fetch into (created if missing); default ${DATA_ENV}, else ~/.cache/claimcheck/data",
    )
    parser.add_argument("--sha256", default=None, help="expected sha256 of the zip; a mismatch is refused")
    parser.add_argument("--url", default=JENA_URL, help="where to download from (a mirror, or a file:// URL)")
    parser.add_argument("--force", action="store_true", help="download again even if the zip is present")
    parser.add_argument("--timeout", type=float, default=60.0, help="network timeout in seconds (default 60)")
    args = parser.parse_args(argv)
    try:
        data_dir = args.data_dir.expanduser().resolve() if args.data_dir else default_data_dir()
        fetch_jena(data_dir, url=args.url, sha256=args.sha256, force=args.force, timeout=args.timeout)
    except ClaimcheckError as e:
        print(f"claimcheck-fetch: {e}", file=sys.stderr)
        return 1
    print(f"use it: pytest claims --claim-data-dir {data_dir}  (or export {DATA_ENV}={data_dir})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
