"""The statistics against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest

from claimcheck.decide.stats import spearman, spread
from qin2025.curves import contraction, increases, log_linear_fit


def test_spread_of_three_values() -> None:
    s = spread([3.0, 1.0, 2.0])
    assert (s.median, s.low, s.high, s.n) == (2.0, 1.0, 3.0, 3)
    assert s.format() == "2 [1, 3] (n=3)"


def test_spread_of_nothing_is_nan() -> None:
    assert spread([]).n == 0 and math.isnan(spread([]).median)


def test_contraction_of_a_geometric_curve_is_its_ratio() -> None:
    c = contraction([1.0, 0.5, 0.25, 0.125])
    assert c.worst_ratio == pytest.approx(0.5)
    assert c.steps == 3
    assert c.orders == pytest.approx(3 * math.log10(0.5))


def test_contraction_takes_the_worst_step() -> None:
    # ratios 0.1, 0.9, 0.5: the envelope is set by 0.9
    c = contraction([100.0, 10.0, 9.0, 4.5])
    assert c.worst_ratio == pytest.approx(0.9)
    assert c.orders == pytest.approx(3 * math.log10(0.9))


def test_contraction_of_a_rising_curve_is_positive() -> None:
    assert contraction([1.0, 2.0]).orders == pytest.approx(math.log10(2.0))


def test_contraction_of_a_diverged_curve_is_infinite() -> None:
    assert contraction([1.0, math.nan]).worst_ratio == math.inf


def test_log_linear_fit_recovers_slope_and_perfect_r2() -> None:
    fit = log_linear_fit([10.0 ** (2 - 0.5 * t) for t in range(6)])
    assert fit.slope == pytest.approx(-0.5)
    assert fit.intercept == pytest.approx(2.0)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.rate == pytest.approx(10**-0.5)


def test_log_linear_fit_of_a_plateau_is_poor() -> None:
    # log10 = [0, -1, -1, -1, -1]: Sxy = -2, Sxx = 10, SS_tot = 0.8, so r2 = (4 / 10) / 0.8 = 0.5
    fit = log_linear_fit([1.0, 0.1, 0.1, 0.1, 0.1])
    assert fit.slope == pytest.approx(-0.2)
    assert fit.r2 == pytest.approx(0.5)


def test_increases_counts_rises_beyond_rounding() -> None:
    inc = increases([4.0, 3.0, 3.0 * (1 + 1e-14), 3.5, 1.0])
    assert inc.count == 1 and inc.first == 2
    assert inc.max_rel == pytest.approx(0.5 / 3.0, rel=1e-9)


def test_increases_counts_non_finite_losses() -> None:
    inc = increases([1.0, 0.5, math.inf, math.nan])
    assert inc.count == 2 and inc.first == 1 and inc.max_rel == math.inf


def test_spearman_of_a_monotone_relation_is_one() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 25, 100]).rho == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]).rho == pytest.approx(-1.0)


def test_spearman_of_a_constant_is_nan() -> None:
    assert math.isnan(spearman([1, 2, 3], [5, 5, 5]).rho)
