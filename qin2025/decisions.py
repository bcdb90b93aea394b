"""The unit decisions of claims C3 and C6: plain functions of a unit's raw measurements returning its statistics.

Each claim's protocol part names one of these as its ``decision``; the claim test scores every
real unit with it (``ClaimRecorder.score``) and ``claimcheck calibrate`` runs it on cases whose
answer is known (``qin2025.calibration``). A pass-rate decision takes one unit (a seed); an
estimate-rule decision takes the whole sample and returns an ``Estimate`` per statistic. The
linear-rate and monotone decisions of C1, C2 and C8 live in ``qin2025.checks``, C4's in
``qin2025.collapse``, C5's in ``qin2025.residual_speed``, C7's in ``qin2025.conditioning``.
docs/calibration.md lists every decision with its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from claimcheck.protocol import Estimate
from claimcheck.stats import t_interval
from qin2025.spectral import floor_ratio

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
COLLAPSED = "min over the unit's draws of sigma_min(Z)/sigma_min(X) with the attention collapsed (S = 11^T/n)"


def _min_ratio(z: Sequence[ArrayLike], x: Sequence[ArrayLike]) -> float:
    return float(min(float(np.min(floor_ratio(a, b))) for a, b in zip(z, x, strict=True)))


def floor_decision(
    z: Sequence[ArrayLike], x: Sequence[ArrayLike], z_collapsed: Sequence[ArrayLike]
) -> dict[str, float]:
    """Return the smallest sigma_min(Z)/sigma_min(X) over a unit's grid, and over the same draws collapsed (C3 "floor").

    ``z`` and ``x``: matching arrays of shape (..., n, d), one pair per grid point (a weight draw at
    one beta on the unit's inputs X). ``z_collapsed``: for each point, Z of the same weights and
    inputs with the attention collapsed to S = 11^T/n, the limit that Attn(X) tends to as it
    collapses to rank one. A floor holds when both minima meet the threshold: on the grid, and at
    the end of the collapse, so a floor that stays above the threshold on the grid but vanishes as
    the attention collapses further is caught at its limit.
    """
    return {FLOOR: _min_ratio(z, x), COLLAPSED: _min_ratio(z_collapsed, x)}


# --- C6: residuals win as depth grows ------------------------------------------------------------

TREND = "least-squares slope of the advantage over L (per layer)"


def advantage_name(depth: int) -> str:
    """Return the name of the per-seed advantage at depth ``depth``."""
    return f"mean training error over steps 1..T, without minus with residual, L={depth}"


def mean_step_error(error: ArrayLike) -> float:
    """Return the training error averaged over steps 1..T of a curve E_0..E_T (NaN for a diverged run's NaN curve)."""
    return float(np.mean(np.asarray(error, dtype=np.float64)[1:]))


def depth_slope(depths: Sequence[int], values: Sequence[float]) -> float:
    """Return the least-squares slope of ``values`` on ``depths`` (NaN with fewer than 2 depths or a NaN)."""
    if len(depths) < 2 or not all(math.isfinite(v) for v in values):
        return math.nan
    return float(np.polyfit(np.asarray(depths, dtype=np.float64), np.asarray(values), 1)[0])


def _advantages(better: Mapping[int, ArrayLike], worse: Mapping[int, ArrayLike]) -> dict[int, float]:
    return {L: mean_step_error(worse[L]) - mean_step_error(better[L]) for L in sorted(worse)}


def advantage_decision(better: Mapping[int, ArrayLike], worse: Mapping[int, ArrayLike]) -> dict[str, float]:
    """Return, per depth of ``worse``, its mean training error over steps 1..T minus ``better``'s (C6 "advantage").

    ``better`` and ``worse``: depth -> training-error curve E_0..E_T of one seed (with and without
    residuals; a diverged run is a curve of NaN).
    """
    return {advantage_name(L): a for L, a in _advantages(better, worse).items()}


def trend_decision(better: Mapping[int, ArrayLike], worse: Mapping[int, ArrayLike]) -> dict[str, float]:
    """Return the least-squares slope over depth of the advantages of ``advantage_decision`` (C6 "trend").

    Returns nothing with fewer than two depths (the trend is then not measured).
    """
    adv = _advantages(better, worse)
    if len(adv) < 2:
        return {}
    return {TREND: depth_slope(list(adv), list(adv.values()))}
