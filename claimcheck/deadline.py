"""Stop a claim test or a training run that runs past its wall-clock limit (``--claim-timeout``).

``deadline(seconds, what)`` raises ``UnitTimeout`` naming ``what`` and the limit inside the block
when it runs past ``seconds``: by ``SIGALRM`` in the main thread (the way pytest-timeout's signal
method works; a nested deadline never outlives the one around it), and, where signals cannot be
used (another thread), when the block ends. 0 means no limit.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class UnitTimeout(Exception):
    """A claim test or a training run ran past ``--claim-timeout``."""


def _message(what: str, seconds: float, scale: str) -> str:
    return f"{what} ran past --claim-timeout {seconds:g} s{scale}"


@contextmanager
def deadline(seconds: float, what: str, times: int = 1) -> Iterator[None]:
    """Raise UnitTimeout naming ``what`` if the block runs longer than ``seconds`` x ``times`` (0: no limit).

    ``times`` scales the limit for a block that does several units' work (a batch of training runs).
    """
    if not seconds:
        yield
        return
    limit = seconds * times
    message = _message(what, seconds, f" (x {times} runs)" if times > 1 else "")
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
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_end < math.inf:
            signal.setitimer(signal.ITIMER_REAL, max(outer_end - time.monotonic(), 1e-3))
