"""Calibration families of C5's level decisions (``qin2025.c5.level_speed``): a larger beta faster, or not.

A run's curve has the shape of the real Jena runs (exploratory seeds 0-23 at ci, 0-7 at 4,000
steps): a fast phase that fits the output's scale in a few steps, then a slow, decelerating descent
towards a floor that no run reaches within the horizon:

    L(t) = F + A1 exp(-r1 g t) + A2 tail(g t),

tail = (1 + s/tau)^-p (an offset power law; tau 1..T/4, so from a pure power law to a visible offset,
p 0.3..1.5), drawn in 3 cases of 4 because the real runs' tails are power-law-like, or exp(-r2 s)
(r2 T 0.5..5). F 1.5..9, A2 3..20, L_0 = F + A1 + A2 40..1,700, r1 0.08..1. The factor g is the
run's speed: time runs g times faster (what a larger step does, to first order). Per run (from beta
to beta within a seed) every quantity the world does not move is scattered, ``Scatter``: the
offset tau by 30% and the exponent p by 5% (log sd), F by 5%, A2 by 10%, L_0 by 30%, g by 5%; the
"heavy scatter" families double them.

Must pass: g = factor^beta, factor 1.5..4 (so beta = 0.25 is only 1.11..1.41x faster than
beta = 0); alone, with L_0 rising or falling 10..1,000x through the fast phase (how beta moves L_0
on the real runs), with the floor falling 1.5..3x, with noise (1e-6..1e-4 relative per step).

Must fail: L_0 rises or falls 10..1,000x with beta through the fast phase while the speed does not
move (the start is not the speed); the speed falls with beta (g = factor^-beta); a stall (the speed
grows but towards a floor 2..10x higher: a faster approach to a worse level); no beta effect
(sanity). Zone (a floor reached within T, ``qin2025.c5.level_speed.FLAT``): the floor falls 1.5..3x
with the speed flat, exponential tails fast enough that a run has flattened by T; the decision must
answer "zone" (NaN). Until the core's ``expect="zone"`` lands, that family is declared "fail": a NaN
statistic is a statistic not met.

Every pass and fail family is drawn outside the zone (a case with a flattened run is redrawn and
counted in ``params``), the zone family inside it, so each family's answer is known.

Left out, with the reason (records/claims/c5.md, v4): a lower floor *not* reached within T with
the speed flat, and the whole excess falling with the speed flat. At the horizon both are read as
faster by the reading (lower at equal steps while no floor is observed); for power-law tails the
second is exactly a speed-up (A (g t / tau)^-p = A g^-p (t / tau)^-p), so no measure could call it
otherwise. The decisions' answers on them are measured and reported, not counted.

"order" takes one seed (5 curves); "beta>0 vs beta=0" a whole sample of seeds
(``{"units": [...]}``), decided on the mean as one look decides it (``claimcheck.decide.calibration.decide_case``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.c5.level_speed import in_zone
from qin2025.c5.residual_speed import descends
from qin2025.calibration.draw import jitter, log_uniform

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
STEPS = 400
REDRAWS = 500  # draws per case before a family gives up finding one on its side of the zone


@dataclass(frozen=True)
class Scatter:
    """Per-run log standard deviations of the quantities a world does not move with beta."""

    tau: float = 0.05  # the power law's offset
    p: float = 0.01  # its exponent
    floor: float = 0.01
    amplitude: float = 0.02  # A2, the slow phase's
    start: float = 0.3  # L_0 (through the fast phase: the level is blind to it)
    speed: float = 0.01  # g, where the world does not set it

    def times(self, k: float) -> Scatter:
        """Return this scatter k times over, L_0's kept (the stress rows)."""
        return Scatter(k * self.tau, k * self.p, k * self.floor, k * self.amplitude, self.start, k * self.speed)


RUNS_LIKE = Scatter()
HEAVY = RUNS_LIKE.times(3.0)


