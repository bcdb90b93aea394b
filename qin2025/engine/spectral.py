"""Measure the spectra the rank claims (C3, C4, C7) talk about, and draw attention to measure.

The measures are pure functions on numpy arrays, batched over leading axes: a ``(..., m, k)``
stack of matrices in, a ``(...)`` array of numbers out. ``sample_attention`` draws the model's
weights exactly as ``model.init_params`` does and returns S, Attn(X) and Z of the first block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from numpy.typing import ArrayLike

from qin2025.engine.model import ModelConfig, Params
from qin2025.engine.usermodel import PAPER, ModelSpec


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


def sample_attention_betas(
    cfg: ModelConfig, x: torch.Tensor, seed: int, betas: tuple[float, ...], model: ModelSpec = PAPER
) -> list[AttentionSample]:
    """Return ``sample_attention`` at each beta of ``betas`` from one weight draw, computing Attn(X) once.

    The weights are drawn once from ``seed`` (what ``sample_attention`` draws for every beta: the
    draw does not depend on beta) and the model's forward runs once per beta for Z, so a model
    that handles beta its own way (or ignores it) is measured as it is.
    """
    one = replace(cfg, n_layers=1)
    params = model.init_params(cfg, torch.Generator().manual_seed(seed), x.dtype)
    with torch.no_grad():
        bare = model.forward(params, x, replace(one, beta=0.0))
        attn = bare.z[0].cpu().numpy()
        xs = x.detach().cpu().numpy()
        out = []
        for beta in betas:
            fwd = bare if beta == 0 else model.forward(params, x, replace(one, beta=beta))
            out.append(AttentionSample(x=xs, s=fwd.attn[0].cpu().numpy(), attn=attn, z=fwd.z[0].cpu().numpy()))
    return out


# Statistics the spectral claims (C4, C7) share. They are pure functions of arrays; they sit here,
# beside the measures, because the claims that read them are the spectral ones.


def mean_rate(loss: ArrayLike) -> float:
    """Return -log10(L_last / L_0) / steps over the finite prefix of ``loss``: orders of decrease per step.

    The average linear rate of a run (its progress, not a fit); NaN with fewer than two finite losses.
    A run stopped early (loss floor) is averaged over the steps it took.
    """
    arr = np.asarray(loss, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr))
    finite = arr[: bad[0]] if bad.size else arr
    if finite.size < 2 or not finite[0] > 0 or not finite[-1] > 0:
        return float("nan")
    return float(-np.log10(finite[-1] / finite[0]) / (finite.size - 1))


def loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Return the least-squares slope of log10 y against log10 x (the exponent s of y ~ x^s).

    NaN when any value is not positive and finite, or with fewer than two points.
    """
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"loglog_slope needs two equal-length 1-d sequences, got {xa.shape}, {ya.shape}")
    if xa.size < 2 or not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya)) and (xa > 0).all() and (ya > 0).all()):
        return float("nan")
    lx, ly = np.log10(xa), np.log10(ya)
    lx = lx - lx.mean()
    if not np.any(lx):
        return float("nan")
    return float(lx @ (ly - ly.mean()) / (lx @ lx))


def _ranks(a: np.ndarray) -> np.ndarray:
    """Return average ranks (ties share the mean of their positions), 1-based."""
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = np.arange(1, a.size + 1, dtype=np.float64)
    for value in np.unique(a):
        tied = a == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def partial_rank_correlation(x: ArrayLike, y: ArrayLike, z: ArrayLike) -> float:
    """Return the partial Spearman correlation of ``x`` and ``y`` given ``z``.

    The Pearson correlation of the ranks of x and y after a least-squares line in the ranks of z
    is taken out of each: how far x and y still move together once z is held fixed. Equals
    (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)) with r the Spearman correlations. NaN when a
    residual is zero (x or y is a monotone function of z, or constant) or with fewer than 3 points.
    """
    xa, ya, za = (np.asarray(v, dtype=np.float64) for v in (x, y, z))
    if not xa.shape == ya.shape == za.shape or xa.ndim != 1:
        raise ValueError(f"partial_rank_correlation needs three equal-length 1-d sequences, got {xa.shape}")
    if xa.size < 3 or not all(np.all(np.isfinite(v)) for v in (xa, ya, za)):
        return float("nan")
    rx, ry, rz = _ranks(xa), _ranks(ya), _ranks(za)
    design = np.column_stack([np.ones_like(rz), rz])

    def residual(r: np.ndarray) -> np.ndarray:
        coef, *_ = np.linalg.lstsq(design, r, rcond=None)
        return np.asarray(r - design @ coef)

    ex, ey = residual(rx), residual(ry)
    norm = math.sqrt(float(ex @ ex) * float(ey @ ey))
    scale = float(np.abs(rx).max() * np.abs(ry).max()) * xa.size
    if norm <= 1e-12 * scale:
        return float("nan")
    return float(ex @ ey / norm)
