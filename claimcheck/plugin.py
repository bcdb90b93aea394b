"""The pytest plugin: claim options, the ``claim`` marker, fixtures, and the report hooks.

Hooks and fixtures only; the work happens in the library modules. Measurements travel on the
test reports (``user_properties``), so the controller writes the report under pytest-xdist too.
"""

from __future__ import annotations

import html
import json
import os
import shlex
import uuid
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
import torch
from _pytest import junitxml

from claimcheck.budget import Budget, seeds_for
from claimcheck.claimprotocol import ClaimProtocol
from claimcheck.environment import fingerprint
from claimcheck.errors import ConfigError
from claimcheck.executor import INSTALL, LOCAL, Executor, RayExecutor
from claimcheck.expectations import Expected, deviations, load_expectations, pins_of
from claimcheck.history import save_run
from claimcheck.ledger import EMPTY, Ledger, load_ledger
from claimcheck.memo import Memo
from claimcheck.record import PROPERTY_KEY, ClaimRecorder
from claimcheck.report import RERUN_KEY, terminal_lines
from claimcheck.results import ClaimResult, Verdict
from claimcheck.runfile import RunData, RunFileError, dumps, load
from claimcheck.session import ClaimSession, Written, mark_superseded
from claimcheck.settings import (
    DATA_ENV,
    DEFAULT_REPORT,
    Settings,
    parse_baseline,
    parse_budget,
    parse_cache_dir,
    parse_cache_mode,
    parse_device,
    parse_dir,
    parse_executor,
    parse_model_dir,
    parse_pool,
    parse_report,
    parse_seed,
    parse_switch,
    parse_threads,
    parse_tolerance,
    resolve_data_dir,
    resolve_ray_address,
    spread_device,
)
from claimcheck.store import ResultCache, default_cache_dir

SETTINGS_KEY = pytest.StashKey[Settings]()
HOOKS_KEY = pytest.StashKey["ReportHooks"]()
RECORD_KEY = pytest.StashKey[ClaimRecorder]()
CACHE_KEY = pytest.StashKey[ResultCache]()
COUNTS_KEY = pytest.StashKey[Callable[[], dict[str, int]]]()  # a fixture's result counters, read after the call
LEDGER_KEY = pytest.StashKey[Ledger]()
EXECUTOR_KEY = pytest.StashKey[Executor]()
RAY_ADDRESS_INPUT = "claimcheck_ray_address"  # the controller's cluster, handed to pytest-xdist workers

MARKER_HELP = (
    "claim(id, title, source, protocol=None): the test checks claim `id` (e.g. C1), stated in plain words as "
    "`title`, from `source` in the paper, under `protocol` (a claimcheck.claimprotocol.ClaimProtocol)"
)
NEEDS_HELP = (
    "claim_needs(*capabilities): the claim needs these capabilities of what the suite tests (the suite "
    "names them with pytest_claimcheck_capabilities); it is SKIPPED when they are lacking"
)

