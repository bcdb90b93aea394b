"""The controller's side of a session: collect claim outcomes, decide, write the report, set the exit status.

Workers put each claim test's payload on its report (``user_properties``); the ``Controller``
(registered as a plugin on the controller only) merges them, decides every claim when the session
finishes, writes the report set, hands the verdicts to pytest's other channels (junit XML,
pytest-html, pytest-json-report), and prints the terminal summary.
"""

from __future__ import annotations

import html
import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from claimcheck.environment import fingerprint
from claimcheck.executor import Executor
from claimcheck.expectations import deviations, known_label
from claimcheck.history import save_run
from claimcheck.ledger import Ledger
from claimcheck.record import ClaimRecorder
from claimcheck.report import RERUN_KEY, terminal_lines
from claimcheck.reportfiles import Written, mark_superseded, write_report
from claimcheck.rundata import RunData, dumps
from claimcheck.settings import Settings
from claimcheck.verdicts import ClaimResult, Outcome, TestOutcome, Verdict

COUNTER_NAMES = {
    "computed": "training results computed",
    "cached": "read from the cache",
    "corrupt": "corrupt cache entries recomputed",
}
_RANK: dict[str, int] = {"passed": 0, "skipped": 1, "error": 2}


@dataclass
class Outcomes:
    """Every claim test's outcome by node id, merged over its phases (setup, call, teardown)."""

    run: RunData
    by_node: dict[str, TestOutcome] = field(default_factory=dict)

    def add(self, payload: str, duration: float) -> None:
        """Merge one phase's payload (JSON put on the report by the worker) into its test."""
        p = json.loads(payload)
        for name, value in p.get("counts", {}).items():
            key = COUNTER_NAMES.get(name, name)
            self.run.counters[key] = self.run.counters.get(key, 0) + int(value)
        record = ClaimRecorder.from_json(p["record"]) if p.get("record") else None
        outcome: Outcome = p["outcome"]
        prev = self.by_node.get(p["nodeid"])
        if prev is None:
            self.by_node[p["nodeid"]] = TestOutcome(
                nodeid=p["nodeid"],
                claim_id=p["claim_id"],
                title=p["title"],
                source=p["source"],
                outcome=outcome,
                record=record,
                message=p.get("message", ""),
                duration=duration,
                protocol=p.get("protocol"),
            )
            return
        prev.duration += duration
        prev.record = record or prev.record
        prev.protocol = prev.protocol or p.get("protocol")
        if _RANK[outcome] > _RANK[prev.outcome]:
            prev.outcome = outcome
            prev.message = p.get("message", "")

    def snapshot(self, incomplete: list[str], not_run: dict[str, list[str]] | None = None) -> RunData:
        """Return the run as it stands, with ``incomplete`` noted and the tests of each claim that did not run."""
        self.run.tests = sorted(self.by_node.values(), key=lambda t: t.nodeid)
        self.run.incomplete = incomplete
        self.run.not_run = not_run or {}
        return self.run


def outcome_of(report: pytest.TestReport) -> str | None:
    if report.skipped:
        return "skipped"
    if report.passed:
        return "passed" if report.when == "call" else None
    return "error"


