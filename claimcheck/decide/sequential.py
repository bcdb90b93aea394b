"""Anytime-valid one-sided tests and confidence sequences: decisions that stay valid however many units a run adds.

``beta_binomial`` tests a pass rate, ``betting`` a mean of values in stated bounds, ``normal_mixture`` a
mean under a stated variance bound sigma (valid only when the bound holds). Side "greater": H0 says the
quantity is at most the null value; "less": the mirror image. Each test is a test martingale M_n; its
p-value min(1, 1 / max_{m <= n} M_m) is valid at any stopping time, and inverting the tests gives bounds
that hold at every n at once. The constructions and their sources: docs/decisions.md ("Several looks").
Pure functions: a 1-D sequence of units or a 2-D array (runs x units) in, arrays or frozen dataclasses out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy import special as sc

Side = Literal["greater", "less"]
SIDES: tuple[str, ...] = ("greater", "less")
PRIOR = (1.0, 1.0)  # the default Beta prior of the pass-rate mixture: uniform on the alternative
BET_CAP = 0.5  # c in Waudby-Smith and Ramdas' truncation lambda <= c / m: a bet never risks more than half
GRID = 2001  # null values on which a betting confidence sequence is inverted (spacing 1/2000 of the range)
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Martingale:
    """A one-sided anytime-valid test over units in order: ``log_m[n - 1]`` is log M_n, ``p_value`` its p-value."""

    log_m: tuple[float, ...]
    p_value: float
    side: str
    null: float  # the null value: a rate, or a mean on the statistic's own scale

    @property
    def n(self) -> int:
        """Return the number of units the test has seen."""
        return len(self.log_m)


@dataclass(frozen=True)
class Bounds:
    """A confidence sequence's bounds after the last unit (the running intersection over n): each end at 1 - alpha."""

    low: float
    high: float
    n: int
    alpha: float  # per end
    method: str


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def anytime_p(log_m: ArrayLike) -> Floats:
    """Return the anytime-valid p-values min(1, 1 / max_{m <= n} M_m) along the last axis of ``log_m``."""
    arr = np.asarray(log_m, dtype=np.float64)
    if arr.shape[-1] == 0:
        return np.ones(arr.shape, dtype=np.float64)
    running = np.maximum.accumulate(np.nan_to_num(arr, nan=-np.inf), axis=-1)
    return np.asarray(np.minimum(1.0, np.exp(-running)), dtype=np.float64)


def _sequence(log_m: Floats, side: str, null: float) -> Martingale:
    p = float(anytime_p(log_m)[-1]) if log_m.size else 1.0
    return Martingale(tuple(float(v) for v in log_m), p, side, float(null))


# --- pass rate: Robbins' beta-binomial mixture ---------------------------------------------------