@dataclass(frozen=True)
class Effect:
    """How a world moves a run with beta (1: not at all): speeds per beta, and factors from beta = 0 to 1."""

    speeds: tuple[float, ...] | None = None  # g per beta; None: no speed effect (scattered)
    rates: tuple[float, ...] | None = None  # the slow phase's own time factor per beta (steeper); None: 1
    fast: float = 1.0  # A1, the fast phase's amplitude (L_0 through the output's scale)
    floor: float = 1.0  # F
    excess: float = 1.0  # A1 and A2 (reported only: a left-out world)
    noise: float = 0.0  # relative jitter per step
    tail: str = ""  # "exponential" or "power law"; "" draws it (3/4 power law)
    settles: bool = False  # exponential tails fast enough to reach the floor (the zone family)


def _tail(
    rng: np.random.Generator, effect: Effect, steps: int
) -> tuple[Callable[[np.ndarray, np.random.Generator, Scatter], np.ndarray], dict[str, Any]]:
    """Draw the slow phase's shape, exponential or offset power law, as a function of (scaled) time."""
    kind = effect.tail or ("power law" if rng.random() < 0.75 else "exponential")
    if kind == "exponential":
        r2 = log_uniform(rng, 10.0, 30.0) / steps if effect.settles else log_uniform(rng, 0.5, 5.0) / steps
        return (lambda s, _r, _sc: np.exp(-r2 * s)), {"tail": kind, "r2": r2}
    tau, p = log_uniform(rng, 1.0, steps / 4), float(rng.uniform(0.3, 1.5))

    def power(s: np.ndarray, r: np.random.Generator, sc: Scatter) -> np.ndarray:
        t_run, p_run = tau * math.exp(r.normal(0.0, sc.tau)), p * math.exp(r.normal(0.0, sc.p))
        return np.asarray((1 + s / t_run) ** -p_run)

    return power, {"tail": kind, "tau": tau, "p": p}


def _curves(
    rng: np.random.Generator, effect: Effect, steps: int, scatter: Scatter
) -> tuple[list[np.ndarray], dict[str, Any]]:
    """Return one seed's curves, one per beta, each quantity times its factor^beta (scattered where it is 1)."""
    t = np.arange(steps + 1, dtype=np.float64)
    tail, shape = _tail(rng, effect, steps)
    r1, floor, a2 = log_uniform(rng, 0.08, 1.0), float(rng.uniform(1.5, 9.0)), log_uniform(rng, 3.0, 20.0)
    start = log_uniform(rng, 40.0, 1700.0)
    out = []
    for j, b in enumerate(BETAS):
        g = effect.speeds[j] if effect.speeds is not None else math.exp(rng.normal(0.0, scatter.speed))
        f = floor * effect.floor**b * math.exp(rng.normal(0.0, scatter.floor))
        slow = a2 * effect.excess**b * math.exp(rng.normal(0.0, scatter.amplitude))
        l0 = start * math.exp(rng.normal(0.0, scatter.start))
        fast = max(l0 - floor - a2, 5.0) * (effect.fast * effect.excess) ** b
        k = effect.rates[j] if effect.rates is not None else 1.0
        curve = f + fast * np.exp(-r1 * g * t) + slow * tail(k * g * t, rng, scatter)
        out.append(jitter(rng, curve, effect.noise) if effect.noise else curve)
    return out, shape


World = Callable[[np.random.Generator], tuple[Effect, dict[str, float]]]


def _speeds(
    rng: np.random.Generator, speed: str, low: float = 1.5
) -> tuple[tuple[float, ...] | None, dict[str, float]]:
    """Draw the speeds per beta: "grows" factor^beta (factor ``low``..4), "falls" factor^-beta, or none ("").

    "marginal": factor 1..1.15, at most 3.6% fewer steps at beta = 0.25 and 13% at beta = 1.
    """
    if speed in ("grows", "marginal"):
        f = log_uniform(rng, low, 4.0) if speed == "grows" else log_uniform(rng, 1.0, 1.15)
        return tuple(f**b for b in BETAS), {"speed_factor": f}
    if speed == "falls":
        f = log_uniform(rng, 1.5, 4.0)
        return tuple(f**-b for b in BETAS), {"speed_falls_by": f}
    return None, {}


