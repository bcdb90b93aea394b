"""Faults at the edges of files (issue 51): locks held by stopped sessions or replaced by links, data files
that inflate without bound or carry another record's name, offline fetch instructions, the undecided
estimate's wording, and baseline numbers too large to convert or to subtract."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from toys import K

import claimcheck.filelock as filelock
from claimcheck.filelock import LockTimeout
from claimcheck.store import CacheLockWarning, CacheWriteWarning, ResultCache


def _compute(calls: list[int]):  # type: ignore[no-untyped-def]
    def compute() -> tuple[dict[str, np.ndarray], dict[str, int]]:
        calls.append(1)
        return {"v": np.zeros(2)}, {"n": 1}

    return compute


def _hold_in_child(lock: Path) -> subprocess.Popen[str]:
    """Start a process that takes ``lock`` as the store does, says so, and sleeps (a stopped session)."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from claimcheck.filelock import hold
        with hold(Path({str(lock)!r})):
            print("held", flush=True)
            time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_a_lock_held_by_a_stopped_session_times_out_naming_the_file_and_the_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResultCache(tmp_path, lock_timeout=1.0)
    notes: list[str] = []
    cache.note = notes.append
    monkeypatch.setattr(filelock, "NOTE_AFTER_S", 0.2)
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    child = _hold_in_child(lock)
    try:
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as seen, pytest.raises(LockTimeout) as raised:
            warnings.simplefilter("always")
            cache.memo(key, _compute([]))
        assert time.monotonic() - started < 10
    finally:
        child.kill()
        child.wait()
    message = str(raised.value)
    assert str(lock) in message and f"pid {child.pid}" in message and "kill -CONT" in message
    assert "delete the lock file" in message
    assert len(notes) == 1 and str(lock) in notes[0] and f"pid {child.pid}" in notes[0]
    assert [str(w.message) for w in seen if w.category is CacheLockWarning] == [notes[0].removeprefix("claimcheck: ")]
    calls: list[int] = []  # the holder gone, the lock is free again
    assert ResultCache(tmp_path, lock_timeout=1.0).memo(key, _compute(calls))[1] == {"n": 1} and calls == [1]


def test_an_entry_lock_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "victim"
    target.parent.mkdir()
    lock.symlink_to(target)
    calls: list[int] = []
    with pytest.warns(CacheWriteWarning, match="is a symbolic link; it is not followed"):
        _, meta = cache.memo(key, _compute(calls))
    assert meta == {"n": 1} and calls == [1] and cache.counts.unsaved == 1
    assert not target.exists() and not os.path.lexists(cache.path(key.digest))


def test_an_entry_lock_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    key = K({"k": 1})
    lock = cache.path(key.digest).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    os.mkfifo(lock)
    with pytest.warns(CacheWriteWarning, match="is not a regular file"):
        assert cache.memo(key, _compute([]))[1] == {"n": 1}
