"""Calibration families of C5's decisions: loss curves per beta in worlds where the rate grows with beta, or not.

A run's curve is shaped like the real Jena runs of the ci block (T = 400), as a fit of
L(t) = F + (L_0 - F)(w e^{-r1 t} + (1 - w) e^{-r2 t}) to them gives: a fast phase holding w 0.85..0.95
of the descent at r1 0.08..1 per step, a slow one at r2 0.006..0.03, towards a floor F of 3..9, from
L_0 of 40..700. (The fit also says that in the real runs F falls with beta, from a median 8.0 at
beta = 0 to 3.4 at beta = 1, while the fitted rates do not grow with beta: median ratios beta = 1 over
beta = 0 of 0.8 for r1 and 1.1 for r2.) Within a seed, L_0 scatters by 30%, F by 10% and the rates
by 10% from beta to beta unless the world moves them.

Must pass: the rate (r1 and r2) grows with beta, by g 1.5..4 from beta = 0 to beta = 1, with L_0
independent of beta, or falling with beta up to 10x. Must fail: L_0 rises, or falls, 10..1000x with
beta while the rate does not move; the floor falls 1.5..3x with beta while the rate does not move
(a lower loss, not a faster one: what the real runs look like); no beta effect at all (sanity).

"order" takes one seed (5 curves); "beta>0 vs beta=0" a whole sample of seeds (24 at ci).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import log_uniform

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
STEPS = 400


@dataclass(frozen=True)
class Effect:
    """How a world moves a run with beta, as factors from beta = 0 to beta = 1 (1: not at all)."""

    rate: float = 1.0  # r1 and r2
    start: float = 1.0  # L_0
    floor: float = 1.0  # F


def _curves(rng: np.random.Generator, effect: Effect, steps: int) -> list[np.ndarray]:
    """Return one seed's curves, one per beta, each quantity times its factor^beta (scattered where it is 1)."""
    t = np.arange(steps + 1, dtype=np.float64)
    r1, r2 = log_uniform(rng, 0.08, 1.0), log_uniform(rng, 0.006, 0.03)
    w, floor, start = float(rng.uniform(0.85, 0.95)), float(rng.uniform(3.0, 9.0)), log_uniform(rng, 40.0, 700.0)
    out = []
    for b in BETAS:
        g = effect.rate**b * np.exp(rng.normal(0.0, 0.1))
        f = floor * effect.floor**b * np.exp(rng.normal(0.0, 0.1))
        l0 = start * effect.start**b * (np.exp(rng.normal(0.0, 0.3)) if effect.start == 1 else 1.0)
        l0 = max(l0, 2 * f)  # a run starts above its floor
        out.append(f + (l0 - f) * (w * np.exp(-r1 * g * t) + (1 - w) * np.exp(-r2 * g * t)))
    return out


World = Callable[[np.random.Generator], tuple[Effect, dict[str, float]]]


def faster(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """The rate grows 1.5..4x from beta = 0 to 1; nothing else moves with beta."""
    g = log_uniform(rng, 1.5, 4.0)
    return Effect(rate=g), {"rate_factor": g}


def faster_from_lower_start(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """The rate grows 1.5..4x; L_0 falls 1.5..10x with beta."""
    g, m = log_uniform(rng, 1.5, 4.0), log_uniform(rng, 1.5, 10.0)
    return Effect(rate=g, start=1 / m), {"rate_factor": g, "start_falls_by": m}


def start_rises(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """L_0 rises 10..1000x with beta; the rate does not move."""
    m = log_uniform(rng, 10.0, 1000.0)
    return Effect(start=m), {"start_rises_by": m}


def start_falls(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """L_0 falls 10..1000x with beta; the rate does not move."""
    m = log_uniform(rng, 10.0, 1000.0)
    return Effect(start=1 / m), {"start_falls_by": m}


def floor_falls(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """The floor falls 1.5..3x with beta; the rate does not move."""
    m = log_uniform(rng, 1.5, 3.0)
    return Effect(floor=1 / m), {"floor_falls_by": m}


def null(rng: np.random.Generator) -> tuple[Effect, dict[str, float]]:
    """No beta effect at all."""
    return Effect(), {}


def one_seed(rng: np.random.Generator, world: World, steps: int) -> Case:
    """One seed's five runs in ``world``."""
    effect, params = world(rng)
    return Case(params, {"betas": list(BETAS), "curves": _curves(rng, effect, steps)})


def sample(rng: np.random.Generator, world: World, seeds: int, steps: int) -> Case:
    """A whole sample of ``seeds`` seeds in ``world`` (the world's factors drawn once, each seed's curves its own)."""
    effect, params = world(rng)
    curves = [_curves(rng, effect, steps) for _ in range(seeds)]
    return Case({**params, "seeds": seeds}, {"betas": list(BETAS), "curves": curves})


WORLDS: tuple[tuple[str, Expect, World, str, str], ...] = (
    (
        "rate grows with beta",
        "pass",
        faster,
        "rate x 1.5..4 from beta 0 to 1; L_0 independent of beta",
        "the rate grows",
    ),
    (
        "rate grows with beta, L_0 falls with it",
        "pass",
        faster_from_lower_start,
        "rate x 1.5..4; L_0 / 1.5..10",
        "the rate grows; the start is not the rate",
    ),
    (
        "L_0 rises with beta, rate flat",
        "fail",
        start_rises,
        "L_0 x 10..1000 from beta 0 to 1; the rate unchanged",
        "the rate does not move: no beta converges faster",
    ),
    (
        "L_0 falls with beta, rate flat",
        "fail",
        start_falls,
        "L_0 / 10..1000; the rate unchanged",
        "the rate does not move",
    ),
    (
        "floor falls with beta, rate flat",
        "fail",
        floor_falls,
        "floor / 1.5..3 from beta 0 to 1; the rate unchanged",
        "a lower floor is a lower loss, not a faster convergence",
    ),
    ("no beta effect (sanity)", "fail", null, "rate and L_0 independent of beta", "nothing depends on beta"),
)


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