def moves(
    rng: np.random.Generator,
    speed: str = "",
    what: str = "",
    low: float = 1.0,
    high: float = 1.0,
    sign: int = 1,
    speed_low: float = 1.5,
    steeper: tuple[float, float] | None = None,
    **fixed: Any,
) -> tuple[Effect, dict[str, float]]:
    """Draw a world: its speeds (``_speeds``, "grows" from ``speed_low``), and ``what`` (an ``Effect`` field) moved.

    ``what`` moves low..high x with beta: fast, floor, excess up for ``sign`` 1 and down for -1; noise
    is the jitter itself. ``steeper`` (lo, hi): the slow phase's own rate x factor^beta, the factor
    drawn in lo..hi, the fast phase's kept. ``fixed`` sets other ``Effect`` fields (tail, settles).
    """
    speeds, params = _speeds(rng, speed, speed_low)
    if steeper is not None:
        f = log_uniform(rng, *steeper)
        fixed["rates"] = tuple(f**b for b in BETAS)
        params["slow_rate_factor"] = f
    effect = Effect(speeds=speeds, **fixed)
    if what:
        m = log_uniform(rng, low, high)
        changes: dict[str, Any] = {what: m if what == "noise" else m**sign}
        effect = replace(effect, **changes)
        params[what if what == "noise" else f"{what}_{'rises' if sign > 0 else 'falls'}_by"] = m
    return effect, params


Row = tuple[str, Expect, World, str, str]


def _rows(sized: bool = False) -> tuple[Row, ...]:
    """Return the worlds of C5's lower parts; ``sized`` (the effect-size part): speed x 2..4 and a marginal speed-up.

    A time rescaling by g saves exactly 1 - 1/g of the steps to a level: at beta = 0.25, speed x 1.5..4
    saves 0.097..0.29 (the order's worlds), x 2..4 saves 0.16..0.29, clear of the 0.1 line.
    """
    low = 2.0 if sized else 1.5
    world = partial(moves, speed_low=low)
    speed, grid = "grows", f"speed x {low:g}..4 from beta 0 to 1"
    fast = partial(world, what="fast", low=10.0, high=1000.0)
    marginal: tuple[Row, ...] = (
        (
            "marginal speed-up",
            "fail",
            partial(moves, speed="marginal"),
            "speed x 1..1.15 from beta 0 to 1",
            "faster, but beta = 0.25 saves at most 3.6% of the steps: not 'significantly' (10%)",
        ),
    )
    return (*(marginal if sized else ()), *_lower_rows(world, fast, speed, grid))


def _lower_rows(world: Callable[..., Any], fast: Callable[..., Any], speed: str, grid: str) -> tuple[Row, ...]:
    return (
        ("speed grows with beta", "pass", partial(world, speed=speed), grid, "a larger beta runs faster"),
        (
            "speed grows, power-law tail",
            "pass",
            partial(world, speed=speed, tail="power law"),
            f"{grid}; tail (1 + g t/tau)^-p, tau 1..T/4",
            "the regime of the real runs: a speed-up is a level change",
        ),
        (
            "speed grows, L_0 rises through the fast phase",
            "pass",
            partial(fast, speed=speed),
            f"{grid}; fast phase (L_0) x 10..1000",
            "the start is not the speed",
        ),
        (
            "speed grows, L_0 falls through the fast phase",
            "pass",
            partial(fast, speed=speed, sign=-1),
            f"{grid}; fast phase (L_0) / 10..1000",
            "the start is not the speed",
        ),
        (
            "speed grows, the floor falls",
            "pass",
            partial(world, speed=speed, what="floor", low=1.5, high=3.0, sign=-1),
            f"{grid}; floor / 1.5..3",
            "faster, towards a lower floor",
        ),
        (
            "speed grows, noisy",
            "pass",
            partial(world, speed=speed, what="noise", low=1e-6, high=1e-4),
            f"{grid}; jitter 1e-6..1e-4 per step",
            "a larger beta runs faster",
        ),
        (
            "L_0 rises through the fast phase, speed flat",
            "fail",
            fast,
            "fast phase (L_0) x 10..1000 from beta 0 to 1",
            "the start world, the speed does not",
        ),
        (
            "L_0 falls through the fast phase, speed flat",
            "fail",
            partial(fast, sign=-1),
            "fast phase (L_0) / 10..1000",
            "the start world, the speed does not",
        ),
        (
            "speed falls with beta",
            "fail",
            partial(world, speed="falls"),
            "speed / 1.5..4 from beta 0 to 1",
            "a larger beta runs slower",
        ),
        (
            "stall: faster towards a higher floor",
            "fail",
            partial(world, speed="grows", what="floor", low=2.0, high=10.0),
            "speed x 1.5..4; floor x 2..10",
            "a faster approach to a worse level is a stall",
        ),
        (
            "no beta effect (sanity)",
            "fail",
            world,
            "speed, L_0 and floor independent of beta",
            "nothing depends on beta",
        ),
        (
            "floor reached within T, floor falls, speed flat (zone)",
            "zone",  # the decision answers NaN + zone: undecided is the right answer
            partial(world, what="floor", low=1.5, high=3.0, sign=-1, tail="exponential", settles=True),
            "floor / 1.5..3; exponential tail r2 T 10..30 (a run flattens by T)",
            "a floor reached within T is a better minimum, not a faster run: undecided (the declared zone)",
        ),
    )


