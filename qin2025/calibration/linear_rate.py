"""Calibration families of the linear-rate decision (C1, C8; ``qin2025.linrate``): curves whose answer is known.

Each family is drawn at a claim's own horizon (``steps``) and down to the slowest settled per-step
rate of its real runs (``slowest``). The decision scores a curve up to 1e-24 L_0 or its last step.

Must pass: every step contracts by at least exp(-slowest) for ever (Theorem 1). Geometric decay at
rates ``slowest``..0.3 with multiplicative noise below the per-step decrement and a float floor
(1e-32..1e-26 L_0, where float64 losses bottom out: measured 1e-32..1e-30); GD on a quadratic (a
spectrum of 2-20 modes, the slowest at ``slowest``..0.1: the excess rate of the faster modes dies
out exponentially); a rate that settles (r(t) = r (1 + a e^(-t/theta S)), a up to 2, theta up to
0.2 of the steps S the curve takes to the floor or the horizon: real runs' rates drift down while
the kernel settles); fast decay that reaches the float floor early and jitters there.

Must fail: no uniform contraction. Offset power laws (1 + t/tau)^-p (tau 10..2000, p 0.25..4) and
stretched exponentials exp(-(t/tau)^k) (k 0.2..0.9), the sublinear curves slow runs resemble;
plateaus (a decrement 10x to 10^4x below ``slowest``) followed by a drop; drops to a non-zero floor
(a stall, as beta = 0 runs do); sublinear descents that end in a plunge to the float floor; and
runs that rise at a few steps before converging (past the step-size bound).

What the horizon and float64 cannot tell apart, and the decision accepts (its wrong cases, listed by
``claimcheck calibrate``): a stretched exponential's steadiness depends on k alone (0.90 at k = 0.69,
0.97 at k = 0.9), whatever its depth, so one with k above about 0.7 reaches the float floor looking
like a run whose rate is still settling, as real runs do (C1's settle to a ratio of 0.94 at 1e-24
L_0); only a deeper floor would separate them, and float64 has none. And GD on a quadratic whose
slowest mode is so slow that it descends less than a nat over the last half of the horizon is, within
that horizon, a power law with a large tau: ``slowest`` is chosen with that margin for each claim.

Each case is one run's measurements: ``loss`` (L_0..L_T, L_0 drawn log-uniform in [0.1, 1000]).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import jitter, log_uniform, mixture, modes

FASTEST = 0.3  # per-step rate of the fastest geometric case (C1's fastest real settled rate is about 0.15)
FLOAT_FLOOR = (1e-32, 1e-26)  # where a float64 loss bottoms out, relative to L_0 (measured 1e-32..1e-30 in C1)
FLOOR_DEPTH = math.log(1e24)  # nats to the decision's scoring floor, 1e-24 L_0


def _case(rng: np.random.Generator, curve: np.ndarray, **params: float | str) -> Case:
    scale = log_uniform(rng, 0.1, 1000.0)
    return Case(params, {"loss": curve * scale})


def _floor(rng: np.random.Generator, curve: np.ndarray) -> np.ndarray:
    """Return the curve with a float floor under it: it cannot fall below ~1e-32..1e-26 of L_0, and jitters there."""
    level = log_uniform(rng, *FLOAT_FLOOR)
    return np.asarray(curve + level * (1 + 0.5 * rng.random(curve.size)))


def geometric(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Geometric decay exp(-r t) with noise below the decrement and a float floor."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, slowest, FASTEST)
    eta = log_uniform(rng, 1e-4, 0.1)
    curve = _floor(rng, jitter(rng, np.exp(-r * t), eta * r))
    return _case(rng, curve, rate=r, noise_over_decrement=eta)


def quadratic(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """GD on a quadratic: a sum of 2-20 geometric modes, the slowest at a rate from ``slowest`` to 0.1."""
    t = np.arange(steps + 1, dtype=np.float64)
    low = log_uniform(rng, slowest, 0.1)
    k = int(rng.integers(2, 21))
    weights, rates = modes(rng, steps, low, 1.0, k)
    curve = _floor(rng, jitter(rng, mixture(t, weights, rates), 1e-3 * low))
    return _case(rng, curve, slowest_rate=low, modes=k, slowest_weight=float(weights[0]))


def settling(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A rate that settles, r(t) = r (1 + a exp(-t / (theta S))); S: the steps r alone takes to the floor or horizon."""
    t = np.arange(steps + 1, dtype=np.float64)
    r, a, theta = log_uniform(rng, slowest, FASTEST), float(rng.uniform(0.0, 2.0)), log_uniform(rng, 0.01, 0.2)
    tau = theta * min(steps, FLOOR_DEPTH / r)
    depth = r * t + r * a * tau * (1 - np.exp(-t / tau))  # the integral of r(t)
    curve = _floor(rng, jitter(rng, np.exp(-depth), 1e-3 * r))
    return _case(rng, curve, rate=r, excess=a, theta=theta)


