"""The linear-rate decision of C1 and C8 (``qin2025.c1.linear_rate``) against values worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.store.cache import ResultCache
from qin2025.c1.calibration import linear_rate_families, unresolved_settling, zone_generators
from qin2025.c1.linear_rate import (
    LATE_DEPTH,
    OCTAVE,
    WORST_RATIO,
    ZONE,
    linear_rate_decision,
    margin_ratio,
    premise_marks,
    premise_ratio,
    rate_profile,
    record_unit,
    sharpness_along,
    sharpness_at,
)
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig, Trajectory
from qin2025.engine.trainer import Trainer


def test_a_geometric_curve_has_its_ratio_an_octave_ratio_of_one_and_descends_half_its_depth_late() -> None:
    loss = 0.9 ** np.arange(81)  # 80 steps: octaves [20, 40] and [40, 80]
    got = linear_rate_decision(loss)
    assert got == {
        WORST_RATIO: pytest.approx(0.9),
        LATE_DEPTH: pytest.approx(40 * math.log(1 / 0.9)),  # 4.2144
        OCTAVE: pytest.approx(1.0),
    }


def test_a_stretched_exponential_has_an_octave_ratio_of_two_to_the_k_minus_one_whatever_its_scale() -> None:
    t = np.arange(801.0)
    for k, tau in ((0.5, 3.0), (0.5, 40.0), (0.6, 25.0), (0.9, 25.0)):
        assert rate_profile(np.exp(-((t / tau) ** k))).octave == pytest.approx(2 ** (k - 1), rel=1e-9)
    assert 1 + math.log2(0.9) == pytest.approx(0.848, abs=5e-4) and 1 + math.log2(0.8) == pytest.approx(0.678, abs=5e-4)


def _power_law_octave(x: float) -> float:
    return math.log((x + 1) / (x + 0.5)) / (2 * math.log((x + 0.5) / (x + 0.25)))


def test_an_offset_power_laws_octave_ratio_depends_on_tau_over_the_horizon_alone() -> None:
    t = np.arange(401.0)
    for tau, p in ((40.0, 1.0), (400.0, 2.0), (440.0, 5.0)):
        got = rate_profile((1 + t / tau) ** -p)
        assert got.octave == pytest.approx(_power_law_octave(tau / 400))
        assert got.late_depth == pytest.approx(p * math.log((tau + 400) / (tau + 200)))
    # the boundaries the protocol quotes: 0.8 at tau = 1.097 S (S >= 0.91 tau resolves it), 0.9 at tau = 2.965 S
    assert _power_law_octave(1.0974) == pytest.approx(0.8, abs=1e-4)
    assert _power_law_octave(2.9651) == pytest.approx(0.9, abs=1e-4)
    assert 1 / math.log(3.9651 / 3.4651) == pytest.approx(7.42, abs=5e-3)  # p for 1 nat late at 0.9
    assert 1 / math.log(2.0974 / 1.5974) == pytest.approx(3.67, abs=5e-3)  # at 0.8


def test_a_power_law_in_the_zone_is_undecided_and_one_past_it_fails() -> None:
    t = np.arange(1001.0)
    zoned = linear_rate_decision((1 + t / 2000) ** -8.0)  # x = 2, octave 0.87, last half 8 ln(3/2.5) = 1.46 nat
    assert zoned[ZONE] == 1.0 and all(math.isnan(v) for k, v in zoned.items() if k != ZONE)
    assert ZONE not in (shallow := linear_rate_decision((1 + t / 2000) ** -2.0))  # 0.36 nat late: fails by depth
    assert shallow[LATE_DEPTH] < 1 and 0.8 <= shallow[OCTAVE] < 0.9
    assert linear_rate_decision((1 + t / 500) ** -8.0)[OCTAVE] < 0.8  # x = 0.5: resolved


def test_a_rate_that_fell_and_settled_before_the_last_half_is_undecided_and_sublinear_curves_still_fail() -> None:
    t = np.arange(1001.0)
    two_modes = np.exp(-0.3 * t) + 1e-8 * np.exp(-0.02 * t)  # the slow mode takes over near step 66
    assert rate_profile(two_modes[:241]).octave < 0.8  # scored to 240: the fall lies in the first octave
    assert rate_profile(two_modes[:241]).last_quarter == pytest.approx(1.0, abs=1e-6)
    assert linear_rate_decision(two_modes[:241])[ZONE] == 1.0  # v5 failed it (octave ratio below 0.8)
    for tau in (20.0, 400.0, 1097.0):  # octave ratio below 0.8: the last quarter's ratio stays under 0.873
        p = rate_profile((1 + t / tau) ** -12.0)
        assert p.octave < 0.8 and p.last_quarter < 0.875 and ZONE not in linear_rate_decision((1 + t / tau) ** -12.0)
    for k in (0.3, 0.5, 0.67):  # a stretched exponential below 0.8 keeps a last quarter under 0.895
        curve = np.exp(-((t / 5.0) ** k))
        assert rate_profile(curve).last_quarter < 0.895 and ZONE not in linear_rate_decision(curve)


def test_a_warm_up_gives_an_octave_ratio_above_one() -> None:
    rate = np.where(np.arange(400) < 150, 0.01, 0.1)  # 0.1x the later rate until step 150, in the first octave
    got = linear_rate_decision(np.exp(-np.concatenate([[0.0], np.cumsum(rate)])))
    assert got[OCTAVE] > 1 and got[WORST_RATIO] == pytest.approx(math.exp(-0.01))


def test_the_margin_is_a_twentieth_of_the_slowest_rate() -> None:
    assert margin_ratio(0.01) == pytest.approx(math.exp(-0.0005))


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
    assert got[LATE_DEPTH] == got[OCTAVE] == -math.inf


def test_a_curve_with_fewer_than_eight_scored_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 8 steps"):
        rate_profile(0.5 ** np.arange(6))


@pytest.mark.parametrize(("steps", "slowest"), [(1000, 0.01), (4000, 0.001)])
def test_the_zones_families_are_answered_zone_and_no_other_design_family_is(steps: int, slowest: float) -> None:
    for _, gen in zone_generators(steps, slowest):
        for i in range(20):
            assert ZONE in linear_rate_decision(**gen(np.random.default_rng(i)).measurements)
    for fam in linear_rate_families(steps, slowest, cases=20):
        if fam.expect == "zone":
            continue
        for i in range(20):
            assert ZONE not in linear_rate_decision(**fam.generate(np.random.default_rng(i)).measurements), fam.name


def test_a_rate_that_settles_too_late_for_the_horizon_is_drawn_where_the_bound_misses() -> None:
    cases = [unresolved_settling(np.random.default_rng(i), 1000, 0.01) for i in range(40)]
    got = [linear_rate_decision(**case.measurements) for case in cases]
    octaves = [g[OCTAVE] for g in got if ZONE not in g]
    assert any(ZONE in g for g in got) and min(octaves) < 0.8  # the horizon cannot tell these from sublinear curves


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


def test_a_diverged_run_replays_as_the_same_run_not_a_different_one(tmp_path: Path) -> None:
    # issue 51: the replay of a run whose loss went NaN compared nan with nan and called the run "not the same run"
    from qin2025.c1.linear_rate import same_loss

    assert same_loss(float("nan"), float("nan")) and same_loss(math.inf, math.inf)
    assert not same_loss(float("nan"), 1.0) and not same_loss(math.inf, -math.inf) and not same_loss(1.0, 1.01)
    cfg = ModelConfig(d=8, d_qk=4, d_out=1, n_layers=1)
    run = Run(cfg, TrainConfig(steps=60, lr_fraction=40.0), make_synthetic(2, 3, 8, 1, 3), 3)
    trainer = Trainer(ResultCache(tmp_path))
    traj = trainer.batch([run])[0]
    gone = [t for t in range(traj.loss.size) if not math.isfinite(float(traj.loss[t]))]
    assert gone, "the run must diverge for this test"
    sharpness_along(trainer, traj, run.model, run.data, [gone[0]])  # raised RuntimeError before the fix


def _recorder() -> ClaimRecorder:
    from claims.test_c1_linear_rate import PROTOCOL

    return ClaimRecorder("C1", protocol=PROTOCOL)


def _run(loss: np.ndarray, seed: int = 1) -> Trajectory:
    empty = np.zeros((0, 1))
    model = {"n_layers": 1, "d_qk": 16, "beta": 1.0, "qk_init": "normal", "logit_scale": "1/sqrt(d_qk)"}
    train = {"steps": loss.size - 1, "dtype": "float64", "device": "cpu"}
    return Trajectory(loss, np.zeros(0, dtype=np.int64), empty, empty, 0.1, 5.0, "fraction", None, seed, model, train)


GEOMETRIC = 0.9 ** np.arange(401.0)
IN_THE_ZONE = np.exp(-((np.arange(401.0) / 4) ** 0.75))  # octave ratio 2^-0.25 = 0.84
POWER_LAW = (1 + np.arange(401.0) / 40) ** -1.0  # octave ratio 0.56: fails


def test_a_unit_with_a_run_in_the_zone_and_none_failing_is_excluded_as_undecided() -> None:
    rec = _recorder()
    record_unit(rec, [("a", _run(GEOMETRIC)), ("b", _run(IN_THE_ZONE))], unit=7)
    assert [(e.unit, e.reason) for e in rec.exclusions] == [
        ("7", "in the declared zone (octave ratio in [0.8, 0.9), or below 0.8 and settled late): b")
    ]
    assert {c.label for c in rec.checks} == {"a"}  # the zoned run is not scored


def test_a_failing_run_decides_its_unit_whatever_another_run_in_the_zone_says() -> None:
    rec = _recorder()
    record_unit(rec, [("a", _run(POWER_LAW)), ("b", _run(IN_THE_ZONE))], unit=7)
    assert not rec.exclusions
    assert not all(c.met for c in rec.checks if c.label == "a")
