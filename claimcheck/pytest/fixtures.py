"""The fixtures a claim test uses: its record, units, seeds; the session's settings, budget, store, executor, cache."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.budget import Budget
from claimcheck.pytest.core import RECORD_KEY, UNITS_KEY, core_of
from claimcheck.pytest.markers import claim_protocol_of, record_for, unit_seeds
from claimcheck.pytest.options import Settings
from claimcheck.pytest.plugin import start_core

if TYPE_CHECKING:
    from claimcheck.decide.schedule import ClaimUnits
    from claimcheck.pytest.executor import Executor
    from claimcheck.store.cache import Memo, ResultCache


@pytest.fixture(scope="session")
def claim_settings(request: pytest.FixtureRequest) -> Settings:
    """The validated claim options of this session."""
    return core_of(request.config).settings


@pytest.fixture(scope="session")
def claim_budget(claim_settings: Settings) -> Budget:
    """The named budget this session runs under."""
    return claim_settings.budget


@pytest.fixture(scope="session")
def claim_store(request: pytest.FixtureRequest) -> ResultCache:
    """The session's content-addressed result store (a suite's engine caches its results in it)."""
    start_core(request.config)
    return core_of(request.config).store


@pytest.fixture(scope="session")
def claim_executor(request: pytest.FixtureRequest) -> Executor:
    """Where computations the store lacks run: this process, or Ray tasks (``--claim-executor``)."""
    start_core(request.config)
    return core_of(request.config).executor


@pytest.fixture(scope="session")
def claim_cache(claim_store: ResultCache) -> Memo:
    """Memoise an expensive computation by its inputs and its code: ``claim_cache(fn, **inputs)``."""
    from claimcheck.store.cache import Memo

    return Memo(claim_store)


@pytest.fixture
def claim_seeds(request: pytest.FixtureRequest) -> list[int]:
    """The seeds of every unit of this claim (for a test that runs all of its units itself)."""
    return unit_seeds(core_of(request.config).settings, claim_protocol_of(request.node))


@pytest.fixture
def claim_record(request: pytest.FixtureRequest) -> ClaimRecorder:
    """Record the statistics this claim test checks; the claim's verdict is decided from them."""
    rec = request.node.stash[RECORD_KEY] = record_for(request.node)
    return rec


@pytest.fixture
def claim_units(request: pytest.FixtureRequest, claim_record: ClaimRecorder) -> ClaimUnits:
    """This claim's units in the batches its protocol schedules: ``for seeds in claim_units.batches(): ...``."""
    from claimcheck.decide.schedule import claim_looks, units_for
    from claimcheck.gate.reserve import gate_seeds, reserve_for

    start_core(request.config)
    s = core_of(request.config).settings
    seeds = unit_seeds(s, claim_record.protocol)
    proto = claim_record.protocol
    reserve = None
    if proto is not None and proto.declared:
        after = partial(gate_seeds, proto, s.seed, s.budget_index, s.pool)  # (first, upto) -> the gate's seeds
        baseline = core_of(request.config).baseline
        looks = claim_looks(claim_record, seeds, s.budget)
        margins, tol = dict(s.baseline_margins), s.tolerance.same
        reserve = reserve_for(claim_record, request.node.nodeid, looks, s.gate_cap, baseline, after, margins, tol)
    units = units_for(claim_record, seeds, s.budget, reserve)
    pm = request.config.pluginmanager
    progress = pm.get_plugin("claimcheck-progress") or pm.get_plugin("claimcheck-plan")  # controller, or xdist worker
    if progress is not None:  # the progress can say how far a long sequential test has got
        units.on_look = partial(progress.looked, request.node.nodeid, claim_record.claim_id)
    request.node.stash[UNITS_KEY] = units
    return units
