"""``--claim-timeout`` holds against code that takes the interval timer or SIGALRM for itself.

The limit is kept by SIGALRM and, behind it, a watchdog thread that raises ``UnitTimeout`` in the
main thread at the next bytecode; a block that ends past its limit raises when it ends. A single C
call that runs long is not interrupted in-process (docs/usage.md says so).
"""

from __future__ import annotations

import signal
import time

import pytest

from claimcheck.pytest.deadline import UnitTimeout, deadline


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_model_that_resets_the_interval_timer_is_still_stopped_at_the_limit() -> None:
    start = time.monotonic()
    with pytest.raises(UnitTimeout, match=r"unit ran past --claim-timeout 0\.3 s"):
        with deadline(0.3, "unit"):
            signal.setitimer(signal.ITIMER_REAL, 0)  # the model takes the timer
            _spin(5)
    assert time.monotonic() - start < 2


def test_a_model_that_ignores_sigalrm_is_still_stopped_at_the_limit() -> None:
    start = time.monotonic()
    with pytest.raises(UnitTimeout, match="unit ran past"):
        with deadline(0.3, "unit"):
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            signal.setitimer(signal.ITIMER_REAL, 0)
            _spin(5)
    assert time.monotonic() - start < 2
    assert signal.getsignal(signal.SIGALRM) is not signal.SIG_IGN  # given back as it was before the block


def test_a_block_that_ends_past_its_limit_raises_when_it_ends() -> None:
    with pytest.raises(UnitTimeout, match="unit ran past"):
        with deadline(0.2, "unit"):
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(0.5)  # one C call past the limit: it finishes, then the limit is enforced


def test_a_limit_that_is_kept_leaves_no_watchdog_to_fire_later() -> None:
    with deadline(0.2, "unit"):
        pass
    _spin(0.5)  # a watchdog left behind would raise here
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
