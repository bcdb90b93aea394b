"""Decide whether a statistic moved between two runs on the same units: paired differences against a margin.

Equivalent (TOST), worse or better beyond the margin (the paired t-test and Fisher's sign-flip test, the larger
p deciding; the caller applies Holm), or undecided; a single pair by a normal approximation from the runs' own
intervals; with K ``looks`` every p is multiplied by K. docs/report.md ("The baseline gate") gives the rule and why.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
from scipy import optimize
from scipy import stats as sps

# the one Holm (NaN: not tested, not counted in the family); claimcheck.gate.baseline reads it here
from claimcheck.decide.stats import MAX_UNITS as MAX_UNITS  # the cap units_to_show searches to
from claimcheck.decide.stats import fewest_units
from claimcheck.decide.stats import holm as holm

LEVEL = 0.90  # two-sided interval of the mean difference: each end a one-sided 95% bound
ALPHA = 0.05  # each one-sided test; TOST at this alpha is the LEVEL interval inside the margins
POWER = 0.90  # the probability at which the gate states what it can see ("detectable", "units to decide")
PAIRING_LOST = 0.5  # a pair correlation below this: each unit's two values hardly move together
MIN_PAIRS = 4  # pair_correlation needs this many finite pairs
SAME_SPREAD = 2.0  # new draws of the same law keep a statistic's spread within this factor
FLIP_EXACT = 16  # sign_flip_p enumerates all 2^n flips up to this many pairs; beyond, FLIP_DRAWS of them
FLIP_DRAWS = 1 << 14  # random flips (a fixed generator: the same p for the same differences)
Floats = Sequence[float]
Halves = tuple[float, float] | None  # a single pair's two values' own 90% half-widths (None: not known)


def sign_flip_p(u: np.ndarray) -> float:
    """Return the one-sided p-value of "mean(u) > 0" by Fisher's sign-flip test of ``u`` (symmetric about 0 under H0).

    Exact up to ``FLIP_EXACT`` values; beyond, ``FLIP_DRAWS`` random flips, Phipson and Smyth's (b + 1)/(B + 1).
    """
    observed = float(u.sum())
    tol = 1e-12 * float(np.abs(u).sum())  # sums of the same values in another order: count them as ties
    at_least = int(np.sum(_signs(u.size) @ u >= observed - tol))
    return at_least / (1 << u.size) if u.size <= FLIP_EXACT else (at_least + 1) / (FLIP_DRAWS + 1)


@functools.lru_cache(maxsize=8)  # float64, so that each product is one BLAS call: 8 MB at 16 pairs, 60 MB at 460
def _signs(n: int) -> np.ndarray:
    """Return every flip of n signs (n <= FLIP_EXACT), else FLIP_DRAWS of them from a fixed generator."""
    if n <= FLIP_EXACT:
        bits = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    else:
        bits = np.random.default_rng(0).integers(0, 2, size=(FLIP_DRAWS, n))
    return (1.0 - 2.0 * bits).astype(np.float64)


def pair_correlation(before: Sequence[float], after: Sequence[float]) -> tuple[float, float]:
    """Return a statistic's correlation over the units between before and after, and its spread's ratio after/before.

    Near 1: the same draws; near 0: drawn anew (docs/report.md, "What kind of change"). Descriptive: no test uses them.
    """
    pairs = np.array([(b, a) for b, a in zip(before, after, strict=True) if math.isfinite(b) and math.isfinite(a)])
    if len(pairs) < MIN_PAIRS or pairs[:, 0].std() == 0.0 or pairs[:, 1].std() == 0.0:
        return math.nan, math.nan
    return float(np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1]), float(pairs[:, 1].std() / pairs[:, 0].std())


def drawn_anew(correlation: float, spread_ratio: float) -> bool:
    """Return True when a statistic looks drawn anew from the same law: uncorrelated pairs, the spread kept."""
    return correlation < PAIRING_LOST and 1 / SAME_SPREAD <= spread_ratio <= SAME_SPREAD


class Movement(StrEnum):
    """What the paired comparison says of one statistic."""

    EQUIVALENT = "equivalent"
    WORSE = "worse beyond margin"
    BETTER = "better beyond margin"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class PairedTest:
    """The paired comparison of one statistic: the mean of ``after - before``, its interval, the one-sided p-values.

    ``p_worse`` (``p_better``) tests H0 "the difference towards worse (better) is at most the margin",
    ``p_equivalent`` is TOST's; NaN: the test could not be run (too few finite pairs).
    """

    n: int  # finite pairs tested
    mean: float
    low: float
    high: float
    margin: float
    p_worse: float
    p_better: float
    p_equivalent: float
    left_out: int = 0  # pairs with a non-finite value on one side only (or opposite infinities): changed
    identical: bool = False  # every pair is the same value bit for bit
    sd: float = math.nan  # the SD of the paired differences (n >= 2); for one pair, the standard error
    unfinite: int = 0  # pairs not finite on both sides, agreeing (see the module): left out, not a change
    lost: int = 0  # of left_out: finite in the baseline, not finite now; a value lost is worse

    def movement(self, worse: bool | None = None, better: bool | None = None) -> Movement:
        """Return the outcome; ``worse``/``better`` override the raw one-sided tests (e.g. after Holm)."""
        if self.lost or (worse if worse is not None else self.p_worse < ALPHA):
            return Movement.WORSE
        if better if better is not None else self.p_better < ALPHA:
            return Movement.BETTER
        if self.p_equivalent < ALPHA or self.identical:
            return Movement.EQUIVALENT
        return Movement.UNDECIDED


# values larger than this (about 3e150) are tested scaled down by a power of 2, so that neither a difference nor a
# square in the SD overflows to inf (which left a large change "undecided")
_SCALE_PAST = 2.0**500


def _agree_unfinite(a: float, b: float) -> bool:
    """Return True when neither value is finite and they are not opposite infinities."""
    return not math.isfinite(a) and not math.isfinite(b) and not (math.isinf(a) and math.isinf(b) and a != b)


def paired_test(
    before: Floats, after: Floats, margin: float, sign: int, *, halfwidths: Halves = None, looks: int = 1
) -> PairedTest:
    """Compare ``after`` with ``before`` pair by pair against ``margin`` (>= 0); ``sign`` +1: larger is worse.

    ``halfwidths``: the two values' own 90% half-widths, used for a single pair.
    """
    if looks < 1:
        raise ValueError(f"looks must be >= 1, got {looks}")
    t = _paired_test(before, after, margin, sign, halfwidths, looks)
    times = [p if math.isnan(p) or looks == 1 else min(1.0, p * looks) for p in (t.p_worse, t.p_better, t.p_equivalent)]
    return replace(t, p_worse=times[0], p_better=times[1], p_equivalent=times[2])


def _paired_test(before: Floats, after: Floats, margin: float, sign: int, halfwidths: Halves, looks: int) -> PairedTest:
    if len(before) != len(after):
        raise ValueError(f"paired_test needs as many values after as before, got {len(before)} and {len(after)}")
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign}")
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    big = max((abs(float(x)) for x in (*before, *after) if math.isfinite(x)), default=0.0)
    if big > _SCALE_PAST:  # a difference or square of such values could overflow: test them scaled by a power of 2
        scale = 2.0 ** (math.frexp(big)[1] - 400)  # exact: values keep their bits; the largest < 2**400, squares finite
        halves = None if halfwidths is None else (halfwidths[0] / scale, halfwidths[1] / scale)
        small = _paired_test(
            [x / scale for x in before], [x / scale for x in after], margin / scale, sign, halves, looks
        )
        return replace(  # a mean past the float range is reported as the infinity it is; the p-values stand
            small, mean=small.mean * scale, low=small.low * scale, high=small.high * scale, margin=margin,
            sd=small.sd * scale,
        )  # fmt: skip
    identical = all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(before, after, strict=True))
    pairs = list(zip(before, after, strict=True))
    finite = [(a, b) for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
    unfinite = sum(_agree_unfinite(a, b) for a, b in pairs)
    left_out = len(pairs) - len(finite) - unfinite
    lost = sum(math.isfinite(a) and not math.isfinite(b) for a, b in pairs)
    d = np.array([b - a for a, b in finite], dtype=np.float64)  # after - before
    n = int(d.size)
    nan = math.nan
    if n == 0:  # no pairs at all is not an agreement: nothing was compared
        agree = bool(pairs) and (identical or (unfinite > 0 and left_out == 0))
        return PairedTest(0, nan, nan, nan, margin, nan, nan, 0.0 if agree else nan, left_out, identical and agree,
                          unfinite=unfinite, lost=lost)  # fmt: skip
    w = sign * d  # towards worse
    mean = float(d.mean())
    if n == 1:
        test = _single(mean, float(w[0]), margin, halfwidths, left_out, identical, looks)
        return replace(test, p_equivalent=nan if left_out else test.p_equivalent, unfinite=unfinite, lost=lost)
    sd = float(w.std(ddof=1))
    if sd == 0.0:  # every pair moved by the same amount: no noise to test against
        m = float(w[0])  # a change still needs the sign-flip test's units: 2^-n at best
        p_worse, p_better = (0.5**n if m > margin else 1.0), (0.5**n if m < -margin else 1.0)
        p_eq = nan if left_out else 0.0 if abs(m) < margin or (m == 0.0 and margin == 0.0) else 1.0
        return PairedTest(
            n, mean, mean, mean, margin, p_worse, p_better, p_eq, left_out, identical, 0.0, unfinite, lost
        )
    se = sd / math.sqrt(n)
    half = float(sps.t.ppf(1 - (1 - LEVEL) / 2 / looks, n - 1)) * se
    from statsmodels.stats.weightstats import ttost_paired  # a second to import: only when a gate runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p_eq, (_, p_low, _), (_, p_upp, _) = ttost_paired(sign * np.array([b for _, b in finite]),
                                                          sign * np.array([a for a, _ in finite]),
                                                          -margin, margin)  # fmt: skip
    # p_upp tests H0 "w >= margin" against "w < margin" (left tail); its complement tests H0 "w <= margin"
    p_worse = max(1.0 - float(p_upp), sign_flip_p(w - margin))
    p_better = max(1.0 - float(p_low), sign_flip_p(-(w + margin)))
    return PairedTest(
        n, mean, mean - half, mean + half, margin, p_worse, p_better,
        nan if left_out else float(p_eq), left_out, identical, sd, unfinite, lost,
    )  # fmt: skip


def _single(
    mean: float, w: float, margin: float, halfwidths: Halves, left_out: int, identical: bool, looks: int = 1
) -> PairedTest:
    nan = math.nan
    if halfwidths is None or not all(math.isfinite(h) and h >= 0 for h in halfwidths):
        p_eq = 0.0 if w == 0.0 else nan
        return PairedTest(1, mean, nan, nan, margin, nan, nan, p_eq, left_out, identical or w == 0.0)
    z = float(sps.norm.ppf(1 - (1 - LEVEL) / 2))
    half = math.hypot(*halfwidths)
    if half == 0.0:
        p_worse, p_better = (0.0 if w > margin else 1.0), (0.0 if w < -margin else 1.0)
        p_eq = 0.0 if abs(w) <= margin else 1.0
        return PairedTest(1, mean, mean, mean, margin, p_worse, p_better, p_eq, left_out, sd=0.0)
    se = half / z
    p_worse = float(sps.norm.sf((w - margin) / se))
    p_better = float(sps.norm.cdf((w + margin) / se))
    p_eq = max(float(sps.norm.sf((w + margin) / se)), float(sps.norm.cdf((w - margin) / se)))
    wide = float(sps.norm.ppf(1 - (1 - LEVEL) / 2 / looks)) * se
    return PairedTest(1, mean, mean - wide, mean + wide, margin, p_worse, p_better, p_eq, left_out, identical, se)


def spread_sd(values_by_label: Sequence[Sequence[float]]) -> float:
    """Return a statistic's seed-to-seed SD: pooled within labels (configurations differ beyond the seed).

    Over all finite values when no label has two; NaN when fewer than two exist.
    """
    groups = [np.array([v for v in vs if math.isfinite(v)], dtype=np.float64) for vs in values_by_label]
    within = [g for g in groups if g.size >= 2]
    if within:
        ss = sum(float(((g - g.mean()) ** 2).sum()) for g in within)
        dof = sum(g.size - 1 for g in within)
        return math.sqrt(ss / dof)
    flat = np.concatenate(groups) if groups else np.array([])
    return float(flat.std(ddof=1)) if flat.size >= 2 else math.nan


def _power(gap: float, sd: float, n: int, alpha: float) -> float:
    """Return the power of the one-sided t-test at ``alpha`` over ``n`` >= 2 pairs for a true effect ``gap``."""
    if sd == 0.0:
        return 1.0 if gap > 0 else 0.0
    return float(sps.nct.sf(sps.t.isf(alpha, n - 1), n - 1, gap * math.sqrt(n) / sd))


def detectable(sd: float, n: int, margin: float, alpha: float, power: float = POWER) -> float:
    """Return the smallest true mean change ``paired_test``'s one-sided test at ``alpha`` shows with ``power``.

    ``margin + ncp sd / sqrt(n - 1)``: the sign-flip test has about the t-test's power on one pair fewer
    (docs/report.md, "Power in view"); one pair: a normal test, ``sd`` its standard error; inf when 2^-n > alpha.
    """
    if not (math.isfinite(sd) and sd >= 0 and n >= 1):
        return math.nan
    if n == 1:
        return margin if sd == 0.0 else margin + float(sps.norm.isf(alpha) + sps.norm.ppf(power)) * sd
    if 0.5**n > alpha:
        return math.inf
    if sd == 0.0:
        return margin
    n -= 1
    crit, df = float(sps.t.isf(alpha, n - 1)), n - 1
    guess = float(sps.norm.isf(alpha) + sps.norm.ppf(power))
    hi = max(2 * guess, crit + 10.0)
    while sps.nct.sf(crit, df, hi) < power:
        hi *= 2
    ncp = float(optimize.brentq(lambda c: float(sps.nct.sf(crit, df, c)) - power, 0.0, hi, xtol=1e-10))
    return margin + ncp * sd / math.sqrt(n)


def units_to_show(gap: float, sd: float, alpha: float, power: float = POWER, *, change: bool = True) -> int | None:
    """Return the fewest pairs at which ``paired_test`` at ``alpha`` shows ``gap`` (> 0) with ``power``.

    ``sd`` is the SD of the differences. None when the gap is not positive or more than ``MAX_UNITS`` are needed.
    A ``change``: at least the pairs at which the sign-flip test can reach ``alpha`` (2^-n <= alpha), and one
    more than the t-test needs (``detectable``); an equivalence (TOST): the one-sided t-test's, at least 2.
    """
    if not (gap > 0 and math.isfinite(sd) and sd >= 0):
        return None
    if change:  # the sign-flip test's units (2^-n <= alpha), and its power: the t-test's on one pair fewer
        least = max(3, math.ceil(math.log2(1 / alpha) - 1e-9)) if 0 < alpha < 1 else 3
        fewer = units_to_show(gap, sd, alpha, power, change=False)
        return None if fewer is None else max(least, fewer + 1)
    return fewest_units(lambda n: _power(gap, sd, n, alpha) >= power, 1)


def units_to_decide(
    test: PairedTest, alpha_change: float, power: float = POWER, alpha_equivalent: float = ALPHA
) -> int | None:
    """Return how many pairs would decide an undecided statistic if its mean change and SD stayed as measured.

    Inside the margin: the units at which TOST shows equivalence (at ``alpha_equivalent``); beyond it,
    those at which the change test at ``alpha_change`` shows it. None when no number does.
    """
    gap = test.margin - abs(test.mean)
    if gap > 0:
        return units_to_show(gap, test.sd if test.n >= 2 else math.nan, alpha_equivalent, power, change=False)
    return units_to_show(-gap, test.sd if test.n >= 2 else math.nan, alpha_change, power)