def beta_binomial_log_m(
    passed: ArrayLike, n: ArrayLike, p0: ArrayLike, side: Side, prior: tuple[float, float] = PRIOR
) -> Floats:
    """Return log M(k, n) of the one-sided beta-binomial mixture test at the null rate ``p0`` (arguments broadcast).

    "greater" (H0: p <= p0), Beta(a, b) prior truncated to (p0, 1], B the Beta function, I the regularised
    incomplete one: M = B(a + k, b + n - k) (1 - I_p0(a + k, b + n - k)) / [B(a, b) (1 - I_p0(a, b)) p0^k
    (1 - p0)^(n - k)]. "less" mirrors it on [0, p0). E.g. 14 of 14 passing, uniform prior, p0 = 0.8: M = 7.31.
    """
    _check_side(side)
    p = np.asarray(p0, dtype=np.float64)
    if np.any((p <= 0) | (p >= 1)):
        raise ValueError(f"the null rate p0 must be in (0, 1), got {p0!r}")
    a, b = prior
    if not (a > 0 and b > 0):
        raise ValueError(f"the Beta prior needs a, b > 0, got {prior}")
    k = np.asarray(passed, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    tail = sc.betaincc if side == "greater" else sc.betainc
    with np.errstate(divide="ignore"):
        num = sc.betaln(a + k, b + m - k) + np.log(tail(a + k, b + m - k, p))
        den = sc.betaln(a, b) + np.log(tail(a, b, p))
    return np.asarray(num - den - k * np.log(p) - (m - k) * np.log1p(-p), dtype=np.float64)


def beta_binomial(passes: ArrayLike, p0: float, side: Side, prior: tuple[float, float] = PRIOR) -> Martingale:
    """Return the beta-binomial mixture test of ``passes`` (units in order, True = passed) at the null rate ``p0``."""
    x = np.asarray(passes, dtype=bool)
    k = np.cumsum(x, dtype=np.float64)
    n = np.arange(1, x.size + 1, dtype=np.float64)
    return _sequence(beta_binomial_log_m(k, n, p0, side, prior) if x.size else np.zeros(0), side, p0)


def beta_binomial_paths(passes: ArrayLike, p0: float, side: Side, prior: tuple[float, float] = PRIOR) -> Floats:
    """Return the anytime p-values of many runs at once: ``passes`` is (runs x units), the result likewise.

    log M depends on (passed, units) alone, so it is computed once per pair some run reaches (many share them).
    """
    x = np.asarray(passes, dtype=bool)
    size = x.shape[-1]
    cell = np.cumsum(x, axis=-1) * size + np.arange(size)  # (passed, units - 1) as one index
    reached = np.zeros((size + 1) * size, dtype=bool)
    reached[cell] = True
    pairs = np.flatnonzero(reached)
    table = np.empty(reached.size, dtype=np.float64)
    table[pairs] = beta_binomial_log_m(pairs // size, pairs % size + 1, p0, side, prior)
    return anytime_p(table[cell])


RATE_GRID = np.linspace(1e-6, 1 - 1e-6, 41)  # null rates scanned to bracket a bound, then narrowed by bisection


def _edges(passed: Floats, n: Floats, alpha: float, side: Side, prior: tuple[float, float]) -> Floats:
    """Return, per (k, n), the bound: the first null rate not rejected from the far side (grid, then 50 bisections)."""
    grid = RATE_GRID if side == "greater" else RATE_GRID[::-1]
    target = math.log(1 / alpha)
    log_m = beta_binomial_log_m(passed[:, None], n[:, None], grid[None, :], side, prior)  # (looks, grid)
    kept = log_m < target
    first = np.where(kept.any(axis=1), kept.argmax(axis=1), grid.size)
    inner = (first > 0) & (first < grid.size)
    rejected = grid[np.clip(first - 1, 0, grid.size - 1)]
    keep = grid[np.clip(first, 0, grid.size - 1)]
    for _ in range(50):
        mid = (rejected + keep) / 2
        still = beta_binomial_log_m(passed, n, mid, side, prior) >= target
        rejected, keep = np.where(still, mid, rejected), np.where(still, keep, mid)
    near, far = (0.0, 1.0) if side == "greater" else (1.0, 0.0)
    return np.asarray(np.where(first == 0, near, np.where(inner, keep, far)), dtype=np.float64)


def beta_binomial_bound(passed: int, n: int, alpha: float, side: Side, prior: tuple[float, float] = PRIOR) -> float:
    """Return the one-sided bound of a rate after ``passed`` of ``n`` units (docs/decisions.md tabulates some).

    "greater": the lower bound inf {p0 : M(p0) < 1/alpha} (0 when nothing is rejected); "less": the upper sup.
    """
    _check_alpha(alpha)
    if n == 0:
        return 0.0 if side == "greater" else 1.0
    return float(_edges(np.array([float(passed)]), np.array([float(n)]), alpha, side, prior)[0])


def beta_binomial_bounds(passes: ArrayLike, alpha: float, prior: tuple[float, float] = PRIOR) -> Bounds:
    """Return the running-intersection bounds of a pass rate after every unit of ``passes`` (in order)."""
    _check_alpha(alpha)
    x = np.asarray(passes, dtype=bool)
    if x.size == 0:
        return Bounds(0.0, 1.0, 0, alpha, "beta-binomial mixture")
    k = np.cumsum(x, dtype=np.float64)
    n = np.arange(1, x.size + 1, dtype=np.float64)
    low = float(_edges(k, n, alpha, "greater", prior).max())
    high = float(_edges(k, n, alpha, "less", prior).min())
    return Bounds(low, high, int(x.size), alpha, "beta-binomial mixture")


# --- bounded mean: betting ------------------------------------------------------------------------


def _unit_scale(values: ArrayLike, bounds: tuple[float, float]) -> Floats:
    lo, hi = bounds
    if not hi > lo:
        raise ValueError(f"bounds must be (lo, hi) with hi > lo, got {bounds}")
    x = np.asarray(values, dtype=np.float64)
    if np.any((x < lo) | (x > hi)) or np.any(np.isnan(x)):
        raise ValueError(
            f"every value must lie in the stated bounds [{lo:g}, {hi:g}]; got min {x.min()}, max {x.max()}"
        )
    return (x - lo) / (hi - lo)


def plug_in_bets(x: Floats, alpha: float) -> Floats:
    """Return Waudby-Smith and Ramdas' predictable plug-in bets lambda_t (before truncation) along the last axis.

    lambda_t = sqrt(2 log(1/alpha) / (sigma2_{t-1} t log(1 + t))), sigma2_0 = 1/4, with the running estimates
    mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1) and sigma2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1).
    """
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    prev = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), sigma2[..., :-1]], axis=-1)
    return np.asarray(np.sqrt(2 * math.log(1 / alpha) / (prev * t * np.log1p(t))), dtype=np.float64)


