"""The spectral measures against numbers worked out by hand, and the properties they must have."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig, init_params
from qin2025.engine.spectral import (
    attention_of,
    derive_seed,
    distance_from_uniform,
    floor_ratio,
    loglog_slope,
    mean_rate,
    partial_rank_correlation,
    rank_deficit,
    sample_attention,
    sample_attention_betas,
    sigma_min,
    sigma_ratio,
    singular_values,
)

DIAG_34 = np.array([[3.0, 0.0], [0.0, 4.0]])  # singular values 4 and 3


def test_singular_values_of_a_diagonal_matrix_are_its_sorted_entries() -> None:
    assert singular_values(DIAG_34).tolist() == [4.0, 3.0]
    assert sigma_min(DIAG_34) == pytest.approx(3.0)


def test_sigma_ratio_of_a_diagonal_matrix() -> None:
    assert sigma_ratio(DIAG_34) == pytest.approx(0.75)
    assert sigma_ratio(DIAG_34, k=1) == pytest.approx(1.0)


def test_sigma_ratio_rejects_an_index_beyond_the_rank() -> None:
    with pytest.raises(ValueError, match="k=3"):
        sigma_ratio(DIAG_34, k=3)


def test_measures_are_batched_over_leading_axes() -> None:
    batch = np.stack([DIAG_34, 2 * np.eye(2)])  # (2, 2, 2)
    assert sigma_ratio(batch).tolist() == pytest.approx([0.75, 1.0])


def test_distance_from_uniform_of_identity_attention() -> None:
    # I - J/2 = [[1/2, -1/2], [-1/2, 1/2]]: Frobenius norm sqrt(4 / 4) = 1
    assert distance_from_uniform(np.eye(2)) == pytest.approx(1.0)
    # in general ||I - J/n||_F^2 = n (1 - 1/n)^2 + (n^2 - n) / n^2 = n - 1
    assert distance_from_uniform(np.eye(5)) == pytest.approx(2.0)


def test_distance_from_uniform_is_zero_for_uniform_rows() -> None:
    assert distance_from_uniform(np.full((4, 4), 0.25)) == pytest.approx(0.0, abs=1e-15)


def test_distance_from_uniform_needs_square_matrices() -> None:
    with pytest.raises(ValueError, match="square"):
        distance_from_uniform(np.ones((2, 3)))


def test_rank_deficit_counts_missing_directions() -> None:
    assert rank_deficit(np.ones((2, 2))) == 1
    assert rank_deficit(DIAG_34) == 0
    assert rank_deficit(np.zeros((3, 5))) == 3


def test_rank_deficit_sees_through_float_rounding() -> None:
    rng = np.random.default_rng(1)
    low = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 9))  # rank 2 up to rounding
    assert rank_deficit(low) == 4


def test_floor_ratio_of_a_scaled_matrix_is_the_scale() -> None:
    x = np.random.default_rng(2).standard_normal((3, 7))
    assert floor_ratio(2.5 * x, x) == pytest.approx(2.5)


def test_derive_seed_is_reproducible_and_separates_keys() -> None:
    assert derive_seed(0, 1) == derive_seed(0, 1)
    assert len({derive_seed(0, 1), derive_seed(1, 0), derive_seed(0, 2)}) == 3
    assert 0 <= derive_seed(7) < 2**63


def test_sample_attention_is_the_models_first_block() -> None:
    cfg = ModelConfig(d=8, d_qk=4, beta=0.5)
    x = make_synthetic(3, 5, 8, 1, seed=0).x
    a = sample_attention(cfg, x, seed=4)
    assert a.s.shape == (3, 5, 5) and a.z.shape == a.attn.shape == (3, 5, 8)
    assert np.allclose(a.s.sum(axis=-1), 1.0)
    assert np.allclose(a.z, a.attn + 0.5 * a.x)
    params = init_params(cfg, torch.Generator().manual_seed(4))
    assert np.allclose(a.attn, a.s @ a.x @ params["0.W_V"].numpy())


def test_uniform_attention_with_value_minus_beta_cancels_the_mean_free_part() -> None:
    # W_Q = 0 gives S = 11^T/n exactly; W_V = -beta I then gives Z = beta (I - 11^T/n) X, rank n - 1
    cfg = ModelConfig(d=6, d_qk=2, beta=2.0)
    params = init_params(cfg, torch.Generator().manual_seed(0))
    params["0.W_Q"] = torch.zeros_like(params["0.W_Q"])
    params["0.W_V"] = -2.0 * torch.eye(6, dtype=torch.float64)
    a = attention_of(params, make_synthetic(2, 4, 6, 1, seed=0).x, cfg)
    assert np.allclose(a.s, 0.25)
    assert rank_deficit(a.z).tolist() == [1, 1]
    assert rank_deficit(a.x).tolist() == [0, 0]
    assert math.isclose(float(floor_ratio(a.z, a.x).max()), 0.0, abs_tol=1e-12)


def test_sample_attention_betas_is_sample_attention_at_each_beta() -> None:
    x = make_synthetic(3, 4, 8, 1, 5).x
    cfg = ModelConfig(d=8, d_qk=4, qk_init="xavier")
    betas = (0.0, 0.5, 2.0)
    for beta, got in zip(betas, sample_attention_betas(cfg, x, 11, betas), strict=True):
        want = sample_attention(ModelConfig(d=8, d_qk=4, qk_init="xavier", beta=beta), x, 11)
        np.testing.assert_allclose(got.z, want.z, rtol=0, atol=1e-14)
        np.testing.assert_allclose(got.attn, want.attn, rtol=0, atol=1e-14)
        np.testing.assert_allclose(got.s, want.s, rtol=0, atol=1e-14)


def test_mean_rate_of_a_geometric_loss_is_its_orders_per_step() -> None:
    assert mean_rate([1.0, 0.1, 0.01, 0.001]) == pytest.approx(1.0)
    assert mean_rate([8.0, 4.0, 2.0]) == pytest.approx(math.log10(2))


def test_mean_rate_stops_at_the_first_non_finite_loss() -> None:
    assert mean_rate([1.0, 0.1, math.inf, 1e-9]) == pytest.approx(1.0)
    assert math.isnan(mean_rate([1.0, math.nan]))
    assert mean_rate([1.0, 10.0]) == pytest.approx(-1.0)  # a rising loss has a negative rate


def test_loglog_slope_recovers_a_power_law_exponent() -> None:
    x = [1.0, 10.0, 100.0]
    assert loglog_slope(x, [5.0, 0.5, 0.05]) == pytest.approx(-1.0)
    assert loglog_slope([4.0, 16.0], [2.0, 4.0]) == pytest.approx(0.5)
    assert math.isnan(loglog_slope(x, [1.0, 0.0, 1.0]))


def test_partial_rank_correlation_by_hand() -> None:
    # x = (1, 2, 3, 4), y = (1, 3, 2, 4), z = (1, 2, 4, 3): r_xy = 0.8, r_xz = 0.8, r_yz = 0.4,
    # so the partial is (0.8 - 0.32) / sqrt(0.36 * 0.84) = 0.48 / 0.5499 = 0.8729.
    got = partial_rank_correlation([1, 2, 3, 4], [1, 3, 2, 4], [1, 2, 4, 3])
    assert got == pytest.approx(0.48 / math.sqrt(0.36 * 0.84))


def test_partial_rank_correlation_is_undefined_when_x_is_monotone_in_z() -> None:
    z = np.arange(8.0)
    x = 10 * z + np.array([1, -1, 1, -1, 1, -1, 1, -1])  # same ranks as z: nothing is left once z is held
    y = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])
    assert math.isnan(partial_rank_correlation(x, y, z))


def test_partial_rank_correlation_is_invariant_to_monotone_transforms() -> None:
    rng = np.random.default_rng(0)
    x, y, z = rng.standard_normal((3, 12))
    base = partial_rank_correlation(x, y, z)
    assert partial_rank_correlation(np.exp(x), y**3, 2 * z + 1) == pytest.approx(base)
    assert partial_rank_correlation(x, -y, z) == pytest.approx(-base)
