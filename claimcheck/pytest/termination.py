"""End a session stopped by SIGTERM (a cancelled CI job) the way Ctrl-C ends it: with an incomplete report.

Python's default for SIGTERM kills the process at once, so pytest never reaches the end of the
session and no report is written. ``sigterm_as_interrupt`` makes SIGTERM raise KeyboardInterrupt in
the main thread, which pytest handles as Ctrl-C (exit status 2, ``pytest_sessionfinish`` runs);
``restore`` gives the previous handler back at the end of the session.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

Handler = Any  # what signal.getsignal returns: a callable, SIG_DFL, SIG_IGN or None


class Terminated(KeyboardInterrupt):
    """The session received SIGTERM; pytest ends it as it ends a Ctrl-C."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Terminated("SIGTERM")


def sigterm_as_interrupt() -> tuple[bool, Handler]:
    """Make SIGTERM raise ``Terminated`` (a KeyboardInterrupt); return (whether it was installed, the old handler).

    Nothing is installed outside the main thread, or where SIGTERM is ignored (``nohup``-style
    launchers that mean it to be ignored keep it so).
    """
    if threading.current_thread() is not threading.main_thread():
        return False, None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return False, previous
    signal.signal(signal.SIGTERM, _interrupt)
    return True, previous


def restore(installed: bool, previous: Handler) -> None:
    """Give SIGTERM back the handler ``sigterm_as_interrupt`` replaced, if it replaced one."""
    if installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
