"""Show how far a long claim run has got: per claim, units (test, seed pairs) done of planned, and the time left."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from claimcheck.decide.record import PROPERTY_KEY
from claimcheck.pytest.markers import claim_meta, claim_protocol_of, unit_seeds
from claimcheck.pytest.options import Settings

MIN_SECONDS = 2.0  # a claim (or run) quicker than this gets no progress line
TTY_EVERY = 3.0  # seconds between lines on a terminal, besides a claim's completion
LOG_EVERY = 15.0  # seconds between lines in a CI log
BAR = 20  # characters of the bar on a terminal
PLAN_KEY = "claimcheck-plan"  # the user_properties key of a worker's plan: node id -> [claim, units, cap]


@dataclass
class ClaimProgress:
    """One claim's tests and units, planned and done, and the seconds its finished tests took."""

    tests: int = 0
    units: int = 0
    tests_done: int = 0
    units_done: int = 0
    seconds: float = 0.0
    cold: bool = True  # every finished test computed its results (none read from the cache)
    cap: int = 0  # units planned if every sequential test runs to its cap (= units for a fixed design)

    @property
    def finished(self) -> bool:
        """Return whether every planned test of the claim has finished."""
        return self.tests_done >= self.tests > 0


@dataclass
class TestPlan:
    """One planned test: its claim, the units it plans (a sequential test: its first look) and its cap."""

    claim: str | None
    units: int
    cap: int
    done: bool = False


@dataclass(frozen=True)
class Estimate:
    """The time left, and what it rests on: the tests no pace is known for, the cap of sequential claims."""

    seconds: float  # every test not yet finished, at the units it plans
    untimed: tuple[str, ...] = ()  # claims with a test at the run's average pace (none measured: may be short)
    at_cap: float = 0.0  # the time left if every sequential claim runs to its cap
    sequential: tuple[str, ...] = ()  # those sequential claims


