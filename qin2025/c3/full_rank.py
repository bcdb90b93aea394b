"""Measure how far Z = Attn(X) + beta X stays from rank deficiency over a grid of weight draws (C3's instrument).

A ``Grid`` names what one unit (a seed) measures: (n, d) shapes, d_QK values, betas and the number
of inputs X per weight draw. ``sweep`` draws the model's weights once per (shape, W_Q/W_K init,
d_QK) and measures every beta on the same X; each draw's seed comes from the unit's seed and the
grid point (``spectral.derive_seed``), so a point's numbers do not depend on what else the grid
holds.

Each draw is measured twice: as drawn, and with its attention collapsed to S = 11^T/n, the limit
Attn(X) tends to as it collapses to rank one (Xavier W_Q, W_K as d_QK grows). The collapse is the
model's own forward on EPS X divided by EPS: the logits scale by EPS^2 (2^-52 here), so S is
uniform to float precision, while the value path and the residual scale by EPS exactly. For the
paper's model this is Z with W_Q = 0 to 1e-9 relative (tests/paper/test_full_rank.py); for a model
with biases in its value path, or a LayerNorm before its attention, it is not the collapse, and the
report says so through the model's premises.

``floor_decision`` is C3's unit decision: a plain function of a unit's raw measurements returning
its statistics, which the claim test scores every real unit with and ``claimcheck calibrate`` runs on
cases whose answer is known. The rest records what a claim shows beside its checks: the regime,
notes and curves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.decide.record import ClaimRecorder
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig, QKInit, init_params
from qin2025.engine.spectral import (
    attention_of,
    derive_seed,
    floor_ratio,
    rank_deficit,
    sample_attention_betas,
)
from qin2025.engine.trainer import Trainer
from qin2025.engine.usermodel import PAPER, ModelSpec

INITS: tuple[QKInit, ...] = ("xavier", "normal")  # W_Q, W_K variance 2/(d + d_QK) or 1/d; the index seeds the draw
EPS = 2.0**-26  # inputs scaled by EPS collapse the attention: logits x 2^-52, values x EPS (exact in binary)


@dataclass(frozen=True)
class Grid:
    """What one unit measures: every (shape, init, d_QK) weight draw, at every beta, on ``samples`` inputs."""

    shapes: tuple[tuple[int, int], ...]  # (n tokens, d width)
    d_qks: tuple[int, ...]
    betas: tuple[float, ...]
    samples: int  # inputs X per weight draw


@dataclass(frozen=True)
class Draw:
    """One grid point's raw measurement: a weight draw at (init, shape, d_QK, beta) applied to the grid's inputs."""

    init: str
    n: int
    d: int
    d_qk: int
    beta: float
    z: np.ndarray  # (samples, n, d) Attn(X) + beta X
    x: np.ndarray  # (samples, n, d)
    attn: np.ndarray  # (samples, n, d) Attn(X)
    z_collapsed: np.ndarray  # (samples, n, d) Z of the same weights and X with S = 11^T/n

    def point(self) -> Point:
        """Return the point's ratios to sigma_min(X) (the SVDs), what C3 decides on and caches."""
        return Point(
            self.init,
            self.n,
            self.d,
            self.d_qk,
            self.beta,
            floor_ratio(self.z, self.x),
            floor_ratio(self.z_collapsed, self.x),
            floor_ratio(self.attn, self.x),
            rank_deficit(self.z),
        )


@dataclass(frozen=True)
class Point:
    """One grid point's ratios, one per input X: what C3's decision takes."""

    init: str
    n: int
    d: int
    d_qk: int
    beta: float
    floor_z: np.ndarray  # (samples,) sigma_min(Z) / sigma_min(X)
    floor_collapsed: np.ndarray  # (samples,) sigma_min(Z) / sigma_min(X) with the attention collapsed
    floor_attn: np.ndarray  # (samples,) sigma_min(Attn(X)) / sigma_min(X)
    deficit: np.ndarray  # (samples,) min(n, d) - numerical rank of Z

    @property
    def where(self) -> str:
        """Return the point's coordinates for a note."""
        return f"{self.init} n={self.n} d={self.d} d_qk={self.d_qk} beta={self.beta:g}"


def inputs(seed: int, n: int, d: int, samples: int) -> torch.Tensor:
    """Return ``samples`` Gaussian inputs X (samples, n, d) of full row rank."""
    return make_synthetic(samples, n, d, 1, derive_seed(seed, n, d, 0)).x


def inits_of(model: ModelSpec) -> tuple[QKInit, ...]:
    """Return both W_Q, W_K inits, or one when the model ignores qk_init (the two would be the same draw)."""
    return INITS if "qk_init" in model.capabilities else INITS[:1]


