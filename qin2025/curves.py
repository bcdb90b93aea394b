"""Describe a loss curve: its worst contraction, a straight-line fit of its log, the steps where it rose.

Pure functions of a curve L_0..L_T (arrays in, frozen dataclasses out); the claims of this paper use
them, the core's statistics (``claimcheck.decide.stats``) do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Contraction:
    """The worst per-step contraction of a loss curve and the decrease it alone guarantees."""

    worst_ratio: float  # c = max_t L_{t+1} / L_t
    steps: int  # T, the number of steps the ratio was taken over
    orders: float  # T * log10(c): the envelope L_T <= c^T L_0, in orders of magnitude


def contraction(loss: ArrayLike) -> Contraction:
    """Return c = max_t L_{t+1}/L_t and T log10 c for a loss curve L_0..L_T.

    The geometric envelope L_t <= c^t L_0 holds for every t with this c; a linear rate means c
    stays bounded away from 1 over the whole horizon, so T log10 c is clearly negative. A plateau
    or a sublinear rate drives c towards 1 and T log10 c towards 0. Non-finite losses give c = inf.
    """
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"contraction needs at least two losses, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr[:-1] <= 0):
        return Contraction(math.inf, arr.size - 1, math.inf)
    c = float(np.max(arr[1:] / arr[:-1]))
    steps = arr.size - 1
    orders = steps * math.log10(c) if c > 0 else -math.inf
    return Contraction(c, steps, orders)


@dataclass(frozen=True)
class LogLinearFit:
    """Least-squares line through log10 of a loss curve against the step."""

    slope: float  # log10 units per step (negative: decreasing)
    intercept: float
    r2: float  # coefficient of determination of the line

    @property
    def rate(self) -> float:
        """Return the per-step factor 10**slope implied by the fit."""
        return float(10.0**self.slope)


def log_linear_fit(loss: ArrayLike) -> LogLinearFit:
    """Fit log10 L_t = a + b t by least squares; non-finite or non-positive losses give NaNs."""
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 3:
        raise ValueError(f"log_linear_fit needs at least three losses, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        return LogLinearFit(math.nan, math.nan, math.nan)
    y = np.log10(arr)
    t = np.arange(arr.size, dtype=np.float64)
    slope, intercept = np.polyfit(t, y, 1)
    resid = y - (intercept + slope * t)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else math.nan
    return LogLinearFit(float(slope), float(intercept), r2)


@dataclass(frozen=True)
class Increases:
    """Steps at which a loss curve went up."""

    count: int  # number of t with L_{t+1} > L_t (1 + rtol), non-finite counted as increases
    first: int | None  # the first such t, or None
    max_rel: float  # max_t (L_{t+1} - L_t) / L_t, inf if a loss is not finite


def increases(loss: ArrayLike, rtol: float = 1e-12) -> Increases:
    """Count the steps whose loss rose by more than ``rtol`` relative (float rounding allowance)."""
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 2:
        return Increases(0, None, -math.inf)
    prev, nxt = arr[:-1], arr[1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = (nxt - prev) / np.abs(prev)
    bad = ~np.isfinite(nxt) | ~np.isfinite(prev) | (nxt > prev * (1 + rtol))
    rel = np.where(np.isfinite(rel), rel, math.inf)
    idx = np.flatnonzero(bad)
    return Increases(int(idx.size), int(idx[0]) if idx.size else None, float(rel.max()))
