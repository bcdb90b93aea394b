"""Show how far a long claim run has got: per claim, units done of units planned, and the time left.

``Progress`` is the bookkeeping, pure and clocked from outside: a plan (one entry per test: its
claim and its units), one ``finish`` per test as it completes, and ``line()`` to render where the
run stands. A unit is one (test, seed) pair: a seed-parametrised test plans one, a test that runs
all its claim's seeds itself (``claim_seeds`` or ``claim_units``) as many as the protocol gives the budget. The time
left is an estimate: each started claim's remaining units at the seconds per unit it has taken so
far; a claim not yet started at its pace in an earlier cold run at the same budget when pytest's
cache (``config.cache``) remembers one, else at the run's seconds per unit so far.

``ProgressReporter`` hooks it into a pytest session (the plugin registers it on the controller).
Serially it plans from the collected items. Under pytest-xdist the controller sees only test ids:
it plans tests, counts the units each finished test recorded, and still prints a line as claim
tests finish. On a terminal (a TTY) a line carries a bar; in a CI log (not a TTY) it is plain
text. Lines are throttled: one when a claim's last test finishes (if the claim took at least
``MIN_SECONDS``), and between those at most one every ``TTY_EVERY`` (terminal) or ``LOG_EVERY``
(log) seconds, never in a run's first ``MIN_SECONDS`` (a warm rerun prints none) nor before a claim
test was planned or seen (a session of ordinary tests prints none).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MIN_SECONDS = 2.0  # a claim (or run) quicker than this gets no progress line
TTY_EVERY = 3.0  # seconds between lines on a terminal, besides a claim's completion
LOG_EVERY = 15.0  # seconds between lines in a CI log
BAR = 20  # characters of the bar on a terminal
PROPERTY_KEY = "claimcheck"  # the user_properties key the plugin puts each claim test's payload under


@dataclass
class ClaimProgress:
    """One claim's tests and units, planned and done, and the seconds its finished tests took."""

    tests: int = 0
    units: int = 0
    tests_done: int = 0
    units_done: int = 0
    seconds: float = 0.0
    cold: bool = True  # every finished test computed its results (none read from the cache)

    @property
    def finished(self) -> bool:
        """Return whether every planned test of the claim has finished."""
        return self.tests_done >= self.tests > 0


@dataclass
class Progress:
    """Where a run stands: per claim, tests and units planned and done; the time left, estimated.

    ``tests`` counts every planned test (of a claim or not). ``by_units`` says whether the plan
    knows each test's units (made from collected items); without it the run is measured in tests.
    """

    claims: dict[str, ClaimProgress] = field(default_factory=dict)
    tests: int = 0
    tests_done: int = 0
    seconds: float = 0.0  # summed over finished tests
    started: float = 0.0
    by_units: bool = False
    pace: dict[str, float] = field(default_factory=dict)  # claim -> seconds per unit of an earlier cold run

    def plan(self, claim: str | None, units: int = 1) -> None:
        """Add one planned test, of ``claim`` (None: of no claim, or not known), running ``units`` units."""
        self.tests += 1
        if claim is not None:
            c = self.claims.setdefault(claim, ClaimProgress())
            c.tests += 1
            c.units += max(1, units)
            self.by_units = True

    def finish(self, claim: str | None, units: int, seconds: float, cold: bool = True) -> ClaimProgress | None:
        """Count one finished test (of ``claim``, ``units`` units, ``seconds`` long); return its claim's progress.

        ``cold`` says the test computed its results rather than reading them from a cache.
        """
        self.tests_done += 1
        self.tests = max(self.tests, self.tests_done)
        self.seconds += seconds
        if claim is None:
            return None
        c = self.claims.setdefault(claim, ClaimProgress())
        c.tests_done += 1
        c.units_done += max(1, units)
        c.tests = max(c.tests, c.tests_done)
        c.units = max(c.units, c.units_done)
        c.seconds += seconds
        c.cold = c.cold and cold
        return c

    def done_of_planned(self) -> tuple[int, int, str]:
        """Return (done, planned, what): units over the claims when the plan knows them, else tests."""
        if self.by_units:
            cs = self.claims.values()
            return sum(c.units_done for c in cs), sum(c.units for c in cs), "units"
        return self.tests_done, self.tests, "tests"

    def left(self) -> float | None:
        """Return the estimated seconds left, or None before anything has finished (see the module)."""
        if not self.tests_done:
            return None
        if not self.by_units:
            return self.seconds / self.tests_done * (self.tests - self.tests_done)
        started = [c for c in self.claims.values() if c.units_done]
        if not started:
            return None
        rate = sum(c.seconds for c in started) / sum(c.units_done for c in started)
        return sum(
            (c.seconds / c.units_done if c.units_done else self.pace.get(name, rate)) * (c.units - c.units_done)
            for name, c in self.claims.items()
        )

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
        left = self.left()
        parts.append("time left unknown" if left is None else f"about {clock_text(left)} left")
        text = ", ".join(parts)
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
    """Return (claim id, distinct units its checks and exclusions name, cold) from a claim test's payload.

    The payload is the plugin's JSON, its record a JSON string in it; cold means the test read
    nothing from the cache. One that cannot be read counts as a test of no known claim with no
    units recorded, so its plan counts (progress never stops a run).
    """
    try:
        p = json.loads(payload)
        record = p.get("record") or "{}"
        record = json.loads(record) if isinstance(record, str) else record
        units = {str(c.get("unit", "")) for c in [*record.get("checks", []), *record.get("exclusions", [])]}
        return str(p["claim_id"]), len(units - {""}), not (p.get("counts") or {}).get("cached")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, 0, False


