"""Read a cache file only if it can be vouched for: a regular file of bounded size, sealed with the cache's key.

The folder's secret key (``KEY_FILE``, mode 0600, made on first use) seals every entry: a header line, the
HMAC-SHA256 of header and payload, then the payload (docs/usage.md, "Who the cache trusts"). Reading never
follows a symbolic link, never opens a FIFO or a device, and never takes in more than ``MAX_BYTES``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
import tempfile
import warnings
from contextlib import suppress
from pathlib import Path

KEY_FILE = ".claimcheck-key"  # the cache's secret: whoever can read it can write entries the cache trusts
MAX_BYTES = 256 * 2**20  # 256 MiB: the largest cache file read; a result entry is a few KiB to a few MiB
_MAC_HEX = 64


class NotReadable(Exception):
    """A cache file that is not read: not a regular file, a symbolic link, or larger than the cap."""


class KeyReplacedWarning(UserWarning):
    """A cache folder's key was gone while entries sealed with it were there: a new key is made, they are not read."""


def read_regular(path: Path, cap: int = MAX_BYTES) -> bytes | None:
    """Return the bytes of the regular file ``path``, or None when it does not exist.

    Raise NotReadable naming what it is: a symbolic link, a FIFO, a device, a folder, or larger than ``cap``.
    """
    return None if (got := _read_with_stat(path, cap)) is None else got[0]


def _read_with_stat(path: Path, cap: int) -> tuple[bytes, os.stat_result] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        why = "is a symbolic link, not a cache file" if path.is_symlink() else f"cannot be opened ({e.strerror or e})"
        raise NotReadable(f"{path} {why}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise NotReadable(f"{path} is not a regular file (mode {stat.filemode(st.st_mode)})")
        if st.st_size > cap:
            raise NotReadable(f"{path} holds {st.st_size} bytes, more than the {cap // 2**20} MiB a cache file may")
        # read(cap + 1) would allocate cap + 1 bytes first (256 MiB a call: 0.2 s over a warm run's 2,560
        # entries); the size fstat gave, and the rest only when the file grew, reads the same bytes
        data = f.read(st.st_size + 1)
        if len(data) > st.st_size:
            data += f.read(cap + 1 - len(data))
    if len(data) > cap:
        raise NotReadable(f"{path} grew past the {cap // 2**20} MiB a cache file may hold while it was read")
    return data, st


def _uid() -> int:
    return os.geteuid()


def _check_key_file(path: Path, st: os.stat_result) -> None:
    """Raise OSError naming ``path`` and the fix unless the key is the user's own, mode 0600."""
    fixes = "use a cache folder of your own (--claim-cache-dir), or run without the cache (--claim-cache off)"
    if st.st_uid != _uid():
        raise OSError(
            f"the cache key {path} is owned by another user (uid {st.st_uid}, this process runs as {_uid()}): "
            f"whoever owns it could have sealed the entries it vouches for; it is not used: {fixes}"
        )
    if st.st_mode & 0o077:
        raise OSError(
            f"the cache key {path} has mode {stat.filemode(st.st_mode)}: others may read or write it, so entries it "
            f"vouches for could be forged; it is not used: make it private (chmod 600 {path}), or {fixes}"
        )


def _sealed_entries(folder: Path) -> int:
    names = re.compile(r"[0-9a-f]{64}\.(npz|png|json)")
    return sum(1 for f in [*folder.glob("*"), *folder.glob("*/*")] if names.fullmatch(f.name))


def cache_secret(folder: Path) -> bytes:
    """Return the secret key of the cache ``folder``, making it (mode 0600) on first use; OSError when it cannot be had.

    It is written whole under a temporary name, then linked into place (a process that loses the race reads
    the winner's). A key made where entries sealed with an earlier one lie is warned of (``KeyReplacedWarning``).
    """
    path = folder / KEY_FILE
    for attempt in range(3):
        try:
            got = _read_with_stat(path, cap=4 * _MAC_HEX)
        except NotReadable as e:
            raise OSError(f"the cache key {e}") from None
        if got is not None:
            _check_key_file(path, got[1])
            text = got[0].decode("ascii", "replace").strip()
            if len(text) == _MAC_HEX and all(c in "0123456789abcdef" for c in text):
                return bytes.fromhex(text)
            raise OSError(f"the cache key {path} is not 64 hex digits; remove it to make a new one")
        folder.mkdir(parents=True, exist_ok=True)
        if sealed := _sealed_entries(folder) if attempt == 0 else 0:
            warnings.warn(
                KeyReplacedWarning(
                    f"the cache key {path} is gone while {sealed} entries sealed with it are in {folder}: a new key "
                    "is made, and every entry sealed with another key is not read (each is recomputed); if you did "
                    "not remove the key, someone else did: use a cache folder of your own (--claim-cache-dir)"
                ),
                stacklevel=2,
            )
        fd, tmp = tempfile.mkstemp(prefix=f"{KEY_FILE}.", suffix=".tmp", dir=folder)  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(_MAC_HEX // 2) + "\n")
            with suppress(FileExistsError):  # another process made it first: read that one
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    raise OSError(f"the cache key {path} could not be made")


def seal(header: bytes, payload: bytes, secret: bytes) -> bytes:
    """Return ``header`` (one line), the HMAC of header and payload under ``secret``, a newline, then ``payload``."""
    assert header.endswith(b"\n") and header.count(b"\n") == 1
    mac = hmac.new(secret, header + payload, hashlib.sha256).hexdigest().encode()
    return header + mac + b"\n" + payload


def unseal(header: bytes, data: bytes, secret: bytes) -> tuple[bytes, bool]:
    """Return (the payload of sealed ``data``, whether its seal checks); unsealed data is returned whole (False)."""
    head = len(header) + _MAC_HEX + 1
    if not data.startswith(header) or data[head - 1 : head] != b"\n":
        return data, False
    payload = data[head:]
    mac = hmac.new(secret, header + payload, hashlib.sha256).hexdigest().encode()
    return payload, hmac.compare_digest(mac, data[len(header) : head - 1])


def remove_sealed(folder: Path, suffix: str, header: bytes) -> int:
    """Delete each regular file of ``folder`` named ``<64 hex digits><suffix>`` starting with ``header``; count them.

    A symbolic link (the folder itself included) is left as it is.
    """
    n = 0
    if not folder.is_dir() or folder.is_symlink():
        return 0
    for path in sorted(folder.glob(f"*{suffix}")):
        if re.fullmatch(r"[0-9a-f]{64}" + re.escape(suffix), path.name) and not path.is_symlink() and path.is_file():
            try:
                with open(path, "rb") as f:
                    ours = f.read(len(header)) == header
            except OSError:
                continue
            if ours:
                path.unlink(missing_ok=True)
                n += 1
    return n
