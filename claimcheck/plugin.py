"""The pytest plugin: claim options, the ``claim`` marker, fixtures, and the report hooks.

Hooks and fixtures only; the work happens in the library modules. Measurements travel on the
test reports (``user_properties``), so the controller writes the report under pytest-xdist too.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
import torch

from claimcheck.budget import Budget, seeds_for
from claimcheck.environment import fingerprint
from claimcheck.errors import ClaimNotMet, ConfigError, ControlNotFailed
from claimcheck.record import PROPERTY_KEY, ClaimRecorder
from claimcheck.session import ClaimSession
from claimcheck.settings import (
    DATA_ENV,
    DEFAULT_REPORT,
    Settings,
    parse_budget,
    parse_device,
    parse_model_dir,
    parse_report,
    parse_seed,
    resolve_data_dir,
)

SETTINGS_KEY = pytest.StashKey[Settings]()
HOOKS_KEY = pytest.StashKey["ReportHooks"]()
RECORD_KEY = pytest.StashKey[ClaimRecorder]()

MARKER_HELP = (
    "claim(id, title, source): the test checks claim `id` (e.g. C1), stated in plain words as "
    "`title`, from `source` in the paper"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimcheck", "claimcheck: check a paper's empirical claims")
    group.addoption(
        "--claim-report",
        nargs="?",
        const=DEFAULT_REPORT,
        default=None,
        metavar="PATH",
        help=f"write the markdown claim report to PATH (default {DEFAULT_REPORT}); ini: claim_report",
    )
    group.addoption("--claim-seed", default=None, metavar="INT", help="base seed (default 0); ini: claim_seed")
    group.addoption(
        "--claim-budget",
        default=None,
        metavar="NAME",
        help="run size: ci, standard or paper (default ci); ini: claim_budget",
    )
    group.addoption(
        "--claim-device",
        default=None,
        metavar="DEV",
        help="auto, cpu, cuda or cuda:N (default cpu); ini: claim_device",
    )
    group.addoption(
        "--claim-data-dir",
        default=None,
        metavar="DIR",
        help=f"folder holding the datasets; else ini claim_data_dir, ${DATA_ENV}, the user cache",
    )
    group.addoption(
        "--claim-model-dir",
        default=None,
        metavar="DIR",
        help="local pretrained model folder (safetensors + tokenizer.json); ini: claim_model_dir",
    )
    parser.addini("claim_report", "path of the claim report, written on every run when set", default="")
    parser.addini("claim_seed", "base seed of the claim suite", default="0")
    parser.addini("claim_budget", "run size: ci, standard or paper", default="ci")
    parser.addini("claim_device", "auto, cpu, cuda or cuda:N", default="cpu")
    parser.addini("claim_data_dir", "folder holding the datasets", default="")
    parser.addini("claim_model_dir", "local pretrained model folder", default="")
    parser.addini("claim_title", "title of the claim report", default="Claim report")


def _setting(config: pytest.Config, option: str, ini: str) -> tuple[Any, str]:
    value = config.getoption(option.lstrip("-").replace("-", "_"))
    if value is not None:
        return value, option
    return config.getini(ini), f"ini {ini}"


def _read_settings(config: pytest.Config) -> Settings:
    root = config.rootpath
    report, report_src = _setting(config, "--claim-report", "claim_report")
    seed, seed_src = _setting(config, "--claim-seed", "claim_seed")
    budget, budget_src = _setting(config, "--claim-budget", "claim_budget")
    device, device_src = _setting(config, "--claim-device", "claim_device")
    model_dir, model_src = _setting(config, "--claim-model-dir", "claim_model_dir")
    data_dir, data_src = resolve_data_dir(config.getoption("claim_data_dir"), config.getini("claim_data_dir"), root)
    return Settings(
        report=parse_report(report, report_src, root),
        seed=parse_seed(seed, seed_src),
        budget=parse_budget(budget, budget_src),
        device=parse_device(device, device_src, torch.cuda.device_count()),
        data_dir=data_dir,
        data_dir_source=data_src,
        model_dir=parse_model_dir(model_dir, model_src, root),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    try:
        settings = _read_settings(config)
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[SETTINGS_KEY] = settings
    if settings.report is not None and not hasattr(config, "workerinput"):
        env = {
            "base seed": str(settings.seed),
            "budget": f"{settings.budget.name}: {settings.budget.description}",
            "device": settings.device,
            "dtype": "float64 unless a claim's regime says otherwise",
            "data dir": f"{settings.data_dir} ({settings.data_dir_source})",
            **fingerprint(root=config.rootpath),
        }
        hooks = ReportHooks(ClaimSession(settings.report, env, title=str(config.getini("claim_title"))))
        config.stash[HOOKS_KEY] = hooks
        config.pluginmanager.register(hooks, "claimcheck-report")


def pytest_report_header(config: pytest.Config) -> str:
    s = config.stash[SETTINGS_KEY]
    return f"claimcheck: base seed {s.seed}, budget {s.budget.name}, device {s.device}, data {s.data_dir}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "claim_seed" in metafunc.fixturenames:
        s = metafunc.config.stash[SETTINGS_KEY]
        seeds = seeds_for(s.seed, s.budget)
        metafunc.parametrize("claim_seed", seeds, ids=[f"seed{x}" for x in seeds])


def _claim_meta(item: pytest.Item) -> tuple[str, str, str] | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    args = list(marker.args)
    names = ("id", "title", "source")
    values = {n: (args[i] if i < len(args) else marker.kwargs.get(n, "")) for i, n in enumerate(names)}
    if not values["id"]:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.claim needs an id, e.g. claim('C1', title, source)")
    return str(values["id"]), str(values["title"]), str(values["source"])


@pytest.fixture(scope="session")
def claim_settings(request: pytest.FixtureRequest) -> Settings:
    """The validated claim options of this session."""
    return request.config.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def claim_budget(claim_settings: Settings) -> Budget:
    """The named budget this session runs under."""
    return claim_settings.budget


@pytest.fixture
def claim_record(request: pytest.FixtureRequest) -> ClaimRecorder:
    """Record the statistics this claim test checks; the plugin fails the test on a miss."""
    meta = _claim_meta(request.node)
    if meta is None:
        raise pytest.UsageError(f"{request.node.nodeid}: claim_record needs @pytest.mark.claim(id, title, source)")
    callspec = getattr(request.node, "callspec", None)
    seed = callspec.params.get("claim_seed") if callspec is not None else None
    rec = ClaimRecorder(claim_id=meta[0], seed=seed)
    request.node.stash[RECORD_KEY] = rec
    return rec


def _rerun(item: pytest.Item) -> str:
    s = item.config.stash[SETTINGS_KEY]
    return (
        f"pytest {shlex.quote(item.nodeid)} --claim-seed {s.seed} --claim-budget {s.budget.name} "
        f"--claim-device {s.device} --claim-report"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    __tracebackhide__ = True
    result = yield
    rec = item.stash.get(RECORD_KEY, None)
    if rec is not None:
        unmet, leaky = rec.verdict_problems()
        tail = f"\nseed {rec.seed}; rerun: {_rerun(item)}"
        if leaky:
            raise ControlNotFailed("; ".join(leaky) + tail)
        if unmet:
            raise ClaimNotMet(f"claim {rec.claim_id} not reproduced: " + "; ".join(unmet) + tail)
    return result


def _classify(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str | None:
    if report.skipped:
        return "skipped"
    if report.passed:
        return "passed" if report.when == "call" else None
    if report.when == "call" and call.excinfo is not None:
        if call.excinfo.errisinstance(ClaimNotMet):
            return "not_met"
        if call.excinfo.errisinstance(ControlNotFailed):
            return "control_passed"
    return "error"


def _message(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if call.excinfo is not None:
        return f"{call.excinfo.typename}: {call.excinfo.value}".split("\nseed ")[0]
    return ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    meta = _claim_meta(item)
    outcome = _classify(report, call) if meta else None
    if meta is not None and outcome is not None:
        rec = item.stash.get(RECORD_KEY, None)
        payload = {
            "nodeid": item.nodeid,
            "claim_id": meta[0],
            "title": meta[1],
            "source": meta[2],
            "outcome": outcome,
            "message": _message(report, call),
            "rerun": _rerun(item),
            "record": rec.to_json() if rec is not None and report.when == "call" else None,
        }
        report.user_properties.append((PROPERTY_KEY, json.dumps(payload)))
    return report


class ReportHooks:
    """The report's hooks, registered on the controller only when a report is asked for."""

    def __init__(self, session: ClaimSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == PROPERTY_KEY:
                self.session.add(str(value), report.duration)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        incomplete = []
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            incomplete.append("the session was interrupted; claims after the interruption did not run")
        self.session.write(incomplete)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for r in self.session.results():
            terminalreporter.write_line(f"{r.claim_id}: {r.verdict.value}: {r.title}")
        terminalreporter.write_sep("-", f"claim report written to {self.session.path}")


def pytest_unconfigure(config: pytest.Config) -> None:
    hooks = config.stash.get(HOOKS_KEY, None)
    if hooks is not None:
        del config.stash[HOOKS_KEY]
        config.pluginmanager.unregister(hooks)
