"""Calibration families of C2's monotone decision: loss curves that do, or do not, fall monotonically to the minimum.

C2 v4 reads "down to a global minimum" (0 here, since N n <= d) as reaching the float floor within
the horizon: L_T / L_0 <= 1e-20, residuals at 1e-10 of their start. The families are drawn at C2's
horizon (``steps``, 1,500 in v4).

Must pass: GD below the bound in C2's regime: a spectrum of 2-20 geometric modes whose slowest
rate is 0.035..0.5 per step (natural log), with float rounding noise, stopped at 1e-24 L_0 as the
engine stops. 0.035 is 1.5x below the slowest real C2 run seen (0.053 = -ln 0.948, the worst step
of the v3 confirmatory block; the slowest mean rate on exploratory seeds 0-29 is 0.065), and at
1,500 steps it still reaches 1e-20 (46 nats in 1,316 steps): a slower geometric run, or a sublinear
one, reaches the minimum only after the horizon, and no statistic on 1,500 steps can tell it from a
stall there (records/claims/c2.md says what the horizon shows).

Must fail: a run that rises at a few steps before converging (past the bound); a monotone descent
that stops at a non-zero floor F, 1e-19..0.1 of L_0, log-uniform (it covers the stalls v3 accepted,
1e-6..1e-3 L_0, and issue 28's 1e-8..1e-3; a floor below 1e-20 L_0 is the global minimum to the
float precision this check reads); and the stall of a stack without residuals (C2's discriminating
control): a drop within a few steps to a plateau at 0.1..0.9 L_0 that then drifts, monotone, towards
a floor no lower than 0.3 of the plateau.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.calibration.draw import log_uniform, mixture, modes

SLOWEST = 0.035  # per-step rate: 1.5x below the slowest real C2 run (0.053)
STOP = 1e-24  # the engine stops a run when its loss reaches this fraction of L_0


def _stopped(curve: np.ndarray) -> np.ndarray:
    hit = np.flatnonzero(curve <= STOP * curve[0])
    return curve if hit.size == 0 else curve[: hit[0] + 1]


def _rounded(rng: np.random.Generator, curve: np.ndarray) -> np.ndarray:
    """Add float64 rounding noise: relative 1e-16 sqrt(L_0/L_t), as residuals rounded at 1e-16 of the weights give."""
    sigma = 1e-16 * np.sqrt(curve[0] / curve)
    return np.asarray(curve * (1 + sigma * rng.normal(size=curve.size)))


def descent(rng: np.random.Generator, steps: int) -> Case:
    """GD on a quadratic: 2-20 geometric modes, the slowest at 0.035..0.5, to the engine's stop at 1e-24 L_0."""
    t = np.arange(steps + 1, dtype=np.float64)
    slowest = log_uniform(rng, SLOWEST, 0.5)
    k = int(rng.integers(2, 21))
    weights, rates = modes(rng, steps, slowest, 2.0, k)
    curve = _rounded(rng, _stopped(mixture(t, weights, rates)))
    return Case({"slowest_rate": slowest, "modes": k}, {"loss": curve * log_uniform(rng, 0.1, 1000.0)})


def rises(rng: np.random.Generator, steps: int) -> Case:
    """Geometric descent (rate 0.035..0.5) that rises at 1-5 of its first 50 steps, by 1e-9..1x."""
    r = log_uniform(rng, SLOWEST, 0.5)
    log_step = np.full(steps, -r)
    at = rng.choice(np.arange(50), size=int(rng.integers(1, 6)), replace=False)
    size = log_uniform(rng, 1e-9, 1.0)
    log_step[at] = math.log1p(size)
    curve = _stopped(np.exp(np.concatenate([[0.0], np.cumsum(log_step)])))
    return Case({"rate": r, "rises": len(at), "rise": size}, {"loss": curve})


def floor(rng: np.random.Generator, steps: int) -> Case:
    """Monotone descent L_t = F + (1 - F) exp(-r t) to a non-zero floor F (1e-19..0.1 of L_0), rate 0.035..0.5."""
    t = np.arange(steps + 1, dtype=np.float64)
    level, r = log_uniform(rng, 1e-19, 0.1), log_uniform(rng, SLOWEST, 0.5)
    return Case({"floor": level, "rate": r}, {"loss": level + (1 - level) * np.exp(-r * t)})


def plateau(rng: np.random.Generator, steps: int) -> Case:
    """A drop at rate 0.3..2 to a plateau P (0.1..0.9 L_0), then a monotone drift at 1e-5..1e-3 to F = (0.3..1) P."""
    t = np.arange(steps + 1, dtype=np.float64)
    top, fast, slow = float(rng.uniform(0.1, 0.9)), log_uniform(rng, 0.3, 2.0), log_uniform(rng, 1e-5, 1e-3)
    level = top * float(rng.uniform(0.3, 1.0))
    curve = level + (top - level) * np.exp(-slow * t) + (1 - top) * np.exp(-fast * t)
    return Case({"plateau": top, "floor": level, "drift": slow}, {"loss": curve})


def monotone_families(steps: int, cases: int = 200) -> tuple[Family, ...]:
    """Return C2's families at a horizon of ``steps``."""

    def fam(name: str, expect: Expect, gen: Callable[..., Case], grid: str, why: str) -> Family:
        return Family(name, expect, partial(gen, steps=steps), cases, f"{grid}; {steps} steps", why)

    return (
        fam(
            "GD below the bound (2-20 modes) to the engine's stop",
            "pass",
            descent,
            "slowest mode's rate 0.035..0.5, others up to 2; rounding noise; stopped at 1e-24 L_0",
            "every mode contracts, so the loss falls at every step to 0, the global minimum, within the horizon",
        ),
        fam(
            "rises at a few early steps, then converges",
            "fail",
            rises,
            "1-5 rises of 1e-9..1x in the first 50 steps; rate 0.035..0.5",
            "a step that raises the loss is not a monotone decrease",
        ),
        fam(
            "monotone descent to a non-zero floor",
            "fail",
            floor,
            "floor 1e-19..0.1 L_0 (log-uniform); rate 0.035..0.5",
            "a floor above 0 is not the global minimum (0 for N n <= d)",
        ),
        fam(
            "drop to a plateau, then a monotone drift (no residual through a stack)",
            "fail",
            plateau,
            "plateau 0.1..0.9 L_0, drift 1e-5..1e-3 per step to 0.3..1 of the plateau",
            "the loss stays on a plateau far above the global minimum",
        ),
    )