def draws(model: ModelSpec, seed: int, grid: Grid, inits: tuple[QKInit, ...]) -> list[Draw]:
    """Draw every (shape, init, d_QK, beta) of ``grid`` on X of full rank, as drawn and collapsed."""
    out = []
    for n, d in grid.shapes:
        x = inputs(seed, n, d, grid.samples)
        for init in inits:
            for d_qk in grid.d_qks:
                cfg = ModelConfig(d=d, d_qk=d_qk, qk_init=init)
                w_seed = derive_seed(seed, n, d, d_qk, INITS.index(init))
                drawn = sample_attention_betas(cfg, x, w_seed, grid.betas, model)
                collapsed = sample_attention_betas(cfg, EPS * x, w_seed, grid.betas, model)
                for beta, a, c in zip(grid.betas, drawn, collapsed, strict=True):
                    out.append(Draw(init, n, d, d_qk, beta, a.z, a.x, a.attn, c.z / EPS))
    return out


_COORDS = ("n", "d", "d_qk", "beta")
_RATIOS = ("floor_z", "floor_collapsed", "floor_attn", "deficit")


def _measured(
    model: ModelSpec,
    seed: int,
    shapes: list[list[int]],
    d_qks: list[int],
    betas: list[float],
    samples: int,
    inits: list[QKInit],
) -> dict[str, list[object]]:
    """Return every point of the grid as columns: what ``Trainer.call`` caches."""
    grid = Grid(tuple((n, d) for n, d in shapes), tuple(d_qks), tuple(betas), samples)
    points = [p.point() for p in draws(model, seed, grid, tuple(inits))]
    cols: dict[str, list[object]] = {"init": [INITS.index(p.init) for p in points]}
    cols.update({k: [getattr(p, k) for p in points] for k in (*_COORDS, *_RATIOS)})
    return cols


def sweep(train: Trainer, seed: int, grid: Grid, inits: tuple[QKInit, ...]) -> list[Point]:
    """Return the points of ``grid`` for unit ``seed`` through the trainer's cache (the grid trains nothing)."""
    shapes = [list(s) for s in grid.shapes]
    a = train.call(
        _measured,
        seed=seed,
        shapes=shapes,
        d_qks=list(grid.d_qks),
        betas=list(grid.betas),
        samples=grid.samples,
        inits=list(inits),
    )
    return [
        Point(
            INITS[int(a["init"][i])],
            int(a["n"][i]),
            int(a["d"][i]),
            int(a["d_qk"][i]),
            float(a["beta"][i]),
            *(a[k][i] for k in _RATIOS),
        )
        for i in range(len(a["init"]))
    ]


def adversarial(seed: int, n: int, d: int, beta: float, samples: int) -> Draw:
    """Return the paper's block with W_Q = 0 (S = 11^T/n, the limit of collapse) and W_V = -beta I."""
    cfg = ModelConfig(d=d, d_qk=4, beta=beta)
    params = init_params(cfg, torch.Generator().manual_seed(derive_seed(seed, n, d)))
    params["0.W_Q"] = torch.zeros_like(params["0.W_Q"])
    params["0.W_V"] = -beta * torch.eye(d, dtype=torch.float64)
    x = inputs(seed, n, d, samples)
    a, c = attention_of(params, x, cfg), attention_of(params, EPS * x, cfg)
    return Draw("adversarial", n, d, cfg.d_qk, beta, a.z, a.x, a.attn, c.z / EPS)


def max_deficit(points: list[Point]) -> int:
    """Return the largest rank deficit of Z over every draw."""
    return max(int(p.deficit.max()) for p in points)


def weights(init: str, model: ModelSpec) -> dict[str, object]:
    """Return how the weights were drawn: the paper's Gaussians, or what a --claim-model does itself."""
    if model is not PAPER:
        qk = f"qk_init={init}" if "qk_init" in model.capabilities else "its own init (it ignores qk_init)"
        return {"model": model.name, "W_Q, W_K": qk, "W_V, logit scale": "the model's own"}
    qk = "N(0, 2/(d + d_qk))" if init == "xavier" else "N(0, 1/d)"
    return {"model": model.name, "W_Q, W_K": qk, "W_V": "N(0, 1/d)", "logit scale": "1/sqrt(d_qk)"}


