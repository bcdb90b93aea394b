"""The controller's side of a session: merge claim tests' payloads, decide, write the report, set the exit status."""

from __future__ import annotations

import html
import json
import uuid
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from claimcheck.decide.record import PROPERTY_KEY, ClaimRecorder
from claimcheck.decide.verdicts import ClaimResult, TestOutcome, Verdict
from claimcheck.gate.accept import AcceptError, accept, refusal
from claimcheck.gate.baseline import Comparison, compare, render_comparison
from claimcheck.gate.decision import EXIT_UNDECIDED, REPORT_NOT_WRITTEN, exit_status, held_to_pins, judge
from claimcheck.gate.history import save_run
from claimcheck.provenance.environment import fingerprint
from claimcheck.provenance.expectations import PinnedAt, chaotic_notes, deviations, known_label, pins_of
from claimcheck.provenance.ledger import (
    EMPTY,
    Ledger,
    calibration_entries,
    check_git,
    check_history,
    load_ledger,
)
from claimcheck.pytest.core import COUNTS_KEY, RECORD_KEY, UNITS_KEY, core_of
from claimcheck.pytest.executor import Executor
from claimcheck.pytest.markers import claim_meta, claim_protocol_of
from claimcheck.pytest.options import Settings
from claimcheck.pytest.reaper import killed_note
from claimcheck.report.markdown import RERUN_KEY, terminal_lines
from claimcheck.report.paths import Places
from claimcheck.report.rundata import NOT_STARTED, GateUnits, RunData, dumps, record_json
from claimcheck.report.write import ReportWriteError, Written, mark_superseded, write_report
from claimcheck.store.cache import default_cache_dir

COUNTER_NAMES = {
    "computed": "training results computed",
    "cached": "read from the cache",
    "corrupt": "corrupt cache entries recomputed",
    "unsaved": "results not saved to the cache",
    "verified": "cache hits recomputed and found the same (--claim-cache-verify)",
    "unauthenticated": "cache entries failing authentication recomputed",
}
_RANK: dict[str, int] = {"passed": 0, "skipped": 1, "error": 2}
FIGURE_CACHE = "figures"  # the folder of drawn figures inside the result cache (``figures.cached_group``)
ACCEPT_HINT = (
    "if the change is intended, accept this run as the new baseline: rerun with --claim-baseline-update, or "
    "`claimcheck baseline accept <this run's .json> <the baseline .json>` (the old baseline is kept beside it)"
)
GATE_KEY = "claimcheck-gate"  # the user_properties key of a claim test's units run for the gate only
CLAIMS_OUTPUT = "claimcheck_claims"  # a pytest-xdist worker's output: node id -> [claim id, title, source]
DESELECTED_OUTPUT = "claimcheck_deselected"  # a pytest-xdist worker's output: node id -> claim id, left out


def start_run(config: pytest.Config, settings: Settings, executor: Executor, places: Places) -> RunData:
    """Return the run's header: a fresh run id, the settings, the suite's lines, the machine, the rerun options."""
    run_id = uuid.uuid4().hex[:12]
    suite_lines = config.hook.pytest_claimcheck_environment(config=config)
    suite_rerun = [o for opts in config.hook.pytest_claimcheck_rerun_options(config=config) for o in opts or ()]
    link = f"{settings.report_link} is a symbolic link to {settings.report}: the set is written beside the target"
    data_dir = places.shorten(str(settings.data_dir))
    env = {
        "run id": run_id,
        "base seed": str(settings.seed),
        "budget": f"{settings.budget.name}: {settings.budget.description}",
        "seed pool": settings.pool,
        "budget position": str(settings.budget_index),
        "data dir": data_dir if data_dir == settings.data_dir_source else f"{data_dir} ({settings.data_dir_source})",
        **{k: v for lines in suite_lines for k, v in (lines or {}).items()},
        **fingerprint(config.rootpath, settings.device),
        **({"executor": executor.describe()} if settings.executor != "local" else {}),
        RERUN_KEY: " ".join([settings.rerun_options, *suite_rerun]),
        **({"report path": link} if settings.report_link is not None else {}),
    }
    env = {k: places.shorten(str(v)) for k, v in env.items()}
    expected = {k: asdict(v) for k, v in settings.expected.items()}
    run = RunData(title=str(config.getini("claim_title")), env=env, expected=expected)
    run.data_files = config.hook.pytest_claimcheck_data_files(config=config, data_dir=settings.data_dir) or []
    if settings.report is not None and not config.option.collectonly:  # --co writes no report, so marks none
        mark_superseded(settings.report, run_id, env.get("date", ""))
    return run


