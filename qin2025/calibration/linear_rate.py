"""Calibration families of the linear-rate decision (C1: 400 steps; C8: 600 and 1,000): curves whose answer is known.

Must pass: the claim holds, every step contracts by a factor bounded away from 1 (Theorem 1).
Geometric decay at per-step rates -ln c from 1e-3 (the slowest seen in real runs: C8 at L = 4,
c = 0.9990 on the ci confirmatory block) to 0.3, with multiplicative noise below the per-step
decrement and a float floor; GD on a quadratic (a spectrum of modes, the slowest at least that
fast); fast runs that hit the float floor early and jitter there.

Must fail: no uniform contraction. Offset power laws (1 + t/tau)^-p and stretched exponentials
exp(-(t/tau)^k), the sublinear curves real slow runs resemble; plateaus (a decrement at least 10x
below the slowest real run) followed by a drop; drops to a non-zero floor (a stall, as beta = 0
runs do); sublinear descents that end in a plunge to the float floor; and runs that rise at a few
steps before converging (past the step-size bound).

Each case is one run's measurements: ``loss`` (L_0..L_T, L_0 drawn log-uniform in [0.1, 1000]),
``lr`` = mu lambda_max(0) of the part's regime and ``lambda_max`` = 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import jitter, log_uniform, mixture, modes

SLOWEST = 1e-3  # per-step rate -ln c of the slowest real linear run (C8, L = 4: c = 0.9990)
FASTEST = 0.3
FLOAT_FLOOR = (1e-30, 1e-20)  # where a float64 loss bottoms out, relative to L_0


def _case(rng: np.random.Generator, curve: np.ndarray, mu_lambda: float, **params: float | str) -> Case:
    scale = log_uniform(rng, 0.1, 1000.0)
    return Case(params, {"loss": curve * scale, "lr": mu_lambda, "lambda_max": 1.0})


def _floor(rng: np.random.Generator, curve: np.ndarray) -> np.ndarray:
    """Return the curve with a float floor under it: it cannot fall below ~1e-30..1e-20 of L_0, and jitters there."""
    level = log_uniform(rng, *FLOAT_FLOOR)
    return np.asarray(curve + level * (1 + 0.5 * rng.random(curve.size)))


def geometric(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """Geometric decay exp(-r t) with noise below the decrement and a float floor."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, SLOWEST, FASTEST)
    eta = log_uniform(rng, 1e-4, 0.1)
    curve = _floor(rng, jitter(rng, np.exp(-r * t), eta * r))
    return _case(rng, curve, mu_lambda, rate=r, noise_over_decrement=eta)


