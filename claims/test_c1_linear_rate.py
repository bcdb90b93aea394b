"""C1: gradient descent on the one-layer Transformer converges at a linear (geometric) rate.

Theorem 1 (the summary): "Phi(theta^(t+1)) <= (1 - mu alpha) Phi(theta^(t)) ... Esto confirma una
convergencia lineal", alpha > 0 set by the smallest singular values of the initial weights and of the
attention output, under a suitable initialisation and a small enough mu. Read as: every step
contracts the loss, and the per-step rate stays bounded away from 0. A finite run shows the second
only as a rate that has stopped falling (a sublinear curve's rate never does), over a stretch long
enough to tell it from a power law: ``qin2025.linrate``. mu = 0.5 x 2/lambda_max(0) is a proxy for
the theorem's bound, which cannot be computed.
"""

from __future__ import annotations

import pytest

from claimcheck.budget import Budget
from claimcheck.protocol import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.record import ClaimRecorder
from claimcheck.schedule import ClaimUnits
from qin2025.batched import Run
from qin2025.calibration.linear_rate import linear_rate_families
from qin2025.data import make_synthetic
from qin2025.linrate import LATE_DEPTH, PLATEAU, STEADINESS, WORST_RATIO, linear_rate_decision, record_rate
from qin2025.model import ModelConfig
from qin2025.train import TrainConfig
from qin2025.trainer import Trainer

PAST_THE_BOUND = "mu = 1.5 x 2/lambda_max(0)"
STEPS = 1000  # a cap: runs stop at 1e-24 L_0, the scoring floor (explored: in 355-887 steps)
SLOWEST = 0.01  # per-step rate of the slowest calibration positive (explored: settled rates 0.055-0.14)
PROTOCOL = ClaimProtocol(
    claim_id="C1",
    version=4,
    parts=(
        Part(
            name="",
            statement="every GD step contracts the loss and the rate settles at a positive value (Theorem 1), "
            "for every size of a seed",
            stats=(
                Stat(WORST_RATIO, "<", 1.0, why="Theorem 1: L_{t+1} <= (1 - mu alpha) L_t at every step, alpha > 0"),
                Stat(
                    STEADINESS,
                    ">=",
                    0.9,
                    why="a settled rate gives 1; rejects every power law whose tau < 1.8 S and every stretched "
                    "exponential with k < 0.69 (k alone sets it); a rate settling in 0.2 S keeps it above 0.9",
                ),
                Stat(
                    LATE_DEPTH,
                    ">=",
                    1.0,
                    why="a power law steady enough to pass the ratio (tau >= 1.8 S) descends at most 4 ln(2.8/2.3) "
                    "= 0.79 nat over the last half (p <= 4); so does a stall",
                ),
                Stat(
                    PLATEAU,
                    ">=",
                    0.3,
                    why="a plateau 10x slower than the settled rate gives <= 0.1; a run whose "
                    "rate falls to its settled value gives ~1",
                ),
            ),
            bar=0.8,
            decision=linear_rate_decision,
            calibration=linear_rate_families(steps=STEPS, slowest=SLOWEST),
        ),
    ),
    controls=(
        Control(
            name=PAST_THE_BOUND,
            part="",
            why="breaks Theorem 1's premise 'mu small enough' just past the stability bound (explored: 29 of 30 "
            "seeds rise there, so c >= 1)",
            max_pass_rate=0.35,
            naive="past the bound GD catapults, then settles and reaches 1e-24 L_0: the steadiness, late depth and "
            "plateau statistics pass it (explored: 30 of 30), a final-loss check too; only 'every step contracts' "
            "tells it",
        ),
    ),
    seeds=Seeds(
        block="C1-v4",
        start=411000,
        units={"ci": 29, "standard": 380, "paper": 380},  # standard's cap: a rate 0.1 off the bar is decided
        batch={"standard": 10, "paper": 10},  # with chance 0.9 (371 units at Holm's 0.025; docs/decisions.md)
        exploratory="seeds 0-29 at (4, 8, 64, 16) and (2, 16, 96, 32), 0-9 at (8, 8, 128, 32), 1,500 steps; "
        "the control at 1.5x on seeds 0-29; v3's design seeds before that",
    ),
    regime="one block, beta = 1, Gaussian init (Q/K var 1/d), logits 1/sqrt(d_QK), float64, CPU; "
    "mu = 0.5 x 2/lambda_max(0) at initialisation: a PROXY for Theorem 1's 'small enough mu', whose "
    "bound cannot be computed; overparameterised synthetic data N*n <= d",
    horizon=f"{STEPS} steps at every budget, a cap: runs stop at 1e-24 L_0 and are scored up to there",
)
CLAIM = pytest.mark.claim(
    "C1",
    "GD on a one-layer Transformer (softmax attention + ReLU FFN + residual) drives the loss down "
    "geometrically: L_{t+1} <= (1 - mu alpha) L_t at every step",
    "Theorem 1 (Sec. III)",
    protocol=PROTOCOL,
)

# (N samples, n tokens, d, d_qk): overparameterised, N*n <= d, as the theorem's regime needs. A unit
# (a seed) passes only when every size of its budget's scale passes.
SIZES = {
    0: [(4, 8, 64, 16), (2, 16, 96, 32)],
    1: [(4, 8, 64, 16), (2, 16, 96, 32), (8, 8, 128, 32)],
    2: [(4, 8, 64, 16), (2, 16, 96, 32), (8, 8, 128, 32), (16, 16, 512, 64)],
}
BELOW = 0.5  # mu = 0.5 * 2/lambda_max(0): the proxy
PAST = 1.5  # control: mu = 1.5 * 2/lambda_max(0), just past the bound


def _runs(size: tuple[int, int, int, int], fraction: float, seeds: list[int]) -> list[Run]:
    n_samples, n_tokens, d, d_qk = size
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1)
    tcfg = TrainConfig(steps=STEPS, lr_fraction=fraction)
    return [Run(cfg, tcfg, make_synthetic(n_samples, n_tokens, d, 1, s), s) for s in seeds]


def _label(size: tuple[int, int, int, int]) -> str:
    return "N={} n={} d={} d_qk={}".format(*size)


@CLAIM
def test_c1_loss_falls_geometrically(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_budget: Budget, claim_train: Trainer
) -> None:
    for seeds in claim_units.batches():
        for size in SIZES[claim_budget.scale]:
            for traj in claim_train.batch(_runs(size, BELOW, seeds)):
                record_rate(claim_record, traj, label=_label(size), unit=traj.seed)


@CLAIM
def test_c1_control_step_past_the_bound(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_train: Trainer
) -> None:
    size = SIZES[0][0]
    for seeds in claim_units.batches():
        for traj in claim_train.batch(_runs(size, PAST, seeds)):
            record_rate(claim_record, traj, label=_label(size), unit=traj.seed, control=PAST_THE_BOUND)
