"""Calibration families of C6's decisions: samples of seeds' training-error curves with and without residuals.

A case is a sample: ``units`` seeds (standard's 6 since v5; 12 in v3-v4) drawn in one world, on the grid that decides C6
(standard: N = 256 sentences, T = 200 steps, depths 1 and 6). The world (its gap, its trend) is
drawn once per case; each seed draws its own curves in it (start, tau, dither, spikes). The parts
are mean parts, so a case is decided as the claim decides a sample: the mean over its seeds with
the one-look Student-t interval (``claimcheck.decide.calibration.decide_case``).

A run's error is a count of sentences: k_t = floor(N e(t) + u_t), u_t uniform on [0, 1) (a dithered
count), around the share e(t) = f + (e0 - f) exp(-t/tau), e0 0.4..0.6 (a random head starts near
chance). Each family fixes the *window level* of each arm, e at the middle of the window (steps
T/2..T), where the decision takes a median; f follows from it. tau is 2..T/4, short enough for the
level to be reached from e0. Real runs add two things the families carry: catapult spikes (the error
jumps by 5-45% of N for 1-4 steps and comes back, 1-3 times in the window: seen in every exploratory
residual run at L = 1, N = 256, lr 0.5 x 2/rho), and a start that differs between the arms (their
features differ, so a shared head starts at different errors).

The smallest advantage the claim counts is delta (the part's threshold; 0.01 on the deciding
grid, 2.6 sentences of 256). The families keep clear of it on both sides, and say so:

"L=<depth>" (window error without minus with > delta). Must pass: a real gap, 2 delta..0.3 (5 to
77 sentences of 256); the same with spikes in the residual run; a gap reached late (the run without
residuals is far ahead in the first half and behind in the window); a real gap with the residual
run at zero error. Must fail: a tie (the same e(t); only the dither differs); a tie with spikes in
the run without residuals (a mean over the window would count them as an advantage); a gap of 0.1
to 2 sentences (docs/claims-reading.md: on 24 sentences a difference of one is a tie in practice); a head
start only (the residual run starts 0.05..0.3 lower and the lead decays with tau_h <= T/10, gone
before the window: a mean over steps 1..T counts it); a sample both runs memorise before the window.
Not in either family: gaps between 2 sentences and 2 delta (0.008..0.02 at N = 256), which one unit
cannot tell from delta within its count resolution (a median over the window is a count, +-1
sentence); the mean over units decides them, and the claim-level simulation of the design record
(records/claims/c6.md) shows how often.

"trend" (change of the advantage from the shallowest to the deepest depth > -delta). Must pass: the
advantage holds (the same gap 2 delta..0.3 at both depths); it grows (x1.5..4); it grows from a
deficit (the run without residuals ahead by 2 delta..0.1 at the shallowest depth, behind by
2 delta..0.3 at the deepest); it holds with spikes in the residual runs. Must fail: it shrinks
(x0..0.5, from 4 delta..0.3, so that it loses at least 2 delta); it reverses (from 2 delta..0.3 to a
deficit of 2 delta..0.1). Not in either family: losses between 0 and 2 delta, which a unit cannot
tell from "holds" within +-2 sentences of count resolution (four medians).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome, decide
from claimcheck.protocol.spec import Case, ClaimProtocol, Expect, Family
from qin2025.calibration.draw import log_uniform


@dataclass(frozen=True)
class Arm:
    """How one run's error curve is drawn: its level in the window, spikes there, a lead at the start."""

    level: float  # the share of sentences wrong at the middle of the window
    spikes: bool = False  # catapult spikes in the window
    lead: float = 0.0  # a head start: the curve starts this much lower, the lead decaying with tau <= T/10
    tau: tuple[float, float] = (2.0, 0.0)  # range of tau; 0 as the upper end means T/4


