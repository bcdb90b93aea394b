"""Calibration families of C3's floor decision: per-draw sigma_min ratios whose floor, as drawn and collapsed, is known.

The decision (``qin2025.c3.full_rank.floor_decision``) takes a unit's grid, the ratios
sigma_min(Z)/sigma_min(X) of every weight draw at d_QK = 1..4096 for both W_Q, W_K inits, three
betas and two shapes, once as drawn and once with the attention collapsed to S = 11^T/n, and asks
both minima to reach 0.1. In the synthetic cases the ratio of a point is r (one input per point:
more would repeat it), except in the claim's own world, which builds Z from softmax attention and
takes its ratios with the instrument's own SVD (``qin2025.engine.spectral.floor_ratio``).

Must pass: a floor at every draw and at the collapse, r 0.15..2 with 20% scatter and no trend; and
the claim's world, Z = S X W_V + beta X with S from Gaussian logits whose scale shrinks as d_QK grows
(as Xavier W_Q, W_K make it), W_V ~ N(0, 1/d), beta 0.5..2, collapsed to 11^T X W_V / n + beta X.

Must fail: a floor that holds on the grid (r_top (d_QK/4096)^-s, still 0.1..0.3 at d_QK = 4096,
s 0.05..0.5: the vanishing floors C3 v2 accepted) but falls below 0.1 as the attention collapses
(1e-6..0.1 at the collapse, log-uniform, the hardest just under the threshold); a floor that fails
at one draw of the grid (0.001..0.1 there, 0.15..1 elsewhere); and no residual (a sanity case): the
ratio falls as d_QK^-0.5 to 1e-6..1e-2 and is 1e-16..1e-12 collapsed (rank one).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.calibration.draw import log_uniform
from qin2025.engine.spectral import floor_ratio

SHAPES = ((8, 32), (16, 64))  # (n, d) as C3's unit grid
D_QK = tuple(4**k for k in range(7))  # 1 .. 4096
BETAS = 3  # betas per draw
INITS = 2  # W_Q, W_K inits per d_QK
WORLD_SAMPLES = 4  # inputs X per shape in the claim's world (C3 has 8; the synthetic floors need one)

Ratio = Callable[[int], float]  # d_QK -> sigma_min(Z)/sigma_min(X) at one draw


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def _grid(ratio: Ratio, collapsed: Ratio) -> dict[str, list[np.ndarray]]:
    """Return the unit's grid, one array per shape: ratio(d_QK) per draw, and collapsed(d_QK) collapsed."""
    qs = [q for q in D_QK for _ in range(INITS * BETAS)]
    floor = [np.asarray([ratio(q) for q in qs]) for _ in SHAPES]
    return {"floor": floor, "collapsed": [np.asarray([collapsed(q) for q in qs]) for _ in SHAPES]}


def stable_floor(rng: np.random.Generator) -> Case:
    """sigma_min(Z)/sigma_min(X) = r (1 + 0.2 u) at every draw, as drawn and collapsed, r 0.15..2, no trend."""
    r = log_uniform(rng, 0.15, 2.0)

    def scatter(_: int) -> float:
        return r * (1 + 0.2 * float(rng.random()))

    return Case({"floor": r}, _grid(scatter, scatter))


def attention_world(rng: np.random.Generator) -> Case:
    """Z = S X W_V + beta X over the grid, logit sd0 * 2d/(d + d_QK) (sd0 0.3..3), beta 0.5..2; S = 11^T/n collapsed."""
    sd0, beta = log_uniform(rng, 0.3, 3.0), float(rng.uniform(0.5, 2.0))
    floor, collapsed = [], []
    for n, d in SHAPES:
        x = rng.normal(size=(WORLD_SAMPLES, n, d))
        for q in D_QK:
            g = rng.normal(size=(d, d)) / np.sqrt(d)
            logits = sd0 * (2 * d / (d + q)) * np.einsum("snd,de,sme->snm", x, g, x) / np.sqrt(d)
            w_v = rng.normal(0.0, 1 / np.sqrt(d), (d, d))
            floor.append(floor_ratio(_softmax(logits) @ x @ w_v + beta * x, x))
            uniform = np.broadcast_to(x.mean(axis=-2, keepdims=True), x.shape)
            collapsed.append(floor_ratio(uniform @ w_v + beta * x, x))
    return Case({"logit_sd": sd0, "beta": beta}, {"floor": floor, "collapsed": collapsed})