def betting_log_k(x: Floats, m: ArrayLike, side: Side, alpha: float) -> Floats:
    """Return the log capital path log K_n(m) for units ``x`` (..., units) on [0, 1] and null means ``m`` (broadcast).

    "greater": K_n = prod (1 + lambda_i (x_i - m)), lambda_i = min(plug-in, ``BET_CAP``/m); "less": the mirror
    prod (1 - lambda_i (x_i - m)), lambda_i = min(plug-in, ``BET_CAP``/(1 - m)).
    """
    _check_side(side)
    lam = plug_in_bets(x, alpha)
    m = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if side == "greater":
            cap = np.where(m > 0, BET_CAP / np.where(m > 0, m, 1.0), np.inf)
            lam = np.minimum(lam, cap)
            step = np.log1p(lam * (x - m))
        else:
            cap = np.where(m < 1, BET_CAP / np.where(m < 1, 1 - m, 1.0), np.inf)
            lam = np.minimum(lam, cap)
            step = np.log1p(-lam * (x - m))
    return np.asarray(np.cumsum(step, axis=-1), dtype=np.float64)


def betting(values: ArrayLike, null: float, side: Side, bounds: tuple[float, float], alpha: float) -> Martingale:
    """Return the betting test of the mean of ``values`` (in [lo, hi], in order) at ``null``; bets tuned to alpha."""
    _check_alpha(alpha)
    lo, hi = bounds
    x = _unit_scale(values, bounds)
    m = min(max((null - lo) / (hi - lo), 0.0), 1.0)
    if x.size == 0:
        return _sequence(np.zeros(0), side, null)
    return _sequence(betting_log_k(x, m, side, alpha), side, null)


def betting_bounds(values: ArrayLike, alpha: float, bounds: tuple[float, float], grid: int = GRID) -> Bounds:
    """Return the running-intersection bounds of a bounded mean, inverted on ``grid`` nulls (wider by <= 1 step)."""
    _check_alpha(alpha)
    lo, hi = bounds
    x = _unit_scale(values, bounds)
    if x.size == 0:
        return Bounds(lo, hi, 0, alpha, "betting")
    ms = np.linspace(0.0, 1.0, grid)[:, None]  # (grid, 1)
    target = math.log(1 / alpha)
    rejected_up = (betting_log_k(np.broadcast_to(x, (grid, x.size)), ms, "greater", alpha) >= target).any(axis=1)
    rejected_down = (betting_log_k(np.broadcast_to(x, (grid, x.size)), ms, "less", alpha) >= target).any(axis=1)
    g = ms[:, 0]
    kept_up = np.flatnonzero(~rejected_up)  # the "greater" test never rejects m = 1, nor "less" m = 0
    kept_down = np.flatnonzero(~rejected_down)
    low = float(g[max(int(kept_up[0]) - 1, 0)])
    high = float(g[min(int(kept_down[-1]) + 1, grid - 1)])
    return Bounds(lo + (hi - lo) * low, lo + (hi - lo) * high, int(x.size), alpha, "betting")