def _draw(
    rng: np.random.Generator, effect: Effect, steps: int, scatter: Scatter, zone: bool
) -> tuple[list[np.ndarray], dict[str, Any], int]:
    """Draw one seed's curves on the family's side of the zone (inside for ``zone``), in the premise; count redraws."""
    for tries in range(REDRAWS):
        curves, shape = _curves(rng, effect, steps, scatter)
        if in_zone(curves) == zone and (zone or all(descends(c) for c in curves)):
            return curves, shape, tries
    raise RuntimeError(f"no case on the {'inside' if zone else 'outside'} of C5's zone in {REDRAWS} draws")


def one_seed(rng: np.random.Generator, world: World, steps: int, scatter: Scatter, zone: bool = False) -> Case:
    """One seed's five runs in ``world``."""
    effect, params = world(rng)
    curves, shape, redrawn = _draw(rng, effect, steps, scatter, zone)
    return Case({**params, **shape, "redrawn": redrawn}, {"betas": list(BETAS), "curves": curves})


def sample(
    rng: np.random.Generator, world: World, seeds: int, steps: int, scatter: Scatter, zone: bool = False
) -> Case:
    """A whole sample of ``seeds`` admitted seeds in ``world`` (its factors drawn once; each seed's curves its own).

    As the claim test excludes a seed with a run outside the premise or in the zone, a seed drawn
    here that falls there is replaced; ``params`` counts them.
    """
    effect, params = world(rng)
    units = []
    redrawn = 0
    for _ in range(seeds):
        curves, _, tries = _draw(rng, effect, steps, scatter, zone)
        units.append({"betas": list(BETAS), "curves": curves})
        redrawn += tries
    return Case({**params, "seeds": seeds, "redrawn": redrawn}, {"units": units})


def _families(
    make: Callable[..., Case], rows: tuple[Row, ...], cases: int, steps: int, what: str, heavy: bool = False
) -> tuple[Family, ...]:
    out = []
    for scatter, tag in ((RUNS_LIKE, ""), (HEAVY, ", heavy scatter")) if heavy else ((RUNS_LIKE, ""),):
        for name, expect, world, grid, why in rows:
            if tag and expect != "pass":
                continue  # heavier scatter makes a must-fail case no easier to pass: the must-pass ones are the test
            zone = "(zone)" in name
            gen = partial(make, world=world, steps=steps, scatter=scatter, zone=zone)
            out.append(Family(f"{name}{tag}", expect, gen, cases, f"{grid}; {what}T = {steps}", why))
    return tuple(out)


def order_families(cases: int = 200, steps: int = STEPS, heavy: bool = False) -> tuple[Family, ...]:
    """Return the families of C5's "order" part (one seed per case); ``heavy`` adds the heavy-scatter must-pass ones."""
    return _families(one_seed, _rows(), cases, steps, "", heavy)


