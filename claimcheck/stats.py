"""Compute the statistics the claims check: pure functions, arrays in, frozen dataclasses out."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps


@dataclass(frozen=True)
class Spread:
    """Median and range of a set of values (per-seed results)."""

    median: float
    low: float
    high: float
    n: int

    def format(self, digits: int = 3) -> str:
        """Return ``median [low, high] (n=k)``, or the value alone when n is 1."""
        if self.n == 0:
            return "n/a"
        m = f"{self.median:.{digits}g}"
        if self.n == 1:
            return m
        return f"{m} [{self.low:.{digits}g}, {self.high:.{digits}g}] (n={self.n})"


def spread(values: ArrayLike) -> Spread:
    """Return the median, min and max of ``values`` (NaNs included: they propagate)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return Spread(math.nan, math.nan, math.nan, 0)
    return Spread(float(np.median(arr)), float(arr.min()), float(arr.max()), int(arr.size))


@dataclass(frozen=True)
class Contraction:
    """The worst per-step contraction of a loss curve and the decrease it alone guarantees."""

    worst_ratio: float  # c = max_t L_{t+1} / L_t
    steps: int  # T, the number of steps the ratio was taken over
    orders: float  # T * log10(c): the envelope L_T <= c^T L_0, in orders of magnitude

    @property
    def contracts_every_step(self) -> bool:
        """Return True when every step strictly decreased the loss."""
        return self.worst_ratio < 1


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


@dataclass(frozen=True)
class Correlation:
    """Spearman rank correlation with its two-sided p-value."""

    rho: float
    p_value: float
    n: int


def spearman(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Return Spearman's rho between ``x`` and ``y`` (NaN when either is constant)."""
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.shape != ya.shape or xa.size < 2:
        raise ValueError(f"spearman needs two equal-length sequences of >= 2, got {xa.shape}, {ya.shape}")
    if np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Correlation(math.nan, math.nan, int(xa.size))
    res = sps.spearmanr(xa, ya)
    return Correlation(float(res.statistic), float(res.pvalue), int(xa.size))


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval."""

    estimate: float
    low: float
    high: float
    level: float

    def format(self, digits: int = 3) -> str:
        """Return ``estimate [low, high]``."""
        return f"{self.estimate:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


@dataclass(frozen=True)
class Proportion:
    """A pass rate k/n with an exact (Clopper-Pearson) two-sided interval at ``level``.

    Each end of a two-sided interval at level 1 - 2a is a one-sided bound at level 1 - a: at the
    default 0.90 the lower end is the exact one-sided 95% lower bound of the rate.
    """

    passed: int
    n: int
    low: float
    high: float
    level: float

    @property
    def rate(self) -> float:
        """Return k/n (NaN when n is 0)."""
        return self.passed / self.n if self.n else math.nan

    def format(self) -> str:
        """Return e.g. ``18/20 = 0.90 [0.72, 0.98]``."""
        if self.n == 0:
            return "0 units"
        return f"{self.passed}/{self.n} = {self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]"


def clopper_pearson(passed: int, n: int, level: float = 0.90) -> Proportion:
    """Return the exact binomial interval of ``passed`` successes in ``n`` trials.

    The ends are Beta quantiles: low = B(a; k, n - k + 1), high = B(1 - a; k + 1, n - k) with
    a = (1 - level) / 2, and low = 0 when k = 0, high = 1 when k = n. With every unit passing the
    lower end is a^(1/n): at level 0.90, 0.05^(1/n) (0.37 for 3 units, 0.81 for 14, 0.90 for 29).
    """
    if n < 0 or not 0 <= passed <= n:
        raise ValueError(f"clopper_pearson needs 0 <= passed <= n, got passed={passed}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n == 0:
        return Proportion(0, 0, 0.0, 1.0, level)
    a = (1 - level) / 2
    low = 0.0 if passed == 0 else float(sps.beta.ppf(a, passed, n - passed + 1))
    high = 1.0 if passed == n else float(sps.beta.ppf(1 - a, passed + 1, n - passed))
    return Proportion(passed, n, low, high, level)


def t_interval(values: ArrayLike, level: float = 0.90) -> Interval:
    """Return the mean of ``values`` with a Student-t interval (assumes roughly normal values).

    Needs at least two finite values; NaNs make every field NaN, since the mean is undefined.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"t_interval needs at least two values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        return Interval(math.nan, math.nan, math.nan, level)
    mean = float(arr.mean())
    half = float(sps.t.ppf(1 - (1 - level) / 2, arr.size - 1) * arr.std(ddof=1) / math.sqrt(arr.size))
    return Interval(mean, mean - half, mean + half, level)
