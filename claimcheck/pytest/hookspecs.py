"""Hooks a claim suite implements (in its conftest.py or plugin) to describe itself to the core; each is optional."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from claimcheck.decide.record import ClaimRecorder
    from claimcheck.protocol.budget import Budget
    from claimcheck.provenance.fingerprint import Engine


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_budgets(config: pytest.Config) -> list[Budget] | None:
    """Return the suite's named budgets (run sizes); without one, the core's ``ci``, ``standard`` and ``paper``."""


@pytest.hookspec
def pytest_claimcheck_environment(config: pytest.Config) -> dict[str, str] | None:
    """Return lines for the report's environment table (e.g. the model under test, its dtype)."""


@pytest.hookspec
def pytest_claimcheck_capabilities(config: pytest.Config) -> list[str] | None:
    """Return every capability name a ``claim_needs`` marker of this suite may use (checked at collection)."""


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_own_subject(config: pytest.Config) -> bool | None:
    """Return False when the session checks a user's subject (say ``--claim-model``): the ini's pins do not apply."""


@pytest.hookspec
def pytest_claimcheck_rerun_options(config: pytest.Config) -> list[str] | None:
    """Return options that a rerun command must repeat beyond the core's (seed, budget, device, data)."""


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_data_files(config: pytest.Config, data_dir: Path) -> list[dict[str, str]] | None:
    """Return the data files under ``data_dir`` the report lists: dicts with file, size, sha256 and status."""


@pytest.hookspec
def pytest_claimcheck_record_done(item: pytest.Item, record: ClaimRecorder) -> None:
    """Finish a claim test's record (its regime, its notes) after the test ran, before it travels to the controller."""


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_remote(config: pytest.Config) -> tuple[Callable[[], Mapping[str, str]], list[Path]] | None:
    """Return what a remote executor needs: the identity a worker's code must match, and the packages to ship."""


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_refusal(config: pytest.Config) -> str | None:
    """Return why this session cannot run the suite's claims at all (a report says so; exit 4), or None."""


@pytest.hookspec(firstresult=True)
def pytest_claimcheck_engine(config: pytest.Config) -> Engine | None:
    """Return what the suite's code is (``provenance.fingerprint.Engine``): its packages, its engine, its identity.

    Without one, a claim's fingerprint follows only the core and the claim's folder (docs/protocols.md).
    """
