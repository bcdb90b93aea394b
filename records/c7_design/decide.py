"""The unit decisions proposed for C7 v3, as pure functions of one seed's rate table.

A rate table is one seed's runs: for each, the lever it belongs to, its rate, kinv(Z), lambda_max,
sigma_min(Z) and the step size. The functions here are what the claim module would call on a real
seed and what the calibration worlds (``worlds.py``) feed with synthetic tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

ASSOCIATION_RHO = 0.9  # a seed passes association when rho >= 0.9: with 5 settings, the exact one-sided 5%
#                       test of Spearman's rho (P(rho >= 0.9) = 5/120 under no association). Section 0 had
#                       rho > 0; that unit decision passes half the null units (calibration, sec. 7).
GOVERNS_BAR = 0.5  # a seed passes governs when b >= 0.5 (fixed before data, design record sec. 0)
MIN_SPAN = 10.0  # premise: kinv(Z) must span at least a factor 10 over the conditioning lever


@dataclass(frozen=True)
class Table:
    """One seed's runs: the levers' settings of each run and what it measured."""

    lv: np.ndarray  # (R,) the conditioning lever's setting (kx, or vc) of each run
    s: np.ndarray  # (R,) scale of X (W_Q, W_K divided by it): moves lambda_max and sigma(Z), not kinv(Z)
    ug: np.ndarray  # (R,) gain on W_U: moves lambda_max, not Z
    rate: np.ndarray  # (R,) orders of loss decrease per step
    kinv: np.ndarray  # (R,) sigma_min/sigma_max of Z at init
    lam: np.ndarray  # (R,) lambda_max at init
    smin: np.ndarray  # (R,) sigma_min(Z) at init (unnormalised)
    mu: np.ndarray  # (R,) step size

    def conditioning_lever(self) -> np.ndarray:
        """Return the indices of the runs at the reference scale and gain (s = ug = 1): kx alone moves."""
        return np.flatnonzero((self.s == 1) & (self.ug == 1))

    def subset(self, idx: np.ndarray) -> Table:
        """Return the table of runs ``idx``."""
        return Table(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))


def steady_rate(loss: np.ndarray, start: float = 0.25) -> float:
    """Return minus the least-squares slope of log10 L_t over t in [start * T, T'] (orders per step).

    T is the run's planned length (len(loss) - 1 when it ran to the end); T' its last finite step.
    The first quarter holds the fast initial drop every run shows (about one order in 10 steps at
    N = 2, n = 8, d = 32), which does not depend on the conditioning. NaN with fewer than 5 points.
    """
    arr = np.asarray(loss, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
    finite = arr[: bad[0]] if bad.size else arr
    lo = math.ceil(start * (len(arr) - 1))
    t = np.arange(lo, finite.size)
    if t.size < 5:
        return math.nan
    slope = np.polyfit(t, np.log10(finite[lo:]), 1)[0]
    return float(-slope)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Return Spearman's rho (NaN when either side is constant)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(sps.spearmanr(x, y).statistic)


@dataclass(frozen=True)
class Decision:
    """A unit's decision and the numbers it used."""

    passed: bool
    value: float
    note: str


def association(t: Table, bar: float = ASSOCIATION_RHO) -> Decision:
    """Decide association: Spearman rho(rate, kinv) over the conditioning lever (s = ug = 1) >= ``bar``.

    ``bar`` 0.9 is the exact one-sided 5% test for 5 settings; ``bar`` 0 with a strict > is the sign
    alone (section 0's rule, kept for comparison): ``association(t, bar=0.0)`` passes when rho > 0.
    """
    idx = t.conditioning_lever()
    ok = np.isfinite(t.rate[idx]) & (t.rate[idx] > 0)
    idx = idx[ok]
    span = float(t.kinv[idx].max() / t.kinv[idx].min()) if idx.size else math.nan
    if idx.size < 4 or not span >= MIN_SPAN:
        return Decision(False, math.nan, f"premise: {idx.size} runs, kinv span {span:.3g} < {MIN_SPAN}")
    rho = spearman(t.rate[idx], t.kinv[idx])
    passed = rho > 0 if bar == 0.0 else rho >= bar - 1e-9
    return Decision(bool(passed), rho, f"rho over {idx.size} runs, kinv span {span:.3g}")


def elasticity(y: np.ndarray, x: np.ndarray, covariates: list[np.ndarray]) -> float:
    """Return the least-squares coefficient of log x in log y ~ 1 + log x + log(covariates)."""
    cols = [np.ones_like(y), np.log(x)] + [np.log(c) for c in covariates]
    coef, *_ = np.linalg.lstsq(np.column_stack(cols), np.log(y), rcond=None)
    return float(coef[1])


def governs(t: Table) -> Decision:
    """Decide governs: the elasticity b of rate in kinv(Z), lambda_max held, over the whole grid >= 0.5."""
    ok = np.isfinite(t.rate) & (t.rate > 0)
    cl = t.conditioning_lever()
    cl = cl[ok[cl]]
    span = float(t.kinv[cl].max() / t.kinv[cl].min()) if cl.size else math.nan
    lam_span = float(t.lam[ok].max() / t.lam[ok].min()) if ok.any() else math.nan
    if ok.sum() < 6 or not span >= MIN_SPAN:
        return Decision(False, math.nan, f"premise: {ok.sum()} runs, kinv span {span:.3g} < {MIN_SPAN}")
    b = elasticity(t.rate[ok], t.kinv[ok], [t.lam[ok]])
    return Decision(
        bool(b >= GOVERNS_BAR), b, f"b over {ok.sum()} runs, kinv span {span:.3g}, lambda span {lam_span:.3g}"
    )


def naive_sigma_min(t: Table, per_mu: bool = True) -> Decision:
    """Decide the naive check: elasticity of the rate (per unit mu) in the unnormalised sigma_min(Z) >= 0.5.

    Over all runs, no covariate. ``per_mu``: the rate divided by the step size, i.e. what a common
    absolute step would show; this is the check a scale change fools.
    """
    ok = np.isfinite(t.rate) & (t.rate > 0)
    y = t.rate[ok] / t.mu[ok] if per_mu else t.rate[ok]
    b = elasticity(y, t.smin[ok], [])
    return Decision(bool(b >= GOVERNS_BAR), b, f"naive b over {ok.sum()} runs")
