"""C5's instruments on hand-worked curves: the level at equal steps sees a speed-up, not the start."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck.decide.calibration import case_rng
from qin2025.c5.calibration import faster_families, order_families, steeper_families
from qin2025.c5.level_speed import (
    END_RHO,
    HALF_RHO,
    ZONE,
    flattened,
    in_zone,
    late_fall,
    levels,
    lower_faster_decision,
    order_decision,
    saved_name,
    steps_saved,
)
from qin2025.c5.residual_speed import Sweep, descends, naive_order, second_half_faster, steady_rate
from qin2025.c5.steeper import GAIN_BAR, RATE_RHO, gain, gain_name, steeper_faster_decision, steeper_order_decision

T = np.arange(401, dtype=np.float64)
BETAS = [0.0, 0.25, 0.5, 0.75, 1.0]


def exponential(floor: float, amplitude: float, rate: float) -> np.ndarray:
    return floor + amplitude * np.exp(-rate * T)


def power(floor: float, amplitude: float, speed: float, p: float = 0.5, start: float = 0.0) -> np.ndarray:
    """F + A (g t)^-p after a fast phase of amplitude ``start``; time runs ``speed`` times faster."""
    return floor + amplitude * (1 + speed * T) ** -p + start * np.exp(-0.5 * speed * T)


@pytest.mark.parametrize(("floor", "amplitude"), [(0.0, 1.0), (3.0, 50.0), (8.0, 1e5), (1e-3, 7.0)])
def test_the_steady_rate_of_an_exponential_approach_is_its_rate_whatever_its_start_and_floor(
    floor: float, amplitude: float
) -> None:
    assert steady_rate(exponential(floor, amplitude, 0.01)) == pytest.approx(0.01, rel=1e-9)


def test_a_fast_phase_that_is_over_by_the_steady_part_does_not_move_the_rate() -> None:
    slow = exponential(3.0, 10.0, 0.005)
    assert steady_rate(slow + 1e4 * np.exp(-0.5 * T)) == pytest.approx(steady_rate(slow), rel=1e-9)


def test_an_offset_power_law_reads_as_its_exponent_over_the_time() -> None:
    curve = 2.0 + 10.0 * (1 + T / 50.0) ** -1.0  # decrements fall as (p + 1)/(t + tau), p = 1, tau = 50
    assert steady_rate(curve) == pytest.approx(2.0 / (300 + 50), rel=0.02)  # the middle of [200, 400]


def test_a_run_that_stops_descending_or_breaks_has_no_steady_rate() -> None:
    flat_end = np.concatenate([exponential(1.0, 5.0, 0.02)[:350], np.full(51, 1.0 + 5.0 * math.exp(-0.02 * 349))])
    rising = exponential(1.0, 5.0, 0.01)
    rising[380] += 1.0
    diverged = exponential(1.0, 5.0, 0.01)
    diverged[390:] = math.inf
    for curve in (flat_end, rising, diverged):
        assert math.isnan(steady_rate(curve)) and not descends(curve)
    with pytest.raises(ValueError, match="T >= 16"):
        steady_rate(np.ones(10))


def test_the_level_is_read_at_half_the_horizon_and_at_its_end() -> None:
    curve = exponential(2.0, 10.0, 0.01)
    assert levels(curve) == pytest.approx((2.0 + 10.0 * math.exp(-2.0), 2.0 + 10.0 * math.exp(-4.0)))
    assert late_fall(curve) == pytest.approx(math.log(curve[300] / curve[400]))
    with pytest.raises(ValueError, match="1-D array"):
        levels(np.ones((2, 10)))


def test_a_larger_step_on_a_power_law_tail_is_seen_although_its_rate_is_not() -> None:
    curves = [power(3.0, 20.0, c) for c in (1.0, 1.25, 1.5, 1.75, 2.0)]  # the same curve at c x the time
    got = order_decision(BETAS, curves)
    assert got[HALF_RHO] == pytest.approx(1.0) and got[END_RHO] == pytest.approx(1.0)
    rates = [steady_rate(c) for c in curves]  # (p + 1)/t: the same for every c once tau/g is small
    assert max(rates) / min(rates) < 1.01  # C5 v3's instrument is blind here


def test_a_start_that_moves_with_beta_through_the_fast_phase_does_not_order_the_levels() -> None:
    starts = [10.0, 100.0, 1e3, 1e4, 1e5]  # L_0 rises 10,000x
    speeds = [1.0, 1.1, 0.95, 1.05, 0.9]  # in no order
    curves = [power(3.0, 20.0, g, start=a) for a, g in zip(starts, speeds, strict=True)]
    got = order_decision(BETAS, curves)
    assert got[HALF_RHO] == pytest.approx(-0.5) and got[END_RHO] == pytest.approx(-0.5)  # the speeds' own order
    assert naive_order(Sweep(tuple(BETAS), tuple(curves), (1.0,) * 5, 1e-4)) == pytest.approx(-1.0)  # v2 fooled


def test_a_stall_fails_the_order_and_earns_no_advantage() -> None:
    curves = [power(f, 20.0, g) for f, g in zip([2, 3, 4, 5, 6], [1.0, 1.5, 2.0, 2.5, 3.0], strict=True)]
    got = order_decision(BETAS, curves)
    assert got[END_RHO] == pytest.approx(-1.0)  # faster, to ever higher ends
    assert all(v < 0 for v in lower_faster_decision(BETAS, curves).values())


def test_a_time_rescaling_by_c_saves_one_minus_one_over_c_of_the_steps_and_the_other_way_round_costs_them() -> None:
    base = 3.0 + 20.0 * (1 + T / 50) ** -0.7
    for c in (1.25, 2.0):
        faster = 3.0 + 20.0 * (1 + c * T / 50) ** -0.7
        assert steps_saved(faster, base) == pytest.approx(1 - 1 / c, abs=2 / 400)
        assert steps_saved(base, faster) == pytest.approx(-(1 - 1 / c), abs=2 / 400)
    assert steps_saved(base, base) == 0.0
    assert math.isnan(steps_saved(np.r_[base[:-1], math.nan], base))
    curves = [power(3.0, 20.0, g) for g in (1.0, 1.25, 1.5, 1.75, 2.0)]
    saved = lower_faster_decision(BETAS, curves)
    assert list(saved) == [saved_name(b) for b in BETAS[1:]]
    assert 0 < saved[saved_name(0.25)] < saved[saved_name(1.0)] < 1


def test_a_lower_floor_is_lower_but_not_steeper_and_a_steeper_slow_phase_is_both() -> None:
    floors = [exponential(f, 20.0, 0.01) for f in (5.0, 4.0, 3.0, 2.0, 1.0)]
    assert order_decision(BETAS, floors)[END_RHO] == pytest.approx(1.0)  # lower
    rates = steeper_faster_decision(BETAS, floors)
    assert all(abs(v) < 1e-6 for v in rates.values())  # the same rate: no gain
    steep = [exponential(3.0, 20.0, r) for r in (0.010, 0.012, 0.014, 0.016, 0.018)]
    assert steeper_order_decision(BETAS, steep)[RATE_RHO] == pytest.approx(1.0)
    got = steeper_faster_decision(BETAS, steep)
    assert list(got) == [gain_name(b) for b in BETAS[1:]]
    assert got[gain_name(0.25)] == pytest.approx((0.012 - 0.010) / 0.022, rel=1e-3) and got[gain_name(0.25)] > GAIN_BAR


def test_the_rate_gain_is_bounded_and_a_bar_of_one_nineteenth_is_ten_percent_fewer_steps() -> None:
    assert GAIN_BAR == pytest.approx(1 / 19)
    assert gain(1 / 0.9, 1.0) == pytest.approx(GAIN_BAR)
    assert gain(1.0, -1.0) == 1.0 and gain(-1.0, 1.0) == -1.0
    assert math.isnan(gain(0.0, 0.0)) and math.isnan(gain(math.nan, 1.0))


def test_a_second_half_run_faster_keeps_the_first_half_and_is_steeper_after_it() -> None:
    long = 3.0 + 20.0 * (1 + np.arange(601, dtype=np.float64) / 30) ** -0.6
    curves = [second_half_faster(long, c, 400) for c in (1.0, 1.5, 2.0)]
    assert all(np.array_equal(c[:201], long[:201]) for c in curves)
    assert np.array_equal(curves[0], long[:401]) and curves[2][-1] == pytest.approx(long[600])
    assert steady_rate(curves[0]) < steady_rate(curves[1]) < steady_rate(curves[2])
    with pytest.raises(ValueError, match="needs a run of 600 steps"):
        second_half_faster(long[:500], 2.0, 400)


def test_a_run_that_reached_its_floor_puts_the_seed_in_the_lower_parts_zone_and_keeps_its_rate() -> None:
    settled = exponential(2.0, 50.0, 0.05)  # e^-15 of its excess left at 3T/4
    moving = power(3.0, 20.0, 1.0)
    assert flattened(settled) and not flattened(moving) and in_zone([moving, settled])
    got = order_decision(BETAS, [moving, moving, moving, moving, settled])
    assert got[ZONE] == 1.0 and math.isnan(got[HALF_RHO]) and math.isnan(got[END_RHO])
    adv = lower_faster_decision(BETAS, [settled] + [moving] * 4)
    assert adv[ZONE] == 1.0 and all(math.isnan(v) for k, v in adv.items() if k != ZONE)
    # v7: a decrement holds no floor, so the steeper parts read the settled run's rate (0.05 per step)
    assert steady_rate(settled) == pytest.approx(0.05, rel=1e-6) and steady_rate(moving) < 0.05
    steeper = steeper_faster_decision(BETAS, [settled] + [moving] * 4)
    assert ZONE not in steeper and all(v < 0 for v in steeper.values())  # every beta > 0 shallower than beta = 0
    ordered = steeper_order_decision(BETAS, [moving] * 4 + [settled])
    assert ZONE not in ordered and ordered[RATE_RHO] == pytest.approx(0.7071, abs=1e-4)  # four ties, then the steepest


def test_the_beta_comparison_needs_beta_zero_first_and_one_curve_per_beta() -> None:
    with pytest.raises(ValueError, match="must come first"):
        lower_faster_decision([1.0, 0.0], [exponential(1, 1, 0.01)] * 2)
    with pytest.raises(ValueError, match="must come first"):
        steeper_faster_decision([1.0, 0.0], [exponential(1, 1, 0.01)] * 2)
    with pytest.raises(ValueError, match="one curve per beta"):
        order_decision(BETAS, [exponential(1, 1, 0.01)] * 4)


def test_each_family_draws_its_cases_on_its_side_of_the_zone() -> None:
    for fam in order_families(cases=3):
        zone = "(zone)" in fam.name
        for i in range(3):
            case = fam.generate(case_rng(0, "C5", "order", fam.name, i))
            assert in_zone(case.measurements["curves"]) == zone, fam.name
    for fam in steeper_families(cases=3):
        for i in range(3):
            case = fam.generate(case_rng(0, "C5", "steeper", fam.name, i))
            assert not in_zone(case.measurements["curves"]), fam.name
    sample = faster_families(seeds=3, cases=1)[0].generate(case_rng(0, "C5", "effect", "x", 0))
    assert len(sample.measurements["units"]) == 3 and sample.params["seeds"] == 3


def test_a_sweep_relabelled_by_its_starts_gives_the_lowest_start_the_first_label() -> None:
    curves = tuple(exponential(1.0, a, 0.01) for a in (30.0, 10.0, 20.0))
    ranked = Sweep((0.0, 0.5, 1.0), curves, (1.0, 2.0, 3.0), 1e-3).by_start()
    assert [c[0] for c in ranked.curves] == [11.0, 21.0, 31.0] and ranked.lambdas == (2.0, 3.0, 1.0)
    assert ranked.labels == (0.0, 0.5, 1.0) and ranked.measured["betas"] == [0.0, 0.5, 1.0]
