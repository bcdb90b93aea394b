"""Fetch a dataset from its public home (or a mirror) into the data directory and check its sha256.

``claimcheck-fetch sst2`` and ``claimcheck-fetch jena`` put the files the known results were
measured on where the loaders look (``<data dir>/sst2/``, ``<data dir>/jena/``). The table of
files, hashes and public homes is ``qin2025.sources``. Every file is written to a temporary
file beside its place and renamed only once its sha256 matches, so a failed fetch leaves nothing
half-written.

``claimcheck-fetch jena --record 2009-2016 [--sha256 HEX] [--url URL]`` downloads Keras'
``jena_climate_2009_2016.csv.zip`` instead and extracts ``jena_climate_2009_2016.csv`` next to it.
No sha256 of that zip is published (Keras' own ``get_file`` calls pass none), so it is checked
against ``--sha256`` when given, and against the hash recorded in ``DIR/jena/SHA256SUMS`` at the
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

from claimcheck.errors import ClaimcheckError, ConfigError, DataError
from claimcheck.files import sha256_file, user_cache_dir
from claimcheck.pytest.options import DATA_ENV
from qin2025.data.jena import KERAS_NAME, load_jena
from qin2025.sources import DATASETS, Asset, ConversionError, gzip_n9

JENA_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/jena_climate_2009_2016.csv.zip"
JENA_ZIP = "jena_climate_2009_2016.csv.zip"
# The size the TensorFlow time-series tutorial's download log shows ("13568290/13568290"). Only a
# warning: a size is no integrity check, and upstream may re-pack the file.
JENA_ZIP_BYTES = 13_568_290
SUMS = "SHA256SUMS"  # sha256sum format: "<hex>  <file name>", one line per file
CHUNK = 1 << 20
BASE_URL_ENV = "CLAIMCHECK_DATA_URL"  # a mirror laid out like the data directory

Opener = Callable[..., Any]
urlopen: Opener = urllib.request.urlopen  # the network seam; tests replace it


class FetchError(ClaimcheckError):
    """The dataset could not be fetched, verified or extracted; the message says what to do."""


class OfflineError(FetchError):
    """The public home could not be reached."""


class HashMismatch(FetchError, DataError):
    """The file's sha256 differs from the expected one."""


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


def download(
    url: str,
    dest: Path,
    *,
    timeout: float,
    say: Callable[[str], None],
    copy_to: Path | None = None,
    again: str = "claimcheck-fetch jena --record 2009-2016",
    holds: str = f"jena/{KERAS_NAME}",
    fallback: str | None = None,
) -> str:
    """Stream ``url`` into ``dest`` (via a temporary file in its folder); return the sha256.

    Raises OfflineError when the host cannot be reached or answers with an error; its message
    says what to do instead: ``fallback``, by default to copy the file to ``copy_to`` (default
    ``dest``) by other means and to run ``again``; or to use a data folder that ``holds`` the file.
    """
    h = hashlib.sha256()
    fallback = fallback or f"Download {url} by other means and copy it to {copy_to or dest}, then run {again}"

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
                f"holds {holds}"
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


