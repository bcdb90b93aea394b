"""The pytest plugin's hooks; a session that collects no claim never imports torch, numpy or the controller."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.core import CORE, COUNTS_KEY, RECORD_KEY, Core, core_of, pause_gc, resume_gc
from claimcheck.pytest.markers import (
    MARKER_HELP,
    NEEDS_HELP,
    check_needs,
    claim_items,
    claim_meta,
    claim_protocol_of,
    unit_seeds,
)
from claimcheck.pytest.options import Settings, add_options, bare_values_as_test_paths
from claimcheck.pytest.reaper import REAPER_DIR_INPUT

RAY_ADDRESS_INPUT = "claimcheck_ray_address"  # the controller's cluster, handed to pytest-xdist workers


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from claimcheck.pytest import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, None, None]:
    if bare_values_as_test_paths(args, early_config.invocation_params.dir):  # before pytest reads the test paths
        fresh = vars(parser.parse_known_args(args))
        keys = ("file_or_dir", "claim_report", "claim_baseline_fail")
        vars(early_config.known_args_namespace).update({k: fresh[k] for k in keys})
    pause_gc()  # the conftests and the tests import the suite: no full collection until the core starts
    try:
        return (yield)
    except BaseException:  # a conftest that cannot be imported: no unconfigure will give the collector back
        resume_gc()
        raise


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.addinivalue_line("markers", NEEDS_HELP)
    try:
        settings = Settings.from_config(config)
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[CORE] = Core(settings)
    refused = config.hook.pytest_claimcheck_refusal(config=config)
    if refused:  # the suite cannot run at all: a report that says why, then a usage error
        from claimcheck.pytest.session import write_refusal

        raise pytest.UsageError(f"{refused}\n{write_refusal(config, settings, refused)}")
    from claimcheck.pytest import fixtures

    config.pluginmanager.register(fixtures, "claimcheck-fixtures")
    # The core starts before collection where it cannot wait for a claim: a baseline, --claim-cache=clear, and a
    # pytest-xdist controller, which collects nothing but hands its workers the Ray cluster and the reapers' folder.
    xdist = str(getattr(config.option, "dist", "no") or "no") != "no" and not config.option.collectonly
    if not hasattr(config, "workerinput") and (bool(settings.baseline) or settings.cache == "clear" or xdist):
        start_core(config)


def start_core(config: pytest.Config) -> None:
    """Start the claim core in this process, once (``start.start``)."""
    core = core_of(config)
    if core.started:
        return
    core.started = True
    from claimcheck.pytest.start import start

    start(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand a pytest-xdist worker the controller's Ray cluster (started once) and the reapers' folder."""
    core = core_of(node.config)
    if core.started and core.executor.address:
        node.workerinput[RAY_ADDRESS_INPUT] = core.executor.address
    if core.reaper_dir is not None:  # the worker's reaper enforces --claim-timeout from outside it
        node.workerinput[REAPER_DIR_INPUT] = str(core.reaper_dir)


def pytest_unconfigure(config: pytest.Config) -> None:
    resume_gc()
    core = config.stash.get(CORE, None)
    if core is not None:
        core.close(config.pluginmanager)


def pytest_report_header(config: pytest.Config) -> str:
    s = core_of(config).settings
    return f"claimcheck: base seed {s.seed}, budget {s.budget.name}, device {s.device}, data {s.data_dir}"


@pytest.hookimpl(wrapper=True)  # every collector's report, node ids on the command line included
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Remember every claim test collected, before a node id, -k, -m, --deselect or --lf leaves any out."""
    report = yield
    core_of(collector.config).collected.update(claim_items(report.result))
    return report


@pytest.hookimpl(trylast=True)  # after -m and -k deselect: a claim that will not run starts nothing
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = {name for names in config.hook.pytest_claimcheck_capabilities(config=config) for name in names or ()}
    check_needs(items, known)
    if any(claim_meta(item) is not None for item in items):  # the first claim: the core is needed now
        core = core_of(config)  # a claim some of whose tests this run leaves out is decided by none of them
        kept = {item.nodeid for item in items}
        core.deselected.update({n: c for n, c in core.collected.items() if n not in kept})
        start_core(config)
    resume_gc()  # start_core gave it back frozen; a session without claims gets it back here
    if core_of(config).started and not config.option.collectonly:
        core_of(config).fingerprint_claims(items)  # before any test runs: the code as imported


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "claim_seed" in metafunc.fixturenames:
        seeds = unit_seeds(core_of(metafunc.config).settings, claim_protocol_of(metafunc.definition))
        metafunc.parametrize("claim_seed", seeds, ids=[f"seed{x}" for x in seeds])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Count what the test computed and read through the store, under ``--claim-timeout``; let the suite finish."""
    core = core_of(item.config)
    if not core.started:  # no claim in this session: nothing to count or limit
        return (yield)
    from claimcheck.pytest.deadline import deadline

    item.stash[COUNTS_KEY] = replace(core.store.counts)
    limit = core.settings.timeout if claim_meta(item) else 0
    reaper = core.reaper
    try:
        with deadline(limit, item.nodeid), reaper.watch(limit, item.nodeid) if reaper else nullcontext():
            return (yield)
    finally:
        rec = item.stash.get(RECORD_KEY, None)
        if rec is not None:
            item.config.hook.pytest_claimcheck_record_done(item=item, record=rec)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    meta = claim_meta(item) if core_of(item.config).started else None
    if meta is None:
        return report
    from claimcheck.pytest.session import carry_results

    carry_results(item, report, call, meta)
    return report