def _curve(rng: np.random.Generator, arm: Arm, n: int, steps: int) -> np.ndarray:
    """Return one run's training error E_0..E_T (counts of ``n`` over ``n``) drawn as ``arm`` says."""
    t = np.arange(steps + 1, dtype=np.float64)
    mid = (steps // 2 + 1 + steps) / 2  # the middle of the window
    e0 = float(rng.uniform(0.4, 0.6))
    level = min(max(arm.level, 0.0), e0 - 0.05)
    hi = arm.tau[1] or steps / 4
    # tau short enough that the curve reaches its level from e0 with a floor >= 0 (zero: under half a sentence)
    hi = min(hi, mid / math.log(e0 / max(level, 0.5 / n)))
    tau = log_uniform(rng, arm.tau[0], max(hi, arm.tau[0] * 1.01))
    x = math.exp(-mid / tau)
    floor = max((level - e0 * x) / (1 - x), 0.0)
    share = floor + (e0 - floor) * np.exp(-t / tau)
    if arm.lead:
        share = share - arm.lead * np.exp(-t / log_uniform(rng, 3.0, steps / 10))
    counts = np.floor(np.clip(share, 0.0, 1.0) * n + rng.random(t.size))
    if arm.spikes:
        first = steps // 2 + 1
        for _ in range(int(rng.integers(1, 4))):
            at, width = int(rng.integers(first, steps)), int(rng.integers(1, 5))
            counts[at : at + width] += np.floor(rng.uniform(0.05, 0.45) * n)
    return np.asarray(np.clip(counts, 0, n) / n)


Pair = Callable[[np.random.Generator, int, float], tuple[Arm, Arm, dict[str, float]]]


def _level(rng: np.random.Generator, gap: float = 0.0) -> float:
    """Return the window level of the better run: 1% to 20% wrong, and gap + level <= 0.34 (under e0 - 0.05)."""
    return log_uniform(rng, 0.01, max(min(0.2, 0.34 - abs(gap)), 0.0101))


def real_gap(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """A real gap, 2 delta..0.3."""
    a = log_uniform(rng, 2 * delta, 0.3)
    b = _level(rng, a)
    return Arm(b), Arm(b + a), {"gap": a, "level": b}


def gap_spikes(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """A real gap, 2 delta..0.3, with catapult spikes in the residual run's window."""
    a = log_uniform(rng, 2 * delta, 0.3)
    b = _level(rng, a)
    return Arm(b, spikes=True), Arm(b + a), {"gap": a, "level": b}


def gap_late(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """A real gap in the window, the run without residuals far ahead at the start (it falls fast to a higher floor)."""
    a = log_uniform(rng, 2 * delta, 0.3)
    b = _level(rng, a)
    return Arm(b, tau=(30.0, 0.0)), Arm(b + a, tau=(1.0, 4.0)), {"gap": a, "level": b}


def gap_memorised(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """The residual run at zero error in the window, the other 2 delta..0.3 above."""
    a = log_uniform(rng, 2 * delta, 0.3)
    return Arm(0.0), Arm(a), {"gap": a}


def tie(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """No gap: the same window level; tau and the dither differ."""
    b = _level(rng)
    return Arm(b), Arm(b), {"level": b}


def tie_spikes(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """No gap, catapult spikes in the run without residuals (a mean over the window counts them)."""
    b = _level(rng)
    return Arm(b), Arm(b, spikes=True), {"level": b}


def sliver(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """A gap of 0.1 to 2 sentences in favour of the residual run."""
    s, b = log_uniform(rng, 0.1, 2.0), _level(rng)
    return Arm(b), Arm(b + s / n), {"gap_in_sentences": s, "level": b}


def head_start(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """The residual run starts 0.05..0.3 lower; the lead is gone before the window; the same level there."""
    h, b = float(rng.uniform(0.05, 0.3)), _level(rng)
    return Arm(b, lead=h), Arm(b), {"lead": h, "level": b}


def memorised(rng: np.random.Generator, n: int, delta: float) -> tuple[Arm, Arm, dict[str, float]]:
    """Both runs at zero error before the window, one of them (at random) a little later."""
    return Arm(0.0, tau=(2.0, 8.0)), Arm(0.0, tau=(2.0, 12.0)), {}


def unit_case(rng: np.random.Generator, pair: Pair, depth: int, n: int, steps: int, delta: float, units: int) -> Case:
    """A sample of ``units`` seeds in one world ``pair`` draws: each seed's two runs at ``depth`` ("L=<depth>")."""
    better, worse, params = pair(rng, n, delta)
    sample = [
        {"depth": depth, "better": _curve(rng, better, n, steps), "worse": _curve(rng, worse, n, steps)}
        for _ in range(units)
    ]
    return Case({**params, "units": units}, {"units": sample})


Trend = Callable[[np.random.Generator, float], tuple[float, float, dict[str, float]]]


def holds(rng: np.random.Generator, delta: float) -> tuple[float, float, dict[str, float]]:
    """The same gap 2 delta..0.3 at the shallowest and the deepest depth."""
    a = log_uniform(rng, 2 * delta, 0.3)
    return a, a, {"gap": a}


def grows(rng: np.random.Generator, delta: float) -> tuple[float, float, dict[str, float]]:
    """The gap grows x1.5..4 from the shallowest depth to the deepest (at most 0.33)."""
    a, g = log_uniform(rng, 2 * delta, 0.3), float(rng.uniform(1.5, 4.0))
    return a, min(a * g, 0.33), {"gap_shallowest": a, "factor": g}


def from_deficit(rng: np.random.Generator, delta: float) -> tuple[float, float, dict[str, float]]:
    """The run without residuals ahead by 2 delta..0.1 at the shallowest, behind by 2 delta..0.3 at the deepest."""
    d, a = log_uniform(rng, 2 * delta, 0.1), log_uniform(rng, 2 * delta, 0.3)
    return -d, a, {"deficit_shallowest": d, "gap_deepest": a}


def shrinks(rng: np.random.Generator, delta: float) -> tuple[float, float, dict[str, float]]:
    """The gap shrinks x0..0.5 from 4 delta..0.3 at the shallowest depth."""
    a, r = log_uniform(rng, 4 * delta, 0.3), float(rng.uniform(0.0, 0.5))
    return a, a * r, {"gap_shallowest": a, "factor": r}


def reverses(rng: np.random.Generator, delta: float) -> tuple[float, float, dict[str, float]]:
    """A gap of 2 delta..0.3 at the shallowest depth, a deficit of 2 delta..0.1 at the deepest."""
    a, d = log_uniform(rng, 2 * delta, 0.3), log_uniform(rng, 2 * delta, 0.1)
    return a, -d, {"gap_shallowest": a, "deficit_deepest": d}


def trend_case(
    rng: np.random.Generator,
    trend: Trend,
    depths: Sequence[int],
    n: int,
    steps: int,
    delta: float,
    spikes: bool,
    units: int,
) -> Case:
    """A sample of ``units`` seeds' runs at every depth; the gap moves linearly from the shallowest depth's."""
    first, last, params = trend(rng, delta)
    lo, hi = min(depths), max(depths)
    sample = []
    for _ in range(units):
        better, worse = {}, {}
        for L in depths:
            gap = first + (last - first) * (L - lo) / (hi - lo)
            b = _level(rng, gap)
            up, down = (b, b + gap) if gap >= 0 else (b - gap, b)  # a deficit: the run without residuals is lower
            better[L] = _curve(rng, Arm(up, spikes=spikes), n, steps)
            worse[L] = _curve(rng, Arm(down), n, steps)
        sample.append({"better": better, "worse": worse})
    return Case({**params, "units": units}, {"units": sample})


@dataclass(frozen=True)
class Grid:
    """Where the families are drawn: the deciding grid's depths, sample size, steps, delta, and seeds per case."""

    depths: tuple[int, ...]
    n: int
    steps: int
    delta: float
    cases: int = 200
    units: int = 6  # seeds in a case's sample: standard's units (v5)

    def where(self) -> str:
        """Return the grid in words."""
        return f"N = {self.n}, T = {self.steps}, delta = {self.delta:g}, samples of {self.units} seeds"


def _fam(
    name: str, expect: Expect, gen: Callable[[np.random.Generator], Case], grid: Grid, span: str, why: str
) -> Family:
    return Family(name, expect, gen, grid.cases, f"{span}; {grid.where()}", why)


def advantage_families(depth: int, grid: Grid) -> tuple[Family, ...]:
    """Return the families of C6's part "L=<depth>" on ``grid``."""
    n, steps, delta = grid.n, grid.steps, grid.delta

    def at(pair: Pair) -> Callable[[np.random.Generator], Case]:
        return partial(unit_case, pair=pair, depth=depth, n=n, steps=steps, delta=delta, units=grid.units)

    return (
        _fam("a real gap", "pass", at(real_gap), grid, "gap 2 delta..0.3", "lower error with residuals"),
        _fam(
            "a real gap, spikes in the residual run",
            "pass",
            at(gap_spikes),
            grid,
            "gap 2 delta..0.3; 1-3 spikes of 5-45% of N",
            "a brief spike is not the level the error sits at",
        ),
        _fam(
            "a gap reached late",
            "pass",
            at(gap_late),
            grid,
            "gap 2 delta..0.3; the other run far ahead early",
            "the error once training is under way is what the claim compares",
        ),
        _fam(
            "a real gap, the residual run at zero",
            "pass",
            at(gap_memorised),
            grid,
            "gap 2 delta..0.3",
            "memorised by one run only: a real difference",
        ),
        _fam("a tie", "fail", at(tie), grid, "the same level; tau and dither differ", "neither fits better"),
        _fam(
            "a tie, spikes in the run without residuals",
            "fail",
            at(tie_spikes),
            grid,
            "1-3 spikes of 5-45% of N",
            "a brief spike is not a higher level; a mean over the window would count it",
        ),
        _fam(
            "a gap of 0.1 to 2 sentences",
            "fail",
            at(sliver),
            grid,
            "gap 0.1/N..2/N",
            "a difference of one sentence is a tie in practice (docs/claims-reading.md)",
        ),
        _fam(
            "a head start only",
            "fail",
            at(head_start),
            grid,
            "lead 0.05..0.3, gone before T/2",
            "which run started ahead is not which trains to a lower error; a mean over steps 1..T counts it",
        ),
        _fam(
            "a sample both runs memorise", "fail", at(memorised), grid, "both at zero before T/2", "a tie by capacity"
        ),
    )


def trend_families(grid: Grid) -> tuple[Family, ...]:
    """Return the families of C6's part "trend" on ``grid``."""

    def at(trend: Trend, spikes: bool = False) -> Callable[[np.random.Generator], Case]:
        return partial(
            trend_case,
            trend=trend,
            depths=grid.depths,
            n=grid.n,
            steps=grid.steps,
            delta=grid.delta,
            spikes=spikes,
            units=grid.units,
        )

    return (
        _fam("the advantage holds", "pass", at(holds), grid, "the same gap 2 delta..0.3 at every depth", "'holds'"),
        _fam(
            "the advantage holds, spikes in the residual runs",
            "pass",
            at(holds, spikes=True),
            grid,
            "as above, 1-3 spikes per residual run",
            "'holds'; a spike is not a level",
        ),
        _fam("the advantage grows", "pass", at(grows), grid, "x1.5..4 from shallowest to deepest", "'grows'"),
        _fam(
            "the advantage grows from a deficit",
            "pass",
            at(from_deficit),
            grid,
            "-(2 delta..0.1) at the shallowest, 2 delta..0.3 at the deepest",
            "'grows'",
        ),
        _fam("the advantage shrinks", "fail", at(shrinks), grid, "x0..0.5 from 4 delta..0.3", "it falls with L"),
        _fam(
            "the advantage reverses",
            "fail",
            at(reverses),
            grid,
            "2 delta..0.3 at the shallowest, -(2 delta..0.1) at the deepest",
            "it falls with L",
        ),
    )


# --- the claim-level rule: samples of units, decided as the controller decides -------------------


@dataclass(frozen=True)
class World:
    """Per-unit values of every part and control of C6 in one simulated world: a normal law (mean, sd) each."""

    laws: Mapping[str, tuple[float, float]]  # part or control name -> (mean, sd) of its units' values
    name: str = ""


def simulate_claim(proto: ClaimProtocol, world: World, units: int, reps: int, seed: int = 0) -> dict[str, Counter[str]]:
    """Simulate ``reps`` claims of ``units`` units in ``world``; count each part's and control's verdict.

    Each unit's value is drawn from its law and clipped to the part's bounds, recorded as a claim
    test records it (one check per unit, part or control), and the claim is decided by
    ``claimcheck.decide.verdicts.decide``, the controller's own function: one look (Student-t) or the
    protocol's schedule, Holm over the claim's family. Returns name -> Counter of verdicts
    ("REPRODUCED", ..., and for a control its status), plus "claim".
    """
    rng = np.random.default_rng([seed, units, zlib.crc32(world.name.encode())])
    counts: dict[str, Counter[str]] = {name: Counter() for name in [*world.laws, "claim"]}
    controls = {c.name: c for c in proto.controls}
    for _ in range(reps):
        rec = ClaimRecorder(proto.claim_id, protocol=proto)
        for name, (mean, sd) in world.laws.items():
            ctl = controls.get(name)
            part = proto.part(ctl.part if ctl else name)
            lo, hi = part.bounds or (-math.inf, math.inf)
            for u, v in enumerate(np.clip(rng.normal(mean, sd, units), lo, hi)):
                for stat in part.stats:
                    rec.check(stat.name, float(v), part=part.name, control=ctl.name if ctl else None, unit=u)
        result = decide([TestOutcome("sim", proto.claim_id, "", "", "passed", rec, protocol=proto.to_dict())], proto)
        for p in result.parts:
            if p.name in counts:
                counts[p.name][p.verdict.value] += 1
        for c in result.controls:
            if c.name in counts:
                counts[c.name][c.status] += 1
        counts["claim"][result.verdict.value] += 1
    return counts
