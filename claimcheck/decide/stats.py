"""Compute the statistics the claims check: pure functions, arrays in, frozen dataclasses out."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

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
    """A pass rate k/n with its two-sided interval at ``level`` (each end a one-sided bound at (1 + level) / 2)."""

    passed: int
    n: int
    low: float
    high: float
    level: float
    method: str = "exact"  # "exact" (Clopper-Pearson, one look) or the confidence sequence's name (several looks)

    @property
    def rate(self) -> float:
        """Return k/n (NaN when n is 0)."""
        return self.passed / self.n if self.n else math.nan

    def format(self) -> str:
        """Return e.g. ``18/20 = 0.90 [0.72, 0.98]`` (``[0.72, 0.98] anytime`` for a confidence sequence)."""
        if self.n == 0:
            return "0 units"
        tag = "" if self.method == "exact" else " anytime"
        return f"{self.passed}/{self.n} = {self.rate:.2f} [{self.low:.2f}, {self.high:.2f}]{tag}"


def clopper_pearson(passed: int, n: int, level: float = 0.90) -> Proportion:
    """Return the exact (Clopper-Pearson, scipy's ``binomtest``) interval of ``passed`` of ``n``; no units: [0, 1]."""
    if n < 0 or not 0 <= passed <= n:
        raise ValueError(f"clopper_pearson needs 0 <= passed <= n, got passed={passed}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n == 0:
        return Proportion(0, 0, 0.0, 1.0, level)
    ci = sps.binomtest(passed, n).proportion_ci(confidence_level=level, method="exact")
    return Proportion(passed, n, float(ci.low), float(ci.high), level)


def t_interval(values: ArrayLike, level: float = 0.90) -> Interval:
    """Return the mean of ``values`` with a Student-t interval (scipy's ``ttest_1samp``); needs two values.

    A value that is not finite makes every field NaN; values that are all equal give the point [mean, mean].
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"t_interval needs at least two values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        return Interval(math.nan, math.nan, math.nan, level)
    mean = float(arr.mean())
    if np.ptp(arr) == 0:  # no spread: scipy warns of lost precision; the interval is the point
        return Interval(mean, mean, mean, level)
    ci = sps.ttest_1samp(arr, 0.0).confidence_interval(confidence_level=level)
    return Interval(mean, float(ci.low), float(ci.high), level)


Alternative = Literal["greater", "less"]


def binomial_p(passed: int, n: int, p0: float, alternative: Alternative) -> float:
    """Return the exact one-sided binomial p-value of ``passed`` of ``n`` against ``p0`` (no units: 1).

    "greater" (H0: p <= p0) is P(K >= k | p0), "less" P(K <= k | p0): the tests Clopper-Pearson inverts.
    """
    if n < 0 or not 0 <= passed <= n:
        raise ValueError(f"binomial_p needs 0 <= passed <= n, got passed={passed}, n={n}")
    if n == 0:
        return 1.0
    return float(sps.binomtest(passed, n, p0, alternative=alternative).pvalue)


def t_test_p(values: ArrayLike, null: float, alternative: Alternative) -> float:
    """Return the one-sided Student-t p-value of the mean of ``values`` against ``null`` (what ``t_interval`` inverts).

    NaN below two values or for a value not finite; values that are all equal give 0 or 1 (0.5 on the null).
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2 or not np.all(np.isfinite(arr)):
        return math.nan
    if np.ptp(arr) == 0:  # no spread to test against: the side the mean lies on decides
        mean, sign = float(arr[0]), 1.0 if alternative == "greater" else -1.0
        return 0.5 if mean == null else (0.0 if sign * (mean - null) > 0 else 1.0)
    return float(sps.ttest_1samp(arr, null, alternative=alternative).pvalue)


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Return which hypotheses Holm's step-down procedure (Holm 1979) rejects at family-wise level ``alpha``.

    Reject the sorted p_(1), p_(2), ... while p_(i) <= alpha / (m - i + 1). NaN is a hypothesis not tested:
    never rejected and not counted in m. Why a loop and not statsmodels: docs/decisions.md ("Limits").
    """
    tested = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(tested)
    rejected = [False] * len(p_values)
    for step, (p, i) in enumerate(tested):
        if p > alpha / (m - step):
            break
        rejected[i] = True
    return rejected


def bonferroni(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Return which hypotheses Bonferroni rejects: p <= alpha / m, NaN not tested and not counted in m (as ``holm``)."""
    m = sum(not math.isnan(p) for p in p_values)
    return [not math.isnan(p) and p <= alpha / m for p in p_values]


MAX_UNITS = 1_000_000  # the most units a projection offers: past it, "no budget decides it"


def fewest_units(decided: Callable[[int], bool], after: int, cap: int = MAX_UNITS) -> int | None:
    """Return the smallest m > ``after`` (and >= 2), at most ``cap``, with ``decided(m)``; None when ``cap`` is not.

    ``decided`` must hold from some m on (a power, a p-value's side): doubling finds a bracket, halving its edge.
    """
    lo, hi = max(after, 1), max(after + 1, 2)
    while not decided(hi):
        if hi >= cap:
            return None
        lo, hi = hi, min(2 * hi, cap)
    while hi - lo > 1:  # decided(hi); lo is not, or is ``after``
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decided(mid) else (mid, hi)
    return hi
