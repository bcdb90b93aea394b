"""C1: gradient descent on the one-layer Transformer converges at a linear (geometric) rate.

Theorem 1 (the summary): "Phi(theta^(t+1)) <= (1 - mu alpha) Phi(theta^(t)) ... Esto confirma una
convergencia lineal", alpha > 0 set by the smallest singular values of the initial weights and of the
attention output, under a suitable initialisation and a small enough mu. Read as: every step
contracts the loss by a margin, and the rate does not keep falling towards 0. A finite run shows the
second as a rate that falls less than 10% from one octave of its steps to the next (a stretched
exponential's falls by 1 - 2^(k-1) whatever the horizon, a power law's by more until tau is large
against it); a fall of 10-20% is a declared zone the horizon cannot resolve: ``qin2025.c1.linear_rate``.
mu = 0.5 x 2/lambda_max(0) is a proxy for the theorem's bound, which cannot be computed.
"""

from __future__ import annotations

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.schedule import ClaimUnits
from claimcheck.protocol.budget import Budget
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from qin2025.c1.calibration import linear_rate_families
from qin2025.c1.linear_rate import (
    DEPTH_BAR,
    LATE_DEPTH,
    OCTAVE,
    OCTAVE_BAR,
    WORST_RATIO,
    ZONE_TEXT,
    linear_rate_decision,
    margin_ratio,
    record_unit,
)
from qin2025.challenge import families as challenge
from qin2025.challenge import outside
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

PAST_THE_BOUND = "mu = 1.5 x 2/lambda_max(0)"
STEPS = 1000  # a cap: runs stop at 1e-24 L_0, the scoring floor (explored: in 355-932 steps)
SLOWEST = 0.01  # per-step rate of the slowest calibration positive (explored: settled rates 0.055-0.14)
PROTOCOL = ClaimProtocol(
    claim_id="C1",
    version=6,
    parts=(
        Part(
            name="",
            statement="every GD step contracts the loss by a margin and the rate does not keep falling (Theorem 1), "
            "for every size of a seed; not resolvable at any horizon, so accepted: a stretched exponential with "
            "k >= 0.848, a power law with tau >= 2.97 S and p >= 7.4",
            stats=(
                Stat(
                    WORST_RATIO,
                    "<=",
                    margin_ratio(SLOWEST),
                    why="Theorem 1: L_{t+1} <= (1 - mu alpha) L_t at every step; the margin exp(-slowest/20) is a "
                    "twentieth of the slowest calibrated rate: a step that contracts less is a stall",
                ),
                Stat(
                    LATE_DEPTH,
                    ">=",
                    DEPTH_BAR,
                    why="a stall descends nothing; a power law with tau >= 1.097 S descends at most p/3.67 nat over "
                    "the last half (p < 3.67: rejected at any tau), with tau >= 2.965 S at most p/7.42",
                ),
                Stat(
                    OCTAVE,
                    ">=",
                    OCTAVE_BAR,
                    why="a settled rate gives 1, a warm-up more; a stretched exponential gives 2^(k-1) (0.9 at "
                    "k = 0.848, 0.8 at 0.678), a power law < 0.8 while S >= 0.91 tau; [0.8, 0.9) is the zone",
                ),
            ),
            bar=0.8,
            premise=ZONE_TEXT,
            decision=linear_rate_decision,
            calibration=(
                *linear_rate_families(steps=STEPS, slowest=SLOWEST),
                *challenge("C1", "rate"),
                *outside("C1", "rate"),
            ),
        ),
    ),
    controls=(
        Control(
            name=PAST_THE_BOUND,
            part="",
            why="breaks Theorem 1's premise 'mu small enough' just past the stability bound (explored: 29 of 30 "
            "seeds rise there, so c >= 1)",
            max_pass_rate=0.35,
            naive="past the bound GD catapults, then settles and reaches 1e-24 L_0: the late depth and the octave "
            "ratio pass it (v4's exploration: its late statistics passed 30 of 30), a final-loss check too; only "
            "'every step contracts' tells it",
        ),
    ),
    seeds=Seeds(
        block="C1-v6",
        start=503000,
        units={"ci": 60, "standard": 380, "paper": 380},  # ci 60, one look: 0.95 decided in 94% with 15% zoned
        batch={"standard": 10, "paper": 10},  # standard's cap: a rate 0.1 off the bar is decided with chance 0.9
        exploratory="v6 (7 December): v5's decision with one more zone (octave ratio below 0.8 and the last "
        "quarter's rate at least 0.95 of the third: settled late), designed on calibration families only (a referee's "
        "'rate settling from above', accepted 16/200 by v5, failed instead of zoned); no run looked at; "
        "v5: the ci runs at exploratory base seed 0 (seeds 0-28, both sizes) scored by v5, and the "
        "referee's block (base seed 65537, v4's block C1-v4, ci); v4's seeds 0-29 at three sizes before that",
    ),
    regime="one block, beta = 1, Gaussian init (Q/K var 1/d), logits 1/sqrt(d_QK), float64, CPU; "
    "mu = 0.5 x 2/lambda_max(0) at initialisation: a PROXY for Theorem 1's 'small enough mu', whose "
    "bound cannot be computed; overparameterised synthetic data N*n <= d",
    horizon=f"{STEPS} steps at every budget, a cap: runs stop at 1e-24 L_0 and are scored up to there (S steps)",
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
        sizes = SIZES[claim_budget.scale]
        trajs = [claim_train.batch(_runs(size, BELOW, seeds)) for size in sizes]
        for i, seed in enumerate(seeds):
            record_unit(claim_record, [(_label(size), t[i]) for size, t in zip(sizes, trajs, strict=True)], unit=seed)


@CLAIM
def test_c1_control_step_past_the_bound(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_train: Trainer
) -> None:
    size = SIZES[0][0]
    for seeds in claim_units.batches():
        for traj in claim_train.batch(_runs(size, PAST, seeds)):
            record_unit(claim_record, [(_label(size), traj)], unit=traj.seed, control=PAST_THE_BOUND)
