"""C7's machinery: the levers do what they say, and the unit decisions give hand-worked values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.decide.calibration import calibrate_part
from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.spec import ClaimProtocol, Part, Seeds, Stat
from claimcheck.store.cache import ResultCache
from qin2025.c7.calibration import conditioning_families, skeleton
from qin2025.c7.conditioning import (
    ASSOCIATION,
    GOVERNS,
    INPUT,
    MIN_SPAN,
    MODEL,
    ROTATION,
    ZONE,
    Lever,
    Setting,
    Table,
    Unit,
    association_decision,
    build,
    conditioning,
    elasticity,
    governs_decision,
    naive_scale,
    readout_units,
    record_lever,
    respectrum,
    steady_rate,
    window_kinv,
)
from qin2025.c7.rotation import rotate, worst_rotation
from qin2025.engine.model import forward
from qin2025.engine.trainer import Trainer

REFERENCE = [True] * 5 + [False] * 4  # a lever's 5 settings, then its 4 lambda runs
KINV = [0.5, 0.3, 0.1, 0.03, 0.01, 0.1, 0.1, 0.1, 0.1]  # spans 50x over the settings
LAM = [500.0, 550.0, 700.0, 900.0, 1100.0, 160.0, 4000.0, 400.0, 1800.0]

UNCACHED = Trainer(ResultCache(None))


def _z(setting: Setting, seed: int = 0) -> np.ndarray:
    params, data = build(setting, seed)
    return forward(params, data.x, MODEL).z[0].detach().numpy()


def test_the_association_is_spearmans_rho_over_the_five_settings_alone() -> None:
    rate = [5.0, 4.0, 3.0, 2.0, 1.0, 9.0, 0.1, 9.0, 0.1]  # the lambda runs' rates would spoil any ordering
    assert association_decision(rate, KINV, LAM, REFERENCE) == {ASSOCIATION: pytest.approx(1.0)}
    swapped = [4.0, 5.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0]  # one adjacent swap: 1 - 6 * 2 / (5 * 24) = 0.9
    assert association_decision(swapped, KINV, LAM, REFERENCE)[ASSOCIATION] == pytest.approx(0.9)


def test_the_association_is_undefined_outside_the_premise_and_in_the_zone_says_so() -> None:
    narrow = [0.5, 0.4, 0.3, 0.2, 0.1, 0.3, 0.3, 0.3, 0.3]  # spans 5x < 10x: the lever did not separate
    zoned = association_decision([5, 4, 3, 2, 1, 1, 1, 1, 1], narrow, LAM, REFERENCE)
    assert math.isnan(zoned[ASSOCIATION]) and zoned[ZONE] == 1.0
    gone = [5.0, math.nan, -1.0, 2.0, 1.0, 1, 1, 1, 1]  # two settings without a positive rate: 3 left
    out = association_decision(gone, KINV, LAM, REFERENCE)
    assert math.isnan(out[ASSOCIATION]) and ZONE not in out  # too few runs: undefined, not the zone


def test_governs_recovers_the_elasticity_with_lambda_held() -> None:
    k, m = np.array(KINV), np.array(LAM)
    rate = 0.01 * k**0.7 * m**-0.3  # exact: b = 0.7 whatever lambda_max does
    assert governs_decision(rate.tolist(), KINV, LAM, REFERENCE) == {GOVERNS: pytest.approx(0.7)}
    by_lambda = 5.0 * m**-1.0  # the step size alone: b = 0 once lambda_max is a covariate
    assert governs_decision(by_lambda.tolist(), KINV, LAM, REFERENCE)[GOVERNS] == pytest.approx(0.0, abs=1e-12)
    # without the covariate the same rates look governed (lambda_max rises as kinv falls along the lever)
    assert elasticity(by_lambda[:5], k[:5]) > 0.2


def test_governs_holds_w_vs_own_sigma_min_over_the_window_when_it_is_given() -> None:
    k, m = np.array(KINV), np.array(LAM)
    wv = np.array([0.02, 0.03, 0.018, 0.025, 0.022, 0.02, 0.035, 0.03, 0.018])  # GD moved W_V differently per run
    alpha = 0.01 * k**0.7 * wv**1.5 * m**-0.3  # Theorem 1's alpha reads both: b = 0.7 with W_V held
    assert governs_decision(alpha.tolist(), KINV, LAM, REFERENCE, wv.tolist()) == {GOVERNS: pytest.approx(0.7)}
    jitter = np.array([1.0, 1.05, 0.97, 1.02, 1.0, 1.03, 0.98, 1.01, 0.99])
    wv_drift = 0.02 * (k / k[0]) ** -0.1 * jitter  # drifting against kinv(Z) along the lever, 1.5x: still held
    w_alone = 0.5 * wv_drift**2  # W_V's sigma_min alone sets the rate
    assert governs_decision(w_alone.tolist(), KINV, LAM, REFERENCE, wv_drift.tolist())[GOVERNS] == pytest.approx(0.0)
    assert governs_decision(w_alone.tolist(), KINV, LAM, REFERENCE)[GOVERNS] < -0.15  # v5's statistic: fooled
    rate = (0.01 * k**0.7 * m**-0.3).tolist()  # a W_V held exactly (a read-out): no covariate, the same b
    assert governs_decision(rate, KINV, LAM, REFERENCE, [0.02] * 9) == governs_decision(rate, KINV, LAM, REFERENCE)
    moved = [0.02, 0.03, 0.036, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02]  # W_V's sigma_min spans 1.8x >= 1.78x: not held
    for decision, stat in ((governs_decision, GOVERNS), (association_decision, ASSOCIATION)):
        zoned = decision(rate, KINV, LAM, REFERENCE, moved)
        assert math.isnan(zoned[stat]) and zoned[ZONE] == 1.0
        assert ZONE not in decision(rate, KINV, LAM, REFERENCE, [v * 0.95 if v > 0.03 else v for v in moved])


def test_the_replayed_descent_is_the_engines_and_reads_w_v_over_it() -> None:
    from qin2025.c7.rotation import descend_reading_w_v
    from qin2025.engine.batched import Run, train_batch_from
    from qin2025.engine.train import TrainConfig

    train = TrainConfig(steps=30, lr_fraction=0.5, sigma_every=10)
    built = [build(s, 0) for s in ROTATION.settings()[:2]]
    runs = [Run(MODEL, train, data, 0) for _, data in built]
    trajs = train_batch_from(runs, [p for p, _ in built])
    loss, w_v = descend_reading_w_v(runs, [p for p, _ in built], [t.lr for t in trajs], 30, 10)
    for row, traj in zip(loss, trajs, strict=True):
        assert np.array_equal(row[: traj.loss.size], traj.loss)  # bit for bit
    at_init = np.linalg.svd(built[1][0]["0.W_V"].numpy(), compute_uv=False)[-1]
    assert w_v.shape == (2, 4) and w_v[1, 0] == pytest.approx(at_init) and w_v[1, 3] != w_v[1, 0]


def test_governs_is_undefined_with_too_few_runs_and_in_the_zone_with_too_little_span() -> None:
    rate = [1.0, 1.0, 1.0, math.nan, math.nan, math.nan, math.nan, 1.0, 1.0]  # 5 usable runs < 6
    assert set(governs_decision(rate, KINV, LAM, REFERENCE)) == {GOVERNS}
    assert math.isnan(governs_decision(rate, KINV, LAM, REFERENCE)[GOVERNS])
    zoned = governs_decision([1.0] * 9, [0.2] * 9, LAM, REFERENCE)
    assert math.isnan(zoned[GOVERNS]) and zoned[ZONE] == 1.0
    just = [0.5, 0.3, 0.1, 0.06, 0.05, 0.1, 0.1, 0.1, 0.1]  # exactly 10x: outside the zone
    assert ZONE not in governs_decision([1.0] * 9, just, LAM, REFERENCE)


def test_the_steady_rate_is_the_slope_after_the_first_quarter() -> None:
    t = np.arange(201)
    drop_then_steady = np.where(t < 10, 10.0 ** (-0.1 * t), 10.0 ** (-1.0 - 0.02 * (t - 10)))
    assert steady_rate(drop_then_steady, 200) == pytest.approx(0.02)
    floored = 10.0 ** (-0.1 * t[:120])  # stopped at its floor at step 119: fitted over [50, 119]
    assert steady_rate(floored, 200) == pytest.approx(0.1)
    assert math.isnan(steady_rate(floored[:54], 200))  # 4 points after step 50


def test_respectrum_sets_the_condition_number_and_norm_and_keeps_the_vectors() -> None:
    m = np.random.default_rng(0).normal(size=(2, 8, 32))
    out = respectrum(m, 100.0, 16.0)
    sv = np.linalg.svd(out, compute_uv=False)
    assert sv[:, 0] / sv[:, -1] == pytest.approx([100.0, 100.0])
    assert np.linalg.norm(out, axis=(1, 2)) == pytest.approx([16.0, 16.0])
    u_in, u_out = np.linalg.svd(m)[0], np.linalg.svd(out)[0]
    assert np.abs(np.sum(u_in * u_out, axis=1)) == pytest.approx(np.ones((2, 8)))


def test_the_scale_runs_move_sigma_of_z_and_not_its_conditioning() -> None:
    kinv, smin, _ = conditioning(_z(Setting(kx=10.0)))
    kinv2, smin2, _ = conditioning(_z(Setting(kx=10.0, s=2.0)))
    assert kinv2 == pytest.approx(kinv, rel=1e-10) and smin2 == pytest.approx(2 * smin, rel=1e-10)
    assert conditioning(_z(Setting(kx=10.0, ug=2.0)))[0] == kinv  # W_U does not touch Z


def test_both_levers_move_the_conditioning_of_z_tenfold_or_more_at_init() -> None:
    by_x = [conditioning(_z(s))[0] for s in INPUT.settings()[:5]]
    by_r = [conditioning(_z(s))[0] for s in ROTATION.settings()[:5]]
    assert by_x == sorted(by_x, reverse=True) and by_x[0] / by_x[-1] > MIN_SPAN
    assert by_r == sorted(by_r, reverse=True) and by_r[0] / by_r[-1] > MIN_SPAN


def test_the_rotation_lever_holds_x_and_every_weights_singular_values() -> None:
    first, data_first = build(ROTATION.settings()[0], 0)
    last, data_last = build(ROTATION.settings()[4], 0)
    assert np.array_equal(data_first.x.numpy(), data_last.x.numpy())  # X untouched, spectrum and all
    for name in first:
        sv_first = np.linalg.svd(first[name].numpy(), compute_uv=False)
        sv_last = np.linalg.svd(last[name].numpy(), compute_uv=False)
        assert sv_last == pytest.approx(sv_first, rel=1e-9, abs=1e-12), name  # W_V rotated, its spectrum kept
        assert (name == "0.W_V") != np.array_equal(first[name].numpy(), last[name].numpy())  # only W_V moved
    assert ROTATION.settings()[0] == Setting()  # rt = 0 is the Gaussian draw itself


def test_kinv_is_read_as_the_geometric_mean_over_the_fitted_window() -> None:
    steps = np.arange(0, 201, 10)
    smax = np.full(steps.size, 10.0)
    smin = np.where(steps < 50, 0.01, np.where(steps < 120, 1.0, 4.0))  # repaired early, then steady
    expected = math.exp((7 * math.log(0.1) + 9 * math.log(0.4)) / 16)  # steps 50..110 at 0.1, 120..200 at 0.4
    assert window_kinv(steps, smin, smax, 200) == pytest.approx(expected)
    assert window_kinv(steps[:3], smin[:3], smax[:3], 200) == pytest.approx(0.001)  # stopped early: its last reading


def test_a_read_out_on_x_does_not_move_along_the_rotation_lever_and_one_on_z_does() -> None:
    on_x = readout_units(UNCACHED, [0], "x", steps=200)[0].tables["rotation"]
    assert np.ptp(on_x.rate[:5]) == 0  # the same least-squares problem at every rt
    assert governs_decision(**on_x.measurements())[GOVERNS] == pytest.approx(0.0, abs=0.01)
    on_z = readout_units(UNCACHED, [0], "z", steps=200)[0].tables["rotation"]
    assert governs_decision(**on_z.measurements())[GOVERNS] > 1.0


def test_read_outs_are_cached_by_features_and_seeds_and_read_back_bit_for_bit(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    cold, warm = Trainer(cache), Trainer(cache)
    first = readout_units(cold, [0, 1], "z", steps=50)
    again = readout_units(warm, [0, 1], "z", steps=50)
    assert (cold.counts.computed, warm.counts.computed, warm.counts.cached) == (1, 0, 1)
    for a, b in zip(first, again, strict=True):
        for lever in a.tables:
            assert np.array_equal(a.tables[lever].rate, b.tables[lever].rate)
            assert np.array_equal(a.tables[lever].kinv, b.tables[lever].kinv)
    on_x = readout_units(warm, [0, 1], "x", steps=50)  # the features are in the key
    assert warm.counts.computed == 1
    assert not np.array_equal(on_x[0].tables["rotation"].rate, first[0].tables["rotation"].rate)


def _table(rate: list[float], kinv: list[float], ok: list[bool] | None = None) -> Table:
    a = np.asarray
    settings = tuple(INPUT.settings())
    wv = a([0.02] * 9)
    return Table(INPUT, settings, a(rate), a(kinv), a(kinv), a(LAM), a(kinv) * 10, 1 / a(LAM), wv, a(ok or [True] * 9))


def test_a_table_names_why_it_left_the_premise_or_sits_in_the_zone_and_a_shuffle_keeps_its_span() -> None:
    assert _table([1.0] * 9, KINV).premise() == "" and _table([1.0] * 9, KINV).zone() == ""
    assert "left the step-size premise at kx=3" in _table([1.0] * 9, KINV, [True, False] + [True] * 7).premise()
    narrow = _table([1.0] * 9, [0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    assert narrow.premise() == "" and "spans 2x" in narrow.zone() and not narrow.admitted()
    a = np.asarray
    w_v_moved = Table(ROTATION, tuple(ROTATION.settings()), a([1.0] * 9), a(KINV), a(KINV), a(LAM), a(KINV), 1 / a(LAM),
                      a([0.01, 0.02] + [0.015] * 7), a([True] * 9))  # fmt: skip
    assert "W_V's sigma_min over the fitted steps spans 2x" in w_v_moved.zone()
    assert "wv" in w_v_moved.measurements() and "wv" not in narrow.measurements()  # only a lever that holds W_V
    shuffled = _table([1.0] * 9, KINV).shuffled(3)
    assert sorted(shuffled.kinv[:5]) == sorted(KINV[:5]) and list(shuffled.kinv[5:]) == KINV[5:]


def test_the_naive_scale_check_reads_the_bound_forms_exponent() -> None:
    table = _table([1.0] * 9, KINV)
    mu = table.mu
    smin = table.smin.copy()
    smin[5], smin[6] = 0.5 * smin[2], 2 * smin[2]  # s = 1/2, 2 at the middle setting
    rate = mu * smin**2  # the bound form at a common absolute step: rate/mu = sigma_min^2
    scaled = Table(INPUT, table.settings, rate, table.kinv, table.kinv0, table.lam, smin, mu, table.wv, table.ok)
    assert naive_scale(scaled) == pytest.approx(2.0)


@pytest.mark.parametrize(("kind", "lever"), [("association", INPUT), ("association", ROTATION), ("governs", ROTATION)])
def test_every_part_calibrates_on_a_quick_sample_of_its_families(kind: str, lever: Lever) -> None:
    stat = Stat(ASSOCIATION, ">=", 0.9, tol=1e-9) if kind == "association" else Stat(GOVERNS, ">=", 0.1)  # v8's floor
    decision = association_decision if kind == "association" else governs_decision
    cases = 100  # association (rotation) sits at 0.92 (v6, W_V's drift over the window): 40 cases would straddle 0.9
    # governs is a mean-rule part: it decides a sample's mean, so its cases are samples of 40 units as the protocol's
    # are (one unit's b against v8's floor 0.1 is no decision it makes: a unit of a no-effect world scatters past it)
    units = 40 if kind == "governs" else 0
    cases = 20 if units else cases
    families = conditioning_families(kind, lever, cases=cases, units=units)
    part = Part(kind, "", (stat,), rule="mean" if units else "pass-rate", decision=decision, calibration=families)
    result = calibrate_part("C7", part, cases=cases)
    assert result.sensitivity.rate >= 0.9 and result.specificity.rate >= 0.9, result.summary()


def test_the_families_score_each_world_by_the_parts_statement() -> None:
    names = {f.name: f.expect for f in conditioning_families("governs", ROTATION)}
    assert names["X's conditioning alone"] == "fail" and names["lambda_max alone"] == "fail"
    assert names["W_V's sigma_min alone"] == "fail" and names["beta alone"] == "fail"
    assert names["Theorem 1's alpha, kinv(Z) x sigma_min(W_V)"] == "pass"  # alpha reads both; the lever holds W_V's
    assert "X's conditioning alone" not in {f.name for f in conditioning_families("governs", INPUT)}
    assert names["weak, b = 0.25"] == "pass" and names["b = 0.5"] == "pass"  # v8: the claimed direction, any size
    samples = {f.name: f.expect for f in conditioning_families("governs", ROTATION, cases=2, units=40)}
    assert samples["mean b 0.6..0.75"] == "pass" and samples["mean b 0.25..0.4"] == "pass"
    assert samples["no effect"] == "fail" and samples["wrong direction"] == "fail"
    assert "no effect" not in names  # a sample world's scatter sits about a sample's mean: samples only
    assert {f.name: f.expect for f in conditioning_families("association", INPUT)}["X's conditioning alone"] == "pass"
    with pytest.raises(ValueError, match="association or governs"):
        conditioning_families("rate", INPUT)


def test_a_skeleton_has_the_levers_structure_inside_the_premise() -> None:
    for i in range(20):
        sk = skeleton(ROTATION, np.random.default_rng(i))
        assert max(sk.kinv[:5]) / min(sk.kinv[:5]) >= MIN_SPAN  # redrawn until the lever separates
        assert np.ptp(sk.log_kx) == 0  # X fixed along it
        assert sk.lam[6] / sk.lam[5] > 10  # s = 2 against s = 1/2: lambda_max moves >= 10x
        assert np.abs(np.log(sk.kinv[5:] / sk.kinv[2])).max() < 0.5  # the lambda runs near the middle's kinv(Z)
    # W_V's sigma_min over the window is the draw's, moved by GD about as much as measured (W1: median span 1.19x)
    spans = [np.ptp(skeleton(ROTATION, np.random.default_rng(i)).log_smin_wv[:5]) for i in range(200)]
    assert 1.05 < math.exp(float(np.median(spans))) < 2.0


def test_the_worst_rotation_is_deterministic_and_worsens_z() -> None:
    params, data = build(Setting(), 3)
    a, b = worst_rotation(params, data.x, MODEL, iters=30)
    again = worst_rotation(params, data.x, MODEL, iters=30)
    assert torch.equal(a, again[0]) and torch.equal(b, again[1])
    assert torch.allclose(a, -a.T) and torch.allclose(b, -b.T)  # skew: expm of each is a rotation
    turned = {**params, "0.W_V": rotate(params["0.W_V"], a, b, 1.0)}
    assert conditioning(forward(turned, data.x, MODEL).z[0].detach().numpy())[0] < conditioning(_z(Setting(), 3))[0]


def test_a_unit_in_the_declared_zone_is_excluded_as_undecided_and_never_scored() -> None:
    part = Part("p", "", (Stat(ASSOCIATION, ">=", 0.9),), premise="the lever separates", decision=association_decision)
    rec = ClaimRecorder("C7", protocol=ClaimProtocol("C7", 1, (part,), (), Seeds("t", 1000, {"ci": 2})))
    narrow = _table([1.0] * 9, [0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    wide = _table([5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0], KINV)
    record_lever(rec, [Unit(1, {"input": narrow}), Unit(2, {"input": wide})], INPUT, parts=("p",))
    assert [e.unit for e in rec.exclusions] == ["1"] and "in the declared zone" in rec.exclusions[0].reason
    assert [c.unit for c in rec.checks] == ["2"]
