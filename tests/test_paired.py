"""The gate's paired statistics: intervals of paired differences, tests against a margin, Holm, the spread."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from claimcheck.decide import stats, verdicts
from claimcheck.gate import baseline, paired
from claimcheck.gate.paired import (
    ALPHA,
    Movement,
    detectable,
    holm,
    paired_test,
    sign_flip_p,
    spread_sd,
    units_to_decide,
    units_to_show,
)


def test_the_interval_is_students_t_and_a_change_needs_the_t_test_and_the_sign_flip_test() -> None:
    t = paired_test([0, 0, 0, 0], [1, 2, 3, 4], margin=0.5, sign=1)
    se = np.std([1, 2, 3, 4], ddof=1) / 2  # 0.6455
    assert t.n == 4 and t.mean == 2.5
    assert t.low == pytest.approx(2.5 - sps.t.ppf(0.95, 3) * se) and t.high == pytest.approx(2.5 + 2.3534 * se, 1e-4)
    assert sps.t.sf((2.5 - 0.5) / se, 3) == pytest.approx(0.0266, abs=1e-4)  # the t-test alone would call it worse
    assert t.p_worse == 1 / 16 and t.movement() is Movement.UNDECIDED  # 4 pairs: the sign-flip test's floor
    five = paired_test([0] * 5, [1, 2, 3, 4, 5], margin=0.5, sign=1)
    se5 = np.std([1, 2, 3, 4, 5], ddof=1) / math.sqrt(5)
    assert five.p_worse == max(sps.t.sf((3 - 0.5) / se5, 4), 1 / 32) == 1 / 32
    assert five.movement() is Movement.WORSE


def test_the_sign_flip_test_is_exact_on_few_pairs_and_near_the_t_test_on_many() -> None:
    assert sign_flip_p(np.array([1.0, 2.0, 3.0, 4.0])) == 1 / 16  # every flip but the observed one is smaller
    assert sign_flip_p(np.array([-1.0, 2.0, 3.0, 4.0])) == 2 / 16  # flipping the -1 ties... and beats it
    assert sign_flip_p(np.array([-4.0, 1.0, 1.0, 1.0])) > 0.5
    u = np.random.default_rng(1).normal(0.5, 1.0, size=40)  # beyond FLIP_EXACT: random flips, the same each call
    p = sign_flip_p(u)
    t_test = sps.t.sf(u.mean() / (u.std(ddof=1) / math.sqrt(40)), 39)
    assert p == sign_flip_p(u) and p == pytest.approx(t_test, abs=0.01)


def test_four_units_of_a_moded_statistic_that_fell_together_are_not_called_worse() -> None:
    # C8 L3's octave ratio under a same-law reseed (W_1 drawn before W_V), ci's 4 units: the t-test gave t = 100
    before = [0.998720381133515, 0.9932119784234293, 0.9938289150960217, 0.9979406604805354]
    after = [0.9505332978856667, 0.9448099723001581, 0.9473526391849898, 0.9498539439877005]
    t = paired_test(before, after, margin=0.0014, sign=-1)
    assert t.p_worse == 1 / 16 and t.movement() is Movement.UNDECIDED
    assert units_to_decide(t, ALPHA / 24) == 9  # Holm's first share of 24 statistics: 2^-9 <= 0.05 / 24
    assert math.isinf(detectable(t.sd, 4, 0.0014, ALPHA / 24))  # no change is shown on 4 units at that share


def test_a_smaller_value_is_worse_when_the_claim_wants_it_large() -> None:
    t = paired_test([0] * 5, [1, 2, 3, 4, 5], margin=0.5, sign=-1)
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


def test_a_constant_shift_is_decided_without_noise_once_the_sign_flip_test_can_reach_alpha() -> None:
    assert paired_test([0, 0, 0], [6, 6, 6], margin=0.0, sign=1).movement() is Movement.UNDECIDED  # 1/8
    assert paired_test([0] * 5, [6] * 5, margin=0.0, sign=1).movement() is Movement.WORSE  # 1/32
    assert paired_test([0, 0, 0], [0.1, 0.1, 0.1], margin=0.5, sign=1).movement() is Movement.EQUIVALENT


def test_pairs_that_turned_non_finite_are_left_out_counted_and_a_value_lost_is_worse() -> None:
    t = paired_test([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, math.nan], margin=0.1, sign=1)
    assert t.n == 3 and t.left_out == 1 and t.lost == 1 and t.movement() is Movement.WORSE  # a run now diverges
    assert paired_test([1.0] * 20, [math.inf] * 20, margin=0.1, sign=1).movement() is Movement.WORSE
    gained = paired_test([1.0, 2.0, 3.0, math.nan], [1.0, 2.0, 3.0, 4.0], margin=0.1, sign=1)
    assert gained.left_out == 1 and gained.lost == 0 and gained.movement() is Movement.UNDECIDED  # never equivalent
    both = paired_test([1.0, 2.0, math.inf], [1.0, 2.0, -math.inf], margin=0.1, sign=1)  # opposite infinities
    assert both.left_out == 1 and both.lost == 0 and both.movement() is Movement.UNDECIDED


def test_no_pairs_at_all_are_not_an_agreement() -> None:
    t = paired_test([], [], margin=0.1, sign=1)
    assert t.n == 0 and not t.identical and t.movement() is Movement.UNDECIDED


def test_pairs_not_finite_on_both_sides_agree_whatever_the_seed() -> None:
    # a run that diverged in both runs: NaN in one, inf in the other (another seed, another way to overflow)
    t = paired_test([math.nan, math.inf, math.nan], [math.inf, math.nan, math.nan], margin=0.0, sign=1)
    assert (t.n, t.unfinite, t.left_out) == (0, 3, 0) and t.movement() is Movement.EQUIVALENT
    # the finite pairs are tested as usual beside them; equivalence is not barred
    rng = np.random.default_rng(3)
    before = list(rng.normal(size=30))
    after = [b + 0.001 * rng.normal() for b in before]
    t = paired_test([*before, math.nan, -math.inf], [*after, math.inf, -math.inf], margin=0.1, sign=1)
    assert (t.n, t.unfinite, t.left_out) == (30, 2, 0) and t.movement() is Movement.EQUIVALENT


def test_opposite_infinities_and_one_sided_non_finite_values_are_changes() -> None:
    t = paired_test([-math.inf, -math.inf], [math.inf, math.inf], margin=1.0, sign=1)
    assert (t.unfinite, t.left_out) == (0, 2) and t.movement() is Movement.UNDECIDED
    t = paired_test([math.nan, math.nan, 1.0, 2.0], [math.nan, 5.0, 1.0, 2.0], margin=0.5, sign=1)
    assert (t.n, t.unfinite, t.left_out) == (2, 1, 1) and t.movement() is Movement.UNDECIDED


def test_a_single_estimate_is_tested_with_both_runs_intervals() -> None:
    # difference 1.0 with half-widths 0.3 and 0.4: se = 0.5 / 1.645; margin 0.2
    t = paired_test([0.0], [1.0], margin=0.2, sign=1, halfwidths=(0.3, 0.4))
    se = 0.5 / sps.norm.ppf(0.95)
    assert (t.low, t.high) == pytest.approx((0.5, 1.5))
    assert t.p_worse == pytest.approx(sps.norm.sf(0.8 / se)) and t.movement() is Movement.WORSE
    assert paired_test([0.0], [1.0], margin=0.2, sign=1).movement() is Movement.UNDECIDED  # no interval


def test_holm_rejects_step_down_and_ignores_nan() -> None:
    # m = 3: 0.01 <= 0.05/3, 0.02 <= 0.05/2, 0.04 <= 0.05/1
    assert holm([0.04, 0.01, math.nan, 0.02], ALPHA) == [True, True, False, True]
    # 0.03 > 0.05/2 stops the procedure: 0.04 is not rejected either
    assert holm([0.01, 0.03, 0.04], ALPHA) == [True, False, False]
    # a statistic the gate could not test (NaN) does not count in m: 0.04 <= 0.05/1
    assert holm([math.nan, 0.04], ALPHA) == [False, True]


def test_the_gate_and_the_claim_families_share_one_holm() -> None:
    assert baseline.holm is stats.holm and verdicts.holm is stats.holm


def test_the_spread_is_pooled_within_labels_and_falls_back_to_all_values() -> None:
    # two labels far apart, each with sd 1: the between-label gap is left out
    assert spread_sd([[0.0, 1.0, 2.0], [100.0, 101.0, 102.0]]) == pytest.approx(1.0)
    assert spread_sd([[0.0], [2.0]]) == pytest.approx(math.sqrt(2))
    assert math.isnan(spread_sd([[1.0]]))


def _rejections(shift: float, n: int, margin: float, alpha: float, runs: int, seed: int) -> float:
    """Return how often paired_test's worse test rejects at ``alpha`` when the true change is ``shift`` (SD 1)."""
    rng = np.random.default_rng(seed)
    before = rng.normal(size=(runs, n))
    after = before + shift + rng.normal(size=(runs, n))  # differences: N(shift, 1)
    return float(
        np.mean([paired_test(b, a, margin, sign=1).p_worse < alpha for b, a in zip(before, after, strict=True)])
    )