def record_curves(rec: ClaimRecorder, points: list[Point], shape: tuple[int, int]) -> None:
    """Draw, per init at ``shape``, the median sigma_min ratio of Z (beta = 1) and of Attn(X) against log2(d_QK)."""
    n, d = shape
    for init in dict.fromkeys(p.init for p in points):  # in the order measured
        line = [p for p in points if (p.init, p.n, p.d, p.beta) == (init, n, d, 1.0)]
        group = f"sigma_min ratio vs log2(d_QK), {init} W_Q, W_K, n={n} d={d}, median of {line[0].floor_z.size}"
        x = [math.log2(p.d_qk) for p in line]
        rec.curve("sigma_min(Z)/sigma_min(X), beta=1", [float(np.median(p.floor_z)) for p in line], x=x, group=group)
        attn = [float(np.median(p.floor_attn)) for p in line]
        rec.curve("sigma_min(Attn)/sigma_min(X), beta=0", attn, x=x, group=group)


def note_grid(rec: ClaimRecorder, seed: int, points: list[Point], floor: float) -> None:
    """Say how many draws held ``floor`` as drawn and collapsed, the worst of each, Z's rank, and Attn(X)'s collapse."""
    ratios = np.concatenate([p.floor_z for p in points])
    collapsed = np.concatenate([p.floor_collapsed for p in points])
    worst = min(points, key=lambda p: float(p.floor_z.min()))
    worst_c = min(points, key=lambda p: float(p.floor_collapsed.min()))
    top_d_qk = max(p.d_qk for p in points)
    top = np.concatenate([p.floor_attn for p in points if p.d_qk == top_d_qk])
    rec.note(
        f"seed {seed}: floor held in {int((ratios >= floor).sum())}/{ratios.size} draws, and in "
        f"{int((collapsed >= floor).sum())}/{collapsed.size} collapsed; min sigma_min(Z)/sigma_min(X) "
        f"{worst.floor_z.min():.3g} at {worst.where}, collapsed {worst_c.floor_collapsed.min():.3g} at "
        f"{worst_c.where}; max rank deficit of Z {max_deficit(points)}; beside it, median "
        f"sigma_min(Attn)/sigma_min(X) at d_qk={top_d_qk} is {np.median(top):.3g}"
    )


def note_edge(rec: ClaimRecorder, train: Trainer, seed: int, grid: Grid, floor: float) -> None:
    """Measure ``grid`` (square X, the edge of the premise) and note how many draws held ``floor``, ungated."""
    points = sweep(train, seed, grid, inits_of(train.model))
    ratios = np.concatenate([p.floor_z for p in points])
    d = grid.shapes[0][1]
    rec.note(
        f"seed {seed}, n = d = {d} (the edge of the premise, not gated): floor held in "
        f"{int((ratios >= floor).sum())}/{ratios.size} draws, min ratio {ratios.min():.3g} (collapsed "
        f"{min(float(p.floor_collapsed.min()) for p in points):.3g}); max rank deficit of Z "
        f"{max_deficit(points)}. Square X has full rank, but its floor is a random-matrix tail."
    )


# --- C3's decision: the residual keeps Z at full rank ---------------------------------------------

FLOOR = "min over the unit's grid of sigma_min(Z)/sigma_min(X)"
COLLAPSED = "min over the unit's draws of sigma_min(Z)/sigma_min(X) with the attention collapsed (S = 11^T/n)"


def _smallest(ratios: Sequence[ArrayLike]) -> float:
    """Return the smallest of every array's values; NaN if any is NaN or there is none (a floor nobody measured)."""
    values = [np.ravel(np.asarray(r, dtype=float)) for r in ratios]
    flat = np.concatenate(values) if values else np.empty(0)
    return float(flat.min()) if flat.size else float("nan")


def floor_decision(floor: Sequence[ArrayLike], collapsed: Sequence[ArrayLike]) -> dict[str, float]:
    """Return the smallest sigma_min(Z)/sigma_min(X) over a unit's grid, and over the same draws collapsed (C3 "floor").

    ``floor``: one array per grid point (a weight draw at one beta), sigma_min(Z)/sigma_min(X) for
    each of the unit's inputs X, Z = Attn(X) + beta X. ``collapsed``: the same ratios with the
    attention of the same weights and inputs collapsed to S = 11^T/n, the limit that Attn(X) tends
    to as it collapses to rank one. A floor holds when both minima meet the threshold: on the grid,
    and at the end of the collapse, so a floor that stays above the threshold on the grid but
    vanishes as the attention collapses further is caught at its limit. A NaN ratio makes its
    minimum NaN, which meets no threshold. (A NaN in Z itself never gets here: the instrument's SVD
    raises on it, and the claim test errors, naming the failure.)
    """
    return {FLOOR: _smallest(floor), COLLAPSED: _smallest(collapsed)}
