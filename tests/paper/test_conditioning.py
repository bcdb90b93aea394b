"""C7's machinery: the levers do what they say, and the unit decisions give hand-worked values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from claimcheck.calibration import calibrate_part
from claimcheck.protocol import Part, Stat
from claimcheck.store import ResultCache
from qin2025.calibration.conditioning import conditioning_families, skeleton
from qin2025.conditioning import (
    ASSOCIATION,
    GOVERNS,
    INPUT,
    MIN_SPAN,
    MODEL,
    W_V,
    Setting,
    Table,
    association_decision,
    build,
    conditioning,
    elasticity,
    governs_decision,
    naive_scale,
    readout_units,
    respectrum,
    steady_rate,
)
from qin2025.model import forward
from qin2025.trainer import Trainer

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


def test_the_association_is_undefined_outside_the_premise() -> None:
    narrow = [0.5, 0.4, 0.3, 0.2, 0.1, 0.3, 0.3, 0.3, 0.3]  # spans 5x < 10x
    assert math.isnan(association_decision([5, 4, 3, 2, 1, 1, 1, 1, 1], narrow, LAM, REFERENCE)[ASSOCIATION])
    gone = [5.0, math.nan, -1.0, 2.0, 1.0, 1, 1, 1, 1]  # two settings without a positive rate: 3 left
    assert math.isnan(association_decision(gone, KINV, LAM, REFERENCE)[ASSOCIATION])


def test_governs_recovers_the_elasticity_with_lambda_held() -> None:
    k, m = np.array(KINV), np.array(LAM)
    rate = 0.01 * k**0.7 * m**-0.3  # exact: b = 0.7 whatever lambda_max does
    assert governs_decision(rate.tolist(), KINV, LAM, REFERENCE) == {GOVERNS: pytest.approx(0.7)}
    by_lambda = 5.0 * m**-1.0  # the step size alone: b = 0 once lambda_max is a covariate
    assert governs_decision(by_lambda.tolist(), KINV, LAM, REFERENCE)[GOVERNS] == pytest.approx(0.0, abs=1e-12)
    # without the covariate the same rates look governed (lambda_max rises as kinv falls along the lever)
    assert elasticity(by_lambda[:5], k[:5]) > 0.2


def test_governs_is_undefined_with_too_few_runs_or_too_little_span() -> None:
    rate = [1.0, 1.0, 1.0, math.nan, math.nan, math.nan, math.nan, 1.0, 1.0]  # 5 usable runs < 6
    assert math.isnan(governs_decision(rate, KINV, LAM, REFERENCE)[GOVERNS])
    assert math.isnan(governs_decision([1.0] * 9, [0.2] * 9, LAM, REFERENCE)[GOVERNS])


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


def test_both_levers_move_the_conditioning_of_z_tenfold_or_more() -> None:
    by_x = [conditioning(_z(s))[0] for s in INPUT.settings()[:5]]
    by_v = [conditioning(_z(s))[0] for s in W_V.settings()[:5]]
    assert by_x == sorted(by_x, reverse=True) and by_x[0] / by_x[-1] > MIN_SPAN
    assert by_v == sorted(by_v, reverse=True) and by_v[0] / by_v[-1] > MIN_SPAN
    x_first, x_last = build(W_V.settings()[0], 0)[1].x, build(W_V.settings()[4], 0)[1].x
    assert np.array_equal(x_first.numpy(), x_last.numpy())  # the W_V lever leaves X alone


def test_a_read_out_on_x_does_not_move_along_the_w_v_lever_and_one_on_z_does() -> None:
    on_x = readout_units(UNCACHED, [0], "x", steps=200)[0].tables["W_V"]
    assert np.ptp(on_x.rate[:5]) == 0  # the same least-squares problem at every vc
    assert governs_decision(**on_x.measurements())[GOVERNS] == pytest.approx(0.0, abs=0.01)
    on_z = readout_units(UNCACHED, [0], "z", steps=200)[0].tables["W_V"]
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
    assert warm.counts.computed == 1 and not np.array_equal(on_x[0].tables["W_V"].rate, first[0].tables["W_V"].rate)


def _table(rate: list[float], kinv: list[float], ok: list[bool] | None = None) -> Table:
    a = np.asarray
    settings = tuple(INPUT.settings())
    return Table(INPUT, settings, a(rate), a(kinv), a(LAM), a(kinv) * 10, 1 / a(LAM), a(ok or [True] * 9))


def test_a_table_names_why_it_left_the_premise_and_a_shuffle_keeps_its_span() -> None:
    assert _table([1.0] * 9, KINV).premise() == ""
    assert "left the step-size premise at kx=3" in _table([1.0] * 9, KINV, [True, False] + [True] * 7).premise()
    assert "spans 2x" in _table([1.0] * 9, [0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]).premise()
    shuffled = _table([1.0] * 9, KINV).shuffled(3)
    assert sorted(shuffled.kinv[:5]) == sorted(KINV[:5]) and list(shuffled.kinv[5:]) == KINV[5:]


def test_the_naive_scale_check_reads_the_bound_forms_exponent() -> None:
    table = _table([1.0] * 9, KINV)
    mu = table.mu
    smin = table.smin.copy()
    smin[5], smin[6] = 0.5 * smin[2], 2 * smin[2]  # s = 1/2, 2 at the middle setting
    rate = mu * smin**2  # the bound form at a common absolute step: rate/mu = sigma_min^2
    scaled = Table(INPUT, table.settings, rate, table.kinv, table.lam, smin, mu, table.ok)
    assert naive_scale(scaled) == pytest.approx(2.0)


@pytest.mark.parametrize("kind", ["association", "governs"])
def test_every_part_calibrates_on_a_quick_sample_of_its_families(kind: str) -> None:
    stat = Stat(ASSOCIATION, ">=", 0.9, tol=1e-9) if kind == "association" else Stat(GOVERNS, ">=", 0.5)
    decision = association_decision if kind == "association" else governs_decision
    for lever in (INPUT, W_V):
        part = Part(kind, "", (stat,), decision=decision, calibration=conditioning_families(kind, lever))
        result = calibrate_part("C7", part, cases=40)
        assert result.sensitivity.rate >= 0.9 and result.specificity.rate >= 0.9, result.summary()


def test_the_families_score_each_world_by_the_parts_statement() -> None:
    names = {f.name: f.expect for f in conditioning_families("governs", W_V)}
    assert names["X's conditioning alone"] == "fail" and names["lambda_max alone"] == "fail"
    assert "X's conditioning alone" not in {f.name for f in conditioning_families("governs", INPUT)}
    assert {f.name: f.expect for f in conditioning_families("association", INPUT)}["X's conditioning alone"] == "pass"
    with pytest.raises(ValueError, match="association or governs"):
        conditioning_families("rate", INPUT)


def test_a_skeleton_has_the_levers_structure() -> None:
    sk = skeleton(W_V, np.random.default_rng(1))
    assert sk.kinv[0] / sk.kinv[4] > MIN_SPAN and np.ptp(sk.log_kx) == 0  # X fixed along the W_V lever
    assert sk.lam[6] / sk.lam[5] > 10  # s = 2 against s = 1/2: lambda_max moves >= 10x at fixed kinv
    assert list(sk.kinv[5:]) == [sk.kinv[2]] * 4  # the lambda runs sit at the middle setting's kinv(Z)