@dataclass
class Progress:
    """Where a run stands: per claim, tests and units planned and done; the time left, estimated.

    ``tests`` counts every planned test; without ``by_units`` the run is measured in tests. A test not yet finished
    is estimated at the best pace known: its own earlier (``test_pace``) x ``load``; else its claim's in this run;
    else its claim's earlier (``pace``) x ``load``; else the run's so far (its claim named untimed).
    """

    claims: dict[str, ClaimProgress] = field(default_factory=dict)
    tests: int = 0
    tests_done: int = 0
    seconds: float = 0.0  # summed over finished tests
    started: float = 0.0
    by_units: bool = False
    pace: dict[str, float] = field(default_factory=dict)  # claim -> seconds per unit of an earlier cold run
    test_pace: dict[str, float] = field(default_factory=dict)  # node id -> seconds per unit of an earlier cold run
    planned: dict[str, TestPlan] = field(default_factory=dict)  # node id -> its plan
    finished_paces: dict[str, float] = field(default_factory=dict)  # node id -> this run's seconds per unit (cold)
    predicted: float = 0.0  # earlier paces' seconds for this run's finished cold tests that had one
    measured: float = 0.0  # what those tests took in this run

    def plan(self, claim: str | None, units: int = 1, nodeid: str | None = None, cap: int | None = None) -> None:
        """Add one planned test of ``claim`` (None: none or unknown), ``units`` up to ``cap``, named ``nodeid``."""
        self.tests += 1
        units = max(1, units)
        cap = max(units, cap or units)
        self.planned[nodeid or f"#{self.tests}"] = TestPlan(claim, units, cap)
        if claim is not None:
            c = self.claims.setdefault(claim, ClaimProgress())
            c.tests += 1
            c.units += units
            c.cap += cap
            self.by_units = True

    def adopt(self, plan: dict[str, tuple[str | None, int, int]]) -> bool:
        """Plan from a worker's ``plan`` (node id -> claim, units, cap) unless planned by units or a test finished."""
        if self.by_units or self.tests_done or not plan:
            return False
        self.tests, self.claims, self.planned = 0, {}, {}
        for nodeid, (claim, units, cap) in plan.items():
            self.plan(claim, units, nodeid, cap)
        return True

    def finish(
        self, claim: str | None, units: int, seconds: float, cold: bool = True, nodeid: str | None = None
    ) -> ClaimProgress | None:
        """Count one finished test (``cold``: it computed its results); return its claim's progress."""
        self.tests_done += 1
        self.tests = max(self.tests, self.tests_done)
        self.seconds += seconds
        units = max(1, units)
        unfinished = (k for k, t in self.planned.items() if t.claim == claim and not t.done)
        key = nodeid if nodeid in self.planned else next(unfinished, None)  # else its claim's first not finished
        if key is not None:
            self.planned[key].done = True
        if cold and claim is not None and (nodeid or key):
            name = str(nodeid or key)
            self.finished_paces[name] = seconds / units
            if name in self.test_pace:  # how this run's machine compares with the earlier run's
                self.predicted += self.test_pace[name] * units
                self.measured += seconds
        if claim is None:
            return None
        c = self.claims.setdefault(claim, ClaimProgress())
        c.tests_done += 1
        c.units_done += units
        c.tests = max(c.tests, c.tests_done)
        c.units = max(c.units, c.units_done)
        c.cap = max(c.cap, c.units)
        c.seconds += seconds
        c.cold = c.cold and cold
        return c

    def done_of_planned(self) -> tuple[int, int, str]:
        """Return (done, planned, what): units over the claims when the plan knows them, else tests."""
        if self.by_units:
            cs = self.claims.values()
            return sum(c.units_done for c in cs), sum(c.units for c in cs), "units"
        return self.tests_done, self.tests, "tests"

    def load(self) -> float:
        """Return this run's seconds over the earlier paces' for the finished tests that had one (1 without any)."""
        return min(max(self.measured / self.predicted, 0.2), 5.0) if self.predicted > 0 and self.measured > 0 else 1.0

    def estimate(self) -> Estimate | None:
        """Return the time left and what it rests on (see the class), or None before anything has finished."""
        if not self.tests_done:
            return None
        if not self.by_units:
            return Estimate(self.seconds / self.tests_done * (self.tests - self.tests_done))
        started = [c for c in self.claims.values() if c.units_done]
        if not started:
            return None
        rate, load = sum(c.seconds for c in started) / sum(c.units_done for c in started), self.load()
        left = at_cap = 0.0
        untimed: set[str] = set()
        sequential: set[str] = set()
        for key, t in self.planned.items():
            if t.done or t.claim is None:
                continue
            c = self.claims[t.claim]
            if key in self.test_pace:
                pace = self.test_pace[key] * load
            elif c.units_done:
                pace = c.seconds / c.units_done
            elif t.claim in self.pace:
                pace = self.pace[t.claim] * load
            else:
                pace = rate
                untimed.add(t.claim)
            left += pace * t.units
            at_cap += pace * t.cap
            if t.cap > t.units:
                sequential.add(t.claim)
        return Estimate(left, tuple(sorted(untimed)), at_cap, tuple(sorted(sequential)))

    def paces(self) -> dict[str, float]:
        """Return the seconds per unit of each finished claim whose tests all computed their results."""
        return {k: c.seconds / c.units_done for k, c in self.claims.items() if c.finished and c.cold}

    def line(self, now: float, tty: bool, claim: str | None = None) -> str:
        """Return the run's state as one line, naming ``claim`` (the one that just moved) first."""
        done, planned, what = self.done_of_planned()
        share = done / planned if planned else 0.0
        parts = []
        if claim is not None and claim in self.claims:
            c = self.claims[claim]
            units = f"{c.units_done}/{c.units}" if self.by_units else f"{c.units_done}"
            parts.append(f"{claim} {units} units ({c.tests_done}/{c.tests} tests, {c.seconds:.1f} s)")
        parts.append(f"run {done}/{planned} {what}")
        parts.append(f"{clock_text(now - self.started)} elapsed")
        e = self.estimate()
        parts.append("time left unknown" if e is None else f"about {clock_text(e.seconds)} left")
        text = ", ".join(parts)
        if e is not None and e.untimed:
            text += f" (or more: {', '.join(e.untimed)} not timed yet, counted at the run's pace)"
        if e is not None and e.sequential and e.at_cap > e.seconds:
            text += f"; up to {clock_text(e.at_cap)} if {', '.join(e.sequential)} run to the cap (sequential)"
        if tty:
            filled = min(BAR, round(share * BAR))
            return f"claimcheck [{'#' * filled}{'.' * (BAR - filled)}] {share:4.0%} {text}"
        return f"claimcheck progress {share:.0%}: {text}"


