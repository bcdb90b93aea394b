"""Turn a part's units into the evidence a decision needs: two one-sided p-values and the interval between them.

One look uses the exact tests (binomial, Student-t), a schedule of several the anytime-valid ones of
``claimcheck.decide.sequential``; the interval is the one the tests invert, each end at 1 - alpha. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from claimcheck.decide import sequential as sq
from claimcheck.decide.stats import binomial_p, clopper_pearson, t_interval, t_test_p

EXACT = "exact"  # the method name of a one-look pass rate (Clopper-Pearson)
BETA_BINOMIAL = "beta-binomial confidence sequence"


@dataclass(frozen=True)
class Evidence:
    """Two one-sided p-values about a quantity against a null value, and the interval they invert."""

    estimate: float
    low: float
    high: float
    p_above: float  # H0: quantity <= null; small when it is shown above
    p_below: float  # H0: quantity >= null; small when it is shown below
    n: int
    method: str
    passed: int = 0  # pass-rate evidence: units that passed

    def describe(self) -> str:
        """Return e.g. ``0.61 [0.54, 0.68] (betting confidence sequence, 20 units)``."""
        return f"{self.estimate:.3g} [{self.low:.3g}, {self.high:.3g}] ({self.method}, {self.n} units)"


def rate_evidence(
    passes: Sequence[bool], null: float, alpha: float, looks: int = 1, prior: tuple[float, float] = sq.PRIOR
) -> Evidence:
    """Return the evidence about a pass rate against ``null`` from units in the order they were added.

    One look: the exact binomial tests and Clopper-Pearson interval; more: the beta-binomial mixture under
    ``prior``. ``null`` at 0 or 1 has no test (p-values 1): the caller decides from the counts.
    """
    x = [bool(v) for v in passes]
    k, n = sum(x), len(x)
    rate = k / n if n else math.nan
    tested = 0 < null < 1 and n > 0
    if looks <= 1:
        cp = clopper_pearson(k, n, 1 - 2 * alpha)
        if not tested:
            return Evidence(rate, cp.low, cp.high, 1.0, 1.0, n, EXACT, k)
        up, down = binomial_p(k, n, null, "greater"), binomial_p(k, n, null, "less")
        return Evidence(rate, cp.low, cp.high, up, down, n, EXACT, k)
    b = sq.beta_binomial_bounds(x, alpha, prior)
    if not tested:
        return Evidence(rate, b.low, b.high, 1.0, 1.0, n, BETA_BINOMIAL, k)
    up_seq, down_seq = sq.beta_binomial(x, null, "greater", prior), sq.beta_binomial(x, null, "less", prior)
    return Evidence(rate, b.low, b.high, up_seq.p_value, down_seq.p_value, n, BETA_BINOMIAL, k)


def mean_evidence(
    values: Sequence[float],
    null: float,
    alpha: float,
    looks: int = 1,
    bounds: tuple[float, float] | None = None,
    sigma: float | None = None,
    cap: int = 0,
) -> Evidence:
    """Return the evidence about the mean of ``values`` (units in order) against ``null``.

    One look: Student-t (needs two values). Several: the betting confidence sequence when
    ``bounds`` is given, else the normal mixture under ``sigma`` tuned to ``cap`` units. A value
    that is not finite leaves the mean undefined: both p-values are 1 and the method says so.
    """
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0 or not np.all(np.isfinite(x)):
        why = "no unit" if n == 0 else f"{int((~np.isfinite(x)).sum())} value(s) not finite: the mean is undefined"
        return Evidence(math.nan, math.nan, math.nan, 1.0, 1.0, n, why)
    mean = float(x.mean())
    if looks <= 1:
        if n < 2:
            return Evidence(mean, math.nan, math.nan, 1.0, 1.0, n, "Student-t needs two units")
        iv = t_interval(x, 1 - 2 * alpha)
        return Evidence(mean, iv.low, iv.high, t_test_p(x, null, "greater"), t_test_p(x, null, "less"), n, "Student-t")
    if bounds is not None:
        if np.any((x < bounds[0]) | (x > bounds[1])):
            return Evidence(
                mean, math.nan, math.nan, 1.0, 1.0, n, f"a value lies outside the stated bounds {list(bounds)}"
            )
        b = sq.betting_bounds(x, alpha, bounds)
        up, down = sq.betting(x, null, "greater", bounds, alpha), sq.betting(x, null, "less", bounds, alpha)
        return Evidence(
            mean, b.low, b.high, up.p_value, down.p_value, n, f"betting confidence sequence on {list(bounds)}"
        )
    if sigma is None:
        raise ValueError("a mean decided over several looks needs bounds or sigma")
    tau = sq.normal_mixture_tau(sigma, max(cap, n), alpha)
    b = sq.normal_mixture_bounds(x, alpha, sigma, tau)
    up, down = sq.normal_mixture(x, null, "greater", sigma, tau), sq.normal_mixture(x, null, "less", sigma, tau)
    return Evidence(
        mean, b.low, b.high, up.p_value, down.p_value, n, f"normal-mixture confidence sequence, sigma <= {sigma:g}"
    )
