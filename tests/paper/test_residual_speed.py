"""C5's instrument on hand-worked curves: the steady rate sees the rate, not the start or floor; stalls earn nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qin2025.residual_speed import (
    END_RHO,
    RATE_RHO,
    Sweep,
    advantage,
    advantage_name,
    descends,
    faster_decision,
    naive_order,
    order_decision,
    steady_rate,
)

T = np.arange(401, dtype=np.float64)
BETAS = [0.0, 0.25, 0.5, 0.75, 1.0]


def exponential(floor: float, amplitude: float, rate: float) -> np.ndarray:
    return floor + amplitude * np.exp(-rate * T)


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


def test_the_advantage_is_a_relative_difference_and_a_faster_approach_to_a_higher_end_earns_nothing() -> None:
    assert advantage(3.0, 1.0, end=2.0, end0=5.0) == pytest.approx(0.5)
    assert advantage(1.0, 3.0, end=2.0, end0=5.0) == pytest.approx(-0.5)
    assert advantage(3.0, 1.0, end=6.0, end0=5.0) == 0.0  # a stall: faster, to a higher end
    assert advantage(1.0, 3.0, end=6.0, end0=5.0) == pytest.approx(-0.5)  # slower and higher: counted
    assert advantage(0.0, 0.0, end=1.0, end0=1.0) == 0.0
    assert advantage(-1.0, 1.0, end=1.0, end0=2.0) == -1.0  # an accelerating run against a decelerating one
    assert math.isnan(advantage(math.nan, 1.0, end=1.0, end0=2.0))


def test_rates_that_rise_with_beta_pass_the_order_whatever_the_starts_and_floors_do() -> None:
    starts = [500.0, 50.0, 5000.0, 20.0, 100.0]  # L_0 in no order, over 250x
    floors = [8.0, 6.0, 4.0, 3.0, 2.0]  # falling
    curves = [exponential(f, a, r) for f, a, r in zip(floors, starts, [0.004, 0.005, 0.006, 0.007, 0.008], strict=True)]
    got = order_decision(BETAS, curves)
    assert got[RATE_RHO] == pytest.approx(1.0) and got[END_RHO] <= 0.8  # no larger beta ends higher
    adv = faster_decision(BETAS, curves)
    assert list(adv) == [advantage_name(b) for b in BETAS[1:]]
    assert adv[advantage_name(1.0)] == pytest.approx((0.008 - 0.004) / (0.008 + 0.004))


def test_starts_that_rise_with_beta_at_one_rate_do_not_order_it() -> None:
    curves = [
        exponential(3.0, a, r)
        for a, r in zip([10, 100, 1e3, 1e4, 1e5], [0.035, 0.03, 0.04, 0.025, 0.0325], strict=True)
    ]
    assert order_decision(BETAS, curves)[RATE_RHO] == pytest.approx(-0.3)  # the rates, in no order
    assert naive_order(Sweep(tuple(BETAS), tuple(curves), (1.0,) * 5, 1e-4)) == pytest.approx(-1.0)  # v2 fooled


def test_a_stall_fails_the_order_on_its_end() -> None:
    curves = [exponential(f, 50.0, r) for f, r in zip([2, 3, 4, 5, 6], [0.01, 0.02, 0.03, 0.04, 0.05], strict=True)]
    got = order_decision(BETAS, curves)
    assert got[RATE_RHO] == pytest.approx(1.0) and got[END_RHO] == pytest.approx(1.0)  # L_T rises with beta
    assert all(v == 0.0 for v in faster_decision(BETAS, curves).values())


def test_the_beta_comparison_needs_beta_zero_first() -> None:
    with pytest.raises(ValueError, match="must come first"):
        faster_decision([1.0, 0.0], [exponential(1, 1, 0.01)] * 2)


def test_a_sweep_relabelled_by_its_starts_gives_the_lowest_start_the_first_label() -> None:
    curves = tuple(exponential(1.0, a, 0.01) for a in (30.0, 10.0, 20.0))
    ranked = Sweep((0.0, 0.5, 1.0), curves, (1.0, 2.0, 3.0), 1e-3).by_start()
    assert [c[0] for c in ranked.curves] == [11.0, 21.0, 31.0] and ranked.lambdas == (2.0, 3.0, 1.0)
    assert ranked.labels == (0.0, 0.5, 1.0) and ranked.measured["betas"] == [0.0, 0.5, 1.0]
