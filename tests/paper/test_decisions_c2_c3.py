"""C2's and C3's unit decisions on hand-worked cases: what each statistic is, and where the threshold bites."""

from __future__ import annotations

import numpy as np

from qin2025.c2.monotone import FINAL_RATIO, ROSE, monotone_decision
from qin2025.c3.full_rank import COLLAPSED, FLOOR, floor_decision


def test_a_geometric_descent_to_the_engines_stop_never_rises_and_reaches_the_float_floor() -> None:
    loss = 0.9 ** np.arange(600.0)  # 0.9^599 = 3e-28
    assert monotone_decision(loss) == {ROSE: 0.0, FINAL_RATIO: 0.9**599}


def test_a_monotone_stall_at_a_tiny_floor_keeps_its_floor_as_the_final_ratio() -> None:
    loss = 1e-8 + (1 - 1e-8) * np.exp(-0.1 * np.arange(1501.0))  # v3's 1e-3 accepted this; v4's 1e-20 does not
    got = monotone_decision(loss)
    assert got[ROSE] == 0 and abs(got[FINAL_RATIO] - 1e-8) < 1e-20


def test_a_rise_counts_only_above_the_relative_tolerance() -> None:
    loss = np.array([4.0, 2.0, 2.0 * (1 + 1e-13), 1.0, 1.5, 0.5])
    assert monotone_decision(loss) == {ROSE: 1.0, FINAL_RATIO: 0.125}  # 1e-13 is rounding; 1.0 -> 1.5 rose


def test_a_non_finite_loss_counts_as_a_rise() -> None:
    assert monotone_decision([1.0, float("nan"), 0.5])[ROSE] == 2


def test_the_floor_is_the_smallest_ratio_over_the_grid_and_over_the_collapse_separately() -> None:
    floor = [np.array([0.5, 2.0]), np.array([0.75])]
    collapsed = [np.array([0.1, 9.0]), np.array([0.7])]
    assert floor_decision(floor, collapsed) == {FLOOR: 0.5, COLLAPSED: 0.1}


def test_a_nan_ratio_anywhere_gives_a_nan_floor_whatever_its_place() -> None:
    for floor in ([np.array([np.nan]), np.array([0.5])], [np.array([0.5]), np.array([0.6, np.nan])]):
        got = floor_decision(floor, [np.array([1.0])])
        assert np.isnan(got[FLOOR]) and got[COLLAPSED] == 1.0  # a NaN meets no threshold


def test_a_grid_without_draws_has_no_floor() -> None:
    got = floor_decision([], [np.empty(0)])
    assert np.isnan(got[FLOOR]) and np.isnan(got[COLLAPSED])
