"""Enforce ``--claim-timeout`` from outside a pytest-xdist worker: kill the worker when one test outlives it.

A test still running ``grace(limit)`` past its limit gets a note in the controller's folder, then its worker SIGKILL;
the controller turns the crashed test into an ERROR quoting the note (docs/usage.md).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REAPER_DIR_INPUT = "claimcheck_reaper_dir"  # workerinput key: the folder the reaper's notes go to

# The reaper itself: reads {"at": monotonic deadline, "note": path, "text": message} or {} (disarm) lines
# on stdin; at the deadline writes the note and kills the worker; exits when the worker closes stdin.
_PROGRAM = r"""
import json, os, select, signal, sys, time
pid, armed, pending = int(sys.argv[1]), None, b""
while True:
    wait = None if armed is None else max(0.0, armed["at"] - time.monotonic())
    ready, _, _ = select.select([0], [], [], wait)
    if ready:
        chunk = os.read(0, 65536)  # unbuffered: select sees every line the worker wrote
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            armed = json.loads(line) or None
    elif armed is not None:
        tmp = armed["note"] + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(armed["text"])
        os.replace(tmp, armed["note"])
        os.kill(pid, signal.SIGKILL)
        break
"""


def grace(limit: float) -> float:
    """Seconds past the limit the reaper waits, so the in-process limit acts first wherever it can."""
    return max(2.0, 0.1 * limit)


def note_path(folder: Path, nodeid: str) -> Path:
    """Return where the reaper leaves its note for the test ``nodeid``."""
    return folder / f"killed-{hashlib.sha256(nodeid.encode()).hexdigest()[:16]}.txt"


def killed_note(folder: Path | None, nodeid: str) -> str | None:
    """Return the reaper's note for ``nodeid`` if the reaper killed its worker, else None."""
    if folder is None:
        return None
    path = note_path(folder, nodeid)
    try:
        return path.read_text(encoding="utf-8")[:2000] if path.is_file() else None
    except OSError:
        return None


class Reaper:
    """The outside limit of one pytest-xdist worker (see the module)."""

    def __init__(self, folder: Path, pid: int) -> None:
        self.folder = folder
        self.pid = pid
        self.process: subprocess.Popen[str] | None = None

    def _send(self, message: dict[str, object]) -> None:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _PROGRAM, str(self.pid)], stdin=subprocess.PIPE, text=True
            )
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    @contextmanager
    def watch(self, limit: float, nodeid: str) -> Iterator[None]:
        """Kill this worker if the block still runs ``grace(limit)`` after ``limit`` seconds (0: no limit)."""
        if not limit:
            yield
            return
        wait = limit + grace(limit)
        text = (
            f"{nodeid} ran past --claim-timeout {limit:g} s: its worker was killed from outside at "
            f"{wait:g} s, since the limit inside it could not stop it (one long C call holds it)"
        )
        self._send({"at": time.monotonic() + wait, "note": str(note_path(self.folder, nodeid)), "text": text})
        try:
            yield
        finally:
            self._send({})

    def close(self) -> None:
        """Stop the reaper (it also stops by itself when this process ends)."""
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.close()
            self.process.wait(timeout=5)
            self.process = None