def units_of(item: Any, seeds_of: Callable[[Any], list[int]]) -> int:
    """Return the units a claim test runs: one if seed-parametrised, else its claim's seeds if it takes them all.

    A test takes them all through ``claim_seeds`` or ``claim_units`` (the protocol's batches: the
    plugin's ``seeds_of`` gives a sequential claim its first look, and a finished test counts the
    units it recorded, so the plan grows when a claim looks again).
    """
    names = getattr(item, "fixturenames", ())
    takes_all = "claim_seeds" in names or "claim_units" in names
    return 1 if "claim_seed" in names or not takes_all else len(seeds_of(item))


def terminal_writer(config: Any) -> tuple[Callable[[str], None], bool]:
    """Return (write one line, whether the output is a terminal) for pytest's terminal reporter.

    Writes nothing without a terminal reporter or under ``-qq``.
    """
    if config.pluginmanager.get_plugin("terminalreporter") is None or config.getoption("verbose") < -1:
        return (lambda line: None), False
    tw = config.get_terminal_writer()

    def write(line: str) -> None:
        if tw.width_of_current_line:  # after pytest's dots: a line of its own
            tw.line()
        tw.line(line)

    stream = sys.__stdout__
    return write, bool(stream is not None and stream.isatty())


class ProgressReporter:
    """Print ``Progress`` lines as tests finish (pytest hooks, duck-typed: this module imports no pytest).

    ``claim_of(item)`` gives an item's claim id (or None) and ``seeds_of(item)`` its claim's unit
    seeds, for the plan; lines go to pytest's terminal reporter (``terminal_writer``) of ``config``.
    """

    def __init__(
        self,
        config: Any,
        claim_of: Callable[[Any], str | None],
        seeds_of: Callable[[Any], list[int]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.claim_of = claim_of
        self.seeds_of = seeds_of
        self.clock = clock
        self.progress = Progress(started=clock())
        self.planned: dict[str, int] = {}  # node id -> units, when planned from items
        self.last = self.progress.started

    def pytest_collection_finish(self, session: Any) -> None:
        for item in session.items:
            claim = self.claim_of(item)
            units = units_of(item, self.seeds_of) if claim is not None else 1
            self.planned[item.nodeid] = units
            self.progress.plan(claim, units)
        cache = getattr(self.config, "cache", None)  # None under -p no:cacheprovider
        if cache is not None:
            self.progress.pace = dict(cache.get(self._pace_key(), {}))

    def pytest_sessionfinish(self, session: Any) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is not None and self.progress.paces():
            cache.set(self._pace_key(), dict(cache.get(self._pace_key(), {})) | self.progress.paces())

    def _pace_key(self) -> str:
        return f"claimcheck/pace/v2/{self.config.getoption('claim_budget') or 'default'}"  # v2: units as recorded

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.progress.tests:  # every worker collects the same ids: plan them once, as tests
            for _ in ids:
                self.progress.plan(None)

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Count a test when its call finishes (or its setup fails or skips it)."""
        if not (report.when == "call" or (report.when == "setup" and not report.passed)):
            return
        payload = next((str(v) for k, v in report.user_properties if k == PROPERTY_KEY), None)
        claim, recorded, cold = recorded_units(payload) if payload is not None else (None, 0, False)
        units = recorded or self.planned.get(report.nodeid, 1)  # what it ran: a sequential test may stop early or go on
        c = self.progress.finish(claim, units, float(report.duration), cold)
        now = self.clock()
        if now - self.progress.started < MIN_SECONDS or not self.progress.claims:  # no claim: not a claim run
            return
        write, tty = terminal_writer(self.config)  # the terminal reporter registers after this plugin
        ended = c is not None and c.finished and c.seconds >= MIN_SECONDS
        if ended or now - self.last >= (TTY_EVERY if tty else LOG_EVERY):
            self.last = now
            write(self.progress.line(now, tty, claim))
