"""GD from zero on an underdetermined least-squares problem converges to the minimum-norm solution."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.budget import Budget
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.store.cache import Memo

DISTANCE = "||w_T - A^+ b|| / ||A^+ b||"
PROTOCOL = ClaimProtocol(
    "G1",
    1,
    parts=(
        Part(
            "",
            "GD from w = 0 on min ||A w - b||^2 with A wide converges to the minimum-norm solution A^+ b",
            (Stat(DISTANCE, "<=", 1e-6, why="float64 GD reaches A^+ b to rounding; 1e-6 leaves room for the horizon"),),
            bar=0.8,
        ),
    ),
    controls=(
        Control(
            "random start",
            "",
            "from w_0 ~ N(0, I) GD keeps w_0's null-space part, so it ends at another interpolating solution",
            max_pass_rate=0.2,
        ),
    ),
    seeds=Seeds("G1-v1", 1000, {"ci": 20, "standard": 40, "paper": 100}, exploratory="0-19"),
    regime="A ~ N(0, 1/n) of shape (m, n), m < n; b ~ N(0, 1); step 1/sigma_max(A)^2",
    horizon="the budget's steps times 10",
)
CLAIM = pytest.mark.claim(
    "G1", "GD from zero finds the minimum-norm least-squares solution", "any textbook", protocol=PROTOCOL
)
SIZES = {0: (20, 50), 1: (50, 200), 2: (100, 800)}


def gd_least_squares(m: int, n: int, seed: int, steps: int, random_start: bool) -> dict[str, np.ndarray]:
    """Return the distance of GD's iterate from A^+ b after ``steps``, relative to ||A^+ b||."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1 / np.sqrt(n), (m, n))
    b = rng.normal(0, 1, m)
    w = rng.normal(0, 1, n) if random_start else np.zeros(n)
    mu = 1 / np.linalg.norm(a, 2) ** 2
    for _ in range(steps):
        w = w - mu * a.T @ (a @ w - b)
    target = np.linalg.pinv(a) @ b
    return {"distance": np.array(np.linalg.norm(w - target) / np.linalg.norm(target))}


@CLAIM
def test_gd_from_zero_reaches_the_minimum_norm_solution(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_cache: Memo
) -> None:
    m, n = SIZES[claim_budget.scale]
    out = claim_cache(gd_least_squares, m=m, n=n, seed=claim_seed, steps=10 * claim_budget.steps, random_start=False)
    claim_record.check(DISTANCE, float(out["distance"]), label=f"m={m} n={n}")


@CLAIM
def test_control_gd_from_a_random_start_does_not(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_cache: Memo
) -> None:
    m, n = SIZES[claim_budget.scale]
    out = claim_cache(gd_least_squares, m=m, n=n, seed=claim_seed, steps=10 * claim_budget.steps, random_start=True)
    claim_record.check(DISTANCE, float(out["distance"]), control="random start", label=f"m={m} n={n}")