def fetch_keras_jena(
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
        digest = sha256_file(zip_path)
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


def _fetch_bytes(
    url: str, *, timeout: float, say: Callable[[str], None], copy_to: Path, again: str, asset: Asset, mirror: bool
) -> bytes:
    """Return what ``url`` serves, read through a temporary file beside ``copy_to`` that is removed after.

    Offline, the message says how to put ``asset`` in place by hand (``_by_hand``).
    """
    staged = copy_to.parent / f".{copy_to.name}.download"
    try:
        download(
            url,
            staged,
            timeout=timeout,
            say=say,
            holds=asset.path,
            fallback=_by_hand(asset, url, copy_to, again, mirror),
        )
        return staged.read_bytes()
    finally:
        staged.unlink(missing_ok=True)


def _by_hand(asset: Asset, url: str, dest: Path, again: str, mirror: bool) -> str:
    """Return how to put ``asset`` at ``dest`` without this machine's network, for what ``url`` serves.

    A mirror, or a public home that serves the file as it lands, gives the file itself: copy it to
    ``dest``. A public home that serves the content uncompressed (SST-2's train file, plain text,
    landing as .gz) gives a file the loaders read under the name without .gz. One that serves
    another format (the station's file, converted here) gives nothing usable by hand: fetch on a
    machine that is online and copy the result.
    """
    if mirror or asset.convert is None:
        return f"Download {url} by other means and copy it to {dest}, then run {again} to verify it"
    if asset.source_sha256 is not None and asset.source_sha256 == asset.content_sha256 and dest.suffix == ".gz":
        plain = dest.with_suffix("")
        return (
            f"Download {url} by other means (plain text, sha256 {asset.source_sha256}) and copy it, uncompressed, "
            f"to {plain}: the loaders read {plain.name} or {dest.name} alike"
        )
    return (
        f"{url} serves another format, which {again} converts: run {again} --data-dir DIR on a machine that is "
        f"online and copy DIR/{asset.path} to {dest}, or serve the files from a mirror (--base-url / "
        f"${BASE_URL_ENV})"
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mismatch(what: str, url: str, got: str, asset: Asset, want: str, source: str) -> HashMismatch:
    return HashMismatch(
        f"{what} from {url}: sha256 {got} differs from the expected {want} ({source}). Nothing was written to "
        f"{asset.path}. The download is corrupt, or the server holds another file; fetch again, or use another "
        f"mirror (--base-url / ${BASE_URL_ENV})"
    )


def fetch_asset(
    asset: Asset,
    data_dir: Path,
    *,
    base_url: str | None = None,
    force: bool = False,
    timeout: float = 60.0,
    say: Callable[[str], None] = print,
) -> Path | None:
    """Put ``asset`` at ``data_dir/asset.path`` with its sha256 checked; return the path.

    From a mirror (``base_url``), ``<base_url>/<asset.path>`` is taken as is. From the public
    home, what it serves is checked, converted, checked again and compressed. Nothing lands
    unless its sha256 is the expected one; a file already there with the right sha256 is kept
    (``force`` fetches it again). Return None, saying why, for an asset with no public home when
    there is no mirror. Raise HashMismatch on a wrong hash, FetchError or OfflineError otherwise.
    """
    dest = data_dir / asset.path
    _writable(dest.parent)
    again = f"claimcheck-fetch {asset.path.split('/')[0]}"
    if dest.is_file() and not force:
        digest = sha256_file(dest)
        if digest == asset.sha256:
            say(f"{dest}: already there, sha256 matches")
            return dest
        raise HashMismatch(
            f"{dest}: sha256 {digest} differs from the expected {asset.sha256}. It is corrupt or another file; "
            f"delete it, or run {again} --force to replace it"
        )
    if base_url:
        url = f"{base_url.rstrip('/')}/{asset.path}"
        data = _fetch_bytes(url, timeout=timeout, say=say, copy_to=dest, again=again, asset=asset, mirror=True)
        got = _digest(data)
        if got != asset.sha256:
            raise _mismatch(asset.path, url, got, asset, asset.sha256, "SOURCES.md")
    elif asset.url is None:
        say(f"{asset.path}: skipped: {asset.note}. A mirror that has it serves it with --base-url / ${BASE_URL_ENV}")
        return None
    else:
        data = _fetch_bytes(asset.url, timeout=timeout, say=say, copy_to=dest, again=again, asset=asset, mirror=False)
        data = _from_public_home(asset, asset.url, data, say)
    _atomic(dest, lambda f: f.write(data))
    say(f"{dest}: sha256 {asset.sha256} verified")
    return dest


def _from_public_home(asset: Asset, url: str, data: bytes, say: Callable[[str], None]) -> bytes:
    """Return the file's bytes from what the public home served, checking every hash on the way."""
    if asset.convert is None:
        got = _digest(data)
        if got != asset.sha256:
            raise _mismatch(asset.path, url, got, asset, asset.sha256, "SOURCES.md")
        return data
    got = _digest(data)
    if asset.source_sha256 is not None and got != asset.source_sha256:
        raise _mismatch("the source file", url, got, asset, asset.source_sha256, "SOURCES.md")
    try:
        content = asset.convert(data)
    except ConversionError as e:
        raise FetchError(f"{url}: cannot convert it to {asset.path}: {e}; use a mirror (--base-url)") from None
    got = _digest(content)
    if asset.content_sha256 is not None and got != asset.content_sha256:
        raise _mismatch(f"{asset.path} (uncompressed)", url, got, asset, asset.content_sha256, "SOURCES.md")
    if not asset.path.endswith(".gz"):
        return content
    packed = gzip_n9(content)
    if _digest(packed) != asset.sha256:
        # The content is verified; only this zlib's deflate stream differs from GNU gzip's.
        say(
            f"note: {asset.path}: its uncompressed content matches sha256 {asset.content_sha256}, but this "
            f"Python's zlib compresses it differently from the reference file ({asset.sha256})"
        )
    return packed


def _writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FetchError(f"cannot create {folder}: {e.strerror}; pass --data-dir with a writable folder") from None
    if not os.access(folder, os.W_OK):
        raise FetchError(f"cannot write to {folder}; pass --data-dir with a writable folder")


def fetch_dataset(
    name: str,
    data_dir: Path,
    *,
    base_url: str | None = None,
    force: bool = False,
    timeout: float = 60.0,
    say: Callable[[str], None] = print,
) -> list[Path]:
    """Fetch every file of dataset ``name`` (``sst2`` or ``jena``) into ``data_dir``; return the paths written.

    Each file is verified and written on its own, so a failure leaves the files before it in
    place (they are verified) and nothing of the file that failed.
    """
    if name not in DATASETS:
        raise ConfigError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    paths = []
    for asset in DATASETS[name]:
        path = fetch_asset(asset, data_dir, base_url=base_url, force=force, timeout=timeout, say=say)
        if path is not None:
            paths.append(path)
    return paths


def default_data_dir() -> Path:
    """Return where claims look for data without options: $CLAIMCHECK_DATA_DIR, else the user cache.

    The user cache is ``$XDG_CACHE_HOME/claimcheck/data``, or ``~/.cache/claimcheck/data`` when
    XDG_CACHE_HOME is unset or empty. Unlike a pytest session, fetching creates the folder.
    """
    env = os.environ.get(DATA_ENV, "").strip()
    return Path(env).expanduser().resolve() if env else user_cache_dir("data")


DATASET_HELP = """\
datasets:
  sst2   GLUE's SST-2: sst2/train.tsv.gz, sst2/dev.tsv (C6); sst2/test.tsv from a mirror only
  jena   Jena Climate for C5: by default the 2024 roof-station record the known result was
         measured on (jena/jena_climate_2024-01-01_to_2024-05-15.csv.gz, converted from
         MPI-BGC's mpi_roof.csv); --record 2009-2016 fetches Keras' 2009-2016 compilation

Every file is checked against the sha256 the known results were measured with, and written
only when it matches. A mirror (--base-url or $CLAIMCHECK_DATA_URL) serves the files as they
land: <base url>/sst2/dev.tsv, <base url>/jena/jena_climate_2024-01-01_to_2024-05-15.csv.gz.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``claimcheck-fetch``; return 0 on success, 1 when fetching or verifying failed."""
    parser = argparse.ArgumentParser(
        prog="claimcheck-fetch",
        description="Fetch a dataset into the claimcheck data directory and verify its sha256.",
        epilog=DATASET_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", choices=sorted(DATASETS), help="the dataset to fetch (see below)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=(
            f"folder to fetch into (created if missing); default ${DATA_ENV}, else "
            "$XDG_CACHE_HOME/claimcheck/data (~/.cache/claimcheck/data when XDG_CACHE_HOME is unset)"
        ),
    )
    parser.add_argument(
        "--record",
        choices=["2024", "2009-2016"],
        default="2024",
        help="jena only: 2024 (default, the record C5's known result used) or 2009-2016 (Keras' 13 MB zip)",
    )
    parser.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help=f"a mirror holding the files in the data layout (default ${BASE_URL_ENV}, else the public homes)",
    )
    parser.add_argument("--force", action="store_true", help="download again even if a file is present")
    parser.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="network timeout in seconds (default 60)"
    )
    keras = parser.add_argument_group("--record 2009-2016 only")
    keras.add_argument(
        "--sha256", default=None, metavar="HEX", help="expected sha256 of Keras' zip; a mismatch is refused"
    )
    keras.add_argument("--url", default=JENA_URL, help="where to download Keras' zip from (a mirror, or file://)")
    args = parser.parse_args(argv)
    if args.dataset != "jena" and args.record != "2024":
        parser.error("--record applies to jena only")
    base_url = args.base_url or os.environ.get(BASE_URL_ENV, "").strip() or None
    try:
        data_dir = args.data_dir.expanduser().resolve() if args.data_dir else default_data_dir()
        if args.dataset == "jena" and args.record == "2009-2016":
            url = f"{base_url.rstrip('/')}/jena/{JENA_ZIP}" if base_url and args.url == JENA_URL else args.url
            fetch_keras_jena(data_dir, url=url, sha256=args.sha256, force=args.force, timeout=args.timeout)
        else:
            fetch_dataset(args.dataset, data_dir, base_url=base_url, force=args.force, timeout=args.timeout)
    except ClaimcheckError as e:
        print(f"claimcheck-fetch: {e}", file=sys.stderr)
        return 1
    print(f"use it: pytest claims --claim-data-dir {data_dir}  (or export {DATA_ENV}={data_dir})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
