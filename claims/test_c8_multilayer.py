"""C8: the linear rate of C1 also holds with 2-4 stacked residual blocks."""

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
    "C8",
    "The linear rate of GD also holds for L = 2-4 stacked Transformer blocks with residuals",
    "Multi-layer extension (v1 abstract)",
)

SIZE = (4, 8, 64, 16)  # N, n, d, d_qk: overparameterised as in C1
UNDERPARAMETERISED = (32, 16, 8, 4)
LR_FRACTION = 0.5
# lambda_max at init grows about 200x from L=1 to L=4, so mu = 0.5 * 2/lambda_max shrinks with it;
# C8 runs three times the budget's horizon (the same for the claim and its control).
HORIZON = 3


def _run(size: tuple[int, int, int, int], layers: int, seed: int, budget: Budget, train: Trainer) -> Trajectory:
    n_samples, n_tokens, d, d_qk = size
    data = make_synthetic(n_samples, n_tokens, d, 1, seed)
    tcfg = TrainConfig(steps=HORIZON * budget.steps, lr_fraction=LR_FRACTION)
    return train(ModelConfig(d=d, d_qk=d_qk, d_out=1, n_layers=layers), tcfg, data, seed)


@CLAIM
@pytest.mark.parametrize("layers", [2, 3, 4])
def test_c8_stacked_blocks_converge_linearly(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer, layers: int
) -> None:
    traj = _run(SIZE, layers, claim_seed, claim_budget, claim_train)
    record_linear_rate(claim_record, traj, label=f"L={layers} N={SIZE[0]} n={SIZE[1]} d={SIZE[2]}")


@CLAIM
def test_c8_control_underparameterised_plateaus(
    claim_record: ClaimRecorder, claim_seed: int, claim_budget: Budget, claim_train: Trainer
) -> None:
    traj = _run(UNDERPARAMETERISED, 3, claim_seed, claim_budget, claim_train)
    record_linear_rate(
        claim_record,
        traj,
        label="L=3 N={} n={} d={}".format(*UNDERPARAMETERISED[:3]),
        control="underparameterised N*n >> d",
    )
