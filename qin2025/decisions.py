"""The unit decisions of claims C3-C5 and C7: plain functions of a unit's raw measurements that return its statistics.

Each claim's protocol part names one of these as its ``decision``; the claim test scores every
real unit with it (``ClaimRecorder.score``) and ``claimcheck calibrate`` runs it on cases whose
answer is known (``qin2025.calibration``). A pass-rate decision takes one unit (a seed); an
estimate-rule decision takes the whole sample and returns an ``Estimate`` per statistic. The
linear-rate and monotone decisions of C1, C2 and C8 live in ``qin2025.checks``, C6's in
``qin2025.residual_depth``. docs/calibration.md lists every decision with its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from claimcheck.protocol import Estimate
from claimcheck.stats import spearman, t_interval
from qin2025.spectral import floor_ratio, loglog_slope, partial_rank_correlation, rank_deficit

LEVEL = 0.90  # two-sided Student-t intervals over seeds: each end a one-sided 95% bound


def _estimate(values: Sequence[float], level: float = LEVEL) -> Estimate:
    """Return the mean of the finite ``values`` with its Student-t interval (NaN with fewer than two)."""
    kept = [v for v in values if math.isfinite(v)]
    if len(kept) < 2:
        return Estimate(math.nan, math.nan, math.nan, f"Student-t {level:.0%} over {len(kept)} seeds")
    iv = t_interval(kept, level)
    return Estimate(iv.estimate, iv.low, iv.high, f"Student-t {level:.0%} over {len(kept)} seeds")


# --- C3: the residual keeps Z at full rank --------------------------------------------------------

FLOOR = "min over the unit's grid of sigma_min(Z)/sigma_min(X)"
DEFICIT = "max over the unit's grid of the rank deficit of Z"


def full_rank_decision(z: Sequence[ArrayLike]) -> dict[str, float]:
    """Return the largest rank deficit over a unit's attention outputs Z (C3 "full rank").

    ``z``: arrays of shape (..., n, d), one per grid point; the deficit of a matrix is min(n, d)
    minus its numerical rank at numpy's ``matrix_rank`` tolerance (``rank_deficit``).
    """
    return {DEFICIT: float(max(int(np.max(rank_deficit(a))) for a in z))}


def floor_decision(z: Sequence[ArrayLike], x: Sequence[ArrayLike]) -> dict[str, float]:
    """Return the smallest sigma_min(Z)/sigma_min(X) over a unit's grid (C3 "floor").

    ``z`` and ``x``: matching arrays of shape (..., n, d), one pair per grid point.
    """
    return {FLOOR: float(min(float(np.min(floor_ratio(a, b))) for a, b in zip(z, x, strict=True)))}


# --- C4: rank collapse and the slowdown without the residual -------------------------------------

RHO_RATIO = "Spearman rho(d_QK, sigma_2/sigma_1 of Attn(X)) over d_QK = d .. 256 d"
RHO_FLOOR = "Spearman rho(d_QK, sigma_min(Attn(X))/sigma_min(X)) over d_QK = d .. 256 d"
RATIO_TOP = "sigma_2/sigma_1 of Attn(X) at d_QK = 256 d"
SLOPE = "mean over seeds of the log-log slope of rate(beta=0)/rate(beta=1) against d_QK"


def collapse_decision(d_qk: Sequence[float], ratio: Sequence[float], floor: Sequence[float]) -> dict[str, float]:
    """Return C4's collapse statistics of one sweep over ``d_qk`` (ascending, d .. 256 d).

    ``ratio``: median sigma_2/sigma_1 of Attn(X) per d_QK; ``floor``: median
    sigma_min(Attn(X))/sigma_min(X) per d_QK. The Spearman correlations of each with log d_QK, and
    the ratio at the largest d_QK.
    """
    log_d = np.log(np.asarray(d_qk, dtype=np.float64))
    return {
        RHO_RATIO: spearman(log_d, ratio).rho,
        RHO_FLOOR: spearman(log_d, floor).rho,
        RATIO_TOP: float(ratio[-1]),
    }


def slowdown_decision(d_qk: Sequence[float], rates: Sequence[Sequence[tuple[float, float]]]) -> dict[str, Estimate]:
    """Return the mean over seeds of the log-log slope of rate(beta=0)/rate(beta=1) against ``d_qk`` (C4 "slowdown").

    ``rates``: per admissible seed, the pair (rate beta=0, rate beta=1) at each d_QK, in orders of
    loss per step. The slope of each seed is the least-squares slope of log10 of the relative rate
    on log10 d_QK; the estimate is their mean with a Student-t 90% interval over seeds.
    """
    slopes = [loglog_slope(d_qk, [r0 / r1 for r0, r1 in seed]) for seed in rates]
    what = f"Student-t {LEVEL:.0%} over {len(slopes)} seeds"
    if len(slopes) < 2:
        return {SLOPE: Estimate(math.nan, math.nan, math.nan, what)}
    iv = t_interval(slopes, LEVEL)
    return {SLOPE: Estimate(iv.estimate, iv.low, iv.high, what)}


# --- C5: larger beta, faster convergence ---------------------------------------------------------

RHO = "Spearman rho(beta, log(L_T/L_0))"


def effect_name(beta: float) -> str:
    """Return the name of the paired effect of ``beta`` against beta = 0."""
    return f"mean paired effect log(L_T/L_0)[beta=0] - log(L_T/L_0)[beta={beta:g}]"


def progress(curves: Sequence[ArrayLike]) -> np.ndarray:
    """Return log(L_T / L_0) per curve: the log of the contraction over the horizon (inf if it diverged)."""
    out = []
    for c in curves:
        arr = np.asarray(c, dtype=np.float64)
        out.append(math.log(arr[-1] / arr[0]) if np.isfinite(arr[-1]) else math.inf)
    return np.asarray(out)


def order_decision(betas: Sequence[float], curves: Sequence[ArrayLike]) -> dict[str, float]:
    """Return Spearman rho(beta, log(L_T/L_0)) over one seed's runs (C5 "order"; NaN if a run diverged).

    ``curves``: the loss curve L_0..L_T of each beta of ``betas``, same seed, same step size.
    """
    g = progress(curves)
    return {RHO: spearman(betas, g).rho if np.all(np.isfinite(g)) else math.nan}


def faster_decision(betas: Sequence[float], curves: Sequence[Sequence[ArrayLike]]) -> dict[str, Estimate]:
    """Return, per beta > 0, the mean over seeds of log(L_T/L_0)[beta=0] - log(L_T/L_0)[beta] (C5 "beta>0 vs beta=0").

    ``curves``: per seed, the loss curve of each beta of ``betas`` (``betas[0]`` is 0). Each mean
    comes with its Student-t 90% interval over seeds.
    """
    g = np.asarray([progress(seed) for seed in curves])  # (seeds, betas)
    out = {}
    for j, b in enumerate(betas[1:], start=1):
        ci = t_interval(g[:, 0] - g[:, j], LEVEL)
        what = f"Student-t {LEVEL:.0%} over {len(curves)} seeds"
        out[effect_name(b)] = Estimate(ci.estimate, ci.low, ci.high, what, label=f"beta={b:g}")
    return out


# --- C7: the rate is governed by the conditioning of Z -------------------------------------------

WITHIN = "mean over seeds of the within-stratum Spearman rho(rate, sigma_min/sigma_max of Z)"
PARTIAL = "mean over seeds of the partial Spearman rho(rate, sigma_min/sigma_max of Z | lambda_max)"


def within_strata(
    rate: Sequence[float], kinv: Sequence[float], admissible: Sequence[bool], strata: Sequence[object]
) -> float:
    """Return the mean over strata of Spearman rho(rate, kinv) over a stratum's admissible runs (3 or more)."""
    rhos = []
    for stratum in dict.fromkeys(strata):
        idx = [i for i, s in enumerate(strata) if s == stratum and admissible[i]]
        if len(idx) >= 3:
            rhos.append(spearman([rate[i] for i in idx], [kinv[i] for i in idx]).rho)
    return float(np.nanmean(rhos)) if rhos and not all(math.isnan(r) for r in rhos) else math.nan


