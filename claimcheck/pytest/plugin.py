"""The pytest plugin: claim options, the ``claim`` marker, fixtures, and the hooks that carry results.

Hooks and fixtures only; the work happens in the library modules (options in ``settings``, the
end of the session in ``controller``). Measurements travel on the test reports
(``user_properties``), so the controller writes the report under pytest-xdist too.

Loading this module costs a session that collects no claim almost nothing: it imports the
options and the marker readers, never torch, numpy or the controller. The claim core (store,
executor, ledger, controller) starts in ``start_core`` when a claim is collected, a claim fixture
is used, or an option needs it at once (``core_needed_at_configure``): a baseline to check, a cache
to clear, or a pytest-xdist controller, which collects nothing itself and must hand its workers the
Ray cluster and the reapers' folder before they start.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Generator
from contextlib import nullcontext
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.decide.record import PROPERTY_KEY, ClaimRecorder
from claimcheck.errors import ConfigError
from claimcheck.protocol.budget import Budget
from claimcheck.pytest.markers import (
    MARKER_HELP,
    NEEDS_HELP,
    check_needs,
    claim_code,
    claim_meta,
    claim_protocol_of,
    fingerprint_claims,
    record_for,
    unit_seeds,
)
from claimcheck.pytest.options import (
    Settings,
    add_options,
    baseline_fail_value_as_test_path,
    report_value_as_test_path,
    shown_path,
    spread_device,
)
from claimcheck.pytest.reaper import REAPER_DIR_INPUT

if TYPE_CHECKING:  # the claim core: imported by start_core, never by a session without claims
    import claimcheck.pytest.session as ctl
    from claimcheck.decide.schedule import ClaimUnits
    from claimcheck.provenance.fingerprint import Engine
    from claimcheck.pytest.executor import Executor
    from claimcheck.pytest.reaper import Reaper
    from claimcheck.report.rundata import RunData
    from claimcheck.store.cache import Counts, Memo, ResultCache

SETTINGS_KEY = pytest.StashKey[Settings]()
CORE_KEY = pytest.StashKey[bool]()  # set once start_core has run in this process
CONTROLLER_KEY: pytest.StashKey[ctl.Controller | ctl.WorkerClaims] = pytest.StashKey()
RECORD_KEY = pytest.StashKey[ClaimRecorder]()
UNITS_KEY: pytest.StashKey[ClaimUnits] = pytest.StashKey()
STORE_KEY: pytest.StashKey[ResultCache] = pytest.StashKey()
COUNTS_KEY: pytest.StashKey[Counts] = (
    pytest.StashKey()
)  # what the store counted before the test's call: its own counts are the rest
ENGINE_KEY: pytest.StashKey[Engine] = pytest.StashKey()
EXECUTOR_KEY: pytest.StashKey[Executor] = pytest.StashKey()
SIGTERM_KEY = pytest.StashKey[tuple[bool, Any]]()  # whether SIGTERM was made an interrupt, and the old handler
BASELINE_KEY: pytest.StashKey[RunData | None] = (
    pytest.StashKey()
)  # the --claim-baseline run, in every process (its reserve)
GATE_KEY = "claimcheck-gate"  # the user_properties key of a claim test's units run for the gate only
RAY_ADDRESS_INPUT = "claimcheck_ray_address"  # the controller's cluster, handed to pytest-xdist workers
# a pytest-xdist worker's outside --claim-timeout (claimcheck.pytest.reaper)
REAPER_KEY: pytest.StashKey[Reaper] = pytest.StashKey()
REAPER_DIR_KEY = pytest.StashKey[Path]()  # the controller's folder for the reapers' notes


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from claimcheck.pytest import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    report = report_value_as_test_path(args, early_config.invocation_params.dir)  # before pytest reads the test paths
    if baseline_fail_value_as_test_path(args) or report:
        fresh = vars(parser.parse_known_args(args))
        keys = ("file_or_dir", "claim_report", "claim_baseline_fail")
        vars(early_config.known_args_namespace).update({k: fresh[k] for k in keys})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.addinivalue_line("markers", NEEDS_HELP)
    try:
        settings = Settings.from_config(config)
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[SETTINGS_KEY] = settings
    if core_needed_at_configure(config, settings):
        start_core(config)


def core_needed_at_configure(config: pytest.Config, settings: Settings) -> bool:
    """Return whether the claim core must start before collection: it cannot wait for a claim to be collected.

    A baseline is read and checked up front (a bad one is a usage error); ``--claim-cache=clear``
    clears even a session that runs nothing; and a pytest-xdist controller collects nothing itself
    but hands its workers the Ray cluster and the reapers' folder when they start.
    """
    if hasattr(config, "workerinput"):
        return False
    xdist = str(getattr(config.option, "dist", "no") or "no") != "no" and not config.option.collectonly
    return bool(settings.baseline) or settings.cache == "clear" or xdist


def start_core(config: pytest.Config) -> None:
    """Start the claim core in this process, once: the ledger, executor, store, controller and reporters.

    Raise pytest.UsageError naming the option or file when one of them cannot be set up.
    """
    if config.stash.get(CORE_KEY, False):
        return
    config.stash[CORE_KEY] = True
    import torch

    import claimcheck.pytest.session as ctl
    from claimcheck.gate.baseline import check_margins
    from claimcheck.provenance.fingerprint import NO_ENGINE
    from claimcheck.pytest.executor import executor_for
    from claimcheck.pytest.markers import plan_sender, progress_reporter
    from claimcheck.pytest.reaper import Reaper
    from claimcheck.pytest.termination import sigterm_as_interrupt
    from claimcheck.report.figures import clear_figure_cache
    from claimcheck.report.rundata import RunFileError, load
    from claimcheck.store.cache import ResultCache, default_cache_dir

    worker = getattr(config, "workerinput", {})
    settings = config.stash[SETTINGS_KEY]
    try:
        baseline = load(settings.baseline) if settings.baseline else None
        if baseline is not None:
            check_margins(dict(settings.baseline_margins), baseline)
        ledger = None if worker else ctl.verified_ledger(settings)
        if baseline is not None and settings.baseline_fail:  # the trusted run's verdicts are the expected ones
            source = f"the baseline {shown_path(settings.baseline or config.rootpath, config.rootpath)}"
            settings = replace(settings, **ctl.baseline_pins(baseline, source))
        settings = replace(
            settings, device=spread_device(settings.device, worker.get("workerid"), torch.cuda.device_count())
        )
        torch.set_num_threads(settings.threads or max(1, (os.cpu_count() or 1) // int(worker.get("workercount", 1))))
        config.stash[EXECUTOR_KEY] = executor_for(
            settings.executor,
            settings.ray_address,
            settings.ray_address_source,
            gpu=settings.device.startswith("cuda"),
            remote=config.hook.pytest_claimcheck_remote(config=config),
            controller_address=worker.get(RAY_ADDRESS_INPUT, ""),
        )
    except (ConfigError, RunFileError) as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[SETTINGS_KEY] = settings
    config.stash[BASELINE_KEY] = baseline
    config.stash[ENGINE_KEY] = config.hook.pytest_claimcheck_engine(config=config) or NO_ENGINE
    # What is alive now (torch, numpy, scipy, the core: about 240,000 objects) lives as long as the
    # process; frozen, no later collection walks it again (pytest's collection at exit took 0.4 s).
    # Collected first, so no garbage is frozen with it (a process that runs pytest in-process again).
    gc.collect()
    gc.freeze()
    if settings.device.startswith("cuda"):  # audit numerics: no TF32 behind float32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    store = ResultCache(
        None if settings.cache == "off" else settings.cache_dir or default_cache_dir(),
        verify=settings.cache_verify,
        verify_seed=settings.seed,
        note=partial(_say_uncaptured, config),
    )
    if settings.cache == "clear" and not worker and not config.option.collectonly:  # --co runs nothing, clears nothing
        store.clear()
        assert store.root is not None
        clear_figure_cache(store.root / ctl.FIGURE_CACHE)
    config.stash[STORE_KEY] = store
    if worker:  # tell the controller the claim of every test, a test whose worker crashes included
        config.stash[CONTROLLER_KEY] = ctl.WorkerClaims(claim_meta)
        config.pluginmanager.register(plan_sender(config, settings), "claimcheck-plan")
        if settings.timeout and worker.get(REAPER_DIR_INPUT):
            config.stash[REAPER_KEY] = Reaper(Path(worker[REAPER_DIR_INPUT]), os.getpid())
    else:
        run = ctl.start_run(config, settings, config.stash[EXECUTOR_KEY])
        places = ctl.places_of(config, settings)
        engine = config.stash[ENGINE_KEY]
        controller = ctl.Controller(run, settings, baseline, ledger, claim_meta, places, engine)
        if settings.timeout:  # where pytest-xdist workers' reapers leave a note before they kill one
            controller.reaper_dir = config.stash[REAPER_DIR_KEY] = Path(tempfile.mkdtemp(prefix="claimcheck-reaper-"))
        config.stash[CONTROLLER_KEY] = controller
        config.pluginmanager.register(progress_reporter(config, settings), "claimcheck-progress")
        config.stash[SIGTERM_KEY] = sigterm_as_interrupt()  # a cancelled CI job ends like Ctrl-C: a report
    config.pluginmanager.register(config.stash[CONTROLLER_KEY], "claimcheck-controller")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand a pytest-xdist worker the controller's Ray cluster (started once) and the reapers' folder."""
    executor = node.config.stash.get(EXECUTOR_KEY, None)
    if executor is not None and executor.address:
        node.workerinput[RAY_ADDRESS_INPUT] = executor.address
    folder = node.config.stash.get(REAPER_DIR_KEY, None)
    if folder is not None:  # the worker's reaper enforces --claim-timeout from outside it
        node.workerinput[REAPER_DIR_INPUT] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    handler = config.stash.get(SIGTERM_KEY, None)
    if handler is not None:
        del config.stash[SIGTERM_KEY]
        from claimcheck.pytest.termination import restore

        restore(*handler)
    executor = config.stash.get(EXECUTOR_KEY, None)
    if executor is not None:
        del config.stash[EXECUTOR_KEY]
        executor.close()
    reaper = config.stash.get(REAPER_KEY, None)
    if reaper is not None:
        del config.stash[REAPER_KEY]
        reaper.close()
    folder = config.stash.get(REAPER_DIR_KEY, None)
    if folder is not None:  # made by this session with mkdtemp: only the reapers' notes are in it
        del config.stash[REAPER_DIR_KEY]
        shutil.rmtree(folder, ignore_errors=True)
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        del config.stash[CONTROLLER_KEY]
        config.pluginmanager.unregister(controller)