def vanishing_at_collapse(rng: np.random.Generator) -> Case:
    """r_top (d_QK/4096)^-s on the grid (>= 0.1 everywhere), 1e-6..0.1 with the attention collapsed."""
    top, s, end = log_uniform(rng, 0.1, 0.3), log_uniform(rng, 0.05, 0.5), log_uniform(rng, 1e-6, 0.1)
    case = _grid(lambda q: top * (q / D_QK[-1]) ** -s, lambda _: end)
    return Case({"ratio_at_4096": top, "decay": s, "collapsed": end}, case)


def dip(rng: np.random.Generator) -> Case:
    """0.15..1 at every draw but one d_QK, where the ratio is 0.001..0.1; collapsed 0.15..1."""
    r, low, at = log_uniform(rng, 0.15, 1.0), log_uniform(rng, 1e-3, 0.1), int(rng.choice(D_QK))
    return Case({"floor": r, "dip": low, "d_qk": at}, _grid(lambda q: low if q == at else r, lambda _: r))


def no_residual(rng: np.random.Generator) -> Case:
    """beta = 0: the ratio falls as 0.5 d_QK^-0.5 to 1e-6..1e-2 at the grid's end; rank one (1e-16..1e-12) collapsed."""
    bottom, rank_one = log_uniform(rng, 1e-6, 1e-2), log_uniform(rng, 1e-16, 1e-12)
    case = _grid(lambda q: max(bottom, 0.5 * q**-0.5), lambda _: rank_one)
    return Case({"ratio_at_4096": bottom, "collapsed": rank_one}, case)


def floor_families(cases: int = 100) -> tuple[Family, ...]:
    """Return the families of C3's "floor" part."""

    def fam(name: str, expect: Expect, gen: Callable[[np.random.Generator], Case], grid: str, why: str) -> Family:
        return Family(name, expect, gen, cases, grid, why)

    return (
        fam(
            "a floor at every draw and at the collapse",
            "pass",
            stable_floor,
            "ratio 0.15..2 (log-uniform), 20% scatter, no trend in d_QK",
            "the ratio never falls below 0.15",
        ),
        fam(
            "the claim's world: S X W_V + beta X, and 11^T X W_V / n + beta X collapsed",
            "pass",
            attention_world,
            "(n, d) in {(8, 32), (16, 64)} x 4 inputs x d_QK 1..4096; logit sd 0.3..3 x 2d/(d + d_QK); beta 0.5..2",
            "beta X keeps sigma_min(Z) near beta sigma_min(X) whatever S is",
        ),
        fam(
            "holds on the grid, falls below 0.1 as the attention collapses",
            "fail",
            vanishing_at_collapse,
            "ratio at d_QK = 4096 0.1..0.3, decay exponent 0.05..0.5; collapsed 1e-6..0.1 (log-uniform)",
            "no floor 'however far Attn(X) collapses': at the collapse itself it is gone",
        ),
        fam(
            "a floor that fails at one d_QK",
            "fail",
            dip,
            "ratio 0.15..1, and 0.001..0.1 at one d_QK of the grid",
            "sigma_min(Z) falls below a tenth of sigma_min(X) in part of the regime",
        ),
        fam(
            "no residual (sanity)",
            "fail",
            no_residual,
            "ratio falling as d_QK^-0.5 to 1e-6..1e-2; collapsed 1e-16..1e-12",
            "beta = 0 leaves Attn(X) alone, which collapses to rank one",
        ),
    )