def faster_families(seeds: int, cases: int = 50, steps: int = STEPS, heavy: bool = False) -> tuple[Family, ...]:
    """Return the families of C5's "lower: beta>0 vs beta=0" part (a sample of ``seeds`` seeds per case)."""
    return _families(partial(sample, seeds=seeds), _rows(sized=True), cases, steps, f"{seeds} seeds; ", heavy)


def _steeper_rows(sized: bool) -> tuple[Row, ...]:
    """Return the worlds of C5's steeper parts: the slow phase's own rate x factor^beta, or only what it is blind to.

    Exponential slow phases, where the rate is r2 exactly (the truth is the world's, not the
    instrument's); a floor or L_0 moving alone is the lower reading's, not this one's.
    """
    exp = partial(moves, tail="exponential")
    steep = partial(exp, steeper=(2.5, 6.0))
    grid = "exponential slow phase, its rate x 2.5..6 from beta 0 to 1 (beta = 0.25: x 1.26..1.57)"
    rows: tuple[Row, ...] = (
        ("slow phase steeper with beta", "pass", steep, grid, "a larger beta nears its floor faster"),
        (
            "steeper, L_0 rises through the fast phase",
            "pass",
            partial(steep, what="fast", low=10.0, high=1000.0),
            f"{grid}; fast phase (L_0) x 10..1000",
            "the start is not the speed",
        ),
        (
            "steeper, towards a higher floor",
            "pass",
            partial(steep, what="floor", low=1.5, high=3.0),
            f"{grid}; floor x 1.5..3",
            "it nears its own floor faster, which is this reading (the lower reading calls it a stall)",
        ),
        (
            "steeper, noisy",
            "pass",
            partial(steep, what="noise", low=1e-6, high=1e-4),
            f"{grid}; jitter 1e-6..1e-4 per step",
            "a larger beta nears its floor faster",
        ),
        (
            "lower floor only",
            "fail",
            partial(exp, what="floor", low=1.5, high=3.0, sign=-1),
            "exponential slow phase; floor / 1.5..3, rates scattered",
            "lower, not steeper: the same rate towards a lower floor",
        ),
        (
            "lower floor only, power-law tail",
            "fail",
            partial(moves, tail="power law", what="floor", low=1.5, high=3.0, sign=-1),
            "power-law slow phase; floor / 1.5..3",
            "lower, not steeper",
        ),
        (
            "L_0 rises through the fast phase, rate flat",
            "fail",
            partial(exp, what="fast", low=10.0, high=1000.0),
            "exponential slow phase; fast phase (L_0) x 10..1000",
            "the start moves, the rate does not",
        ),
        (
            "slow phase shallower with beta",
            "fail",
            partial(exp, steeper=(1 / 6.0, 1 / 2.5)),
            "exponential slow phase, its rate / 2.5..6 from beta 0 to 1",
            "a larger beta nears its floor more slowly",
        ),
        ("no beta effect (sanity)", "fail", exp, "rates, L_0 and floor independent of beta", "nothing depends on beta"),
    )
    if sized:
        rows += (
            (
                "marginally steeper",
                "fail",
                partial(exp, steeper=(1.0, 1.15)),
                "exponential slow phase, its rate x 1..1.15 from beta 0 to 1 (beta = 0.25: at most x 1.036)",
                "steeper, but not 'significantly' (a rate 1/0.9 = 1.11 x beta = 0's at every beta > 0)",
            ),
        )
    return rows


def steeper_families(seeds: int = 0, cases: int = 0, steps: int = STEPS) -> tuple[Family, ...]:
    """Return the families of C5's steeper parts: one seed per case, or a sample of ``seeds`` seeds (the vs-0 part)."""
    if seeds:
        return _families(partial(sample, seeds=seeds), _steeper_rows(True), cases or 50, steps, f"{seeds} seeds; ")
    return _families(one_seed, _steeper_rows(False), cases or 200, steps, "")
