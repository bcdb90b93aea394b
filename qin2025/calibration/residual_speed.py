"""Calibration families of C5's decisions: loss curves per beta in worlds where the rate grows with beta, or not.

A run's curve has the shape of the real Jena runs (exploratory seeds 0-7, ci sizes, 4,000 steps):
a fast phase that fits the output's scale in a few steps and holds most of the descent, then a
slow, decelerating descent towards a floor that no run reaches within the horizon:

    L(t) = F + A1 exp(-r1 g t) + A2 tail(g t),

tail = exp(-r2 t) (an exponential tail) or (1 + t/tau)^-p (an offset power law), drawn 50/50 per
case; F 1.5..9, A2 3..20 (the level after the fast phase, about the same for every beta in the real
runs), L_0 = F + A1 + A2 40..1,700, r1 0.08..1, r2 (0.5..5)/T, tau T/40..T, p 0.3..1.5. The factor g
is the run's speed: time runs g times faster. Each quantity is scattered from beta to beta within
a seed (L_0 by 30%, A2 by 20%, F and, where the world does not set it, g by 10%).

Must pass (the unit's own rates rise strictly with beta: g = factor^beta, no scatter): the rate
grows 1.5..4x from beta = 0 to 1, alone; with L_0 rising or falling 10..1,000x through the fast
phase (how beta moves L_0 in the real runs: the output's scale); with the whole excess falling
10..1,000x; with the floor falling 1.5..3x; with noise (1e-6..1e-4 relative per step: GD in float64 is
deterministic, its rounding about 1e-16; a block's drop in the real runs is about 1e-2 of the loss).

Must fail: L_0 rises or falls 10..1,000x with beta, through the fast phase or through the whole
excess, while the rate does not move; the floor falls 1.5..3x while the rate does not move (a
lower loss, not a faster one); a stall (the rate grows 1.5..4x but towards a floor 2..10x higher:
a faster approach to a worse level); no beta effect (sanity).

Left out, with the reason: pure power-law tails (tau far below the horizon), whose time rescaling
by g is the same curve as an amplitude g^-p times smaller (A (g t / tau)^-p), so no measure blind
to the amplitude can see it (indistinguishable at any horizon); a rate that grows while the whole
excess rises 10..1,000x, which ends above the slower runs and is a stall at this horizon; sharp
plateau-then-drop curves, which the real runs do not show (their block decrements fall
monotonically after the fast phase).

"order" takes one seed (5 curves); "beta>0 vs beta=0" a whole sample of seeds
(``{"units": [...]}``), decided on the mean as one look decides it (``claimcheck.calibration.decide_case``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import jitter, log_uniform
from qin2025.residual_speed import descends

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
STEPS = 400


@dataclass(frozen=True)
class Effect:
    """How a world moves a run with beta, as factors from beta = 0 to beta = 1 (1: not at all)."""

    rate: float = 1.0  # g, the speed of the whole curve
    fast: float = 1.0  # A1, the fast phase's amplitude (L_0 through the output's scale)
    excess: float = 1.0  # A1 and A2, the whole excess over the floor
    floor: float = 1.0  # F
    noise: float = 0.0  # relative jitter per step


def _tail(rng: np.random.Generator, steps: int) -> tuple[Callable[[np.ndarray], np.ndarray], dict[str, Any]]:
    """Draw the slow phase's shape: exponential or offset power law, as a function of (scaled) time."""
    if rng.random() < 0.5:
        r2 = log_uniform(rng, 0.5, 5.0) / steps
        return (lambda s: np.exp(-r2 * s)), {"tail": "exponential", "r2": r2}
    tau, p = log_uniform(rng, steps / 40, steps), float(rng.uniform(0.3, 1.5))
    return (lambda s: (1 + s / tau) ** -p), {"tail": "power law", "tau": tau, "p": p}


def _curves(rng: np.random.Generator, effect: Effect, steps: int) -> tuple[list[np.ndarray], dict[str, Any]]:
    """Return one seed's curves, one per beta, each quantity times its factor^beta (scattered where it is 1)."""
    t = np.arange(steps + 1, dtype=np.float64)
    tail, shape = _tail(rng, steps)
    r1, floor, a2 = log_uniform(rng, 0.08, 1.0), float(rng.uniform(1.5, 9.0)), log_uniform(rng, 3.0, 20.0)
    start = log_uniform(rng, 40.0, 1700.0)
    out = []
    for b in BETAS:
        g = effect.rate**b if effect.rate != 1 else math.exp(rng.normal(0.0, 0.1))
        f = floor * effect.floor**b * math.exp(rng.normal(0.0, 0.1))
        slow = a2 * effect.excess**b * math.exp(rng.normal(0.0, 0.2))
        fast = max(start * math.exp(rng.normal(0.0, 0.3)) - floor - a2, 5.0) * (effect.fast * effect.excess) ** b
        curve = f + fast * np.exp(-r1 * g * t) + slow * tail(g * t)
        out.append(jitter(rng, curve, effect.noise) if effect.noise else curve)
    return out, shape


World = Callable[[np.random.Generator], tuple[Effect, dict[str, float]]]


