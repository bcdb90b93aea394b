"""Stop a claim test or a training run that runs past its wall-clock limit (``--claim-timeout``).

By ``SIGALRM`` in the main thread (never outliving the deadline around it), behind it a watchdog thread (code under
test may take the timer), and when the block ends past its limit (docs/usage.md, "What --claim-timeout can stop").
"""

from __future__ import annotations

import ctypes
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

_GRACE = 0.05  # seconds the watchdog leaves SIGALRM to act first


class UnitTimeout(Exception):
    """A claim test or a training run ran past ``--claim-timeout``."""


@contextmanager
def deadline(seconds: float, what: str, times: int = 1) -> Iterator[None]:
    """Raise UnitTimeout naming ``what`` if the block runs longer than ``seconds`` x ``times`` (0: no limit)."""
    if not seconds:
        yield
        return
    limit = seconds * times
    message = f"{what} ran past --claim-timeout {seconds:g} s" + (f" (x {times} runs)" if times > 1 else "")
    start = time.monotonic()
    if threading.current_thread() is not threading.main_thread():
        yield
        if time.monotonic() - start > limit:
            raise UnitTimeout(message)
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    outer_end = start + outer_left if outer_left > 0 else math.inf
    previous = signal.getsignal(signal.SIGALRM)

    def expire(signum: int, frame: FrameType | None) -> None:
        raise UnitTimeout(message)

    if outer_end <= start + limit:  # the deadline around this one comes first: it stays in charge
        yield
        return
    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    watchdog = _Watchdog(limit, message, expire)
    try:
        yield
    except BaseException:
        _settle(watchdog, previous, outer_end)
        raise
    late = _settle(watchdog, previous, outer_end)
    if late or time.monotonic() - start > limit:  # the timer was taken, or one long C call outlasted it
        raise UnitTimeout(message)


def _settle(watchdog: _Watchdog, previous: Any, outer_end: float) -> bool:
    """Stop the watchdog, give the timer and SIGALRM back (redone if a timeout cuts in); return whether one did."""
    late = False
    while True:
        try:
            watchdog.stop()
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer_end < math.inf:
                signal.setitimer(signal.ITIMER_REAL, max(outer_end - time.monotonic(), 1e-3))
            return late
        except UnitTimeout:
            late = True


class _Watchdog:
    """Raise UnitTimeout in the main thread ``seconds`` from now, unless stopped first."""

    def __init__(self, seconds: float, message: str, expire: Callable[[int, FrameType | None], None]) -> None:
        self.lock = threading.Lock()
        self.active = True
        self.fired = False
        self.target = threading.main_thread().ident or 0
        self.expire = expire
        self.error = type("UnitTimeout", (UnitTimeout,), {"__init__": lambda err: UnitTimeout.__init__(err, message)})
        self.timer = threading.Timer(seconds + _GRACE, self._fire)
        self.timer.daemon = True
        self.timer.start()

    def _fire(self) -> None:
        with self.lock:
            if not self.active:
                return
            _async_raise(self.target, self.error)
            self.fired = True
            if signal.getsignal(signal.SIGALRM) is self.expire:  # ours again: wake a sleeping call too
                signal.pthread_kill(self.target, signal.SIGALRM)

    def stop(self) -> None:
        """Stop the watchdog; take back an exception it set that has not been raised yet."""
        with self.lock:
            if self.active:
                self.active = False
                self.timer.cancel()
                if self.fired:
                    _async_raise(self.target, None)


def _async_raise(thread_id: int, error: type[BaseException] | None) -> None:
    """Make ``error`` raise in thread ``thread_id`` at its next bytecode (None: take a pending one back)."""
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async(ctypes.c_ulong(thread_id), ctypes.py_object(error) if error is not None else ctypes.c_void_p(0))