# --- unbounded mean: normal mixture under a stated variance bound ---------------------------------


def normal_mixture_tau(sigma: float, n_opt: int, alpha: float) -> float:
    """Return the mixing scale tau that makes the boundary tight near ``n_opt`` units (Howard et al. 2021).

    1/tau^2 = n_opt sigma^2 / (2 log(1/alpha) + log(1 + 2 log(1/alpha))).
    """
    _check_alpha(alpha)
    if not (sigma > 0 and n_opt >= 1):
        raise ValueError(f"normal mixture needs sigma > 0 and n_opt >= 1, got sigma={sigma}, n_opt={n_opt}")
    la = math.log(1 / alpha)
    rho = n_opt * sigma**2 / (2 * la + math.log1p(2 * la))
    return 1 / math.sqrt(rho)


def normal_mixture_log_m(s: ArrayLike, n: ArrayLike, sigma: float, tau: float) -> Floats:
    """Return log M of the one-sided normal mixture for centred sums ``s`` after ``n`` units.

    M = 2/(tau sqrt(A)) exp(S^2/(2A)) Phi(S/sqrt(A)), A = n sigma^2 + 1/tau^2 (a half-normal mixture of
    exp(lambda S - lambda^2 n sigma^2 / 2)); S = 0 gives 1/sqrt(1 + n sigma^2 tau^2).
    """
    s_arr = np.asarray(s, dtype=np.float64)
    a = np.asarray(n, dtype=np.float64) * sigma**2 + 1 / tau**2
    return np.asarray(
        math.log(2 / tau) - 0.5 * np.log(a) + s_arr**2 / (2 * a) + sc.log_ndtr(s_arr / np.sqrt(a)), dtype=np.float64
    )


def normal_mixture(values: ArrayLike, null: float, side: Side, sigma: float, tau: float) -> Martingale:
    """Return the normal-mixture test of the mean of ``values`` (units in order) at ``null``."""
    _check_side(side)
    x = np.asarray(values, dtype=np.float64)
    sign = 1.0 if side == "greater" else -1.0
    s = sign * np.cumsum(x - null)
    n = np.arange(1, x.size + 1, dtype=np.float64)
    return _sequence(normal_mixture_log_m(s, n, sigma, tau) if x.size else np.zeros(0), side, null)


def normal_mixture_radius(n: int, alpha: float, sigma: float, tau: float) -> float:
    """Return s* / n, where s* solves M(s*, n) = 1/alpha: the CS after n units is mean -+ this radius."""
    target = math.log(1 / alpha)

    def gap(s: float) -> float:
        return float(normal_mixture_log_m(s, n, sigma, tau)) - target

    hi = sigma * math.sqrt(n) + 1.0
    while gap(hi) < 0:
        hi *= 2
    return float(optimize.brentq(gap, -hi, hi, xtol=1e-12)) / n


def normal_mixture_bounds(values: ArrayLike, alpha: float, sigma: float, tau: float) -> Bounds:
    """Return the running-intersection bounds of a mean under the variance bound ``sigma``^2."""
    x = np.asarray(values, dtype=np.float64)
    low, high = -math.inf, math.inf
    total = 0.0
    for i, v in enumerate(x, start=1):
        total += float(v)
        r = normal_mixture_radius(i, alpha, sigma, tau)
        low, high = max(low, total / i - r), min(high, total / i + r)
    return Bounds(low, high, int(x.size), alpha, f"normal mixture (sigma <= {sigma:g})")