def verified_ledger(settings: Settings) -> Ledger:
    """Return the session's ledger, every file's chain verified and its confirmations checked against git, afresh."""
    if settings.ledger is None:
        return EMPTY
    ledger = load_ledger(settings.ledger, settings.ledger_source)
    ledger.notes += check_history(ledger)
    ledger.notes += check_git(ledger)
    return ledger


def baseline_pins(baseline: RunData, source: str) -> dict[str, Any]:
    """Return the settings that make a baseline's verdicts (not its statistics: the gate's) the expected ones."""
    seed = baseline.env.get("base seed", "0")
    at = PinnedAt(int(seed) if seed.isdigit() else -1, baseline.env.get("seed pool", "confirmatory"))
    pins = {k: replace(p, stats={}) for k, p in pins_of(baseline.results()).items()}
    return {"expected": pins, "expected_source": source, "expected_at": at}


class WorkerClaims:
    """A pytest-xdist worker's hooks: hand the controller the claim of every test it collected (a crashed one's too)."""

    def __init__(self, deselected: dict[str, str]) -> None:
        self.deselected = deselected  # the claim tests this worker's run left out (the core's, filled before start)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None:
            metas = {item.nodeid: claim_meta(item) for item in session.items}
            output[CLAIMS_OUTPUT] = {nodeid: list(meta) for nodeid, meta in metas.items() if meta is not None}
            output[DESELECTED_OUTPUT] = dict(self.deselected)


