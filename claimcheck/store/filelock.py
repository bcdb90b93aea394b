"""An exclusive ``flock`` on a lock file that is never followed through a link and never waited on forever.

``hold`` polls the lock without blocking, says once after ``NOTE_AFTER_S`` seconds whom it waits for (the
holder writes its pid and host into the lock file), and after ``timeout`` seconds raises ``LockTimeout``
naming the lock file, the holder and what to do (a stopped session would otherwise block every other one).
"""

from __future__ import annotations

import errno
import fcntl
import os
import platform
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from claimcheck.errors import ClaimcheckError

TIMEOUT_S = 600.0  # the longest a lock is waited for (another session computing the entry, or a stopped one)
NOTE_AFTER_S = 5.0  # a wait longer than this is reported once, naming the holder
_HOLDER_BYTES = 256  # the most of a lock file read back for its holder


class LockTimeout(ClaimcheckError):
    """A lock was not had within its timeout: another process holds it (stopped, or still working)."""


class NotALockFile(ClaimcheckError, OSError):
    """The lock file is a symbolic link or not a regular file: it is not followed or used."""


def to_stderr(line: str) -> None:
    """Write ``line`` to the process's own standard error, past pytest's capture (a wait is news now)."""
    stream = sys.__stderr__
    if stream is not None:
        stream.write(line + "\n")
        stream.flush()


def holder(fd: int) -> str:
    try:
        text = os.pread(fd, _HOLDER_BYTES, 0).decode("utf-8", "replace").split()
    except OSError:
        text = []
    if len(text) >= 2 and text[0].isdigit():
        return f"pid {text[0]} on host {text[1][:100]}"
    return "an unknown process (it did not write its pid)"


def open_lock(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotALockFile(
                e.errno, f"the lock file {path} is a symbolic link; it is not followed (remove it)", str(path)
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotALockFile(errno.EINVAL, f"the lock file {path} is not a regular file; it is not used (remove it)")
    os.set_blocking(fd, True)
    return fd


@contextmanager
def hold(
    path: Path,
    timeout: float | None = None,
    note: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[None]:
    """Hold an exclusive lock on file ``path`` (created if absent, never a link) for the ``with`` block.

    Wait at most ``timeout`` seconds (``TIMEOUT_S`` when None), telling ``note`` once past ``NOTE_AFTER_S``;
    raise ``LockTimeout`` naming the holder, ``NotALockFile`` for a link or a non-regular file at ``path``.
    """
    limit = TIMEOUT_S if timeout is None else timeout
    fd = open_lock(path)
    try:
        started, pause, noted = clock(), 0.005, False
        while True:
            with suppress(BlockingIOError):  # held by another: wait and try again
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            waited = clock() - started
            if waited >= limit:
                raise LockTimeout(
                    f"waited {waited:.0f} s for the lock {path}, held by {holder(fd)}: if that process is stopped "
                    "(Ctrl-Z, SIGSTOP), resume it (fg, kill -CONT) or end it; if it is still working, wait for it; "
                    "if it no longer exists, delete the lock file"
                )
            if not noted and waited >= NOTE_AFTER_S and note is not None:
                noted = True
                note(
                    f"claimcheck: waiting for the lock {path}, held by {holder(fd)} (another worker or session "
                    f"computing the same result, or a stopped one); this one waits up to {limit:.0f} s"
                )
            time.sleep(min(pause, max(limit - waited, 0.0)))
            pause = min(pause * 2, 0.5)
        with suppress(OSError):  # the holder's name is a courtesy to those waiting; the lock is held all the same
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {platform.node() or 'unknown'}\n".encode(), 0)
        try:
            yield
        finally:
            with suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
