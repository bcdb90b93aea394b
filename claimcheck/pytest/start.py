"""Start the claim core in a process: the baseline and ledger checked, the executor, store and controller set up."""

from __future__ import annotations

import gc
import os
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.core import core_of, resume_gc
from claimcheck.pytest.options import shown_path, spread_device
from claimcheck.pytest.plugin import RAY_ADDRESS_INPUT
from claimcheck.pytest.reaper import REAPER_DIR_INPUT


def start(config: pytest.Config) -> None:
    """Start the claim core in this process; raise pytest.UsageError naming the option or file that cannot be set up."""
    import torch

    import claimcheck.pytest.session as ctl
    from claimcheck.gate.baseline import check_margins
    from claimcheck.provenance.fingerprint import NO_ENGINE
    from claimcheck.pytest.executor import LOCAL, RayExecutor
    from claimcheck.pytest.progress import PlanSender, ProgressReporter, say_uncaptured
    from claimcheck.pytest.reaper import Reaper
    from claimcheck.report.figures import clear_figure_cache
    from claimcheck.report.paths import Places
    from claimcheck.report.rundata import RunFileError, load
    from claimcheck.store.cache import ResultCache, default_cache_dir

    worker = getattr(config, "workerinput", {})
    core = core_of(config)
    settings = core.settings
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
        identity, packages = config.hook.pytest_claimcheck_remote(config=config) or (None, [])
        executor = LOCAL
        if settings.executor != "local":  # a pytest-xdist worker joins its controller's cluster
            executor = RayExecutor(
                worker.get(RAY_ADDRESS_INPUT, "") or settings.ray_address,
                threads=torch.get_num_threads(),
                gpu=settings.device.startswith("cuda"),
                identity=identity,  # what a worker's code must match
                ship_code=bool(settings.ray_address),  # a named cluster gets this checkout; the embedded one has it
                source=settings.ray_address_source or "the controller's cluster",
                packages=packages,
            )
    except (ConfigError, RunFileError) as e:
        raise pytest.UsageError(str(e)) from None
    core.settings, core.baseline = settings, baseline
    engine = config.hook.pytest_claimcheck_engine(config=config) or NO_ENGINE
    # What is alive now (torch, numpy, the core) lives as long as the process: frozen, after a collection, so
    # that no later collection walks it again (pytest's at exit took 0.4 s) and no garbage is frozen with it.
    # The collector was paused while it was imported (``pause_gc``): this is the one walk over it.
    gc.collect()
    gc.freeze()
    resume_gc()
    if settings.device.startswith("cuda"):  # audit numerics: no TF32 behind float32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    store = ResultCache(
        None if settings.cache == "off" else settings.cache_dir or default_cache_dir(),
        verify=settings.cache_verify,
        verify_seed=settings.seed,
        note=partial(say_uncaptured, config),
    )
    if settings.cache == "clear" and not worker and not config.option.collectonly:  # --co runs nothing, clears nothing
        store.clear()
        assert store.root is not None
        clear_figure_cache(store.root / ctl.FIGURE_CACHE)
    core.set_up(store, engine, executor)
    if worker:  # tell the controller the claim of every test, a test whose worker crashes included
        core.controller = ctl.WorkerClaims(core.deselected)
        config.pluginmanager.register(PlanSender(config, settings), "claimcheck-plan")
        if settings.timeout and worker.get(REAPER_DIR_INPUT):
            core.reaper = Reaper(Path(worker[REAPER_DIR_INPUT]), os.getpid())
    else:
        places = Places.of(config.rootpath, data_dir=settings.data_dir, data_source=settings.data_dir_source)
        run = ctl.start_run(config, settings, executor, places)
        controller = ctl.Controller(run, settings, baseline, ledger, places)
        controller.deselected = core.deselected
        if settings.timeout:  # where pytest-xdist workers' reapers leave a note before they kill one
            controller.reaper_dir = core.reaper_dir = Path(tempfile.mkdtemp(prefix="claimcheck-reaper-"))
        core.controller = controller
        config.pluginmanager.register(ProgressReporter(config, settings), "claimcheck-progress")
        core.catch_sigterm()  # a cancelled CI job ends like Ctrl-C: a report
    config.pluginmanager.register(core.controller, "claimcheck-controller")