class Controller:
    """The controller's hooks: collect outcomes, decide claims, write the report, set the exit status."""

    def __init__(
        self, run: RunData, settings: Settings, baseline: RunData | None, ledger: Ledger | None, places: Places
    ) -> None:
        self.run = run
        self.places = places  # this machine's folders, written by name
        self.by_node: dict[str, TestOutcome] = {}  # every claim test's outcome, merged over its phases
        self.settings = settings
        self.baseline = baseline
        self.ledger = ledger or EMPTY
        if self.ledger.path is not None:  # what was verified, and what could not be
            files = len({e.file for e in self.ledger.entries})
            confirms = sum(e.kind == "confirm" for e in self.ledger.entries)
            git = "; ".join(self.ledger.notes) or f"git shows {confirms} confirmation(s) come after their registration"
            head = f"{Path(*self.ledger.path.parts[-2:])}: {files} file(s), {len(self.ledger.entries)} entries"
            head += ", hash chains verified"
            run.env["ledger"] = f"{head}; {git}" if confirms else head
        self.changed: list[str] = []  # claims whose code matches no registered version
        self.collected: list[str] = []
        self.claim_by_node: dict[str, str] = {}  # node id -> claim id, where collection showed it
        self.titles: dict[str, list[str]] = {}  # claim id -> [title, source], where collection showed it
        self.bare_failures: dict[str, str] = {}  # node id -> message of a test that failed without a payload
        self.reaper_dir: Path | None = None  # where a worker's reaper notes a test it killed (claimcheck.pytest.reaper)
        self.seen: set[str] = set()
        self.deselected: dict[str, str] = {}  # node id -> claim id of a claim test collected but left out
        self.written: Written | None = None
        self.deviations: list[str] = []
        self.results: list[ClaimResult] = []
        self.saved: Path | None = None
        self.not_written = ""  # why the report set could not be written
        self.not_saved = ""  # why the run could not be saved to the history
        self.comparison: Comparison | None = None  # the comparison with the baseline, decided once
        self.comparison_problems: list[str] = []  # why there is none, for the report
        self.gate_lines: list[tuple[str, bool]] = []  # what the terminal says of the gate (text, red)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [i.nodeid for i in session.items]
        for item in session.items:
            meta = claim_meta(item)
            if meta is not None:
                self.claim_by_node[item.nodeid] = meta[0]
                self.titles[meta[0]] = list(meta[1:])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collected = list(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """Learn each test's claim from a pytest-xdist worker (the controller collects nothing itself)."""
        for nodeid, (cid, *titles) in getattr(node, "workeroutput", {}).get(CLAIMS_OUTPUT, {}).items():
            self.claim_by_node[nodeid] = cid
            self.titles[cid] = titles
        self.deselected.update(getattr(node, "workeroutput", {}).get(DESELECTED_OUTPUT, {}))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or not report.passed:  # a test cut off mid-call has only its setup report
            self.seen.add(report.nodeid)
        payloads = [str(value) for key, value in report.user_properties if key == PROPERTY_KEY]
        for payload in payloads:
            self._add(payload, report.duration)
        for key, value in report.user_properties:
            if key == GATE_KEY:  # units the test ran for the baseline gate only (claimcheck.gate.reserve)
                gate = json.loads(self.places.shorten(str(value)))
                self.run.gate_units[gate["nodeid"]] = GateUnits.from_dict(gate["units"])
        if report.failed and not payloads:  # a test whose worker crashed: no payload came back
            last = str(report.longrepr).splitlines()[-1] if report.longrepr else "failed"
            self.bare_failures[report.nodeid] = killed_note(self.reaper_dir, report.nodeid) or last

    def _add(self, payload: str, duration: float) -> None:
        """Merge one phase's payload (JSON put on the report by the worker) into its test; shorten its paths."""
        p = json.loads(self.places.shorten(payload))
        counts = {str(k): int(v) for k, v in p.get("counts", {}).items()}
        for name, value in counts.items():
            key = COUNTER_NAMES.get(name, name)
            self.run.counters[key] = self.run.counters.get(key, 0) + value
        if p.get("code"):
            self.run.code.setdefault(p["claim_id"], {}).update(p["code"])
        new = TestOutcome(
            p["nodeid"], p["claim_id"], p["title"], p["source"], p["outcome"], message=p.get("message", "")
        )
        test = self.by_node.setdefault(p["nodeid"], new)  # a later phase merges into the first
        for name, value in counts.items():
            test.counts[name] = test.counts.get(name, 0) + value
        test.duration += duration
        test.record = (ClaimRecorder.from_json(p["record"]) if p.get("record") else None) or test.record
        test.protocol = test.protocol or p.get("protocol")
        if _RANK[p["outcome"]] > _RANK[test.outcome]:
            test.outcome, test.message = p["outcome"], p.get("message", "")

    def _not_run(self, missing: list[str]) -> dict[str, list[str]]:
        """Map each claim to its tests that did not run (by collection, else by the file of its other tests)."""
        by_file = {t.nodeid.split("::")[0]: t.claim_id for t in self.by_node.values()}
        out: dict[str, list[str]] = {}
        for n in missing:
            cid = self.claim_by_node.get(n) or by_file.get(n.split("::")[0])
            if cid is not None:
                out.setdefault(cid, []).append(n)
        return out

    @pytest.hookimpl(tryfirst=True)  # before junitxml, pytest-html and pytest-json-report write their files
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for nodeid, message in self.bare_failures.items():  # a claim test whose pytest-xdist worker crashed
            cid = self.claim_by_node.get(nodeid)
            if cid is not None and nodeid not in self.by_node:
                title, source = [*self.titles.get(cid, []), "", ""][:2]
                self.by_node[nodeid] = TestOutcome(nodeid, cid, title, source, "error", message=message)
        missing = [n for n in self.collected if n not in self.seen]
        incomplete = []
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            incomplete.append("the session was interrupted (Ctrl-C, or SIGTERM: a cancelled job)")
        if missing and (incomplete or session.shouldfail or session.shouldstop):
            incomplete += [f"did not run or finish: {n}" for n in missing]
        selected = set(self.claim_by_node.values())  # a claim none of whose tests was selected is simply not run
        cut = {n: c for n, c in self.deselected.items() if c in selected and n not in self.claim_by_node}
        cut = {} if session.config.option.collectonly else cut  # --co runs nothing, so nothing is cut short
        incomplete += [
            f"not selected (a node id, -k, -m, --deselect or --lf): {n}; {c} is decided only when all its tests run"
            for n, c in cut.items()
        ]
        s = self.settings
        not_run = self._not_run(missing) if incomplete else {}
        for n, c in cut.items():
            not_run.setdefault(c, []).append(n)
        run = self.run
        run.tests = sorted(self.by_node.values(), key=lambda t: t.nodeid)
        run.incomplete, run.not_run = incomplete, not_run
        ran = {t.claim_id for t in run.tests}  # the titles of claims none of whose tests ran are kept
        run.titles = {c: t for c, t in self.titles.items() if c in not_run and c not in ran}
        run.calibration = calibration_entries(self.ledger)
        self.results = run.decide()  # the one decision of the session: every writer below reads these results
        self._states(run)
        kernels = run.env.get("numerics", "")
        same_block = s.expected_at is None or s.expected_at.covers(s.seed, s.pool)
        same_numerics = s.expected_at is None or s.expected_at.rounds_as(kernels)
        run.expectations = self._expectations_note(same_block, kernels if not same_numerics else "")
        pinned = s.expected_source.startswith("the baseline")  # the baseline's verdicts: the gate's to judge
        # a better verdict fails nothing; a claim the baseline lacks is the gate's "not compared", not a deviation
        held = self.results
        if pinned:
            held = [r for r in held_to_pins(self.results, s.expected) if r.claim_id in s.expected]
        self.deviations = (
            []
            if s.expectations_off
            else deviations(held, s.expected, s.expected_source, same_block, set(not_run), same_numerics)
        )
        if not (s.expectations_off or pinned):
            run.deviations = self.deviations
            run.rounding = (
                chaotic_notes(self.results, s.expected, set(not_run)) if same_block and not same_numerics else []
            )
        self._to_junitxml(session.config)
        changed = self.changed and not s.exploratory
        failing = (self.deviations and not pinned) or changed or any(r.verdict is Verdict.ERROR for r in self.results)
        gate_status = self._gate(run, len(self.deviations) if pinned else 0)
        collect_only = bool(session.config.option.collectonly)  # --co runs nothing: no report, no baseline
        text = "" if collect_only else dumps(run)  # serialised once: the sidecar, the history, the accepted baseline
        update = s.baseline_update and s.baseline is not None and not collect_only  # over it, the old one kept
        refused = refusal(text, s.baseline) if update and s.baseline is not None else None  # said in the report too
        if s.report is not None and not collect_only:
            figure_cache = None if s.cache == "off" else (s.cache_dir or default_cache_dir()) / FIGURE_CACHE
            try:
                comp = self.comparison
                self.written = write_report(
                    run, s.report, sections=[render_comparison(comp)] if comp is not None else [],
                    problems=[*self.comparison_problems, *([f"baseline NOT updated: {refused}"] if refused else [])],
                    figures=s.figures, figure_cache=figure_cache, sidecar=text,
                )  # fmt: skip
            except ReportWriteError as e:  # the verdicts still reach the terminal; the old set is kept
                self.not_written = str(e)
        not_updated = bool(refused)  # asked to replace the baseline and refused (a partial run, ...): exit 12
        if refused:
            self.gate_lines.append((f"baseline NOT updated: {refused}", True))
        elif update and s.baseline is not None:
            try:
                kept = accept(text, s.baseline)
            except (AcceptError, OSError) as e:  # the file could not be written (the report is out already)
                not_updated = True
                self.gate_lines.append((f"baseline NOT updated: {e}", True))
            else:
                old = f"; the old one is kept as {kept}" if kept else ""
                self.gate_lines.append((f"baseline updated: this run's JSON is now {s.baseline}{old}", False))
        comp = self.comparison
        inexact = comp is not None and s.baseline_exact and bool(comp.differences)
        session.exitstatus = exit_status(  # the one place the session's status is set (docs/report.md)
            int(session.exitstatus), bool(failing) or inexact, gate_status, bool(self.not_written) or not_updated
        )
        if s.autosave and not collect_only:
            try:
                self.saved = save_run(text, session.config.rootpath, run.env)
            except OSError as e:
                self.not_saved = f"run not saved to the history: {e}"

    def _gate(self, run: RunData, pinned: int) -> int:
        """Compare the run with the baseline once, judge the gate, put it in the run; return its exit status."""
        s = self.settings
        if self.baseline is None:
            return 0
        mode = s.baseline_fail
        try:
            margins = dict(s.baseline_margins)
            self.comparison = compare(run, self.baseline, str(s.baseline or ""), s.tolerance, margins)
        except Exception as e:  # the report names it; the gate cannot decide
            self.comparison_problems = [f"the comparison with {s.baseline} failed: {type(e).__name__}: {e}"]
            self.gate_lines = [(f"claim baseline: UNDECIDED — the comparison failed: {type(e).__name__}: {e}", True)]
            return EXIT_UNDECIDED if mode else 0
        gate = judge(self.comparison, pinned)
        run.gate = gate.to_dict(self.comparison, mode)
        code = gate.exit_code(mode)
        self.gate_lines = [(gate.line(), bool(code) or gate.status.value != "PASS")]
        self.gate_lines += [(f"    {d}", d.startswith(("worse", "missing"))) for d in gate.details()]
        self.gate_lines.append((f"    {gate.consequence(mode)}", bool(code)))
        if gate.status.value != "PASS":
            self.gate_lines.append((f"    {ACCEPT_HINT}", False))
        return code

    def _states(self, run: RunData) -> None:
        """Put each claim's ledger state in the run: confirmed, registered (not confirmed) or changed."""
        self.changed = []
        for r in self.results:
            proto = r.protocol
            if proto is None:
                continue
            code = run.code.get(r.claim_id, {})
            if not proto.declared:
                run.ledger[r.claim_id] = "exploratory: no protocol declared (every unit must pass)"
            elif self.ledger.path is None:
                run.ledger[r.claim_id] = "no ledger: no ledger is set (--claim-ledger), so no version is registered"
            elif not code.get("fingerprint"):
                run.ledger[r.claim_id] = "unknown: no test of the claim reported the fingerprint of its code"
            else:
                state = self.ledger.state(r.claim_id, code["fingerprint"], code.get("engine", ""))
                run.ledger[r.claim_id] = state.text
                if state.kind == "changed":
                    self.changed.append(r.claim_id)
                    run.ledger[r.claim_id] += (
                        "; labelled only: the run is declared exploratory"
                        if self.settings.exploratory
                        else "; this fails the session (or declare the run exploratory: --claim-exploratory)"
                    )
                code["state"] = state.kind
                code["confirmed on"] = str(state.confirmation.get("engine")) if state.confirmation else ""

    def _expectations_note(self, same_block: bool, other_kernels: str = "") -> str:
        """Return which expectations this run was held to, and why (``other_kernels``: numerics not the pins')."""
        s = self.settings
        if s.expectations_off:
            return "off (--claim-expectations= is empty): no verdict or statistic is held to a pin"
        if s.expected_at is None:
            return ""
        if s.expected_at.absent is not None:
            tables = ", ".join(s.expected_at.absent) or "none"
            return (
                f"{s.expected_source} has no pins for budget {s.budget.name} (its budgets: {tables}): no verdict or "
                "statistic is held to a pin"
            )
        where = f"{s.expected_source} pins budget {s.budget.name} on {s.expected_at.describe()}"
        if same_block and not other_kernels:
            return f"{where}: verdicts, controls and statistics are compared"
        if not same_block:
            return (
                f"{where}; this run draws base seed {s.seed} ({s.pool} pool), another block of seeds, so only the "
                "verdicts of claims and parts are compared (statistics hold only on the block they were measured on)"
            )
        measured = sorted(cid for cid, pin in s.expected.items() if pin.rounding)
        unmeasured = sorted(cid for cid, pin in s.expected.items() if not pin.rounding)
        how = (
            f"{', '.join(measured)} (pinned with a measured rounding spread) are compared statistic by statistic, "
            "each chaotic statistic (one whose count rounding moved) at the verdict level"
            if measured
            else ""
        )
        rest = f"{', '.join(unmeasured)} by the verdicts of claims and parts alone" if unmeasured else ""
        return (
            f"{where}; this run rounds under other numerics ({other_kernels}): {'; '.join(x for x in (how, rest) if x)}"
        )

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
                "protocol status": self.run.ledger.get(r.claim_id, ""),
            }
        return out

    def _to_junitxml(self, config: pytest.Config) -> None:
        """Add each claim's verdict to the junit XML writer (any plugin with ``add_global_property``) as properties."""
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
        self._summary(terminalreporter)
        if self.not_written:
            terminalreporter.write_line(
                f"claim report NOT written: {self.not_written}; the previous report set is kept as it was "
                f"(exit status {REPORT_NOT_WRITTEN})",
                red=True,
            )
        if self.not_saved:
            terminalreporter.write_line(self.not_saved, red=True)

    def _summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        terminalreporter.write_sep("=", "claim verdicts")
        run = self.run
        for line, red in terminal_lines(run, self.results):
            terminalreporter.write_line(line, red=red, bold=not red)
        for cid in self.changed:
            terminalreporter.write_line(f"{cid} {run.ledger[cid]}", red=not self.settings.exploratory)
        if run.expectations and not run.expectations.endswith("are compared"):
            terminalreporter.write_line(f"expectations: {run.expectations}")
        for line in run.rounding:
            terminalreporter.write_line(f"held at the verdict level: {line}")
        source = self.settings.expected_source  # what to do about a deviation depends on where the pins came from
        fix = "pin the known results in an expectations file (--claim-expectations)"
        if source and not source.startswith("the baseline"):
            fix = (
                f"if this change is intended, rewrite {source} with `claimcheck expectations "
                f"<this run's .json> --budget {self.settings.budget.name}`"
            )
        elif source:
            fix = f"compare with the baseline's report; {ACCEPT_HINT}"
        for line in self.deviations:  # a pin of another seed block says what to do itself
            terminalreporter.write_line(f"deviation: {line}" + ("" if "re-pin it" in line else f" ({fix})"), red=True)
        if self.saved is not None:
            terminalreporter.write_line(f"run saved to the history: {self.saved}")
        for line, red in self.gate_lines:
            terminalreporter.write_line(line, red=red, bold=not red and line.startswith("claim baseline"))
        if self.comparison is not None:
            for line in self.comparison.differences if self.settings.baseline_exact else ():
                terminalreporter.write_line(f"not bit-identical to the baseline: {line}", red=True)
        w = self.written
        if w is None:
            return
        link = f", through the symbolic link {self.settings.report_link}" if self.settings.report_link else ""
        terminalreporter.write_sep(
            "-", f"claim report written to {w.report} (+ {w.json.name}, {len(w.figures)} figures{link})"
        )
        for line in w.left_alone:
            terminalreporter.write_line(line, red=True)