def to_the_floor(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Fast geometric decay that reaches the float floor well inside the horizon, then jitters there by up to 50%."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, 0.15, 1.0)
    level = log_uniform(rng, *FLOAT_FLOOR)
    curve = np.maximum(np.exp(-r * t), level) * np.exp(rng.normal(0, 0.25, t.size) * (np.exp(-r * t) < level))
    return _case(rng, curve, rate=r, floor=level)


def power_law(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Offset power law (1 + t/tau)^-p."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 10.0, 2000.0), log_uniform(rng, 0.25, 4.0)
    return _case(rng, (1 + t / tau) ** -p, tau=tau, p=p)


def stretched(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Stretched exponential exp(-(t/tau)^k), k < 1, falling by e^-D over the horizon (D 0.5..60: past the floor).

    The per-step rate decays like t^(k-1); tau = steps D^(-1/k) puts the whole descent inside the
    horizon, so the sublinear part is what gets scored; D above 55 reaches the scoring floor.
    """
    t = np.arange(steps + 1, dtype=np.float64)
    k, depth = float(rng.uniform(0.2, 0.9)), log_uniform(rng, 0.5, 60.0)
    tau = steps * depth ** (-1 / k)
    return _case(rng, _floor(rng, np.exp(-((t / tau) ** k))), k=k, tau=tau, depth=depth)


def plateau_then_drop(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A plateau (decrement 1e-4..0.1 of ``slowest``) for steps/8..steps/2 steps, then geometric descent."""
    t = np.arange(steps + 1, dtype=np.float64)
    eps = slowest * log_uniform(rng, 1e-4, 0.1)
    until = int(rng.integers(steps // 8, steps // 2 + 1))
    r = log_uniform(rng, slowest, FASTEST)
    log_curve = np.where(t <= until, -eps * t, -eps * until - r * (t - until))
    return _case(rng, _floor(rng, np.exp(log_curve)), plateau_decrement=eps, plateau_steps=until, rate=r)


def stall(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A drop to a non-zero floor F (1e-8..0.5 of L_0) reached by mid-horizon, then a residual decrement 1e-10..1e-6."""
    t = np.arange(steps + 1, dtype=np.float64)
    level = log_uniform(rng, 1e-8, 0.5)
    r = log_uniform(rng, max(0.05, 4 * math.log(1 / level) / steps), 2.0)
    creep = log_uniform(rng, 1e-10, 1e-6)
    curve = (level + (1 - level) * np.exp(-r * t)) * np.exp(-creep * t)
    return _case(rng, curve, floor=level, rate=r, residual_decrement=creep)


def plunge(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A power law (1 + t/tau)^-p until step t_k (steps/4..steps), then a plunge by 1e3 per step to the float floor."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 10.0, 2000.0), log_uniform(rng, 0.25, 4.0)
    until = int(rng.integers(steps // 4, steps + 1))
    log_curve = -p * np.log1p(t / tau) - np.maximum(t - until, 0) * math.log(1e3)
    curve = np.maximum(np.exp(log_curve), log_uniform(rng, *FLOAT_FLOOR))
    return _case(rng, curve, tau=tau, p=p, plunge_at=until)


def catapult(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Geometric descent that rises at 1-5 steps (by 1e-6 to 1x) in its first quarter, above the scoring floor."""
    r = log_uniform(rng, max(slowest, 0.01), FASTEST)
    log_step = np.full(steps, -r)
    early = min(steps // 4, int(40 / r))  # rises before the loss is near the scoring floor 1e-24 L_0
    rises = rng.choice(np.arange(early), size=int(rng.integers(1, 6)), replace=False)
    size = log_uniform(rng, 1e-6, 1.0)
    log_step[rises] = math.log1p(size)
    curve = np.exp(np.concatenate([[0.0], np.cumsum(log_step)]))
    return _case(rng, _floor(rng, curve), rate=r, rises=len(rises), rise=size)


def linear_rate_families(steps: int, slowest: float, cases: int = 200) -> tuple[Family, ...]:
    """Return the linear-rate families at a horizon of ``steps``, positives down to the per-step rate ``slowest``."""
    spec = f"{steps} steps, slowest settled rate {slowest:.3g}"

    def fam(name: str, expect: Expect, gen: Callable[..., Case], grid: str, why: str) -> Family:
        return Family(name, expect, partial(gen, steps=steps, slowest=slowest), cases, f"{grid}; {spec}", why)

    held = "every step contracts by at least exp(-slowest), the slowest settled rate of the claim's real runs"
    return (
        fam(
            "geometric, noisy, with a float floor",
            "pass",
            geometric,
            "rate -ln c log-uniform slowest..0.3; noise sd 1e-4..0.1 of the decrement; floor 1e-32..1e-26 L_0",
            held,
        ),
        fam(
            "GD on a quadratic (2-20 modes)",
            "pass",
            quadratic,
            "slowest mode's rate slowest..0.1 (log-uniform), others up to 1, Dirichlet weights",
            held,
        ),
        fam(
            "a rate that settles",
            "pass",
            settling,
            "settled rate slowest..0.3; excess a 0..2 (the rate starts at up to 3x), dying out with a time constant "
            "0.01..0.2 of the steps to the floor or the horizon",
            held + "; real runs' rates drift down while the kernel settles",
        ),
        fam(
            "geometric to the float floor, jitter there",
            "pass",
            to_the_floor,
            "rate 0.15..1; floor 1e-32..1e-26 L_0, 25% jitter below it",
            held + "; the jitter lies below the 1e-24 L_0 scoring floor",
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
            "k 0.2..0.9 (uniform); descent over the horizon e^-D, D 0.5..60 (log-uniform): tau = steps D^(-1/k)",
            "the per-step rate falls like t^(k-1): sublinear (k above about 0.7 is indistinguishable at float64 depth)",
        ),
        fam(
            "plateau, then a drop",
            "fail",
            plateau_then_drop,
            "plateau decrement 1e-4..0.1 of slowest for steps/8..steps/2, then rate slowest..0.3",
            "the plateau contracts 10x or more slower than the slowest real settled rate: a stall, not a rate",
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
            "1-5 rises of 1e-6..1x in the first quarter (before the loss nears 1e-24 L_0); then rate max(slowest, "
            "0.01)..0.3",
            "a step that raises the loss breaks L_{t+1} <= (1 - mu alpha) L_t",
        ),
    )