def message_of(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if call.excinfo is not None:
        return f"{call.excinfo.typename}: {call.excinfo.value}"
    return ""


def start_run(config: pytest.Config, settings: Settings, executor: Executor, rerun: str) -> RunData:
    """Return the run's header: a fresh run id, the settings, the suite's lines, the machine, the rerun options."""
    run_id = uuid.uuid4().hex[:12]
    suite_lines = config.hook.pytest_claimcheck_environment(config=config)
    env = {
        "run id": run_id,
        "base seed": str(settings.seed),
        "budget": f"{settings.budget.name}: {settings.budget.description}",
        "seed pool": settings.pool,
        "data dir": f"{settings.data_dir} ({settings.data_dir_source})",
        **{k: v for lines in suite_lines for k, v in (lines or {}).items()},
        **fingerprint(config.rootpath, settings.device),
        **({"executor": executor.describe()} if settings.executor != "local" else {}),
        RERUN_KEY: rerun,
    }
    expected = {k: asdict(v) for k, v in settings.expected.items()}
    run = RunData(title=str(config.getini("claim_title")), env=env, expected=expected)
    run.data_files = config.hook.pytest_claimcheck_data_files(config=config, data_dir=settings.data_dir) or []
    if settings.report is not None:
        mark_superseded(settings.report, run_id, env.get("date", ""))
    return run


class Controller:
    """The controller's hooks: collect outcomes, decide claims, write the report, set the exit status."""

    def __init__(
        self, run: RunData, settings: Settings, baseline: RunData | None, ledger: Ledger, claim_of: Any
    ) -> None:
        self.outcomes = Outcomes(run)
        self.settings = settings
        self.baseline = baseline
        self.ledger = ledger
        self.claim_id_of = claim_of  # item -> claim id or None
        self.collected: list[str] = []
        self.claim_of: dict[str, str] = {}  # node id -> claim id, where collection showed it
        self.seen: set[str] = set()
        self.written: Written | None = None
        self.deviations: list[str] = []
        self.results: list[ClaimResult] = []
        self.saved: Path | None = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [i.nodeid for i in session.items]
        for item in session.items:
            cid = self.claim_id_of(item)
            if cid is not None:
                self.claim_of[item.nodeid] = cid

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collected = list(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or not report.passed:  # a test cut off mid-call has only its setup report
            self.seen.add(report.nodeid)
        for key, value in report.user_properties:
            if key == "claimcheck":
                self.outcomes.add(str(value), report.duration)

    def _not_run(self, missing: list[str]) -> dict[str, list[str]]:
        """Map each claim to its tests that did not run (by collection, else by the file of its other tests)."""
        by_file = {t.nodeid.split("::")[0]: t.claim_id for t in self.outcomes.by_node.values()}
        out: dict[str, list[str]] = {}
        for n in missing:
            cid = self.claim_of.get(n) or by_file.get(n.split("::")[0])
            if cid is not None:
                out.setdefault(cid, []).append(n)
        return out

    @pytest.hookimpl(tryfirst=True)  # before junitxml, pytest-html and pytest-json-report write their files
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        missing = [n for n in self.collected if n not in self.seen]
        incomplete = []
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            incomplete.append("the session was interrupted (e.g. Ctrl-C)")
        if missing and (incomplete or session.shouldfail or session.shouldstop):
            incomplete += [f"did not run or finish: {n}" for n in missing]
        s = self.settings
        run = self.outcomes.snapshot(incomplete, self._not_run(missing) if incomplete else {})
        run.ledger = {r.claim_id: self.ledger.status(r.protocol) for r in run.results() if r.protocol is not None}
        self.results = run.results()
        self.deviations = deviations(self.results, s.expected, s.expected_source)
        self._to_junitxml(session.config)
        failing = self.deviations or any(r.verdict is Verdict.ERROR for r in self.results)
        if failing and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if s.report is not None:
            self.written = write_report(run, s.report, self.baseline, str(s.baseline or ""), s.tolerance, s.figures)
            comp = self.written.comparison
            failed = comp is not None and (
                (s.baseline_fail and comp.regressions) or (s.baseline_exact and comp.differences)
            )
            if failed and session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if s.autosave:
            self.saved = save_run(dumps(run), session.config.rootpath, run.env)

    def _verdicts(self) -> dict[str, dict[str, Any]]:
        """Return each claim's verdict, known label, parts and protocol, for pytest's other channels."""
        out = {}
        for r in self.results:
            pin = self.settings.expected.get(r.claim_id)
            out[r.claim_id] = {
                "verdict": r.verdict.value,
                "known": known_label(r.verdict.value, pin.verdict if pin else None).strip(" ()"),
                "parts": {p.name or "claim": {"verdict": p.verdict.value, "evidence": p.reason} for p in r.parts},
                "protocol": f"v{r.protocol.version}" if r.protocol else "",
                "protocol status": self.outcomes.run.ledger.get(r.claim_id, ""),
            }
        return out

    def _to_junitxml(self, config: pytest.Config) -> None:
        """Add each claim's verdict to the junit XML as testsuite properties (CI dashboards read those).

        The XML writer is found among the registered plugins by what it does (``add_global_property``,
        the method behind pytest's public ``record_testsuite_property``), not through pytest's private module.
        """
        writers = [p for p in config.pluginmanager.get_plugins() if callable(getattr(p, "add_global_property", None))]
        for xml in writers:
            for cid, v in self._verdicts().items():
                known = f" ({v['known']})" if v["known"] else ""
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
            known = f" ({html.escape(v['known'])})" if v["known"] else ""
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
        for line, red in terminal_lines(self.outcomes.run, self.results):
            terminalreporter.write_line(line, red=red, bold=not red)
        for line in self.deviations:
            terminalreporter.write_line(f"deviation: {line} ({self._fix()})", red=True)
        if self.saved is not None:
            terminalreporter.write_line(f"run saved to the history: {self.saved}")
        w = self.written
        if w is None:
            return
        if w.comparison is not None:
            for line in w.comparison.regressions:
                terminalreporter.write_line(f"changed against the baseline: {line}", red=True)
            for line in w.comparison.differences if self.settings.baseline_exact else ():
                terminalreporter.write_line(f"not bit-identical to the baseline: {line}", red=True)
        terminalreporter.write_sep(
            "-", f"claim report written to {w.report} (+ {w.json.name}, {len(w.figures)} figures)"
        )

    def _fix(self) -> str:
        """Return what to do about a deviation from the expectations, by where they came from."""
        source = self.settings.expected_source
        if source and not source.startswith("the baseline"):
            return (
                f"if this change is intended, rewrite {source} with `claimcheck expectations "
                f"<this run's .json> --budget {self.settings.budget.name}`"
            )
        if source:
            return "compare with the baseline's report; rerun without --claim-baseline-fail to accept it"
        return "pin the known results in an expectations file (--claim-expectations)"