def carry_results(item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], meta: Any) -> None:
    """Put what a claim test measured on its report (``user_properties``): under xdist it reaches the controller."""
    if report.skipped:
        outcome: str | None = "skipped"
    elif report.passed:
        outcome = "passed" if report.when == "call" else None
    else:
        outcome = "error"
    if outcome is not None:
        rec = item.stash.get(RECORD_KEY, None)
        message = ""
        if report.skipped and isinstance(report.longrepr, tuple):
            message = str(report.longrepr[2]).removeprefix("Skipped: ")
        elif call.excinfo is not None:
            message = f"{call.excinfo.typename}: {call.excinfo.value}"
        payload: dict[str, Any] = {
            "nodeid": item.nodeid,
            "claim_id": meta[0],
            "title": meta[1],
            "source": meta[2],
            "outcome": outcome,
            "message": message,
            "record": record_json(rec) if rec is not None and report.when == "call" else None,
        }
        proto = claim_protocol_of(item)
        if proto is not None:
            payload["protocol"] = proto.to_dict()
            payload["code"] = core_of(item.config).claim_code(item) if proto.declared else None
        if report.when == "call":
            before = item.stash.get(COUNTS_KEY, None)  # what the store counted before the call
            payload["counts"] = {}
            if before is not None:
                now = replace(core_of(item.config).store.counts)
                now.add(before, sign=-1)
                payload["counts"] = {k: v for k, v in asdict(now).items() if v}
        report.user_properties.append((PROPERTY_KEY, json.dumps(payload)))
        units = item.stash.get(UNITS_KEY, None)
        if report.when == "call" and units is not None and units.reserve is not None:
            gate = {"nodeid": item.nodeid, "units": asdict(units.reserve.units)}
            report.user_properties.append((GATE_KEY, json.dumps(gate)))


def write_refusal(config: pytest.Config, settings: Settings, reason: str) -> str:
    """Write the report of a session that could not start (``reason``: the suite's refusal); say where, or why not."""
    if settings.report is None or config.option.collectonly:
        return "no claim report was asked for"
    env = {"run": f"did not start: {reason}", RERUN_KEY: settings.rerun_options}
    run = RunData(title=str(config.getini("claim_title")), env=env, incomplete=[NOT_STARTED + reason])
    try:
        write_report(run, settings.report, figures=False)
    except ReportWriteError as e:
        return str(e)
    return f"the claim report {settings.report} says so"
