"""C2: with the step size below the stability bound, the loss never increases."""

from __future__ import annotations

import pytest

from claimcheck.budget import Budget
from claimcheck.cache import Trainer
from claimcheck.checks import record_monotone
from claimcheck.data import make_synthetic
from claimcheck.model import ModelConfig
from claimcheck.record import ClaimRecorder
from claimcheck.train import TrainConfig, Trajectory

CLAIM = pytest.mark.claim(
    "C2",
    "With mu below the stability bound, GD decreases the loss monotonically down to a global minimum",
    "Theorem 1 and its step-size condition (Sec. III)",
)

SIZES = {0: [(4, 8, 64, 16)], 1: [(4, 8, 64, 16), (8, 8, 128, 32)], 2: [(4, 8, 64, 16), (16, 16, 512, 64)]}
BELOW = 0.5  # mu = 0.5 * 2/lambda_max
ABOVE = 3.0  # control: mu = 3 * 2/lambda_max, well above the bound


def _run(size: tuple[int, int, int, int], fraction: float, seed: int, budget: Budget, train: Trainer) -> Trajectory:
    n_samples, n_tokens, d, d_qk = size
    data = make_synthetic(n_samples, n_tokens, d, 1, seed)
    tcfg = TrainConfig(steps=budget.steps, lr_fraction=fraction)
    return train(ModelConfig(d=d, d_qk=d_qk, d_out=1), tcfg, data, seed)


@CLAIM
def test_c2_loss_never_rises_below_bound(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer
) -> None:
    for size in SIZES[claim_budget.scale]:
        traj = _run(size, BELOW, claim_seed, claim_budget, claim_train)
        record_monotone(claim_record, traj, label="N={} n={} d={} d_qk={}".format(*size))


@CLAIM
def test_c2_control_step_far_above_bound_rises(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer
) -> None:
    size = SIZES[0][0]
    traj = _run(size, ABOVE, claim_seed, claim_budget, claim_train)
    record_monotone(claim_record, traj, label="N={} n={} d={} d_qk={}".format(*size), control="mu = 3 x 2/lambda_max")
