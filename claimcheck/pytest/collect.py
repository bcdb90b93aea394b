"""Collect a suite's declared claims with pytest, running nothing: each claim's protocol and code fingerprint."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol
from claimcheck.provenance.fingerprint import CodeFingerprint


@dataclass(frozen=True)
class ClaimCode:
    """A claim as a pytest session collects it: its protocol, its code fingerprint and its engine."""

    protocol: ClaimProtocol
    code: CodeFingerprint
    engine: str
    module: str


class _Collector:
    """A pytest plugin that reads, at the end of collection, every declared claim and the ledger the session uses."""

    def __init__(self) -> None:
        self.claims: dict[str, ClaimCode] = {}
        self.ledger: Path | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from claimcheck.pytest.core import core_of
        from claimcheck.pytest.markers import claim_protocol_of

        core = core_of(session.config)
        engine, self.ledger = core.engine, core.settings.ledger
        for item in session.items:
            proto = claim_protocol_of(item)
            module = getattr(item, "module", None)
            if proto is None or not proto.declared or module is None or proto.claim_id in self.claims:
                continue
            fp = core.code_of(item)  # the session's own, computed once at collection
            assert fp is not None  # the item has a module
            self.claims[proto.claim_id] = ClaimCode(proto, fp, engine.identity, module.__file__)


def collect(paths: Sequence[str], pytest_args: Sequence[str]) -> _Collector:
    """Collect the claims under ``paths`` in this process (no test runs) and return what was found."""
    collector = _Collector()
    out = io.StringIO()
    before = set(sys.modules)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            args = ["--collect-only", "-qq", "-p", "no:cacheprovider", *paths, *pytest_args]
            status = pytest.main(args, [collector])
    finally:  # forget the claim modules and conftests it imported (not libraries: torch cannot be imported twice)
        folders = [Path(p).resolve() if Path(p).is_dir() else Path(p).resolve().parent for p in paths]
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None)
            if file and any(Path(file).resolve().is_relative_to(f) for f in folders):
                del sys.modules[name]
    if status not in (0, pytest.ExitCode.NO_TESTS_COLLECTED) or not collector.claims:
        found = "no claim with a declared protocol" if status == 0 else f"pytest exited {int(status)}"
        raise ConfigError(f"collecting {' '.join(paths)}: {found}\n{out.getvalue().strip()}")
    return collector
