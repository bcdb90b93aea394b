"""C2: with the step size below the stability bound, the loss never increases, down to a global minimum.

The summary: "garantizan que el error disminuya monótonamente hasta alcanzar un mínimo global". Two
statements in one: no GD step raises the loss, and the descent ends at a global minimum. With
N n <= d the model can fit every target, so the global minimum is 0; v4 reads "reaches" as reaching
it to float precision within the horizon (L_T/L_0 <= 1e-20), so a monotone descent that stalls at any
floor above it fails (v3's 1e-3 accepted stalls at 1e-6..1e-3 L_0). Each statement has a control a
naive check of the other would pass: just past the bound the loss rises and still reaches the
minimum; without residuals through three blocks it never rises in about half the seeds and stalls.
"""

from __future__ import annotations

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.schedule import ClaimUnits
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from qin2025.c2.calibration import monotone_families
from qin2025.c2.monotone import FINAL_RATIO, ROSE, monotone_decision, record_monotone
from qin2025.challenge import families as challenge
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

PAST_THE_BOUND = "mu = 1.5 x 2/lambda_max(0)"
NO_RESIDUAL = "beta = 0 through 3 blocks"
STEPS = 1500  # the horizon at every budget; a run stops once its loss reaches 1e-24 L_0
PAST_CAP = 40  # ci units: 4 looks of 10, so the past-the-bound control is decided under new draws (v5)
PROTOCOL = ClaimProtocol(
    claim_id="C2",
    version=5,
    parts=(
        Part(
            name="",
            statement="with mu below the bound the loss never rises, and it reaches the global minimum (0 here) "
            "to float precision within the horizon",
            stats=(
                Stat(ROSE, "<=", 0, why="monotone: no step may raise the loss (rtol 1e-12)"),
                Stat(
                    FINAL_RATIO,
                    "<=",
                    1e-20,
                    why="'down to a global minimum' (0 for N n <= d): residuals at 1e-10 of their start, 4 orders "
                    "above the engine's stop; a stall at any floor above it fails",
                ),
            ),
            bar=0.8,
            decision=monotone_decision,
            calibration=(*monotone_families(steps=STEPS), *challenge("C2", "monotone")),
        ),
    ),
    controls=(
        Control(
            name=PAST_THE_BOUND,
            part="",
            why="just past the bound, where the monotone decrease is not promised (v3: 43 of 44 explored seeds "
            "rise there, 21 of 44 at 1.25x). Sized to survive new draws: on v4's block as drawn and under three "
            "same-law reseeds it passed 13/110 = 0.12 (5/30 under the worst reseed); at "
            f"{PAST_CAP} units and this bar it is shown to fail with probability 0.999 at 0.12 and 0.978 at 0.17 "
            "(records/claims/c2.md)",
            max_pass_rate=0.5,  # still far below the claim's own runs (every one passes; the naive check passes all)
            naive="past the bound the loss still reaches the minimum (20 of 20 explored runs reach 1e-24 L_0): a "
            "check of the final loss alone passes it",
        ),
        Control(
            name=NO_RESIDUAL,
            part="",
            why="no residual through 3 blocks: Z collapses (sigma_min ~ 1e-13 at init, C8), Theorem 1's alpha is 0, "
            "and the loss stalls on a plateau (explored: 30 of 30 seeds end at 0.14-0.88 L_0)",
            max_pass_rate=0.2,
            naive="the stall never rises in 15 of 30 explored seeds: a check of 'the loss never increases' alone "
            "passes it",
        ),
    ),
    seeds=Seeds(
        block="C2-v5",
        start=519000,
        units={"ci": PAST_CAP, "standard": 70, "paper": 190},
        batch={"ci": 10, "standard": 10, "paper": 10},
        exploratory="v5: the control's bar and ci cap sized on v4's block (as drawn, and under three same-law "
        "reseeds); v4 design on seeds 0-29 (0.5x, 3,000 steps; beta = 0 at L = 3, 1,500 steps), 0-19 "
        "(1.5x; beta = 0 at L = 1), 0-9 (beta = 0 at L = 2 and at L = 3 with 0.1x; N = 16, 32, 64); v3: seeds "
        "0-21 and 100-121 at 0.5, 1.25, 1.5 and 2 x 2/lambda_max(0)",
    ),
    regime="one block N=4 n=8 d=64 d_QK=16, beta = 1, Gaussian init, float64, CPU; mu = 0.5 x 2/lambda_max(0) "
    "at initialisation: a PROXY for the theorem's step-size bound, which cannot be computed",
    horizon="1,500 steps at every budget (a run stops at 1e-24 L_0); batches of 10 seeds until decided",
)
CLAIM = pytest.mark.claim(
    "C2",
    "With mu below the stability bound, GD decreases the loss monotonically down to a global minimum",
    "Theorem 1 and its step-size condition (Sec. III)",
    protocol=PROTOCOL,
)

SIZE = (4, 8, 64, 16)  # N samples, n tokens, d, d_QK: N n <= d, so the global minimum is 0
BELOW = 0.5  # mu = 0.5 * 2/lambda_max(0)
PAST = 1.5  # control: mu = 1.5 * 2/lambda_max(0), just past the bound
STACK = 3  # control: blocks without residuals
LABEL = "N={} n={} d={} d_qk={}".format(*SIZE)


def _runs(seeds: list[int], fraction: float, layers: int = 1, beta: float = 1.0) -> list[Run]:
    n_samples, n_tokens, d, d_qk = SIZE
    tcfg = TrainConfig(steps=STEPS, lr_fraction=fraction)
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1, n_layers=layers, beta=beta)
    return [Run(cfg, tcfg, make_synthetic(n_samples, n_tokens, d, 1, s), s) for s in seeds]


@CLAIM
def test_c2_loss_never_rises_below_bound(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_train: Trainer
) -> None:
    for seeds in claim_units.batches():
        for traj in claim_train.batch(_runs(seeds, BELOW)):
            record_monotone(claim_record, traj, label=LABEL, unit=traj.seed)


@CLAIM
def test_c2_control_step_past_the_bound_rises(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_train: Trainer
) -> None:
    for seeds in claim_units.batches():
        for traj in claim_train.batch(_runs(seeds, PAST)):
            record_monotone(claim_record, traj, label=LABEL, unit=traj.seed, control=PAST_THE_BOUND)


@CLAIM
@pytest.mark.claim_needs("beta", "n_layers")
def test_c2_control_no_residual_stack_stalls(
    claim_record: ClaimRecorder, claim_units: ClaimUnits, claim_train: Trainer
) -> None:
    label = f"L={STACK} beta=0 {LABEL}"
    for seeds in claim_units.batches():
        for traj in claim_train.batch(_runs(seeds, BELOW, layers=STACK, beta=0.0)):
            record_monotone(claim_record, traj, label=label, unit=traj.seed, control=NO_RESIDUAL)
