"""Measure the spectra the rank claims (C3, C4, C7) talk about, and draw attention to measure.

The measures are pure functions on numpy arrays, batched over leading axes: a ``(..., m, k)``
stack of matrices in, a ``(...)`` array of numbers out. ``sample_attention`` draws the model's
weights exactly as ``model.init_params`` does and returns S, Attn(X) and Z of the first block.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.model import ModelConfig, Params
from claimcheck.protocol import PAPER, ModelSpec


def singular_values(a: ArrayLike) -> np.ndarray:
    """Return the singular values of each matrix of ``a`` (..., m, k), descending, as (..., min(m, k))."""
    return np.asarray(np.linalg.svd(np.asarray(a, dtype=np.float64), compute_uv=False))


def sigma_min(a: ArrayLike) -> np.ndarray:
    """Return the smallest singular value sigma_min(m, k) of each matrix of ``a``."""
    return singular_values(a)[..., -1]


def sigma_ratio(a: ArrayLike, k: int = 2) -> np.ndarray:
    """Return sigma_k / sigma_1 of each matrix of ``a`` (k = 2: how far from rank one); NaN for a zero matrix."""
    s = singular_values(a)
    if not 1 <= k <= s.shape[-1]:
        raise ValueError(f"sigma_ratio needs 1 <= k <= min(m, k) = {s.shape[-1]}, got k={k}")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(s[..., k - 1] / s[..., 0])


def inverse_condition(a: ArrayLike) -> np.ndarray:
    """Return sigma_min / sigma_max of each matrix of ``a`` (1: perfectly conditioned, 0: singular)."""
    s = singular_values(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(s[..., -1] / s[..., 0])


def stable_rank(a: ArrayLike) -> np.ndarray:
    """Return ||A||_F^2 / ||A||_2^2 = sum_i sigma_i^2 / sigma_1^2 of each matrix: 1 exactly at rank one."""
    s = singular_values(a)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((s**2).sum(axis=-1) / s[..., 0] ** 2)


def distance_from_uniform(s: ArrayLike) -> np.ndarray:
    """Return ||S - 11^T/n||_F of each (n, n) attention matrix; 0 when every row attends uniformly.

    ||11^T/n||_F = 1, so the value reads as a distance relative to the uniform matrix itself.
    """
    arr = np.asarray(s, dtype=np.float64)
    n = arr.shape[-1]
    if arr.shape[-2] != n:
        raise ValueError(f"distance_from_uniform needs square (..., n, n) matrices, got {arr.shape}")
    return np.asarray(np.linalg.norm(arr - 1.0 / n, ord="fro", axis=(-2, -1)))


def rank_deficit(a: ArrayLike) -> np.ndarray:
    """Return min(m, k) minus the numerical rank of each matrix: 0 when it has full rank.

    The rank counts singular values above max(m, k) * eps * sigma_1, the float64 tolerance
    numpy's ``matrix_rank`` and LAPACK use: what "sigma_min > 0" can mean in floating point.
    """
    arr = np.asarray(a, dtype=np.float64)
    s = singular_values(arr)
    tol = max(arr.shape[-2:]) * np.finfo(np.float64).eps * s[..., :1]
    return np.asarray(s.shape[-1] - (s > tol).sum(axis=-1))


def floor_ratio(z: ArrayLike, x: ArrayLike) -> np.ndarray:
    """Return sigma_min(Z) / sigma_min(X) per matrix: how much of the input's floor Z keeps."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(sigma_min(z) / sigma_min(x))


def derive_seed(*keys: int) -> int:
    """Return a 63-bit seed mixed from ``keys`` (base seed, config index, ...) by numpy's SeedSequence."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(2, np.uint64)[0] >> np.uint64(1))


@dataclass(frozen=True)
class AttentionSample:
    """The first block of one weight draw applied to a batch; arrays are numpy float64."""

    x: np.ndarray  # (N, n, d) the inputs X
    s: np.ndarray  # (N, n, n) S = softmax(scale Q K^T), row-stochastic
    attn: np.ndarray  # (N, n, d) Attn(X) = S X W_V, the block's Z with beta = 0
    z: np.ndarray  # (N, n, d) Z = Attn(X) + beta X


def attention_of(params: Params, x: torch.Tensor, cfg: ModelConfig, model: ModelSpec = PAPER) -> AttentionSample:
    """Run the model's first block with ``params`` on ``x`` (N, n, d) and return X, S, Attn(X) and Z.

    Attn(X) is the block's Z computed with beta = 0, never Z - beta X, so that a collapsed
    attention output is not lost to cancellation.
    """
    one = replace(cfg, n_layers=1)
    with torch.no_grad():
        fwd = model.forward(params, x, one)
        bare = model.forward(params, x, replace(one, beta=0.0))
    return AttentionSample(
        x=x.detach().cpu().numpy(),
        s=fwd.attn[0].cpu().numpy(),
        attn=bare.z[0].cpu().numpy(),
        z=fwd.z[0].cpu().numpy(),
    )


def sample_attention(cfg: ModelConfig, x: torch.Tensor, seed: int, model: ModelSpec = PAPER) -> AttentionSample:
    """Draw the weights of ``cfg`` from ``seed`` as ``model.init_params`` does (the draw ``train`` starts from)."""
    params = model.init_params(cfg, torch.Generator().manual_seed(seed), x.dtype)
    return attention_of(params, x, cfg, model)
