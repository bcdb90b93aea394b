"""The linear-rate decision of C1 and C8 (``qin2025.linrate``) against values worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from claimcheck.store import ResultCache
from qin2025.batched import Run
from qin2025.data import make_synthetic
from qin2025.linrate import (
    LATE_DEPTH,
    PLATEAU,
    STEADINESS,
    WORST_RATIO,
    linear_rate_decision,
    premise_marks,
    premise_ratio,
    rate_profile,
    sharpness_along,
    sharpness_at,
)
from qin2025.model import ModelConfig
from qin2025.train import TrainConfig, Trajectory
from qin2025.trainer import Trainer


def test_a_geometric_curve_has_its_ratio_a_steadiness_of_one_and_descends_half_its_depth_late() -> None:
    loss = 0.9 ** np.arange(81)  # 80 steps, windows of 10
    got = linear_rate_decision(loss)
    assert got[WORST_RATIO] == pytest.approx(0.9)
    assert got[STEADINESS] == pytest.approx(1.0)
    assert got[LATE_DEPTH] == pytest.approx(40 * math.log(1 / 0.9))  # 4.2144
    assert got[PLATEAU] == pytest.approx(1.0)


def test_an_offset_power_law_settles_nowhere_and_descends_little_late() -> None:
    t = np.arange(401.0)
    got = linear_rate_decision((1 + t / 100) ** -1.0)  # windows of 50 steps; quarters of 100
    assert got[STEADINESS] == pytest.approx(math.log(500 / 400) / math.log(400 / 300))  # 0.7757
    assert got[LATE_DEPTH] == pytest.approx(math.log(500 / 300))  # 0.5108
    assert got[PLATEAU] == pytest.approx((math.log(500 / 450) / 50) / (math.log(500 / 300) / 200))  # 0.8250


def test_a_stretched_exponential_has_a_steadiness_set_by_k_alone() -> None:
    t = np.arange(801.0)
    for k, tau in ((0.5, 3.0), (0.5, 40.0), (0.9, 25.0)):
        got = rate_profile(np.exp(-((t / tau) ** k)))
        assert got.steadiness == pytest.approx((1 - 0.75**k) / (0.75**k - 0.5**k), rel=1e-9)  # 0.90 at k = 0.69


def test_a_plateau_before_the_drop_gives_a_plateau_ratio_of_zero() -> None:
    log_curve = np.concatenate([np.zeros(41), -0.1 * np.arange(1, 121)])  # flat for 40 steps, then 0.1 a step
    assert linear_rate_decision(np.exp(log_curve))[PLATEAU] == 0.0


def test_a_rising_step_fails_the_worst_ratio() -> None:
    loss = 0.9 ** np.arange(41)
    loss[5] = loss[4] * 1.01
    assert linear_rate_decision(loss)[WORST_RATIO] == pytest.approx(1.01)


def test_steps_past_the_scoring_floor_are_not_scored() -> None:
    loss = np.concatenate([10.0 ** -np.arange(26.0), [3e-25, 2e-25, 4e-25]])  # rounding noise after 1e-24
    p = rate_profile(loss)
    assert p.floor_step == 24 and p.steps == 24
    assert p.worst_ratio == pytest.approx(0.1)
    assert p.late_depth == pytest.approx(12 * math.log(10))


def test_a_diverged_curve_fails_every_statistic() -> None:
    got = linear_rate_decision([1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, math.inf])
    assert got[WORST_RATIO] == math.inf
    assert got[STEADINESS] == got[LATE_DEPTH] == got[PLATEAU] == -math.inf


def test_a_curve_with_fewer_than_eight_scored_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 8 steps"):
        rate_profile(0.5 ** np.arange(6))


def _traj(loss: list[float], lr: float = 0.1, lam: float = 5.0) -> Trajectory:
    empty = np.zeros((0, 1))
    return Trajectory(np.asarray(loss), np.zeros(0, dtype=np.int64), empty, empty, lr, lam, "fraction", None, 0)


def test_the_premise_is_measured_at_the_checkpoints_reached_and_after_the_first_rise() -> None:
    traj = _traj([4.0, 3.0, 2.0, 2.5, 1.0, 0.5, 0.4])  # the update at step 2 raised the loss
    assert premise_marks(traj, (1, 5, 20)) == [1, 2, 3, 5]
    assert premise_marks(_traj([4.0, 3.0, 2.0]), (1, 5)) == [1]


def test_the_premise_ratio_is_mu_over_the_local_bound_at_its_worst_step() -> None:
    traj = _traj([1.0, 0.5], lr=0.1, lam=5.0)  # mu lambda_max(0) / 2 = 0.25
    assert premise_ratio(traj, {}) == (0.25, 0)
    assert premise_ratio(traj, {5: 30.0, 20: 12.0}) == (pytest.approx(1.5), 5)


def test_the_batched_replay_measures_what_the_one_run_replay_measures(tmp_path: Path) -> None:
    cfg = ModelConfig(d=8, d_qk=4, d_out=1, n_layers=2)
    runs = [Run(cfg, TrainConfig(steps=12, lr_fraction=0.4), make_synthetic(2, 3, 8, 1, s), s) for s in (3, 4)]
    trainer = Trainer(ResultCache(tmp_path))
    trajs = trainer.batch(runs)
    marks = [[2, 7], [5]]
    got = sharpness_at(trainer, runs, trajs, marks)
    want = [sharpness_along(trainer, t, r.model, r.data, m) for r, t, m in zip(runs, trajs, marks, strict=True)]
    assert [sorted(g) for g in got] == [[2, 7], [5]]
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=1e-6)
    assert sharpness_at(trainer, runs, trajs, marks) == got  # read back from the cache
