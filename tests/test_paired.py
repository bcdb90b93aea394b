"""The gate's paired statistics: intervals of paired differences, tests against a margin, Holm, the spread."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from claimcheck.paired import Movement, holm, paired_test, spread_sd


def test_the_interval_and_one_sided_tests_are_students_t_over_the_pairs() -> None:
    t = paired_test([0, 0, 0, 0], [1, 2, 3, 4], margin=0.5, sign=1)
    se = np.std([1, 2, 3, 4], ddof=1) / 2  # 0.6455
    assert t.n == 4 and t.mean == 2.5
    assert t.low == pytest.approx(2.5 - sps.t.ppf(0.95, 3) * se) and t.high == pytest.approx(2.5 + 2.3534 * se, 1e-4)
    assert t.p_worse == pytest.approx(sps.t.sf((2.5 - 0.5) / se, 3))  # 0.0266
    assert t.movement() is Movement.WORSE


def test_a_smaller_value_is_worse_when_the_claim_wants_it_large() -> None:
    t = paired_test([0, 0, 0, 0], [1, 2, 3, 4], margin=0.5, sign=-1)
    assert t.movement() is Movement.BETTER and t.p_worse > 0.9


def test_noise_well_inside_the_margin_is_equivalent_and_noise_around_it_undecided() -> None:
    rng = np.random.default_rng(0)
    before = rng.normal(size=30)
    after = before + rng.normal(scale=0.01, size=30)
    assert paired_test(before, after, margin=0.1, sign=1).movement() is Movement.EQUIVALENT
    wide = paired_test(before, before + rng.normal(scale=1.0, size=30), margin=0.1, sign=1)
    assert wide.movement() is Movement.UNDECIDED


def test_identical_runs_are_equivalent_even_with_a_zero_margin() -> None:
    t = paired_test([1.0, math.inf, math.nan], [1.0, math.inf, math.nan], margin=0.0, sign=1)
    assert t.identical and t.movement() is Movement.EQUIVALENT and t.left_out == 0


def test_a_constant_shift_is_decided_without_noise() -> None:
    assert paired_test([0, 0, 0], [6, 6, 6], margin=0.0, sign=1).movement() is Movement.WORSE
    assert paired_test([0, 0, 0], [0.1, 0.1, 0.1], margin=0.5, sign=1).movement() is Movement.EQUIVALENT


def test_pairs_that_turned_non_finite_are_left_out_counted_and_bar_equivalence() -> None:
    t = paired_test([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, math.nan], margin=0.1, sign=1)
    assert t.n == 3 and t.left_out == 1 and t.movement() is Movement.UNDECIDED


def test_a_single_estimate_is_tested_with_both_runs_intervals() -> None:
    # difference 1.0 with half-widths 0.3 and 0.4: se = 0.5 / 1.645; margin 0.2
    t = paired_test([0.0], [1.0], margin=0.2, sign=1, halfwidths=(0.3, 0.4))
    se = 0.5 / sps.norm.ppf(0.95)
    assert (t.low, t.high) == pytest.approx((0.5, 1.5))
    assert t.p_worse == pytest.approx(sps.norm.sf(0.8 / se)) and t.movement() is Movement.WORSE
    assert paired_test([0.0], [1.0], margin=0.2, sign=1).movement() is Movement.UNDECIDED  # no interval


def test_holm_rejects_step_down_and_ignores_nan() -> None:
    # m = 3: 0.01 <= 0.05/3, 0.02 <= 0.05/2, 0.04 <= 0.05/1
    assert holm([0.04, 0.01, math.nan, 0.02]) == [True, True, False, True]
    # 0.03 > 0.05/2 stops the procedure: 0.04 is not rejected either
    assert holm([0.01, 0.03, 0.04]) == [True, False, False]


def test_the_spread_is_pooled_within_labels_and_falls_back_to_all_values() -> None:
    # two labels far apart, each with sd 1: the between-label gap is left out
    assert spread_sd([[0.0, 1.0, 2.0], [100.0, 101.0, 102.0]]) == pytest.approx(1.0)
    assert spread_sd([[0.0], [2.0]]) == pytest.approx(math.sqrt(2))
    assert math.isnan(spread_sd([[1.0]]))
