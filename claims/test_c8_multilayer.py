"""C8: the linear rate of C1 also holds with 2-4 stacked residual blocks."""

from __future__ import annotations

import pytest

from claimcheck.protocol import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.record import ClaimRecorder
from qin2025.batched import Run
from qin2025.calibration.linear_rate import linear_rate_families
from qin2025.checks import (
    PERSISTENCE,
    RATE_PER_SHARPNESS,
    WORST_RATIO,
    linear_rate_decision,
    premise_ratio,
    record_rate,
    sharpness_along,
)
from qin2025.curves import increases
from qin2025.data import make_synthetic
from qin2025.model import ModelConfig
from qin2025.train import TrainConfig
from qin2025.trainer import Trainer

# The same statistics and thresholds as C1 (claims/test_c1_linear_rate.py), so the two claims read alike.
STATS = (
    Stat(WORST_RATIO, "<", 1.0, why="Theorem 1's inequality at every step, as in C1"),
    Stat(RATE_PER_SHARPNESS, ">=", 1e-5, why="not a stall, as in C1 (explored at L = 4: >= 1.6e-3)"),
    Stat(PERSISTENCE, ">=", 0.6, why="a margin above every power law t^-p (exactly 1/2), as in C1"),
)
PREMISE = (
    "mu below the local stability bound 2/lambda_max(t) at step 0, steps 5, 20, 100 and 300, and the "
    "first step whose loss rose (lambda_max by the engine's power iteration); a run past it is excluded"
)
PROTOCOL = ClaimProtocol(
    "C8",
    3,
    parts=tuple(
        Part(
            f"L{layers}",
            f"{layers} stacked blocks converge at a linear rate",
            STATS,
            bar=0.8,
            premise=PREMISE,
            decision=linear_rate_decision,
            calibration=linear_rate_families(steps=steps, mu_lambda=2 * fraction),
        )
        for layers, steps, fraction in ((2, 600, 1 / 3), (3, 600, 1 / 3), (4, 1000, 0.1))
    ),
    controls=(
        Control(
            "beta = 0 at L = 3",
            "L3",
            "no residual: attention collapses rank through depth (sigma_min(Z) ~ 1e-13 at init), so alpha = 0; "
            "explored: 20 of 20 seeds stall (c >= 1 - 2e-7)",
            max_pass_rate=0.35,
            naive="a stall still contracts a little at every step (c = 1 - 1e-9): a check of c < 1 alone passes it",
        ),
    ),
    seeds=Seeds(
        "C8-v3",
        281000,
        {"ci": 6, "standard": 14, "paper": 29},
        exploratory="seeds 0-21 and 100-121 at L = 2, 3, 4 (3,000 steps at L = 4, lambda_max at 13 checkpoints), "
        "beta = 0 at L = 3 with normal and Xavier Q/K; earlier, the v1 runs of docs/claim-c8.md",
    ),
    regime="N=4 n=8 d=64 d_QK=16, beta = 1, Gaussian init, float64, CPU; mu = f_L x 2/lambda_max(0) with "
    "f = 1/3, 1/3, 0.1 at L = 2, 3, 4 (v1's rule) as a PROXY for the theorem's bound, and the local bound "
    "checked along the run (premise)",
    horizon="600 steps at L = 2 and 3, 1,000 at L = 4, at every budget; the statistics do not grow with it",
)
CLAIM = pytest.mark.claim(
    "C8",
    "The linear rate of GD also holds for L = 2-4 stacked Transformer blocks with residuals",
    "Multi-layer extension (v1 abstract)",
    protocol=PROTOCOL,
)
pytestmark = pytest.mark.claim_needs("n_layers")

SIZE = (4, 8, 64, 16)  # N, n, d, d_qk: overparameterised as in C1
LR_FRACTION = {2: 1 / 3, 3: 1 / 3, 4: 0.1}
STEPS = {2: 600, 3: 600, 4: 1000}
CHECKPOINTS = (5, 20, 100, 300)
CONTROL_LAYERS = 3


def _runs(layers: int, seeds: list[int], beta: float = 1.0) -> list[Run]:
    n_samples, n_tokens, d, d_qk = SIZE
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1, n_layers=layers, beta=beta)
    tcfg = TrainConfig(steps=STEPS[layers], lr_fraction=LR_FRACTION[layers])
    return [Run(cfg, tcfg, make_synthetic(n_samples, n_tokens, d, 1, s), s) for s in seeds]


@CLAIM
@pytest.mark.parametrize("layers", [2, 3, 4])
def test_c8_stacked_blocks_converge_linearly(
    claim_record: ClaimRecorder, claim_seeds: list[int], claim_train: Trainer, layers: int
) -> None:
    part, label = f"L{layers}", f"L={layers} N={SIZE[0]} n={SIZE[1]} d={SIZE[2]}"
    runs = _runs(layers, claim_seeds)
    for run, traj in zip(runs, claim_train.batch(runs), strict=True):
        rise = increases(traj.loss).first
        marks = CHECKPOINTS + (() if rise is None else (rise + 1,))
        ratio, at = premise_ratio(traj, sharpness_along(claim_train, traj, run.model, run.data, marks))
        if ratio >= 1:
            claim_record.exclude(
                f"mu = {ratio:.2f} x 2/lambda_max(t) at step {at} (lambda_max(t)/lambda_max(0) = "
                f"{ratio / traj.lr_over_bound:.2f})",
                part=part,
                unit=traj.seed,
            )
        record_rate(claim_record, traj, label=label, part=part, unit=traj.seed)


@CLAIM
def test_c8_control_no_residual_stalls(
    claim_record: ClaimRecorder, claim_seeds: list[int], claim_train: Trainer
) -> None:
    label = f"L={CONTROL_LAYERS} beta=0 N={SIZE[0]} n={SIZE[1]} d={SIZE[2]}"
    for traj in claim_train.batch(_runs(CONTROL_LAYERS, claim_seeds, beta=0.0)):
        record_rate(claim_record, traj, label=label, unit=traj.seed, control=PROTOCOL.controls[0].name)