def pytest_report_header(config: pytest.Config) -> str:
    s = config.stash[SETTINGS_KEY]
    return f"claimcheck: base seed {s.seed}, budget {s.budget.name}, device {s.device}, data {s.data_dir}"


@pytest.hookimpl(trylast=True)  # after -m and -k deselect: a claim that will not run starts nothing
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = {name for names in config.hook.pytest_claimcheck_capabilities(config=config) for name in names or ()}
    check_needs(items, known)
    if any(claim_meta(item) is not None for item in items):  # the first claim: the core is needed now
        start_core(config)
    if config.stash.get(CORE_KEY, False) and not config.option.collectonly:
        fingerprint_claims(items, config.stash[ENGINE_KEY])  # before any test runs: the code as imported


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "claim_seed" in metafunc.fixturenames:
        seeds = unit_seeds(metafunc.config.stash[SETTINGS_KEY], claim_protocol_of(metafunc.definition))
        metafunc.parametrize("claim_seed", seeds, ids=[f"seed{x}" for x in seeds])


def _say_uncaptured(config: pytest.Config, line: str) -> None:
    """Write ``line`` to standard error past pytest's capture (a wait for a lock is seen while it lasts)."""
    from claimcheck.pytest.progress import uncaptured

    if sys.__stderr__ is not None:
        with uncaptured(config):
            sys.__stderr__.write(line + "\n")
            sys.__stderr__.flush()


