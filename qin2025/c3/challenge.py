"""Challenge families for C3: sigma_min(Z)/sigma_min(X) over a unit's grid, from worlds near and far from singular.

Written from the claim's words ("if X has full rank, Z = Attn(X) + beta X keeps full rank: sigma_min(Z)
> 0, even when Attn(X) itself is (nearly) rank-deficient"; the part: "with beta > 0, sigma_min(Z) >=
0.1 sigma_min(X) > 0 at every draw of the grid, and with each draw's attention collapsed to rank
one"), not from the decision. The world computes what the unit measures: X ~ N(0, 1) of shape n x d
(n <= d/2, full row rank), a softmax attention S (logits of standard deviation g, so g = 0 is
uniform attention and a large g is near one-hot), W_V, and Z = S X W_V + beta X; and the same with S
collapsed to 11^T/n. A unit holds ``POINTS`` grid points (a weight draw at one beta) of ``INPUTS``
inputs each.

Near-singular worlds are made the way Z can lose rank: W_V = -beta I + eps G (G Gaussian), so that
S X W_V cancels beta X along the left null vector of S - I (S is row-stochastic: pi^T (S - I) = 0
for its stationary pi), and the collapsed Z = (11^T/n) X W_V + beta X loses the all-ones direction
when m (W_V + beta I) = 0, m the mean row. Both ratios scale with eps. Which answer is right follows
from the smallest ratio the world made: below 0.1 somewhere is "fail" (the stated floor does not
hold), at least 0.11 everywhere is "pass". There is no zone: the ratios are the measurement itself,
computed in float64 to about 1e-15 of sigma_min(X).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.challenge.draw import log_uniform, uniform, until

SHAPES = ((8, 32), (16, 64))  # (n, d), as the claim's grid
BETAS = (0.5, 1.0, 2.0)
POINTS = 12  # grid points per unit (the claim has 42: 2 shapes x 7 d_QK x 3 betas); fewer keeps calibration cheap
INPUTS = 8
FLOOR = 0.1
CASES = 100


@dataclass(frozen=True)
class Grid:
    """One unit's ratios: per grid point, sigma_min(Z)/sigma_min(X) of each input, as drawn and collapsed."""

    floor: list[np.ndarray]
    collapsed: list[np.ndarray]
    params: dict[str, float | str]

    @property
    def smallest(self) -> float:
        """Return the smallest ratio over the unit, drawn or collapsed."""
        return float(min(np.min(np.concatenate(self.floor)), np.min(np.concatenate(self.collapsed))))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Return the row softmax."""
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out


def ratio(z: np.ndarray, x: np.ndarray) -> float:
    """Return sigma_min(Z)/sigma_min(X) (the n-th singular value of each, n rows)."""
    return float(np.linalg.svd(z, compute_uv=False)[-1] / np.linalg.svd(x, compute_uv=False)[-1])


def point(
    rng: np.random.Generator, n: int, d: int, beta: float, gain: float, eps: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """Return one grid point's ratios (drawn, collapsed) over INPUTS inputs; ``eps`` None: W_V ~ N(0, 1/d)."""
    if eps is None:
        w_v = rng.standard_normal((d, d)) / np.sqrt(d)
    else:
        w_v = -beta * np.eye(d) + eps * rng.standard_normal((d, d)) / np.sqrt(d)
    drawn, collapsed = np.empty(INPUTS), np.empty(INPUTS)
    uniform_s = np.full((n, n), 1.0 / n)
    for i in range(INPUTS):
        x = rng.standard_normal((n, d))
        s = softmax(gain * rng.standard_normal((n, n)))
        drawn[i] = ratio(s @ x @ w_v + beta * x, x)
        collapsed[i] = ratio(uniform_s @ x @ w_v + beta * x, x)
    return drawn, collapsed


def unit(rng: np.random.Generator, eps: tuple[float, float] | None, singular_points: int) -> Grid:
    """Return one unit: ``singular_points`` grid points near-singular (eps log-uniform in ``eps``), the rest generic."""
    floor, collapsed = [], []
    chosen = set(rng.choice(POINTS, size=singular_points, replace=False).tolist()) if singular_points else set()
    e = log_uniform(rng, *eps) if eps else None
    for k in range(POINTS):
        n, d = SHAPES[k % len(SHAPES)]
        beta = BETAS[k % len(BETAS)]
        gain = uniform(rng, 0.0, 6.0)  # uniform (0) to near one-hot attention
        a, b = point(rng, n, d, beta, gain, e if k in chosen else None)
        floor.append(a)
        collapsed.append(b)
    return Grid(floor, collapsed, {"eps": e if e is not None else 0.0, "near_singular_points": singular_points})


def adapt(g: Grid) -> dict[str, Any]:
    """Return the decision's keyword arguments (``floor_decision(floor, collapsed)``)."""
    return {"floor": [a.copy() for a in g.floor], "collapsed": [b.copy() for b in g.collapsed]}


def _family(
    name: str,
    expect: Expect,
    make: Callable[[np.random.Generator], Grid],
    keep: Callable[[Grid], bool],
    grid: str,
    why: str,
) -> Family:
    def generate(rng: np.random.Generator) -> Case:
        g = until(rng, make, keep)
        return Case({**g.params, "smallest": g.smallest}, adapt(g))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def with_nan(rng: np.random.Generator) -> Grid:
    """Return a generic unit with one ratio NaN (a forward that produced no number)."""
    g = unit(rng, None, 0)
    g.floor[int(rng.integers(POINTS))][int(rng.integers(INPUTS))] = np.nan
    return g


def floor_families() -> tuple[Family, ...]:
    """Return the challenge families of C3 "floor"."""
    grid = f"{POINTS} grid points x {INPUTS} inputs, (n, d) in {SHAPES}, beta in {BETAS}, logit sd 0-6"
    return (
        _family(
            "generic Gaussian W_V",
            "pass",
            lambda rng: unit(rng, None, 0),
            lambda g: g.smallest >= 0.11,
            grid + "; W_V ~ N(0, 1/d); kept where every ratio >= 0.11",
            "Z = S X W_V + beta X with generic W_V: beta X keeps Z's rank; the world's smallest ratio is >= 0.11 > 0.1",
        ),
        _family(
            "near-singular, just above the floor",
            "pass",
            lambda rng: unit(rng, (0.05, 1.0), 1),
            lambda g: 0.11 <= g.smallest <= 0.3,
            grid + "; one point with W_V = -beta I + eps G, eps 0.05-1; kept where the smallest ratio is 0.11-0.3",
            "the cancellation brings Z near singular but the smallest ratio the world made is still >= 0.11: the "
            "stated floor 0.1 holds",
        ),
        _family(
            "near-singular, below the floor",
            "fail",
            lambda rng: unit(rng, (0.005, 0.3), 1),
            lambda g: g.smallest <= 0.09,
            grid + "; one point with W_V = -beta I + eps G, eps 0.005-0.3; kept where the smallest ratio <= 0.09",
            "W_V cancels beta X along S's stationary direction (or the mean row, collapsed): sigma_min(Z) < 0.1 "
            "sigma_min(X) at one draw, so the floor does not hold at every draw",
        ),
        _family(
            "a NaN ratio",
            "fail",
            with_nan,
            lambda g: True,
            grid + "; one ratio NaN",
            "a draw without a number shows no floor: 'at every draw' is not shown",
        ),
    )