def test_the_detectable_change_is_margin_plus_noncentral_t_on_one_pair_fewer() -> None:
    # 12 units, SD 1, margin 0.3, alpha 0.05 / 10 statistics; the sign-flip test a change must also pass has
    # about the t-test's power on 11 pairs: 0.3 + (t_0.995 + t_0.9) / sqrt(11) = 0.3 + (3.169 + 1.372) / 3.317
    # = 1.669 with Student's t at 10 degrees of freedom; the noncentral t needs a little more
    change = detectable(1.0, 12, 0.3, 0.005)
    student = 0.3 + (sps.t.isf(0.005, 10) + sps.t.ppf(0.9, 10)) / math.sqrt(11)
    assert student == pytest.approx(1.669, abs=1e-3)
    assert change == pytest.approx(1.705, abs=1e-3) and change > student
    assert detectable(1.0, 200, 0.3, 0.005) == pytest.approx(0.3 + 3.857 / math.sqrt(199), abs=3e-3)  # the z rule
    assert math.isinf(detectable(1.0, 7, 0.3, 0.005))  # 2^-7 > 0.005: the sign-flip test cannot reach it
    assert detectable(0.0, 12, 0.3, 0.005) == 0.3 and math.isnan(detectable(math.nan, 12, 0.3, 0.005))