@pytest.fixture(scope="session")
def claim_settings(request: pytest.FixtureRequest) -> Settings:
    """The validated claim options of this session."""
    return request.config.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def claim_budget(claim_settings: Settings) -> Budget:
    """The named budget this session runs under."""
    return claim_settings.budget


@pytest.fixture(scope="session")
def claim_store(request: pytest.FixtureRequest) -> ResultCache:
    """The session's content-addressed result store (a suite's engine caches its results in it)."""
    start_core(request.config)
    return request.config.stash[STORE_KEY]


@pytest.fixture(scope="session")
def claim_executor(request: pytest.FixtureRequest) -> Executor:
    """Where computations the store lacks run: this process, or Ray tasks (``--claim-executor``)."""
    start_core(request.config)
    return request.config.stash[EXECUTOR_KEY]


@pytest.fixture(scope="session")
def claim_cache(claim_store: ResultCache) -> Memo:
    """Memoise an expensive computation by its inputs and its code: ``claim_cache(fn, **inputs)``."""
    from claimcheck.store.cache import Memo

    return Memo(claim_store)


@pytest.fixture
def claim_seeds(request: pytest.FixtureRequest) -> list[int]:
    """The seeds of every unit of this claim (for a test that runs all of its units itself)."""
    return unit_seeds(request.config.stash[SETTINGS_KEY], claim_protocol_of(request.node))


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
    s = request.config.stash[SETTINGS_KEY]
    seeds = unit_seeds(s, claim_record.protocol)
    proto = claim_record.protocol
    reserve = None
    if proto is not None and proto.declared:

        def after(first: int, upto: int) -> list[int]:
            assert proto is not None
            return gate_seeds(proto, s.seed, s.budget_index, s.pool, first, upto)

        baseline = request.config.stash[BASELINE_KEY]
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Count what the test computed and read through the store, under ``--claim-timeout``; let the suite finish."""
    if not item.config.stash.get(CORE_KEY, False):  # no claim in this session: nothing to count or limit
        return (yield)
    from claimcheck.pytest.deadline import deadline

    store = item.config.stash[STORE_KEY]
    item.stash[COUNTS_KEY] = replace(store.counts)
    limit = item.config.stash[SETTINGS_KEY].timeout if claim_meta(item) else 0
    reaper = item.config.stash.get(REAPER_KEY, None)
    try:
        with deadline(limit, item.nodeid), reaper.watch(limit, item.nodeid) if reaper else nullcontext():
            return (yield)
    finally:
        rec = item.stash.get(RECORD_KEY, None)
        if rec is not None:
            item.config.hook.pytest_claimcheck_record_done(item=item, record=rec)


def _counts(item: pytest.Item) -> dict[str, int]:
    before = item.stash.get(COUNTS_KEY, None)
    if before is None:
        return {}
    now = replace(item.config.stash[STORE_KEY].counts)
    now.add(before, sign=-1)
    return {k: v for k, v in asdict(now).items() if v}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    meta = claim_meta(item) if item.config.stash.get(CORE_KEY, False) else None
    if meta is None:
        return report
    import claimcheck.pytest.session as ctl
    from claimcheck.report.rundata import record_json

    outcome = ctl.outcome_of(report)
    if outcome is not None:
        rec = item.stash.get(RECORD_KEY, None)
        payload: dict[str, Any] = {
            "nodeid": item.nodeid,
            "claim_id": meta[0],
            "title": meta[1],
            "source": meta[2],
            "outcome": outcome,
            "message": ctl.message_of(report, call),
            "record": record_json(rec) if rec is not None and report.when == "call" else None,
        }
        proto = claim_protocol_of(item)
        if proto is not None:
            payload["protocol"] = proto.to_dict()
            payload["code"] = claim_code(item, item.config.stash[ENGINE_KEY]) if proto.declared else None
        if report.when == "call":
            payload["counts"] = _counts(item)
        report.user_properties.append((PROPERTY_KEY, json.dumps(payload)))
        units = item.stash.get(UNITS_KEY, None)
        if report.when == "call" and units is not None and units.reserve is not None:
            gate = {"nodeid": item.nodeid, "units": asdict(units.reserve.units)}
            report.user_properties.append((GATE_KEY, json.dumps(gate)))
    return report