def clock_text(seconds: float) -> str:
    """Return ``seconds`` as m:ss, or h:mm:ss from an hour on (rounded up)."""
    s = max(0, math.ceil(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def recorded_units(payload: str) -> tuple[str | None, int, bool]:
    """Return (claim id, distinct units its record names, cold: nothing cached) of a payload, or (None, 0, False)."""
    try:
        p = json.loads(payload)
        record = p.get("record") or "{}"
        record = json.loads(record) if isinstance(record, str) else record
        units = {str(c.get("unit", "")) for c in [*record.get("checks", []), *record.get("exclusions", [])]}
        return str(p["claim_id"]), len(units - {""}), not (p.get("counts") or {}).get("cached")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, 0, False


def uncaptured(config: Any) -> Any:
    """Return a context in which pytest's output capture is suspended (a no-op without a capture manager)."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    return capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext()


def say_uncaptured(config: Any, line: str) -> None:
    """Write ``line`` to standard error past pytest's capture (a wait for a lock is seen while it lasts)."""
    with uncaptured(config):
        _stderr_line(line)


def _stderr_line(line: str) -> None:
    if sys.__stderr__ is not None:
        sys.__stderr__.write(line + "\n")
        sys.__stderr__.flush()


class _Hooks:
    """What the controller's reporter and a worker's plan sender share: the plan, the clock, ``looked``."""

    def __init__(self, config: Any, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.started = self.last = time.monotonic()
        self.started_at: dict[str, float] = {}  # node id -> when it started (for a long test's own line)

    def plan_of(self, items: list[Any]) -> dict[str, tuple[str | None, int, int]]:
        """Return the plan of ``items``: node id -> (claim, units of its first look, units up to its cap).

        Only a test using ``claim_seeds`` or ``claim_units`` runs all its claim's seeds; any other runs one unit.
        """
        s = self.settings
        plan: dict[str, tuple[str | None, int, int]] = {}
        for item in items:
            meta = claim_meta(item)
            names = getattr(item, "fixturenames", ())
            if meta is None or "claim_seed" in names or not ("claim_seeds" in names or "claim_units" in names):
                plan[item.nodeid] = (None if meta is None else meta[0], 1, 1)
                continue
            proto = claim_protocol_of(item)
            seeds = unit_seeds(s, proto)
            first = seeds if proto is None else seeds[: proto.seeds.looks(s.budget.name, s.budget.seeds)[0]]
            plan[item.nodeid] = (meta[0], len(first), len(seeds))
        return plan

    def _writer(self) -> tuple[Callable[[str], None], bool]:
        """Return (write one line, whether output is a terminal); a no-op without a terminal reporter or under -qq."""
        config = self.config
        if config.pluginmanager.get_plugin("terminalreporter") is None or config.getoption("verbose") < -1:
            return (lambda line: None), False
        tw = config.get_terminal_writer()

        def write(line: str) -> None:
            if tw.width_of_current_line:  # after pytest's dots: a line of its own
                tw.line()
            tw.line(line)

        stream = sys.__stdout__
        return write, bool(stream is not None and stream.isatty())

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.started_at[nodeid] = time.monotonic()

    def looked(self, nodeid: str, claim: str, units: int, cap: int, undecided: bool = True) -> None:
        """Say, throttled, that a sequential test looked at ``units`` and goes on (up to ``cap``), past the capture."""
        now = time.monotonic()
        write, tty = self._writer()
        if now - self.last < (TTY_EVERY if tty else LOG_EVERY) or now - self.started < MIN_SECONDS:
            return
        self.last = now
        worker = str(getattr(self.config, "workerinput", {}).get("workerid", ""))
        state = "undecided so far (sequential)" if undecided else "decided; more units for the baseline gate"
        where = f"[{worker}] " if worker else ""
        line = (
            f"{where}claimcheck: {claim} still running {nodeid.rsplit('::', 1)[-1]}: {units} of up to {cap} units "
            f"looked at, {state}, {clock_text(now - self.started_at.get(nodeid, now))} in this test, "
            f"{clock_text(now - self.started)} elapsed"
        )
        with uncaptured(self.config):
            write(line)


class PlanSender(_Hooks):
    """A pytest-xdist worker's hooks: put its plan on its first test's reports (the controller collects nothing)."""

    plan = ""  # the plan as JSON, until it is sent

    def _writer(self) -> tuple[Callable[[str], None], bool]:
        return _stderr_line, sys.__stderr__ is not None and sys.__stderr__.isatty()

    def pytest_collection_finish(self, session: Any) -> None:
        plan = self.plan_of(session.items)
        self.plan = json.dumps(plan) if any(claim is not None for claim, _, _ in plan.values()) else ""

    def pytest_runtest_setup(self, item: Any) -> None:
        if self.plan:  # the first test this worker runs: its reports (setup first) carry the plan
            item.user_properties.append((PLAN_KEY, self.plan))
            self.plan = ""


def read_plan(text: str) -> dict[str, tuple[str | None, int, int]]:
    """Return a plan sent by ``PlanSender`` (empty if it cannot be read: progress never stops a run)."""
    try:
        raw = json.loads(text)
        return {str(k): (None if c is None else str(c), int(u), int(m)) for k, (c, u, m) in raw.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


class ProgressReporter(_Hooks):
    """Print ``Progress`` lines as tests finish; keep cold tests' paces in pytest's cache for later runs."""

    def __init__(self, config: Any, settings: Settings) -> None:
        super().__init__(config, settings)
        self.progress = Progress(started=self.started)

    def pytest_collection_finish(self, session: Any) -> None:
        for nodeid, (claim, units, cap) in self.plan_of(session.items).items():
            self.progress.plan(claim, units, nodeid, cap)
        cache = getattr(self.config, "cache", None)  # None under -p no:cacheprovider
        if cache is not None:
            self.progress.pace = dict(cache.get(self._pace_key("v2"), {}))
            self.progress.test_pace = dict(cache.get(self._pace_key("v3-tests"), {}))

    def pytest_sessionfinish(self, session: Any) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None:
            return
        for version, paces in (("v2", self.progress.paces()), ("v3-tests", self.progress.finished_paces)):
            if paces:
                cache.set(self._pace_key(version), dict(cache.get(self._pace_key(version), {})) | paces)

    def _pace_key(self, version: str) -> str:
        """Return the pytest-cache key of the paces: v2 per claim (units as recorded), v3-tests per node id."""
        return f"claimcheck/pace/{version}/{self.config.getoption('claim_budget') or 'default'}"

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.progress.tests:  # every worker collects the same ids: plan them once, as tests
            for _ in ids:
                self.progress.plan(None)

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Count a test when its call finishes (or its setup fails or skips it)."""
        sent = next((str(v) for k, v in report.user_properties if k == PLAN_KEY), None)
        if sent is not None and not self.progress.by_units:
            self.progress.adopt(read_plan(sent))
        if not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        payload = next((str(v) for k, v in report.user_properties if k == PROPERTY_KEY), None)
        claim, recorded, cold = recorded_units(payload) if payload is not None else (None, 0, False)
        plan = self.progress.planned.get(report.nodeid)
        units = recorded or (plan.units if plan else 1)  # what it ran: a sequential test may stop early or go on
        c = self.progress.finish(claim, units, float(report.duration), cold, report.nodeid)
        now = time.monotonic()
        if now - self.progress.started < MIN_SECONDS or not self.progress.claims:  # no claim: not a claim run
            return
        write, tty = self._writer()  # the terminal reporter registers after this plugin
        ended = c is not None and c.finished and c.seconds >= MIN_SECONDS
        if ended or now - self.last >= (TTY_EVERY if tty else LOG_EVERY):
            self.last = now
            write(self.progress.line(now, tty, claim))
