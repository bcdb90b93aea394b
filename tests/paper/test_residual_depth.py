"""C6's decisions, premise and claim-level rule, against hand-worked values and simulated samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from claims.test_c6_depth_residual import DELTA, ONE_LABEL, PROTOCOL
from qin2025.c6.calibration import World, simulate_claim
from qin2025.c6.residual_depth import (
    TREND,
    advantage_decision,
    advantage_name,
    depth_change,
    flip_one,
    memorised,
    premise_misses,
    spikes,
    trend_decision,
    window,
    window_error,
)
from qin2025.engine.finetune import FinetuneRun, SentenceData


def _run(error: list[float], diverged_at: int | None = None) -> FinetuneRun:
    e = np.asarray(error, dtype=np.float64)
    return FinetuneRun(loss=e.copy(), error=e, lr=0.1, hessian_radius=10.0, diverged_at=diverged_at, head_seed=0)


def test_the_window_is_the_second_half_of_the_run_and_its_error_is_the_median_there() -> None:
    curve = [0.5, 0.4, 0.3, 0.2, 0.1, 0.6, 0.1]  # T = 6: the window is steps 4..6
    assert window(curve).tolist() == [0.1, 0.6, 0.1]
    assert window_error(curve) == 0.1  # the spike at step 5 does not move the median
    assert math.isnan(window_error([0.5, math.nan, math.nan, math.nan, math.nan]))
    with pytest.raises(ValueError, match="at least 3 points"):
        window([0.5, 0.4])


def test_the_advantage_is_the_window_error_without_minus_with_residuals() -> None:
    better = [0.5, 0.3, 0.2, 0.1, 0.1]  # window steps 3..4: median 0.1
    worse = [0.5, 0.2, 0.2, 0.25, 0.15]  # ahead early, behind in the window: median 0.2
    got = advantage_decision(6, better, worse)
    assert list(got) == [advantage_name(6)] and got[advantage_name(6)] == pytest.approx(0.1)
    assert advantage_decision(1, worse, better)[advantage_name(1)] == pytest.approx(-0.1)


def test_the_trend_is_the_change_of_the_least_squares_line_from_the_shallowest_depth_to_the_deepest() -> None:
    assert depth_change([1, 6], [0.02, 0.05]) == pytest.approx(0.03)
    assert depth_change([1, 3, 6], [0.0, 0.02, 0.05]) == pytest.approx(0.05)  # slope 0.01 over 5 layers
    assert math.isnan(depth_change([1], [0.1])) and math.isnan(depth_change([1, 6], [0.1, math.nan]))
    flat = [0.5, 0.3, 0.2, 0.2, 0.2]
    got = trend_decision({1: flat, 6: flat}, {1: [0.5, 0.3, 0.3, 0.3, 0.3], 6: [0.5, 0.4, 0.4, 0.25, 0.25]})
    assert got == {TREND: pytest.approx(0.05 - 0.1)}
    assert trend_decision({1: flat}, {1: flat}) == {}


def test_a_run_has_memorised_its_sample_when_its_error_is_zero_from_half_way_on() -> None:
    assert memorised([0.5, 0.1, 0.0, 0.0, 0.0]) and not memorised([0.5, 0.0, 0.1, 0.0, 0.0])


def test_the_premise_excludes_a_smoke_sized_sample_a_memorised_one_and_a_diverged_run() -> None:
    learning, done = _run([0.5, 0.3, 0.2, 0.1, 0.1]), _run([0.5, 0.1, 0.0, 0.0, 0.0])
    assert premise_misses(256, DELTA, [learning, done]) == ""  # one run still learning: a real comparison
    assert "0.24 sentences" in premise_misses(24, DELTA, [learning, done])  # delta x N = 0.24 < 2
    assert "memorised" in premise_misses(256, DELTA, [done, done])
    assert "step 2" in premise_misses(256, DELTA, [learning, _run([0.5, 0.4, math.nan], diverged_at=2)])


def test_flipping_one_label_negates_that_target_alone() -> None:
    data = SentenceData(torch.zeros(3, 2, 4), torch.ones(3, 2), torch.tensor([1.0, -1.0, 1.0]), "toy")
    flipped = flip_one(data, 1)
    assert flipped.y.tolist() == [1.0, 1.0, 1.0] and data.y.tolist() == [1.0, -1.0, 1.0]
    assert flipped.x is data.x and "sentence 1 flipped" in flipped.name


def test_spikes_count_window_steps_where_the_error_jumps_by_five_sentences_or_more() -> None:
    n = 100
    run = _run([0.5, 0.3, 0.2, 0.1, 0.10, 0.15, 0.10, 0.19])  # window steps 4..7: +5, -5, +9 sentences
    assert spikes(run, n) == 2


def test_the_claim_rule_calls_a_tie_at_one_depth_not_reproduced_and_real_gaps_reproduced() -> None:
    clear = {"L=6": (0.1, 0.03), "trend": (0.1, 0.04), ONE_LABEL: (1 / 256, 0.003)}
    tie = simulate_claim(PROTOCOL, World({"L=1": (0.0, 0.01), **clear}, "tie"), units=12, reps=60, seed=1)
    assert tie["L=1"]["REPRODUCED"] == 0 and tie["L=1"]["NOT REPRODUCED"] >= 40
    assert tie["claim"]["REPRODUCED"] == 0
    real = simulate_claim(PROTOCOL, World({"L=1": (3 * DELTA, 0.01), **clear}, "real"), units=12, reps=60, seed=1)
    assert real["claim"]["REPRODUCED"] >= 55 and real[ONE_LABEL]["fails as required"] == 60


# the exploratory units of records/claims/c6.md (C6 v5): L=1 advantage over 7 seeds, the control over 5
L1_SEEN = (-0.0081, 0.0077)
CONTROL_SEEN = (-0.0004, 0.0049)


def test_v5_s_six_standard_seeds_decide_the_claim_at_the_exploratory_effect() -> None:
    units = PROTOCOL.seeds.count("standard", 0)
    assert units == 6
    world = World({"L=1": L1_SEEN, ONE_LABEL: CONTROL_SEEN}, "v5 seen")
    got = simulate_claim(PROTOCOL, world, units=units, reps=200, seed=3)
    assert got["claim"]["NOT REPRODUCED"] >= 180  # 0.97 over 2000 claims in the record
    assert got["claim"]["REPRODUCED"] == 0 and got["claim"]["ERROR"] == 0
    fewer = simulate_claim(PROTOCOL, world, units=4, reps=200, seed=3)
    assert fewer["claim"]["NOT REPRODUCED"] < got["claim"]["NOT REPRODUCED"]  # the seeds are what buys it
