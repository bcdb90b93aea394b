"""C1: gradient descent on the one-layer Transformer converges at a linear (geometric) rate."""

from __future__ import annotations

import pytest

from claimcheck.budget import Budget
from claimcheck.cache import Trainer
from claimcheck.checks import record_linear_rate
from claimcheck.data import make_synthetic
from claimcheck.model import ModelConfig
from claimcheck.record import ClaimRecorder
from claimcheck.train import TrainConfig, Trajectory

CLAIM = pytest.mark.claim(
    "C1",
    "GD on a one-layer Transformer (softmax attention + ReLU FFN + residual) drives the loss down "
    "geometrically: L_{t+1} <= (1 - mu alpha) L_t at every step",
    "Theorem 1 (Sec. III)",
)

# (N samples, n tokens, d, d_qk): overparameterised, N*n <= d, as the theorem's regime needs.
SIZES = {
    0: [(4, 8, 64, 16), (2, 16, 96, 32)],
    1: [(4, 8, 64, 16), (2, 16, 96, 32), (8, 8, 128, 32)],
    2: [(4, 8, 64, 16), (2, 16, 96, 32), (8, 8, 128, 32), (16, 16, 512, 64)],
}
# Outside the theorem's conditions: far more targets (N*n = 512) than the width can fit.
UNDERPARAMETERISED = (32, 16, 8, 4)
LR_FRACTION = 0.5  # mu = 0.5 * 2 / lambda_max at initialisation


def _run(size: tuple[int, int, int, int], seed: int, budget: Budget, train: Trainer) -> Trajectory:
    n_samples, n_tokens, d, d_qk = size
    data = make_synthetic(n_samples, n_tokens, d, 1, seed)
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1)
    return train(cfg, TrainConfig(steps=budget.steps, lr_fraction=LR_FRACTION), data, seed)


def _label(size: tuple[int, int, int, int]) -> str:
    return "N={} n={} d={} d_qk={}".format(*size)


@CLAIM
def test_c1_loss_falls_geometrically(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer
) -> None:
    for size in SIZES[claim_budget.scale]:
        traj = _run(size, claim_seed, claim_budget, claim_train)
        record_linear_rate(claim_record, traj, label=_label(size))


@CLAIM
def test_c1_control_underparameterised_plateaus(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer
) -> None:
    traj = _run(UNDERPARAMETERISED, claim_seed, claim_budget, claim_train)
    record_linear_rate(claim_record, traj, label=_label(UNDERPARAMETERISED), control="underparameterised N*n >> d")
