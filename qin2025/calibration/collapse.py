"""Calibration families of C4's decisions: sweeps over d_QK in which attention does, or does not, tend to rank one.

"collapse" (one sweep d_QK = d .. 256 d: Spearman rho of sigma_2/sigma_1 and of the sigma_min floor
with log d_QK <= -0.9, and sigma_2/sigma_1 <= 0.1 at 256 d). Medians over 16 draws are modelled
with lognormal scatter of 2-15%. Must pass: power-law collapse, sigma_2/sigma_1 = a (d_QK/d)^-s
with a 0.4..0.8 and s 0.5..1.2 (the real Xavier sweeps fall about as d_QK^-0.9), the floor falling
likewise. Must fail: a ratio that saturates at a level l of its start, l 0.1..0.5 (it tends to a
rank above one, not to rank one), and no trend at all (the variance-preserving init; sanity).

"slowdown" (the whole sample of 14 seeds at d_QK = 32, 128, 512, 2048: the mean log-log slope of
rate(beta=0)/rate(beta=1) with its Student-t interval below -0.1667). Per-seed scatter of the log
relative rate 0.1..0.4 (the real per-seed slopes spread with sd 0.17). Must pass: a relative rate
that keeps falling towards 0, (d_QK/32)^-s with s 0.25..1. Must fail: one that saturates,
l + (1 - l)(32/d_QK)^s with l 0.1..0.5 (CLAIMS.md's example, 0.3 + 0.7 (32/d_QK)^0.5, among them),
and no slowdown (sanity).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import log_uniform

SPAN = np.asarray([4.0**k for k in range(5)])  # d_QK / d over the collapse sweep
TRAIN_D_QK = (32, 128, 512, 2048)  # the slowdown's d_QK
D = 32


def _scatter(rng: np.random.Generator, values: np.ndarray, sigma: float) -> list[float]:
    return [float(v) for v in values * np.exp(rng.normal(0.0, sigma, values.size))]


def _sweep(rng: np.random.Generator, shape: Callable[[np.ndarray], np.ndarray], **params: float) -> Case:
    sigma = log_uniform(rng, 0.02, 0.15)
    a, b = float(rng.uniform(0.4, 0.8)), float(rng.uniform(0.1, 0.5))
    ratio = _scatter(rng, a * shape(SPAN), sigma)
    floor = _scatter(rng, b * shape(SPAN), sigma)
    return Case(
        {**params, "scatter": sigma, "ratio_at_d": a}, {"d_qk": (D * SPAN).tolist(), "ratio": ratio, "floor": floor}
    )


def power_collapse(rng: np.random.Generator) -> Case:
    """sigma_2/sigma_1 and the floor fall as (d_QK/d)^-s, s 0.5..1.2."""
    s = float(rng.uniform(0.5, 1.2))
    return _sweep(rng, lambda q: q**-s, exponent=s)


def saturating_collapse(rng: np.random.Generator) -> Case:
    """sigma_2/sigma_1 and the floor fall to a level l of their start, l + (1 - l)(d_QK/d)^-s, l 0.1..0.5."""
    level, s = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.5, 1.5))
    return _sweep(rng, lambda q: level + (1 - level) * q**-s, level=level, exponent=s)


def flat_collapse(rng: np.random.Generator) -> Case:
    """No trend in d_QK (the variance-preserving init)."""
    return _sweep(rng, lambda q: np.ones_like(q))


def _sample(
    rng: np.random.Generator, seeds: int, relative: Callable[[np.ndarray], np.ndarray], **params: float
) -> Case:
    sigma = float(rng.uniform(0.1, 0.4))
    d = np.asarray(TRAIN_D_QK, dtype=np.float64)
    rates = []
    for _ in range(seeds):
        r1 = log_uniform(rng, 0.005, 0.05) * np.exp(rng.normal(0.0, 0.1, d.size))  # beta = 1, orders per step
        rel = float(rng.uniform(0.3, 0.8)) * relative(d) * np.exp(rng.normal(0.0, sigma, d.size))
        rates.append([(float(a * b), float(b)) for a, b in zip(rel, r1, strict=True)])
    return Case({**params, "scatter": sigma}, {"d_qk": list(TRAIN_D_QK), "rates": rates})


def keeps_falling(rng: np.random.Generator, seeds: int) -> Case:
    """rate(beta=0)/rate(beta=1) falls as (d_QK/32)^-s, s 0.25..1: towards 0."""
    s = float(rng.uniform(0.25, 1.0))
    return _sample(rng, seeds, lambda d: (d / 32) ** -s, exponent=s)


def saturates(rng: np.random.Generator, seeds: int) -> Case:
    """rate(beta=0)/rate(beta=1) falls to a level l of its start: l + (1 - l)(32/d_QK)^s, l 0.1..0.5, s 0.25..1.5."""
    level, s = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.25, 1.5))
    return _sample(rng, seeds, lambda d: level + (1 - level) * (32 / d) ** s, level=level, exponent=s)


def no_slowdown(rng: np.random.Generator, seeds: int) -> Case:
    """rate(beta=0)/rate(beta=1) does not move with d_QK."""
    return _sample(rng, seeds, np.ones_like)


def _fam(name: str, expect: Expect, gen: Callable[..., Case], cases: int, grid: str, why: str, **kw: int) -> Family:
    return Family(name, expect, partial(gen, **kw), cases, grid, why)


def collapse_families(cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C4's "collapse" part (one sweep d_QK = d .. 256 d per case)."""
    return (
        _fam(
            "power-law collapse",
            "pass",
            power_collapse,
            cases,
            "sigma_2/sigma_1 = a (d_QK/d)^-s, a 0.4..0.8, s 0.5..1.2; floor alike; scatter 2-15%",
            "the ratio tends to 0: rank one",
        ),
        _fam(
            "collapse that saturates",
            "fail",
            saturating_collapse,
            cases,
            "a (l + (1 - l)(d_QK/d)^-s), l 0.1..0.5, s 0.5..1.5; scatter 2-15%",
            "the ratio tends to a l > 0: attention keeps a second direction",
        ),
        _fam(
            "no trend in d_QK (sanity)",
            "fail",
            flat_collapse,
            cases,
            "constant ratio and floor; scatter 2-15%",
            "nothing collapses",
        ),
    )


def slowdown_families(seeds: int, cases: int = 100) -> tuple[Family, ...]:
    """Return the families of C4's "slowdown" part; each case is a whole sample of ``seeds`` seeds."""
    grid = f"{seeds} seeds; d_QK 32..2048; per-seed scatter of the log relative rate 0.1..0.4"
    return (
        _fam(
            "relative rate keeps falling",
            "pass",
            keeps_falling,
            cases,
            f"(d_QK/32)^-s, s 0.25..1; {grid}",
            "the relative rate tends to 0: convergence without the residual stops",
            seeds=seeds,
        ),
        _fam(
            "relative rate saturates",
            "fail",
            saturates,
            cases,
            f"l + (1 - l)(32/d_QK)^s, l 0.1..0.5, s 0.25..1.5; {grid}",
            "the relative rate tends to l > 0: a slowdown that never stops",
            seeds=seeds,
        ),
        _fam(
            "no slowdown (sanity)",
            "fail",
            no_slowdown,
            cases,
            f"constant; {grid}",
            "beta = 0 keeps pace with beta = 1 at every d_QK",
            seeds=seeds,
        ),
    )