def test_the_gate_shows_the_detectable_change_nine_times_in_ten_by_simulation() -> None:
    change = detectable(1.0, 12, 0.3, 0.005)
    assert 0.9 - 0.02 <= _rejections(change, 12, 0.3, 0.005, 2000, 1) <= 0.96  # at least 0.9, up to chance
    assert _rejections(0.3, 12, 0.3, 0.005, 2000, 2) <= 0.005 + 0.005  # on the margin: alpha


def test_the_units_to_decide_reach_the_power_and_one_fewer_does_not() -> None:
    n = units_to_show(0.5, 1.0, 0.05)
    assert n is not None and 30 <= n <= 40  # (1.645 + 1.282)^2 / 0.25 = 34.3 by the normal rule
    assert _rejections(0.5 + 0.2, n, 0.2, 0.05, 2000, 3) == pytest.approx(0.9, abs=0.02)
    assert _rejections(0.5 + 0.2, n - 4, 0.2, 0.05, 2000, 3) < 0.9
    assert units_to_show(0.0, 1.0, 0.05) is None and units_to_show(1e-6, 1.0, 0.05) is None


def test_an_undecided_statistic_says_how_many_units_would_decide_it() -> None:
    noise = [-1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, -0.8, 0.8]  # mean 0, SD 0.959
    zeros = [0.0] * 10
    inside = paired_test(zeros, [0.05 + 0.5 * x for x in noise], margin=0.2, sign=1)  # TOST t = 0.99
    assert inside.movement() is Movement.UNDECIDED and inside.mean == pytest.approx(0.05)
    n_eq = units_to_decide(inside, 0.005)  # equivalence at 5% against the nearer margin, 0.15 away
    assert n_eq == units_to_show(0.15, inside.sd, 0.05, change=False) and n_eq is not None and 80 < n_eq < 100
    beyond = paired_test(zeros, [0.5 + x for x in noise], margin=0.2, sign=1)  # t = 0.99 against the margin
    assert beyond.movement() is Movement.UNDECIDED and beyond.mean == pytest.approx(0.5)
    n_change = units_to_decide(beyond, 0.005)  # the change at the family-wise share, 0.3 beyond the margin
    assert n_change == units_to_show(0.3, beyond.sd, 0.005) and n_change is not None and 120 < n_change < 160


def test_the_pair_correlation_tells_the_same_draws_from_new_ones() -> None:
    from claimcheck.gate.paired import drawn_anew, pair_correlation

    rng = np.random.default_rng(0)
    before = rng.normal(size=200)
    assert pair_correlation(before, before + 0.3) == pytest.approx((1.0, 1.0))  # the same draws, an edit
    anew = pair_correlation(before, rng.normal(size=200))  # drawn anew from the same law
    assert abs(anew[0]) < 0.2 and drawn_anew(*anew)
    broken = before.copy()
    broken[:10] += 20.0  # an edit that breaks a few units: uncorrelated too, but the spread is not kept
    assert pair_correlation(before, broken)[0] < 0.5 and not drawn_anew(*pair_correlation(before, broken))
    assert all(math.isnan(x) for x in pair_correlation([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))  # too few pairs
    assert all(math.isnan(x) for x in pair_correlation([1.0] * 5, [1.0, 2.0, 3.0, 4.0, 5.0]))  # no spread
    assert pair_correlation([1.0, 2.0, math.nan, 3.0, 4.0], [1.0, 2.0, 5.0, 3.0, 4.0]) == pytest.approx((1.0, 1.0))


def test_units_to_show_finds_the_fewest_units_past_half_the_cap() -> None:
    """Between 2^19 and the cap the answer is searched, not the cap returned (it returned 1,000,000 here)."""
    n = paired.units_to_show(0.0035, 1.0, 0.05, change=False)
    assert n is not None and 2**19 < n < paired.MAX_UNITS
    assert paired._power(0.0035, 1.0, n, 0.05) >= paired.POWER > paired._power(0.0035, 1.0, n - 1, 0.05)
