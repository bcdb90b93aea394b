"""The claim core of one pytest process under one StashKey (``CORE``); a test's own state stays on its item's stash."""

from __future__ import annotations

import gc
import shutil
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.provenance.fingerprint import CodeFingerprint, Engine, code_fingerprint
from claimcheck.pytest.markers import claim_protocol_of
from claimcheck.pytest.options import Settings

if TYPE_CHECKING:  # the claim core: imported by start_core, never by a session without claims
    from claimcheck.decide.schedule import ClaimUnits
    from claimcheck.pytest.executor import Executor
    from claimcheck.pytest.reaper import Reaper
    from claimcheck.pytest.session import Controller, WorkerClaims
    from claimcheck.report.rundata import RunData
    from claimcheck.store.cache import Counts, ResultCache


_gc_paused = False  # whether pause_gc turned this process's cyclic collector off (resume_gc turns it back on)


def pause_gc() -> None:
    """Turn the cyclic garbage collector off while the suite is imported, if it is on (``resume_gc`` undoes it).

    Each full collection would walk the imports' lasting objects again (0.8 s of a warm run); ``start`` freezes them.
    """
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Turn the collector back on if ``pause_gc`` turned it off; otherwise do nothing."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.enable()


class Terminated(KeyboardInterrupt):
    """The session received SIGTERM (a cancelled CI job): pytest ends it as it ends a Ctrl-C, with a report."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Terminated("SIGTERM")


@dataclass
class Core:
    """What the claim core holds for the session: its settings, then (``started``) what ``start`` set up."""

    settings: Settings
    started: bool = False
    controller: Controller | WorkerClaims | None = None  # the controller's, or a pytest-xdist worker's plan
    _store: ResultCache | None = None
    _engine: Engine | None = None
    _executor: Executor | None = None
    baseline: RunData | None = None  # the --claim-baseline run, in every process (its reserve)
    reaper: Reaper | None = None  # a pytest-xdist worker's outside --claim-timeout
    reaper_dir: Path | None = None  # the controller's folder for the reapers' notes
    sigterm: tuple[Any] | None = None  # (SIGTERM's old handler,) while the core makes SIGTERM an interrupt
    code: dict[tuple[str, str], CodeFingerprint] = field(default_factory=dict)  # claim code per module, computed once
    collected: dict[str, str] = field(default_factory=dict)  # node id -> claim id of every claim test pytest collected
    deselected: dict[str, str] = field(default_factory=dict)  # ... of those the run leaves out (not among its items)

    @property
    def store(self) -> ResultCache:
        """Return the session's result store (the core has started)."""
        assert self._store is not None, "the claim core has not started"
        return self._store

    @property
    def engine(self) -> Engine:
        """Return what the suite declared about its code (the core has started)."""
        assert self._engine is not None, "the claim core has not started"
        return self._engine

    @property
    def executor(self) -> Executor:
        """Return where computations the store lacks run (the core has started)."""
        assert self._executor is not None, "the claim core has not started"
        return self._executor

    def set_up(self, store: ResultCache, engine: Engine, executor: Executor) -> None:
        """Hold what every process's core needs (``start``)."""
        self._store, self._engine, self._executor = store, engine, executor

    def claim_code(self, item: pytest.Item) -> dict[str, str] | None:
        """Return the fingerprint of the code that decides the item's claim and the engine's identity (None: no module).

        Computed at collection (``fingerprint_claims``): an edit made while the tests run changes nothing.
        """
        fp = self.code_of(item)
        if fp is None:
            return None
        return {"fingerprint": fp.digest, "engine": self.engine.identity, "definitions": str(len(fp.covers))}

    def code_of(self, item: pytest.Item) -> CodeFingerprint | None:
        """Return the code fingerprint of the item's module, computed once per module and session."""
        module = getattr(item, "module", None)
        path = getattr(module, "__file__", None)
        if module is None or path is None:
            return None
        key = (path, module.__name__)
        if key not in self.code:
            self.code[key] = code_fingerprint(Path(path), module.__name__, vars(module), self.engine)
        return self.code[key]

    def fingerprint_claims(self, items: list[pytest.Item]) -> None:
        """Fingerprint the code of every collected claim test's module whose protocol is declared."""
        for item in items:
            proto = claim_protocol_of(item)
            if proto is not None and proto.declared:
                self.claim_code(item)

    def catch_sigterm(self) -> None:
        """Make SIGTERM raise ``Terminated`` in the main thread, unless it is ignored (``close`` gives it back)."""
        previous = signal.getsignal(signal.SIGTERM)
        if threading.current_thread() is threading.main_thread() and previous is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, _interrupt)
            self.sigterm = (previous,)

    def close(self, plugins: pytest.PytestPluginManager) -> None:
        """Tear down what the core started, each once: SIGTERM's handler, the executor, the reaper and its folder."""
        if self.sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.sigterm[0] if self.sigterm[0] is not None else signal.SIG_DFL)
        self.sigterm = None
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        if self.reaper is not None:
            self.reaper.close()
            self.reaper = None
        if self.reaper_dir is not None:  # made by this session with mkdtemp: only the reapers' notes are in it
            shutil.rmtree(self.reaper_dir, ignore_errors=True)
            self.reaper_dir = None
        if self.controller is not None:
            plugins.unregister(self.controller)
            self.controller = None


CORE = pytest.StashKey[Core]()
RECORD_KEY = pytest.StashKey[ClaimRecorder]()  # a test's own state, on its item: its recorder,
UNITS_KEY: pytest.StashKey[ClaimUnits] = pytest.StashKey()  # its units,
COUNTS_KEY: pytest.StashKey[Counts] = pytest.StashKey()  # what the store counted before its call


def core_of(config: pytest.Config) -> Core:
    """Return the session's claim core (set at configure)."""
    return config.stash[CORE]
