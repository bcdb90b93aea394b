"""A wider two-layer ReLU network reaches a lower training loss than a narrow one after the same GD steps."""

from __future__ import annotations

import numpy as np
import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.budget import Budget
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.store.cache import Memo

RATIO = "log10(L_T(wide) / L_T(narrow))"
PROTOCOL = ClaimProtocol(
    "G2",
    1,
    parts=(
        Part(
            "",
            "after T GD steps from the standard init, width 256 ends with a lower training loss than width 4",
            (
                Stat(
                    RATIO,
                    "<=",
                    -0.1,
                    why="wide at least 1.26x lower: beyond the +-0.06 that two same-width nets differ by (seeds 0-19)",
                ),
            ),
            bar=0.8,
        ),
    ),
    controls=(
        Control(
            "same width",
            "",
            "two width-256 networks from different init seeds: no width effect, so the ratio stays near 1",
            max_pass_rate=0.2,
        ),
    ),
    seeds=Seeds("G2-v1", 2000, {"ci": 20, "standard": 40, "paper": 100}, exploratory="0-19"),
    regime="N = 64 points in d = 8, targets N(0, 1); f(x) = v . relu(W x) / sqrt(width); W, v ~ N(0, 1); step 0.5",
    horizon="the budget's steps",
)
CLAIM = pytest.mark.claim(
    "G2", "wider networks train to a lower loss", "any textbook on overparameterisation", protocol=PROTOCOL
)
NARROW, WIDE = 4, 256


def train_mlp(width: int, seed: int, data_seed: int, steps: int) -> dict[str, np.ndarray]:
    """Return the training loss of a two-layer ReLU net after full-batch GD (mean squared error / 2)."""
    data = np.random.default_rng(data_seed)
    x = data.normal(0, 1, (64, 8)) / np.sqrt(8)
    y = data.normal(0, 1, 64)
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 1, (width, 8))
    v = rng.normal(0, 1, width)
    scale = 1 / np.sqrt(width)
    lr = 0.5
    for _ in range(steps):
        h = np.maximum(x @ w.T, 0)  # (N, width)
        r = scale * h @ v - y
        grad_v = scale * h.T @ r / len(y)
        grad_w = scale * ((r[:, None] * (h > 0)) * v).T @ x / len(y)
        v -= lr * grad_v
        w -= lr * grad_w
    h = np.maximum(x @ w.T, 0)
    return {"loss": np.array(0.5 * np.mean((scale * h @ v - y) ** 2))}


@CLAIM
def test_a_wider_network_trains_lower(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_cache: Memo
) -> None:
    steps = claim_budget.steps
    wide = claim_cache(train_mlp, width=WIDE, seed=claim_seed, data_seed=claim_seed, steps=steps)["loss"]
    narrow = claim_cache(train_mlp, width=NARROW, seed=claim_seed, data_seed=claim_seed, steps=steps)["loss"]
    claim_record.check(RATIO, float(np.log10(wide / narrow)), label=f"widths {WIDE} vs {NARROW}")


@CLAIM
def test_control_the_same_width_twice(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_cache: Memo
) -> None:
    steps = claim_budget.steps
    wide = claim_cache(train_mlp, width=WIDE, seed=claim_seed, data_seed=claim_seed, steps=steps)["loss"]
    other = claim_cache(train_mlp, width=WIDE, seed=claim_seed + 10**6, data_seed=claim_seed, steps=steps)["loss"]
    claim_record.check(RATIO, float(np.log10(wide / other)), control="same width", label=f"widths {WIDE} vs {WIDE}")
