"""C5's second reading of "faster" (v5): the steeper run nears its own floor at the higher rate.

The rate is ``steady_rate`` (``qin2025.c5.residual_speed``): minus the least-squares slope, per step,
of the log of the decrements between the means of the 8 blocks of [T/2, T]. A decrement
L(t) - L(t + w) does not contain the floor, so a run that differs only by a lower floor has the same
rate (what the level reading cannot tell apart from "faster"). For an exponential approach
F + A e^(-r t) it is r; for a power-law tail F + A (1 + t/tau)^-p it is about (p + 1)/(tau + t) over
the window, so a time rescaling of a power law (a larger step on the Jena runs) barely moves it:
there a speed-up is lower, not steeper (``level_speed``).

- "steeper: order" (one seed): Spearman rho(beta, rate) >= 0.9 (``steeper_order_decision``);
- "steeper: beta>0 vs beta=0" (mean over seeds): per beta > 0 the rate gain
  g = (r_b - r_0) / (|r_b| + |r_0|), in [-1, 1], 0 no effect; "significantly" (at least 10% fewer
  steps per e-fold, r_b >= r_0 / 0.9) is g > ``GAIN_BAR`` = 1/19 (``steeper_faster_decision``).

v7: no declared zone. The level reading's zone (a run that flattened within T: its level is then its
floor) is about levels; a decrement does not contain the floor, so a run that nears a floor reached
within T still has a rate, read while every block of [T/2, T] lowers the loss (the premise: otherwise
``steady_rate`` is NaN and the unit is excluded). v5-v6 shared the level zone, and two referees' worlds
steeper by construction that reach their floor within T were left undecided (records/claims/c5.md).
Signatures as ``level_speed``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from numpy.typing import ArrayLike

from claimcheck.decide.stats import spearman
from qin2025.c5.level_speed import FEWER, against_zero
from qin2025.c5.residual_speed import steady_rate

RATE_RHO = "Spearman rho(beta, steady rate over [T/2, T])"
GAIN_BAR = (1 / (1 - FEWER) - 1) / (1 / (1 - FEWER) + 1)  # r_b = r_0 / 0.9: 1/19


def gain_name(beta: float) -> str:
    """Return the name of the mean steady-rate gain of ``beta`` over beta = 0."""
    return f"mean over seeds of the steady-rate gain of beta={beta:g} over beta=0"


def gain(rate: float, rate0: float) -> float:
    """Return (r - r0) / (|r| + |r0|): > 0 when the run is steeper than beta = 0 (NaN when undefined)."""
    scale = abs(rate) + abs(rate0)
    if not (math.isfinite(rate) and math.isfinite(rate0)) or scale == 0:
        return math.nan
    return (rate - rate0) / scale


def steeper_order_decision(betas: Sequence[float], curves: Sequence[ArrayLike]) -> dict[str, float]:
    """Return one seed's rho(beta, steady rate) (C5 "steeper: order"; NaN where a run's rate is undefined)."""
    if len(betas) != len(curves):
        raise ValueError(
            f"steeper_order_decision needs one curve per beta, got {len(betas)} betas and {len(curves)} curves"
        )
    rates = [steady_rate(c) for c in curves]
    if not all(math.isfinite(r) for r in rates):
        return {RATE_RHO: math.nan}
    return {RATE_RHO: spearman(betas, rates).rho}


def steeper_faster_decision(betas: Sequence[float], curves: Sequence[ArrayLike]) -> dict[str, float]:
    """Return one seed's steady-rate gain of every beta > 0 over beta = 0 (C5 "steeper: beta>0 vs beta=0")."""
    names = [gain_name(b) for b in against_zero(betas, curves, "steeper_faster_decision")]
    rate0 = steady_rate(curves[0])
    return {name: gain(steady_rate(curves[j + 1]), rate0) for j, name in enumerate(names)}