def quadratic(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """GD on a quadratic: a sum of 2-20 geometric modes, the slowest at a rate from SLOWEST to 0.1."""
    t = np.arange(steps + 1, dtype=np.float64)
    slowest = log_uniform(rng, SLOWEST, 0.1)
    k = int(rng.integers(2, 21))
    weights, rates = modes(rng, steps, slowest, 1.0, k)
    curve = _floor(rng, jitter(rng, mixture(t, weights, rates), 1e-3 * slowest))
    return _case(rng, curve, mu_lambda, slowest_rate=slowest, modes=k, slowest_weight=float(weights[0]))


def to_the_floor(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """Fast geometric decay that reaches the float floor well inside the horizon, then jitters there by up to 50%."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, 0.15, 1.0)
    level = log_uniform(rng, *FLOAT_FLOOR)
    curve = np.maximum(np.exp(-r * t), level) * np.exp(rng.normal(0, 0.25, t.size) * (np.exp(-r * t) < level))
    return _case(rng, curve, mu_lambda, rate=r, floor=level)


def power_law(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """Offset power law (1 + t/tau)^-p."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 10.0, 2000.0), log_uniform(rng, 0.25, 4.0)
    return _case(rng, (1 + t / tau) ** -p, mu_lambda, tau=tau, p=p)


def stretched(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """Stretched exponential exp(-(t/tau)^k), k < 1, falling by e^-D over the horizon (D 0.5..27: to the float floor).

    The per-step rate decays like t^(k-1); tau = steps D^(-1/k) puts the whole descent inside the
    horizon, so the sublinear part is what gets scored.
    """
    t = np.arange(steps + 1, dtype=np.float64)
    k, depth = float(rng.uniform(0.2, 0.9)), log_uniform(rng, 0.5, 27.0)
    tau = steps * depth ** (-1 / k)
    return _case(rng, _floor(rng, np.exp(-((t / tau) ** k))), mu_lambda, k=k, tau=tau, depth=depth)


def plateau_then_drop(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """A plateau (per-step decrement 1e-7..1e-4) for steps/8..steps/2 steps, then geometric descent."""
    t = np.arange(steps + 1, dtype=np.float64)
    eps = log_uniform(rng, 1e-7, 1e-4)
    until = int(rng.integers(steps // 8, steps // 2 + 1))
    r = log_uniform(rng, 0.01, FASTEST)
    log_curve = np.where(t <= until, -eps * t, -eps * until - r * (t - until))
    return _case(rng, _floor(rng, np.exp(log_curve)), mu_lambda, plateau_decrement=eps, plateau_steps=until, rate=r)


def stall(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """A drop to a non-zero floor F (1e-8..0.5 of L_0) reached by mid-horizon, then a residual decrement 1e-10..1e-6."""
    t = np.arange(steps + 1, dtype=np.float64)
    level = log_uniform(rng, 1e-8, 0.5)
    r = log_uniform(rng, max(0.05, 4 * math.log(1 / level) / steps), 2.0)
    creep = log_uniform(rng, 1e-10, 1e-6)
    curve = (level + (1 - level) * np.exp(-r * t)) * np.exp(-creep * t)
    return _case(rng, curve, mu_lambda, floor=level, rate=r, residual_decrement=creep)


def plunge(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """A power law (1 + t/tau)^-p until step t_k (steps/4..steps), then a plunge by 1e3 per step to the float floor."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 10.0, 2000.0), log_uniform(rng, 0.25, 4.0)
    until = int(rng.integers(steps // 4, steps + 1))
    log_curve = -p * np.log1p(t / tau) - np.maximum(t - until, 0) * math.log(1e3)
    curve = np.maximum(np.exp(log_curve), log_uniform(rng, *FLOAT_FLOOR))
    return _case(rng, curve, mu_lambda, tau=tau, p=p, plunge_at=until)


def catapult(rng: np.random.Generator, steps: int, mu_lambda: float) -> Case:
    """Geometric descent that rises at 1-5 steps (by 1e-6 to 1x) in its first quarter, above the float floor."""
    r = log_uniform(rng, 0.01, FASTEST)
    log_step = np.full(steps, -r)
    early = min(steps // 4, int(20 / r))  # rises before the loss is near the scoring floor 1e-12 L_0
    rises = rng.choice(np.arange(early), size=int(rng.integers(1, 6)), replace=False)
    size = log_uniform(rng, 1e-6, 1.0)
    log_step[rises] = math.log1p(size)
    curve = np.exp(np.concatenate([[0.0], np.cumsum(log_step)]))
    return _case(rng, _floor(rng, curve), mu_lambda, rate=r, rises=len(rises), rise=size)


def linear_rate_families(steps: int, mu_lambda: float, cases: int = 200) -> tuple[Family, ...]:
    """Return the linear-rate families at a horizon of ``steps`` with mu lambda_max(0) = ``mu_lambda``."""
    spec = f"{steps} steps, mu lambda_max(0) = {mu_lambda:.3g}"

    def fam(name: str, expect: Expect, gen: Callable[..., Case], grid: str, why: str) -> Family:
        return Family(name, expect, partial(gen, steps=steps, mu_lambda=mu_lambda), cases, f"{grid}; {spec}", why)

    held = "every step contracts by at least exp(-rate) with rate >= 1e-3, the slowest real linear run"
    return (
        fam(
            "geometric, noisy, with a float floor",
            "pass",
            geometric,
            "rate -ln c log-uniform 1e-3..0.3; noise sd 1e-4..0.1 of the decrement; floor 1e-30..1e-20 L_0",
            held,
        ),
        fam(
            "GD on a quadratic (2-20 modes)",
            "pass",
            quadratic,
            "slowest mode's rate 1e-3..0.1 (log-uniform), others up to 1, Dirichlet weights",
            held,
        ),
        fam(
            "geometric to the float floor, jitter there",
            "pass",
            to_the_floor,
            "rate 0.15..1; floor 1e-30..1e-20 L_0, 25% jitter below it",
            held + "; the jitter lies below the 1e-12 L_0 scoring floor",
        ),
        fam(
            "offset power law (1 + t/tau)^-p",
            "fail",
            power_law,
            "tau 10..2000, p 0.25..4 (log-uniform)",
            "the per-step rate p/(tau + t) falls to 0: no uniform contraction",
        ),
        fam(
            "stretched exponential exp(-(t/tau)^k)",
            "fail",
            stretched,
            "k 0.2..0.9 (uniform); descent over the horizon e^-D, D 0.5..27 (log-uniform): tau = steps D^(-1/k)",
            "the per-step rate falls like t^(k-1): sublinear",
        ),
        fam(
            "plateau, then a drop",
            "fail",
            plateau_then_drop,
            "plateau decrement 1e-7..1e-4 for steps/8..steps/2, then rate 0.01..0.3",
            "the plateau contracts 10x or more slower than the slowest real linear run: a stall, not a rate",
        ),
        fam(
            "drop to a non-zero floor (stall)",
            "fail",
            stall,
            "floor 1e-8..0.5 L_0 reached by mid-horizon; residual decrement 1e-10..1e-6",
            "the loss stops at a non-zero level: the contraction factor tends to 1",
        ),
        fam(
            "power law, then a plunge to the float floor",
            "fail",
            plunge,
            "tau 10..2000, p 0.25..4 until step steps/4..steps, then 1e3 per step",
            "sublinear over the scored part; the plunge is not a rate",
        ),
        fam(
            "rises at a few steps, then geometric (catapult)",
            "fail",
            catapult,
            "1-5 rises of 1e-6..1x in the first quarter (before the loss nears 1e-12 L_0); then rate 0.01..0.3",
            "a step that raises the loss breaks L_{t+1} <= (1 - mu alpha) L_t",
        ),
    )
