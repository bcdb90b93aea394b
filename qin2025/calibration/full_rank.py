"""Calibration families of C3's decisions: attention outputs Z whose rank, and whose floor, are known.

"full rank" (max rank deficit of Z <= 0 at numpy's tolerance). Must pass: the claim's world,
Z = S X W_V + beta X with softmax S from Gaussian W_Q, W_K (logit scales from near uniform to sharp)
and beta 0.5..2; and Z full rank but ill-conditioned, sigma_min/sigma_max 1e-10..1e-2. Must fail: Z of
rank n - k (k = 1..n/2) built as a product, so only rounding makes it look full rank; and
Z = beta (I - 11^T/n) X, the algebraic rank n - 1 of C3's adversarial control (a sanity case).

"floor" (min over the grid of sigma_min(Z)/sigma_min(X) >= 0.1). A unit's grid is d_QK = 1..4096
x 3 betas for both shapes; Z = r X per point, so the ratio is r exactly. Must pass: a floor that holds
at every d_QK, r 0.15..1 with no trend. Must fail: a floor that vanishes as d_QK grows,
r = r_top (d_QK/4096)^-s with r_top 0.1..0.3 at the grid's end (it reaches 0 past the grid:
the minimum over the grid cannot see that); and beta = 0 in the collapsed regime, r 1e-6..1e-2.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import log_uniform

SHAPES = ((8, 32), (16, 64))  # (n, d) as C3's unit grid
D_QK = tuple(4**k for k in range(7))
SAMPLES = 8


def _inputs(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    return rng.normal(size=(SAMPLES, n, d))


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def attention_world(rng: np.random.Generator) -> Case:
    """Z = S X W_V + beta X, one weight draw per shape: Gaussian weights, logit sd 0.01..3, beta 0.5..2."""
    zs = []
    sd, beta = log_uniform(rng, 0.01, 3.0), float(rng.uniform(0.5, 2.0))
    for n, d in SHAPES:
        x = _inputs(rng, n, d)
        g = rng.normal(size=(d, d)) / np.sqrt(d)
        logits = sd * np.einsum("snd,de,sme->snm", x, g, x) / np.sqrt(d)
        w_v = rng.normal(0.0, 1 / np.sqrt(d), (d, d))
        zs.append(_softmax(logits) @ x @ w_v + beta * x)
    return Case({"logit_sd": sd, "beta": beta}, {"z": zs})


def ill_conditioned(rng: np.random.Generator) -> Case:
    """Z = U diag(sigma) V^T, full rank, sigma_min/sigma_max 1e-10..1e-2."""
    n, d = SHAPES[int(rng.integers(2))]
    cond = log_uniform(rng, 1e-10, 1e-2)
    u, _ = np.linalg.qr(rng.normal(size=(SAMPLES, n, n)))
    v, _ = np.linalg.qr(rng.normal(size=(SAMPLES, d, n)))
    sigma = np.geomspace(1.0, cond, n)
    return Case({"sigma_min/sigma_max": cond, "n": n}, {"z": [u @ (sigma[:, None] * np.swapaxes(v, -1, -2))]})


def low_rank(rng: np.random.Generator) -> Case:
    """Z = A B with inner width n - k, k = 1..n/2: rank n - k, full rank only through rounding."""
    n, d = SHAPES[int(rng.integers(2))]
    k = int(rng.integers(1, n // 2 + 1))
    scale = log_uniform(rng, 1e-3, 1e3)
    z = scale * rng.normal(size=(SAMPLES, n, n - k)) @ rng.normal(size=(SAMPLES, n - k, d))
    return Case({"deficit": k, "n": n, "scale": scale}, {"z": [z]})


def centred(rng: np.random.Generator) -> Case:
    """Z = beta (I - 11^T/n) X: rank n - 1 by algebra (C3's adversarial W_V), beta 0.5..2."""
    n, d = SHAPES[int(rng.integers(2))]
    beta = float(rng.uniform(0.5, 2.0))
    x = _inputs(rng, n, d)
    return Case({"beta": beta, "n": n}, {"z": [beta * (x - x.mean(axis=-2, keepdims=True))]})


def _grid(rng: np.random.Generator, ratio: Callable[[int], float]) -> dict[str, list[np.ndarray]]:
    """Return the unit's grid, one stack per shape: 7 d_QK x 3 betas, Z = ratio(d_QK) X.

    One input per point, not C3's 8: the ratio is exact by construction, so more inputs would repeat it.
    """
    zs, xs = [], []
    for n, d in SHAPES:
        x = rng.normal(size=(len(D_QK) * 3, n, d))
        r = np.asarray([ratio(q) for q in D_QK for _ in range(3)])
        zs.append(r[:, None, None] * x)
        xs.append(x)
    return {"z": zs, "x": xs}


def stable_floor(rng: np.random.Generator) -> Case:
    """sigma_min(Z)/sigma_min(X) = r (1 + 0.2 u) at every grid point, r 0.15..1, no trend in d_QK."""
    r = log_uniform(rng, 0.15, 1.0)
    return Case({"floor": r}, _grid(rng, lambda _: r * (1 + 0.2 * float(rng.random()))))  # scatter per d_QK


def vanishing_floor(rng: np.random.Generator) -> Case:
    """sigma_min(Z)/sigma_min(X) = r_top (d_QK/4096)^-s: above 0.1 on the grid, 0 as d_QK grows without bound."""
    top, s = log_uniform(rng, 0.1, 0.3), log_uniform(rng, 0.05, 0.5)
    return Case({"ratio_at_4096": top, "decay": s}, _grid(rng, lambda q: top * (q / D_QK[-1]) ** -s))


def collapsed(rng: np.random.Generator) -> Case:
    """beta = 0 in the collapsed regime: the ratio falls to 1e-6..1e-2 at the largest d_QK."""
    bottom = log_uniform(rng, 1e-6, 1e-2)
    return Case({"ratio_at_4096": bottom}, _grid(rng, lambda q: max(bottom, 0.5 * q**-0.5)))


def _fam(name: str, expect: Expect, gen: Callable[..., Case], cases: int, grid: str, why: str) -> Family:
    return Family(name, expect, partial(gen), cases, grid, why)


def full_rank_families(cases: int = 100) -> tuple[Family, ...]:
    """Return the families of C3's "full rank" part."""
    return (
        _fam(
            "the claim's world: S X W_V + beta X",
            "pass",
            attention_world,
            cases,
            "(n, d) in {(8, 32), (16, 64)} x 8 inputs; logit sd 0.01..3; beta 0.5..2; W_V ~ N(0, 1/d)",
            "beta X keeps Z full rank when X is (C3's statement), here far from the rank tolerance",
        ),
        _fam(
            "full rank, ill-conditioned",
            "pass",
            ill_conditioned,
            cases,
            "sigma_min/sigma_max 1e-10..1e-2 (log-uniform)",
            "sigma_min > 0 by construction, far above numpy's tolerance (about 1e-14 sigma_max)",
        ),
        _fam(
            "rank n - k by construction",
            "fail",
            low_rank,
            cases,
            "k = 1..n/2; scale 1e-3..1e3",
            "a product through width n - k has rank n - k; only rounding adds the rest",
        ),
        _fam(
            "(I - 11^T/n) X (sanity)",
            "fail",
            centred,
            cases,
            "beta 0.5..2",
            "rank n - 1 by algebra",
        ),
    )


def floor_families(cases: int = 100) -> tuple[Family, ...]:
    """Return the families of C3's "floor" part."""
    return (
        _fam(
            "a floor at every d_QK",
            "pass",
            stable_floor,
            cases,
            "ratio 0.15..1 (log-uniform), 20% scatter, no trend",
            "the ratio never falls below 0.15",
        ),
        _fam(
            "a floor that vanishes as d_QK grows",
            "fail",
            vanishing_floor,
            cases,
            "ratio at d_QK = 4096 0.1..0.3, decay exponent 0.05..0.5 (log-uniform)",
            "the ratio tends to 0 as d_QK grows: no floor 'however far Attn(X) collapses'",
        ),
        _fam(
            "no residual, collapsed (sanity)",
            "fail",
            collapsed,
            cases,
            "ratio falling as d_QK^-0.5 to 1e-6..1e-2",
            "beta = 0 leaves Attn(X) alone, which collapses",
        ),
    )