# (option, ini name, metavar, help, ini default)
_OPTIONS = [
    ("--claim-seed", "claim_seed", "INT", "base seed; claims run seeds base, base+1, ...", "0"),
    ("--claim-budget", "claim_budget", "NAME", "run size: ci, standard or paper", "ci"),
    ("--claim-device", "claim_device", "DEV", "auto, cpu, cuda or cuda:N", "cpu"),
    ("--claim-model-dir", "claim_model_dir", "DIR", "local pretrained model folder (safetensors + tokenizer.json)", ""),
    ("--claim-baseline", "claim_baseline", "JSON", "compare this run with an earlier run's JSON sidecar", ""),
    ("--claim-tolerance", "claim_tolerance", "SAME[,CROSS]", "relative tolerances vs the baseline", "1e-6,0.05"),
    ("--claim-cache", "claim_cache", "MODE", "training-result cache: on, off, or clear (empty it, then use it)", "on"),
    ("--claim-threads", "claim_threads", "N|auto", "torch threads per process (auto: cores / xdist workers)", "1"),
    ("--claim-expectations", "claim_expectations", "TOML", "verdicts known per budget, with reasons", ""),
    ("--claim-cache-dir", "claim_cache_dir", "DIR", "cache folder (default ~/.cache/claimcheck/results)", ""),
    (
        "--claim-pool",
        "claim_pool",
        "POOL",
        "seed pool: confirmatory (the protocol's block) or exploratory",
        "confirmatory",
    ),
    ("--claim-ledger", "claim_ledger", "TOML", "ledger of protocol versions (exploratory or confirmed)", ""),
    ("--claim-figures", "claim_figures", "on|off", "draw the report's figures", "on"),
    (
        "--claim-executor",
        "claim_executor",
        "local|ray",
        f"where training runs missing from the cache run: this process, or Ray tasks (needs {INSTALL})",
        "local",
    ),
    ("--claim-ray-address", "claim_ray_address", "ADDR", "Ray cluster (else $RAY_ADDRESS, else a local Ray)", ""),
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from claimcheck import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimcheck", "claimcheck: check a paper's empirical claims")
    group.addoption(
        "--claim-report",
        nargs="?",
        const=DEFAULT_REPORT,
        default=None,
        metavar="PATH",
        help=f"write the claim report (markdown, JSON, figures) to PATH (default {DEFAULT_REPORT}); ini: claim_report",
    )
    parser.addini("claim_report", "path of the claim report, written on every run when set", default="")
    for option, ini, metavar, text, default in _OPTIONS:
        shown = f" (default {default})" if default else ""
        group.addoption(option, default=None, metavar=metavar, help=f"{text}{shown}; ini: {ini}")
        parser.addini(ini, text, default=default)
    group.addoption(
        "--claim-data-dir",
        default=None,
        metavar="DIR",
        help=f"folder holding the datasets; else ini claim_data_dir, ${DATA_ENV}, the user cache",
    )
    parser.addini("claim_data_dir", "folder holding the datasets", default="")
    group.addoption(
        "--claim-baseline-fail",
        action="store_true",
        default=None,
        help="exit non-zero when a claim regresses against --claim-baseline; ini: claim_baseline_fail",
    )
    parser.addini("claim_baseline_fail", "fail the session on regressions against the baseline", type="bool")
    group.addoption(
        "--claim-autosave",
        action="store_true",
        default=None,
        help="keep this run's JSON in .claimcheck/history/<machine>/ (see claimcheck history); ini: claim_autosave",
    )
    parser.addini("claim_autosave", "keep every run's JSON in the history folder", type="bool")
    parser.addini("claim_title", "title of the claim report", default="Claim report")


def _setting(config: pytest.Config, option: str, ini: str) -> tuple[Any, str]:
    value = config.getoption(option.lstrip("-").replace("-", "_"))
    if value is not None:
        return value, option
    return config.getini(ini), f"ini {ini}"


def _read_settings(config: pytest.Config) -> Settings:
    root = config.rootpath
    values = {ini: _setting(config, option, ini) for option, ini, *_ in _OPTIONS}
    report, report_src = _setting(config, "--claim-report", "claim_report")
    data_dir, data_src = resolve_data_dir(config.getoption("claim_data_dir"), config.getini("claim_data_dir"), root)
    fail, _ = _setting(config, "--claim-baseline-fail", "claim_baseline_fail")
    budgets = config.hook.pytest_claimcheck_budgets(config=config)
    budget = parse_budget(*values["claim_budget"], budgets)
    budget_name = budget.name
    own = config.hook.pytest_claimcheck_own_subject(config=config)
    expected, source = _expected(values["claim_expectations"], budget_name, root, own is False)
    ray_address, ray_source = resolve_ray_address(*values["claim_ray_address"])
    return Settings(
        report=parse_report(report, report_src, root),
        seed=parse_seed(*values["claim_seed"]),
        budget=budget,
        device=parse_device(*values["claim_device"], torch.cuda.device_count()),
        data_dir=data_dir,
        data_dir_source=data_src,
        model_dir=parse_model_dir(*values["claim_model_dir"], root),
        baseline=parse_baseline(*values["claim_baseline"], root),
        baseline_fail=bool(fail),
        tolerance=parse_tolerance(*values["claim_tolerance"]),
        cache=parse_cache_mode(*values["claim_cache"]),
        threads=parse_threads(*values["claim_threads"]),
        expected=expected,
        expected_source=source,
        cache_dir=parse_cache_dir(*values["claim_cache_dir"], root, parse_cache_mode(*values["claim_cache"])),
        pool=parse_pool(*values["claim_pool"]),
        figures=parse_switch(*values["claim_figures"]),
        executor=parse_executor(*values["claim_executor"]),
        ray_address=ray_address,
        ray_address_source=ray_source,
    )


def _expected(value: tuple[Any, str], budget: str, root: Path, user_model: bool) -> tuple[Expected, str]:
    """Return the pins at ``budget`` and their file; an ini file describes the suite's own subject, not a user's."""
    path = parse_dir(value[0], root)
    if path is None or (user_model and value[1].startswith("ini")):
        return {}, ""
    return load_expectations(path, value[1]).get(budget, {}), _shown(path, root)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _ledger(config: pytest.Config) -> Ledger:
    value, source = _setting(config, "--claim-ledger", "claim_ledger")
    path = parse_dir(str(value or "").strip() or None, config.rootpath)
    return EMPTY if path is None else load_ledger(path, source)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.addinivalue_line("markers", NEEDS_HELP)
    try:
        settings = _read_settings(config)
        baseline = load(settings.baseline) if settings.baseline else None
        config.stash[LEDGER_KEY] = _ledger(config)
    except (ConfigError, RunFileError) as e:
        raise pytest.UsageError(str(e)) from None
    if baseline is not None and settings.baseline and settings.baseline_fail:  # the trusted run's results are expected
        settings = replace(
            settings,
            expected=pins_of(baseline.results()),
            expected_source=f"the baseline {_shown(settings.baseline, config.rootpath)}",
        )
    worker = getattr(config, "workerinput", {})
    settings = replace(
        settings, device=spread_device(settings.device, worker.get("workerid"), torch.cuda.device_count())
    )
    config.stash[SETTINGS_KEY] = settings
    workers = int(worker.get("workercount", 1))
    torch.set_num_threads(settings.threads or max(1, (os.cpu_count() or 1) // workers))
    if settings.device.startswith("cuda"):  # audit numerics: no TF32 behind float32 matmuls
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    cache = ResultCache(None if settings.cache == "off" else settings.cache_dir or default_cache_dir())
    if settings.cache == "clear" and not hasattr(config, "workerinput"):
        cache.clear()
    config.stash[CACHE_KEY] = cache
    try:
        config.stash[EXECUTOR_KEY] = _executor(config, settings, worker.get(RAY_ADDRESS_INPUT, ""))
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None
    if not hasattr(config, "workerinput"):
        run_id = uuid.uuid4().hex[:12]
        env = {
            "run id": run_id,
            "base seed": str(settings.seed),
            "budget": f"{settings.budget.name}: {settings.budget.description}",
            "seed pool": settings.pool,
            "data dir": f"{settings.data_dir} ({settings.data_dir_source})",
            **{
                k: v
                for lines in config.hook.pytest_claimcheck_environment(config=config)
                for k, v in (lines or {}).items()
            },
            **fingerprint(config.rootpath, settings.device),
            **({"executor": config.stash[EXECUTOR_KEY].describe()} if settings.executor != "local" else {}),
            RERUN_KEY: _rerun_options(config, settings),
        }
        expected = {k: asdict(v) for k, v in settings.expected.items()}
        run = RunData(title=str(config.getini("claim_title")), env=env, expected=expected)
        run.data_files = config.hook.pytest_claimcheck_data_files(config=config) or []
        if settings.report is not None:
            mark_superseded(settings.report, run_id, env.get("date", ""))
        hooks = ReportHooks(ClaimSession(settings.report, run), settings, baseline, config.stash[LEDGER_KEY])
        config.stash[HOOKS_KEY] = hooks
        config.pluginmanager.register(hooks, "claimcheck-report")


def _rerun_options(config: pytest.Config, settings: Settings) -> str:
    """Return the options that make another session draw the same seeds, sizes, data and subject."""
    extra = [opt for opts in config.hook.pytest_claimcheck_rerun_options(config=config) for opt in opts or ()]
    return " ".join([settings.rerun_options, *extra])


def _executor(config: pytest.Config, settings: Settings, controller_address: str) -> Executor:
    """Return where this process computes what the cache lacks; an xdist worker joins its controller's cluster."""
    if settings.executor == "local":
        return LOCAL
    identity, packages = config.hook.pytest_claimcheck_remote(config=config) or (None, [])
    return RayExecutor(
        controller_address or settings.ray_address,
        threads=torch.get_num_threads(),
        gpu=settings.device.startswith("cuda"),
        identity=identity,
        ship_code=bool(settings.ray_address),  # a named cluster gets this checkout; the embedded one has it
        source=settings.ray_address_source or "the controller's cluster",
        packages=packages,
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand the controller's Ray cluster to a pytest-xdist worker, so an embedded local Ray is started once."""
    executor = node.config.stash.get(EXECUTOR_KEY, LOCAL)
    if executor.address:
        node.workerinput[RAY_ADDRESS_INPUT] = executor.address


def pytest_unconfigure(config: pytest.Config) -> None:
    executor = config.stash.get(EXECUTOR_KEY, None)
    if executor is not None:
        del config.stash[EXECUTOR_KEY]
        executor.close()
    hooks = config.stash.get(HOOKS_KEY, None)
    if hooks is not None:
        del config.stash[HOOKS_KEY]
        config.pluginmanager.unregister(hooks)


def pytest_report_header(config: pytest.Config) -> str:
    s = config.stash[SETTINGS_KEY]
    return f"claimcheck: base seed {s.seed}, budget {s.budget.name}, device {s.device}, data {s.data_dir}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known: set[str] = set()
    for names in config.hook.pytest_claimcheck_capabilities(config=config):
        known.update(names or ())
    for item in items:
        for marker in item.iter_markers("claim_needs"):
            unknown = [n for n in marker.args if n not in known]
            if unknown:
                raise pytest.UsageError(
                    f"{item.nodeid}: claim_needs names unknown capabilities {unknown}; known: {sorted(known)}"
                )


def claim_protocol_of(node: Any) -> ClaimProtocol | None:
    """Return the protocol the ``claim`` marker (or the module's ``PROTOCOL``) declares, if any."""
    marker = node.get_closest_marker("claim")
    if marker is None:
        return None
    proto = marker.kwargs.get("protocol")
    if proto is None:
        proto = getattr(getattr(node, "module", None), "PROTOCOL", None)
    if proto is not None and not isinstance(proto, ClaimProtocol):
        raise pytest.UsageError(f"{node.nodeid}: claim protocol must be a ClaimProtocol, got {type(proto).__name__}")
    if proto is not None and marker.args and marker.args[0] != proto.claim_id:
        raise pytest.UsageError(f"{node.nodeid}: claim {marker.args[0]!r} is given the protocol of {proto.claim_id!r}")
    return proto


def _seeds(config: pytest.Config, proto: ClaimProtocol | None) -> list[int]:
    s = config.stash[SETTINGS_KEY]
    if proto is None:
        return seeds_for(s.seed, s.budget)
    return proto.seed_list(s.seed, s.budget.name, s.budget.seeds, s.pool)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "claim_seed" in metafunc.fixturenames:
        seeds = _seeds(metafunc.config, claim_protocol_of(metafunc.definition))
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
def claim_seeds(request: pytest.FixtureRequest) -> list[int]:
    """The seeds of every unit of this claim (for a test that runs all of its units itself)."""
    return _seeds(request.config, claim_protocol_of(request.node))


@pytest.fixture
def claim_record(request: pytest.FixtureRequest) -> ClaimRecorder:
    """Record the statistics this claim test checks; the plugin fails the test on a miss."""
    meta = _claim_meta(request.node)
    if meta is None:
        raise pytest.UsageError(f"{request.node.nodeid}: claim_record needs @pytest.mark.claim(id, title, source)")
    callspec = getattr(request.node, "callspec", None)
    seed = callspec.params.get("claim_seed") if callspec is not None else None
    rec = ClaimRecorder(claim_id=meta[0], seed=seed, protocol=claim_protocol_of(request.node))
    request.node.stash[RECORD_KEY] = rec
    return rec


@pytest.fixture(scope="session")
def claim_cache(request: pytest.FixtureRequest) -> Memo:
    """Memoise an expensive computation by its inputs and its code: ``claim_cache(fn, **inputs)``."""
    return Memo(request.config.stash[CACHE_KEY])


def _rerun(item: pytest.Item) -> str:
    options = item.config.stash[SETTINGS_KEY].rerun_options
    return f"pytest {shlex.quote(item.nodeid)} {options} --claim-report"


def _classify(report: pytest.TestReport) -> str | None:
    if report.skipped:
        return "skipped"
    if report.passed:
        return "passed" if report.when == "call" else None
    return "error"


def _message(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if call.excinfo is not None:
        return f"{call.excinfo.typename}: {call.excinfo.value}"
    return ""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    meta = _claim_meta(item)
    outcome = _classify(report) if meta else None
    if meta is not None and outcome is not None:
        rec = item.stash.get(RECORD_KEY, None)
        payload: dict[str, Any] = {
            "nodeid": item.nodeid,
            "claim_id": meta[0],
            "title": meta[1],
            "source": meta[2],
            "outcome": outcome,
            "message": _message(report, call),
            "record": rec.to_json() if rec is not None and report.when == "call" else None,
        }
        proto = claim_protocol_of(item)
        if proto is not None:
            payload["protocol"] = proto.to_dict()
        counts = item.stash.get(COUNTS_KEY, None)
        if counts is not None and report.when == "call":
            payload["counts"] = counts()
        report.user_properties.append((PROPERTY_KEY, json.dumps(payload)))
    return report


class ReportHooks:
    """The controller's hooks: collect outcomes, decide claims, write the report, set the exit status."""

    def __init__(self, session: ClaimSession, settings: Settings, baseline: RunData | None, ledger: Ledger) -> None:
        self.session = session
        self.settings = settings
        self.baseline = baseline
        self.ledger = ledger
        self.expected: list[str] = []
        self.claim_of: dict[str, str] = {}  # node id -> claim id, where collection showed it
        self.seen: set[str] = set()
        self.written: Written | None = None
        self.deviations: list[str] = []
        self.results: list[ClaimResult] = []
        self.saved: Path | None = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expected = [i.nodeid for i in session.items]
        for item in session.items:
            meta = _claim_meta(item)
            if meta is not None:
                self.claim_of[item.nodeid] = meta[0]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.expected = list(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or not report.passed:  # a test cut off mid-call has only its setup report
            self.seen.add(report.nodeid)
        for key, value in report.user_properties:
            if key == PROPERTY_KEY:
                self.session.add(str(value), report.duration)

    def _not_run(self, missing: list[str]) -> dict[str, list[str]]:
        """Map each claim to its tests that did not run (by collection, else by the file of its other tests)."""
        by_file = {t.nodeid.split("::")[0]: t.claim_id for t in self.session.outcomes.values()}
        out: dict[str, list[str]] = {}
        for n in missing:
            cid = self.claim_of.get(n) or by_file.get(n.split("::")[0])
            if cid is not None:
                out.setdefault(cid, []).append(n)
        return out

    @pytest.hookimpl(tryfirst=True)  # before junitxml, pytest-html and pytest-json-report write their files
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        missing = [n for n in self.expected if n not in self.seen]
        incomplete = []
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            incomplete.append("the session was interrupted (e.g. Ctrl-C)")
        if missing and (incomplete or session.shouldfail or session.shouldstop):
            incomplete += [f"did not run or finish: {n}" for n in missing]
        not_run = self._not_run(missing) if incomplete else {}
        s = self.settings
        run = self.session.snapshot(incomplete, not_run)
        run.ledger = {r.claim_id: self.ledger.status(r.protocol) for r in run.results() if r.protocol is not None}
        self.results = run.results()
        self.deviations = deviations(self.results, s.expected, s.expected_source)
        self._to_junitxml(session.config)
        failing = self.deviations or any(r.verdict is Verdict.ERROR for r in self.results)
        if failing and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if s.report is None:
            if _setting(session.config, "--claim-autosave", "claim_autosave")[0]:
                self.saved = save_run(dumps(run), session.config.rootpath, run.env)
            return
        self.written = self.session.finish(
            incomplete, not_run, self.baseline, str(s.baseline or ""), s.tolerance, figures=s.figures
        )
        if _setting(session.config, "--claim-autosave", "claim_autosave")[0]:
            self.saved = save_run(dumps(run), session.config.rootpath, run.env)
        comp = self.written.comparison
        if s.baseline_fail and comp is not None and comp.regressions and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _verdicts(self) -> dict[str, dict[str, Any]]:
        """Return each claim's verdict, known status, parts and protocol, for pytest's other channels."""
        out = {}
        for r in self.results:
            pin = self.settings.expected.get(r.claim_id)
            out[r.claim_id] = {
                "verdict": r.verdict.value,
                "known": pin is not None and pin.verdict == r.verdict.value,
                "parts": {p.name or "claim": {"verdict": p.verdict.value, "evidence": p.reason} for p in r.parts},
                "protocol": f"v{r.protocol.version}" if r.protocol else "",
                "protocol status": self.session.run.ledger.get(r.claim_id, ""),
            }
        return out

    def _to_junitxml(self, config: pytest.Config) -> None:
        """Add each claim's verdict to the junit XML as testsuite properties (CI dashboards read those)."""
        xml = config.stash.get(junitxml.xml_key, None)
        if xml is None:
            return
        for cid, v in self._verdicts().items():
            known = " (known)" if v["known"] and v["verdict"] != Verdict.REPRODUCED.value else ""
            xml.add_global_property(f"claim {cid}", f"{v['verdict']}{known}")
            for name, p in v["parts"].items():
                xml.add_global_property(f"claim {cid} {name}", f"{p['verdict']}: {p['evidence']}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """Put the claim verdicts into pytest-json-report's report."""
        json_report["claimcheck"] = self._verdicts()

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str]) -> None:
        """Put the claim verdicts at the top of pytest-html's report."""
        rows = []
        for cid, v in self._verdicts().items():
            evidence = "; ".join(f"{name}: {p['evidence']}" for name, p in v["parts"].items())
            known = " (known)" if v["known"] else ""
            rows.append(
                f"<tr><td>{html.escape(cid)}</td><td><b>{html.escape(v['verdict'])}</b>{known}</td>"
                f"<td>{html.escape(evidence)}</td></tr>"
            )
        head = "<tr><th>claim</th><th>verdict</th><th>evidence</th></tr>"
        prefix.append(f"<h2>Claim verdicts</h2><table>{head}{''.join(rows)}</table>")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        terminalreporter.write_sep("=", "claim verdicts")
        for line, red in terminal_lines(self.session.run, self.results):
            terminalreporter.write_line(line, red=red, bold=not red)
        s = self.settings
        for line in self.deviations:
            fix = (
                f"if this change is intended, rewrite {s.expected_source} with `claimcheck expectations "
                f"<this run's .json> --budget {s.budget.name}`"
                if s.expected_source and not s.expected_source.startswith("the baseline")
                else "compare with the baseline's report; rerun without --claim-baseline-fail to accept it"
                if s.expected_source
                else "pin the known results in an expectations file (--claim-expectations)"
            )
            terminalreporter.write_line(f"deviation: {line} ({fix})", red=True)
        if self.saved is not None:
            terminalreporter.write_line(f"run saved to the history: {self.saved}")
        w = self.written
        if w is None:
            return
        if w.comparison is not None:
            for line in w.comparison.regressions:
                terminalreporter.write_line(f"changed against the baseline: {line}", red=True)
        terminalreporter.write_sep(
            "-", f"claim report written to {w.report} (+ {w.json.name}, {len(w.figures)} figures)"
        )