def partial_given_lambda(
    rate: Sequence[float], kinv: Sequence[float], lam: Sequence[float], admissible: Sequence[bool]
) -> float:
    """Return the partial Spearman rho(rate, kinv | lambda_max) over a seed's admissible runs."""
    idx = [i for i, ok in enumerate(admissible) if ok]
    return partial_rank_correlation([rate[i] for i in idx], [kinv[i] for i in idx], [lam[i] for i in idx])


def association_decision(
    rate: Sequence[Sequence[float]],
    kinv: Sequence[Sequence[float]],
    lam: Sequence[Sequence[float]],
    admissible: Sequence[Sequence[bool]],
    strata: Sequence[object],
) -> dict[str, Estimate]:
    """Return the mean over seeds of the within-stratum Spearman rho(rate, kinv), with its interval (C7 "association").

    The sample's table, per seed (rows) and configuration (columns): ``rate`` in orders of loss per
    step, ``kinv`` = sigma_min(Z)/sigma_max(Z) at initialisation, ``lam`` = lambda_max at
    initialisation (not used here; ``governs_decision`` takes the same table), ``admissible`` (the
    run stayed in the premise); ``strata`` labels each configuration's stratum (d_QK, input scale).
    Student-t 90% over seeds.
    """
    values = [within_strata(r, k, a, strata) for r, k, a in zip(rate, kinv, admissible, strict=True)]
    est = _estimate(values)
    return {WITHIN: Estimate(est.value, est.low, est.high, est.interval, label=_seeds_label(values))}


def governs_decision(
    rate: Sequence[Sequence[float]],
    kinv: Sequence[Sequence[float]],
    lam: Sequence[Sequence[float]],
    admissible: Sequence[Sequence[bool]],
    strata: Sequence[object],
) -> dict[str, Estimate]:
    """Return the mean over seeds of the partial Spearman rho(rate, kinv | lambda_max) with its interval (C7 "governs").

    The table of ``association_decision`` (``strata`` not used here); ``lam``, the top Hessian
    eigenvalue at initialisation, sets each run's step.
    """
    values = [partial_given_lambda(r, k, m, a) for r, k, m, a in zip(rate, kinv, lam, admissible, strict=True)]
    est = _estimate(values)
    return {PARTIAL: Estimate(est.value, est.low, est.high, est.interval, label=_seeds_label(values))}


def _seeds_label(values: Sequence[float]) -> str:
    return f"{sum(math.isfinite(v) for v in values)} seeds"