def moves(
    rng: np.random.Generator, rate: bool = False, what: str = "", low: float = 1.0, high: float = 1.0, sign: int = 1
) -> tuple[Effect, dict[str, float]]:
    """Draw a world: the rate grows 1.5..4x from beta = 0 to 1 when ``rate``; ``what`` moves low..high x with beta.

    ``what`` is an ``Effect`` field (fast, excess, floor: up for ``sign`` 1, down for -1; noise: the
    jitter itself); nothing else moves with beta.
    """
    fields: dict[str, float] = {}
    params: dict[str, float] = {}
    if rate:
        fields["rate"] = params["rate_factor"] = log_uniform(rng, 1.5, 4.0)
    if what:
        m = log_uniform(rng, low, high)
        fields[what] = m if what == "noise" else m**sign
        params[what if what == "noise" else f"{what}_{'rises' if sign > 0 else 'falls'}_by"] = m
    return Effect(**fields), params


WORLDS: tuple[tuple[str, Expect, World, str, str], ...] = (
    ("rate grows with beta", "pass", partial(moves, rate=True), "rate x 1.5..4 from beta 0 to 1", "the rate grows"),
    (
        "rate grows, L_0 rises through the fast phase",
        "pass",
        partial(moves, rate=True, what="fast", low=10.0, high=1000.0),
        "rate x 1.5..4; fast phase (L_0) x 10..1000",
        "the rate grows; the start is not the rate",
    ),
    (
        "rate grows, L_0 falls through the fast phase",
        "pass",
        partial(moves, rate=True, what="fast", low=10.0, high=1000.0, sign=-1),
        "rate x 1.5..4; fast phase (L_0) / 10..1000",
        "the rate grows; the start is not the rate",
    ),
    (
        "rate grows, the whole excess falls",
        "pass",
        partial(moves, rate=True, what="excess", low=10.0, high=1000.0, sign=-1),
        "rate x 1.5..4; excess over the floor / 10..1000",
        "the rate grows; the amplitude is not the rate",
    ),
    (
        "rate grows, the floor falls",
        "pass",
        partial(moves, rate=True, what="floor", low=1.5, high=3.0, sign=-1),
        "rate x 1.5..4; floor / 1.5..3",
        "the rate grows, towards a lower floor",
    ),
    (
        "rate grows, noisy",
        "pass",
        partial(moves, rate=True, what="noise", low=1e-6, high=1e-4),
        "rate x 1.5..4; jitter 1e-6..1e-4 per step",
        "the rate grows",
    ),
    (
        "L_0 rises through the fast phase, rate flat",
        "fail",
        partial(moves, what="fast", low=10.0, high=1000.0),
        "fast phase (L_0) x 10..1000 from beta 0 to 1",
        "the rate does not move: no beta converges faster",
    ),
    (
        "L_0 falls through the fast phase, rate flat",
        "fail",
        partial(moves, what="fast", low=10.0, high=1000.0, sign=-1),
        "fast phase (L_0) / 10..1000",
        "the rate does not move",
    ),
    (
        "L_0 and the whole excess rise, rate flat",
        "fail",
        partial(moves, what="excess", low=10.0, high=1000.0),
        "excess over the floor x 10..1000",
        "the rate does not move",
    ),
    (
        "L_0 and the whole excess fall, rate flat",
        "fail",
        partial(moves, what="excess", low=10.0, high=1000.0, sign=-1),
        "excess over the floor / 10..1000",
        "the rate does not move",
    ),
    (
        "floor falls, rate flat",
        "fail",
        partial(moves, what="floor", low=1.5, high=3.0, sign=-1),
        "floor / 1.5..3",
        "a lower floor is a lower loss, not a faster convergence",
    ),
    (
        "stall: faster towards a higher floor",
        "fail",
        partial(moves, rate=True, what="floor", low=2.0, high=10.0),
        "rate x 1.5..4; floor x 2..10",
        "a faster approach to a worse level is a stall, not a faster convergence",
    ),
    ("no beta effect (sanity)", "fail", moves, "rate, L_0 and floor independent of beta", "nothing depends on beta"),
)


def one_seed(rng: np.random.Generator, world: World, steps: int) -> Case:
    """One seed's five runs in ``world``."""
    effect, params = world(rng)
    curves, shape = _curves(rng, effect, steps)
    return Case({**params, **shape}, {"betas": list(BETAS), "curves": curves})


def sample(rng: np.random.Generator, world: World, seeds: int, steps: int) -> Case:
    """A whole sample of ``seeds`` admitted seeds in ``world`` (its factors drawn once; each seed's curves its own).

    As the claim test excludes a seed with a run that does not descend over its steady part (the
    premise), a seed drawn here that leaves the premise is replaced; ``params`` counts them.
    """
    effect, params = world(rng)
    units: list[dict[str, Any]] = []
    left = 0
    while len(units) < seeds and left < 10 * seeds:
        curves = _curves(rng, effect, steps)[0]
        if all(descends(c) for c in curves):
            units.append({"betas": list(BETAS), "curves": curves})
        else:
            left += 1
    return Case({**params, "seeds": seeds, "left_the_premise": left}, {"units": units})


def order_families(cases: int = 200, steps: int = STEPS) -> tuple[Family, ...]:
    """Return the families of C5's "order" part (one seed per case)."""
    return tuple(
        Family(name, expect, partial(one_seed, world=world, steps=steps), cases, f"{grid}; T = {steps}", why)
        for name, expect, world, grid, why in WORLDS
    )


def faster_families(seeds: int, cases: int = 100, steps: int = STEPS) -> tuple[Family, ...]:
    """Return the families of C5's "beta>0 vs beta=0" part (a sample of ``seeds`` seeds per case)."""
    return tuple(
        Family(
            name,
            expect,
            partial(sample, world=world, seeds=seeds, steps=steps),
            cases,
            f"{grid}; {seeds} seeds; T = {steps}",
            why,
        )
        for name, expect, world, grid, why in WORLDS
    )
