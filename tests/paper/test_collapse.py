"""C4's instrument: decisions give hand-worked numbers, the logit floor draws what it says, tables read their grid."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.errors import ConfigError
from claimcheck.store.cache import ResultCache
from qin2025.c4.collapse import (
    BOUNDS,
    FAR,
    FLOOR_LEVEL,
    FLOOR_TREND,
    NEAR,
    QK,
    RATIO_LEVEL,
    RATIO_TREND,
    REL_FLOOR,
    SLOWS,
    STALL,
    STOPS_FAR,
    STOPS_TREND,
    TREND,
    RateTable,
    cached_sweep,
    collapse_decision,
    relative,
    slows_decision,
    stops_decision,
    sweep,
)
from qin2025.engine.model import ModelConfig, init_params
from qin2025.engine.trainer import Trainer
from qin2025.engine.usermodel import PAPER

HALF_PER_4X = math.log10(0.5) / math.log10(4)  # -0.5: halves with every 4x of d_QK


def test_trend_is_a_halving_over_64x_of_d_qk() -> None:
    assert 64**TREND == pytest.approx(0.5)


def test_a_sweep_that_halves_per_4x_is_at_1_over_256_of_its_start_and_falls_at_slope_minus_a_half() -> None:
    d_qk = [32.0 * 4**k for k in range(5)]
    ratio = [0.6 * 0.5**k for k in range(5)]
    floor = [0.02 * 0.25**k for k in range(5)]
    stats = collapse_decision(d_qk, ratio, floor)
    assert stats[RATIO_LEVEL] == pytest.approx(1 / 16)
    assert stats[RATIO_TREND] == pytest.approx(HALF_PER_4X)
    assert stats[FLOOR_LEVEL] == pytest.approx(1 / 256)
    assert stats[FLOOR_TREND] == pytest.approx(2 * HALF_PER_4X)


def test_a_sweep_flat_over_its_last_16x_has_no_trend_whatever_its_level() -> None:
    d_qk = [32.0 * 4**k for k in range(5)]
    ratio = [0.6, 0.06, 0.03, 0.03, 0.03]
    stats = collapse_decision(d_qk, ratio, ratio)
    assert stats[RATIO_LEVEL] == pytest.approx(0.05)
    assert stats[RATIO_TREND] == pytest.approx(0.0, abs=1e-12)


def test_slows_is_the_log_log_slope_of_the_relative_rate() -> None:
    d_qk = [16.0 * k for k in NEAR]
    rates = [(0.8 * 0.5**k * 0.02, 0.02) for k in range(4)]  # relative 0.8, 0.4, 0.2, 0.1
    assert slows_decision(d_qk, rates)[SLOWS] == pytest.approx(HALF_PER_4X)


def test_stops_reads_the_slope_over_the_far_16x_and_the_level_at_its_end() -> None:
    d_qk = [16.0 * k for k in FAR]
    rates = [(0.5 * 0.01, 0.01), (0.1 * 0.01, 0.01), (0.02 * 0.01, 0.01)]  # relative 0.5, 0.1, 0.02: still falling
    got = stops_decision(d_qk, rates)
    assert got[STOPS_TREND] == pytest.approx(math.log10(0.02 / 0.5) / math.log10(16))
    assert got[STOPS_FAR] == pytest.approx(math.log10(0.02)) and got[STOPS_FAR] > STALL  # above the stall: unresolved


def test_a_seed_at_a_stall_by_256_d_has_fallen_as_far_as_the_bounds_show_even_when_flat() -> None:
    d_qk = [16.0 * k for k in FAR]
    for ratios in ((0.1, 0.01, 0.001), (0.0, 0.0, 0.0), (0.004, 0.004, 0.004)):  # falling, a stall, flat under 1/100
        got = stops_decision(d_qk, [(r * 0.01, 0.01) for r in ratios])
        assert got[STOPS_TREND] == BOUNDS[0] and got[STOPS_FAR] <= STALL  # v5 read the last two as levelled off


def test_a_fall_that_levels_off_inside_the_grid_is_flat_there_at_any_level() -> None:
    d_qk = [16.0 * k for k in FAR]
    for level in (0.02, 0.09, 0.4):  # issue 38's levels and one of v4's grid
        rates = [(level * (1 + 1e-3 / k) * 0.01, 0.01) for k in FAR]
        assert stops_decision(d_qk, rates)[STOPS_TREND] == pytest.approx(0.0, abs=1e-3)


def test_a_fall_that_levels_off_beyond_the_grid_is_still_falling_on_it() -> None:
    d_qk = [16.0 * k for k in FAR]
    level = 0.01 * 256.0**-0.8  # a hundredth of its value at 256 d
    rates = [((level + k**-0.8) * 0.01, 0.01) for k in FAR]
    assert stops_decision(d_qk, rates)[STOPS_TREND] == pytest.approx(-0.8, abs=0.01)  # the zone: not resolvable


def test_values_are_clipped_to_the_bounds_a_mean_part_states() -> None:
    d_qk = [16.0 * k for k in FAR]
    stopped = [(0.5, 1.0), (1e-5, 1.0), (0.0, 1.0)]  # the last beta = 0 run made no progress
    stats = stops_decision(d_qk, stopped)
    assert stats[STOPS_TREND] == -3.0  # a slope of -4.7, clipped
    assert relative([(0.0, 1.0), (-0.1, 1.0), (0.2, 0.4), (0.1, 0.0)])[:3] == [REL_FLOOR, REL_FLOOR, 0.5]
    assert math.isnan(relative([(0.1, 0.0)])[0])


def test_the_logit_floor_adds_c_over_d_to_xaviers_variance() -> None:
    qk = QK.floored(64)
    assert qk.floor == pytest.approx(2 / 65)
    cfg = qk.config(16, 4096, beta=0.0)
    logit_sd = cfg.qk_gain**2 * 2 * 16 / (16 + 4096)  # d x variance
    assert logit_sd == pytest.approx(2 * 16 / (16 + 4096) + 2 / 65)
    assert (cfg.qk_init, cfg.beta, QK("xavier").config(16, 64).qk_gain) == ("xavier", 0.0, 1.0)
    with pytest.raises(ConfigError, match="logit floor is defined on Xavier"):
        QK("normal", 0.1)


def test_qk_gain_scales_the_drawn_w_q_and_w_k_and_nothing_else() -> None:
    plain = init_params(ModelConfig(d=8, d_qk=16, qk_init="xavier"), torch.Generator().manual_seed(3))
    gained = init_params(ModelConfig(d=8, d_qk=16, qk_init="xavier", qk_gain=2.0), torch.Generator().manual_seed(3))
    for name, w in plain.items():
        factor = 2.0 if name.endswith(("W_Q", "W_K")) else 1.0
        assert torch.equal(gained[name], factor * w), name


def test_a_floor_needs_a_model_that_reads_qk_gain() -> None:
    assert QK.floored(16).runs_on(PAPER) and QK("xavier").runs_on(PAPER)


def test_a_rate_table_hands_each_decision_its_own_d_qk_and_checks_the_premise() -> None:
    d_qk = tuple(16 * k for k in (1, 4, 16, 64, 256))
    table = RateTable(7, d_qk, tuple((0.01 * (k + 1), 0.05) for k in range(5)))
    far = table.measurements(FAR)
    assert far["d_qk"] == [256.0, 1024.0, 4096.0] and far["rates"] == [(0.03, 0.05), (0.04, 0.05), (0.05, 0.05)]
    assert table.measurements(NEAR)["d_qk"] == [16.0, 64.0, 256.0, 1024.0]
    assert table.admissible
    assert not RateTable(7, d_qk[:2], ((0.01, 0.05), (-0.01, 0.05))).admissible  # a run that ended above its start
    assert not RateTable(7, d_qk[:2], ((0.01, 0.05), (math.nan, 0.05))).admissible


def test_the_xavier_sweep_collapses_and_the_floored_one_levels_off() -> None:
    span = (1, 16, 256)
    xavier = sweep(PAPER, QK("xavier"), 8, 32, seed=0, span=span)
    floored = sweep(PAPER, QK.floored(16), 8, 32, seed=0, span=span)
    assert xavier.ratio[-1] / xavier.ratio[0] < 0.05 < floored.ratio[-1] / floored.ratio[0]
    assert np.all(np.diff(xavier.ratio) < 0) and np.all(np.diff(xavier.uniform) < 0)


def test_a_cached_sweep_is_the_sweep_and_a_warm_read_computes_nothing(tmp_path: Path) -> None:
    span = (1, 16)
    want = sweep(PAPER, QK.floored(16), 8, 32, seed=3, span=span)
    cache = ResultCache(tmp_path)
    cold, warm = Trainer(cache), Trainer(cache)
    got = [cached_sweep(t, QK.floored(16), 8, 32, seed=3, span=span) for t in (cold, warm)]
    assert got[0] == want == got[1]  # the same Sweep, bit for bit, as computed and as read
    assert (cold.counts.computed, warm.counts.computed, warm.counts.cached) == (1, 0, 1)
    other = cached_sweep(warm, QK("xavier"), 8, 32, seed=3, span=span)
    assert other.ratio != want.ratio and warm.counts.computed == 1  # the floor is in the key
