"""C4: when d_QK is very large, attention without the residual tends to rank one and GD stops converging.

The summary (Sec. III.B): "En escenarios extremos donde la dimensión de la clave/query (d_QK) es muy
grande, la salida de la atención sin residuales tiende a una matriz de rango uno, haciendo que
sigma_min -> 0 y la convergencia se detenga." A limit claim with two parts: *collapse* (Attn(X) tends
to rank one as d_QK grows, read as a trend over d_QK >= d out to 256 d) and *slowdown* ("convergence
stops", read as the rate without the residual relative to the rate with it falling as d_QK grows).
It says nothing of d_QK < d; that end is measured and noted, not gated.

Whether attention collapses depends on the initialisation of W_Q, W_K, which the summary leaves open.
The regime tested is Xavier/Glorot variance 2/(d + d_QK) with logits scaled by 1/sqrt(d_QK): a
logit then has standard deviation 2d/(d + d_QK), which shrinks as d_QK grows, so S tends to the
uniform 11^T/n and Attn(X) = S X W_V to the rank-one 11^T X W_V / n. This is one regime in which
logits shrink, not PyTorch's default: nn.MultiheadAttention ties the Q/K width to the embedding
width E and applies xavier_uniform_ to its packed (3E, E) in_proj weight, which keeps the logit
scale fixed. With variance 1/d the logit variance stays 1 for every d_QK: that regime, run side by
side with the same statistics, is the negative control of both parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from claimcheck.budget import Budget
from claimcheck.protocol import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.record import ClaimRecorder
from qin2025.batched import Run
from qin2025.calibration.collapse import collapse_families, slowdown_families
from qin2025.data import make_synthetic
from qin2025.decisions import RATIO_TOP, RHO_FLOOR, RHO_RATIO, SLOPE, collapse_decision, slowdown_decision
from qin2025.model import ModelConfig, QKInit
from qin2025.spectral import (
    derive_seed,
    distance_from_uniform,
    floor_ratio,
    loglog_slope,
    mean_rate,
    sample_attention,
    sigma_ratio,
)
from qin2025.train import TrainConfig, Trajectory
from qin2025.trainer import Trainer
from qin2025.usermodel import PAPER, ModelSpec

HALVES = math.log10(0.5) / math.log10(64)  # -0.1667: the relative rate halves over the grid's 64x of d_QK
PROTOCOL = ClaimProtocol(
    claim_id="C4",
    version=2,
    parts=(
        Part(
            "collapse",
            "under Xavier W_Q, W_K, Attn(X) falls towards rank one as d_QK grows from d to 256 d, "
            "with sigma_min(Attn(X)) falling with it",
            (
                Stat(RHO_RATIO, "<=", -0.9, tol=1e-9, why="a monotone fall; at 5 points -0.9 is one adjacent swap"),
                Stat(RHO_FLOOR, "<=", -0.9, tol=1e-9, why="sigma_min -> 0, monotone up to one adjacent swap"),
                Stat(RATIO_TOP, "<=", 0.1, why="rank one to within 10% at the far end of the grid"),
            ),
            bar=0.8,  # a trend on random draws: at least 4 seeds in 5, the exact interval above
            decision=collapse_decision,
            calibration=collapse_families(),
        ),
        Part(
            "slowdown",
            "under Xavier W_Q, W_K, GD without the residual converges ever slower relative to GD with it "
            "as d_QK grows: rate(beta=0)/rate(beta=1) at one step size stable for both falls",
            (Stat(SLOPE, "<=", round(HALVES, 4), why="the relative rate at least halves over 64x of d_QK"),),
            rule="estimate",
            premise="both runs of a pair decrease the loss and stay finite (mu is below both bounds at init)",
            decision=slowdown_decision,
            calibration=slowdown_families(seeds=14),
        ),
    ),
    controls=(
        Control(
            "variance-preserving init: collapse",
            "collapse",
            "W_Q, W_K ~ N(0, 1/d): the logit sd is 1 for every d_QK, so the softmax has no reason to flatten",
            max_pass_rate=0.2,
            kind="sanity",  # each statistic alone rejects it (ratio 0.49-0.77 at 256 d): no naive check passes it
        ),
        Control(
            "variance-preserving init: slowdown",
            "slowdown",
            "W_Q, W_K ~ N(0, 1/d): no collapse as d_QK grows, so no reason for beta = 0 to fall behind",
            naive="beta = 0 is slower than beta = 1 at every d_QK here too (relative rate about 0.5): a check that "
            "beta = 0 converges slower, without the trend in d_QK, passes it",
        ),
    ),
    seeds=Seeds(
        block="C4-v2",
        start=240000,
        units={"ci": 14, "standard": 30, "paper": 60},
        exploratory="v1 at ci on seeds 0-2, 3-5, 10-12; v2's grids on seeds 0-13 (collapse 14/14, 1/d init 0/14; "
        "slowdown mean slope -0.37 [-0.46, -0.29], 1/d init -0.017 [-0.050, 0.017]); 4-draw sweeps to 1024 d on 0-3",
    ),
    regime="qin2025.model (or a --claim-model honouring qk_init), Xavier W_Q, W_K N(0, 2/(d + d_qk)) against "
    "N(0, 1/d), logits 1/sqrt(d_qk), W_V ~ N(0, 1/d), float64; training on synthetic data N = 2, n = 8, d = 32 "
    "(N n <= d), mu = 0.5 * min(2/lambda_max(beta=0), 2/lambda_max(beta=1)) at init per pair: a proxy for "
    "the theorem's step-size bound, not the bound",
    horizon="collapse: no training, 2 weight draws x 8 inputs per d_QK; slowdown: budget steps / 4 GD steps per "
    "run (100 at ci, 250 standard, 750 paper) at d_QK = 32, 128, 512, 2048",
)

CLAIM = pytest.mark.claim(
    "C4",
    "When d_QK is very large, the attention output without residual tends to a rank-one matrix, "
    "sigma_min(Attn(X)) -> 0, and GD without the residual stops converging",
    "Sec. III.B (rank collapse of softmax attention)",
    protocol=PROTOCOL,
)
pytestmark = pytest.mark.claim_needs("attention", "beta", "qk_init")

COLLAPSING: QKInit = "xavier"  # W_Q, W_K ~ N(0, 2/(d + d_QK)): logit sd 2d/(d + d_QK)
CONSTANT: QKInit = "normal"  # W_Q, W_K ~ N(0, 1/d): logit sd 1 for every d_QK (the control)
CONTROL = {"collapse": "variance-preserving init: collapse", "slowdown": "variance-preserving init: slowdown"}

SHAPES = [(8, 32), (16, 64)]  # (n, d) of the collapse sweep, n <= d/2
SPAN = [4**k for k in range(5)]  # d_QK / d = 1, 4, 16, 64, 256
SMALL = [1, 4]  # d_QK below d: measured and noted, not gated (the claim does not speak of it)
WEIGHT_DRAWS = 2  # independent weight draws per d_QK
SAMPLES = 8  # inputs X per weight draw

TRAIN_SIZE = (2, 8, 32)  # N samples, n tokens, d: N n <= d, C1's overparameterised side
TRAIN_D_QK = [32, 128, 512, 2048]  # d .. 64 d
LR_FRACTION = 0.5  # mu = 0.5 * the smaller of the pair's two bounds 2/lambda_max at init
STEP_SHARE = 4  # each run takes budget.steps // STEP_SHARE steps
TRAIN_POWER_ITERS = 1  # lambda_max is measured beforehand (Trainer.lambda_maxes); mu is passed absolutely


@dataclass(frozen=True)
class Sweep:
    """Medians over draws of the collapse statistics at each d_QK of one regime and shape."""

    init: QKInit
    d_qk: list[int]
    ratio: list[float]  # sigma_2/sigma_1 of Attn(X)
    floor: list[float]  # sigma_min(Attn(X)) / sigma_min(X)
    uniform: list[float]  # ||S - 11^T/n||_F


def _medians(model: ModelSpec, init: QKInit, n: int, d: int, d_qk: int, seed: int) -> tuple[float, float, float]:
    x = make_synthetic(SAMPLES, n, d, 1, derive_seed(seed, n, d)).x
    cfg = ModelConfig(d=d, d_qk=d_qk, qk_init=init)
    draws = [sample_attention(cfg, x, derive_seed(seed, n, d, d_qk, k), model) for k in range(WEIGHT_DRAWS)]
    attn = np.concatenate([a.attn for a in draws])
    xs = np.concatenate([a.x for a in draws])
    s = np.concatenate([a.s for a in draws])
    return (
        float(np.median(sigma_ratio(attn))),
        float(np.median(floor_ratio(attn, xs))),
        float(np.median(distance_from_uniform(s))),
    )


def _sweep(model: ModelSpec, init: QKInit, n: int, d: int, d_qks: list[int], seed: int) -> Sweep:
    rows = [_medians(model, init, n, d, d_qk, seed) for d_qk in d_qks]
    ratio, floor, uniform = (list(col) for col in zip(*rows, strict=True))
    return Sweep(init, d_qks, ratio, floor, uniform)


def _record_collapse(rec: ClaimRecorder, sw: Sweep, label: str, control: str | None) -> None:
    part = "" if control else "collapse"
    rec.score({"d_qk": sw.d_qk, "ratio": sw.ratio, "floor": sw.floor}, part=part, control=control, label=label)


def _weights(init: QKInit, model: ModelSpec) -> dict[str, object]:
    if model is not PAPER:
        return {"model": model.name, "W_Q, W_K": f"qk_init={init}", "W_V, logit scale": "the model's own"}
    qk = "N(0, 2/(d + d_qk))" if init == COLLAPSING else "N(0, 1/d)"
    return {"model": model.name, "W_Q, W_K": qk, "W_V": "N(0, 1/d)", "logit scale": "1/sqrt(d_qk)"}


def _record_curves(rec: ClaimRecorder, sweeps: list[Sweep], n: int, d: int) -> None:
    titles = {"ratio": "sigma_2/sigma_1 of Attn(X)", "uniform": "||S - 11^T/n||_F"}
    for attr, title in titles.items():
        for sw in sweeps:
            x = np.log2(sw.d_qk).tolist()
            rec.curve(f"{sw.init} init", getattr(sw, attr), x=x, group=f"{title} vs log2(d_QK), n={n} d={d}")


def _note(rec: ClaimRecorder, sw: Sweep, small: Sweep, n: int, d: int) -> None:
    big = ", ".join(f"{q}: {r:.3g}" for q, r in zip(sw.d_qk, sw.ratio, strict=True))
    low = ", ".join(f"{q}: {r:.3g}" for q, r in zip(small.d_qk, small.ratio, strict=True))
    rec.note(f"seed {rec.seed}, {sw.init} n={n} d={d}: median sigma_2/sigma_1 by d_QK {big}; below d (not gated) {low}")


@CLAIM
def test_c4_attention_tends_to_rank_one_as_d_qk_grows(
    claim_record: ClaimRecorder, claim_seed: int, claim_seeds: list[int], claim_model: ModelSpec
) -> None:
    for n, d in SHAPES:
        d_qks = [d * k for k in SPAN]
        sweeps = []
        for init in (COLLAPSING, CONSTANT):
            sw = _sweep(claim_model, init, n, d, d_qks, claim_seed)
            label = f"{init} n={n} d={d}"
            claim_record.set_regime(label, **_weights(init, claim_model), d_qk=f"{d_qks[0]}..{d_qks[-1]} (x4)")
            _record_collapse(claim_record, sw, label, None if init == COLLAPSING else CONTROL["collapse"])
            sweeps.append(sw)
        if claim_seed == claim_seeds[0]:
            small = _sweep(claim_model, COLLAPSING, n, d, [*SMALL, d // 4], claim_seed)
            _note(claim_record, sweeps[0], small, n, d)
            _record_curves(claim_record, sweeps, n, d)


def _pairs(seeds: list[int], d_qk: int, init: QKInit, steps: int) -> list[Run]:
    """Return the runs beta = 0 and beta = 1 of each seed (same data, same weight draw), in that order."""
    n_samples, n_tokens, d = TRAIN_SIZE
    return [
        Run(ModelConfig(d=d, d_qk=d_qk, beta=beta, qk_init=init), TrainConfig(steps=steps), data, seed)
        for seed in seeds
        for data in [make_synthetic(n_samples, n_tokens, d, 1, seed)]
        for beta in (0.0, 1.0)
    ]


def _train_pairs(train: Trainer, seeds: list[int], d_qk: int, init: QKInit, steps: int) -> list[Trajectory]:
    """Train every pair at mu = LR_FRACTION * the smaller of its two bounds 2/lambda_max (one batch)."""
    runs = _pairs(seeds, d_qk, init, steps)
    lams = train.lambda_maxes(runs)
    mus = [LR_FRACTION * 2 / max(lams[i - i % 2], lams[i - i % 2 + 1]) for i in range(len(runs))]
    tcfg = [TrainConfig(steps=steps, lr=mu, lr_fraction=None, power_iters=TRAIN_POWER_ITERS) for mu in mus]
    return train.batch([replace(run, train=t) for run, t in zip(runs, tcfg, strict=True)])


@dataclass(frozen=True)
class Relative:
    """rate(beta=0)/rate(beta=1) of one seed at each d_QK, and the log-log slope over d_QK."""

    seed: int
    rates: list[tuple[float, float]]  # (rate beta=0, rate beta=1) per d_QK, orders of loss per step

    @property
    def relative(self) -> list[float]:
        """Return rate(beta=0)/rate(beta=1) per d_QK."""
        return [r0 / r1 for r0, r1 in self.rates]

    @property
    def admissible(self) -> bool:
        """Return whether every run decreased the loss (both rates positive and finite)."""
        return all(math.isfinite(r) and r > 0 for pair in self.rates for r in pair)

    @property
    def slope(self) -> float:
        """Return the least-squares slope of log10 relative rate against log10 d_QK."""
        return loglog_slope(TRAIN_D_QK, self.relative)


def _relatives(train: Trainer, seeds: list[int], init: QKInit, steps: int) -> list[Relative]:
    runs = {q: _train_pairs(train, seeds, q, init, steps) for q in TRAIN_D_QK}
    out = []
    for k, seed in enumerate(seeds):
        pairs = [(runs[q][2 * k], runs[q][2 * k + 1]) for q in TRAIN_D_QK]
        rates = [(mean_rate(a.loss), mean_rate(b.loss)) for a, b in pairs]
        out.append(Relative(seed, rates))
    return out


def _record_slowdown(rec: ClaimRecorder, rels: list[Relative], init: QKInit, control: str | None) -> None:
    kept = [r for r in rels if r.admissible]
    for r in rels:
        if not r.admissible:
            why = f"{init}: a run rose or diverged at mu below both bounds; rates {r.rates}"
            rec.exclude(why, part="" if control else "slowdown", control=control, unit=r.seed)
    slopes = [r.slope for r in kept]
    label = f"{init}, {len(slopes)} seeds"
    rates = {"d_qk": TRAIN_D_QK, "rates": [r.rates for r in kept]}
    rec.score(rates, part="" if control else "slowdown", control=control, label=label)
    med = np.median(np.array([r.relative for r in kept]), axis=0) if kept else []
    rec.note(
        f"{init}: rate(beta=0)/rate(beta=1), median over seeds by d_QK "
        + ", ".join(f"{q}: {m:.3g}" for q, m in zip(TRAIN_D_QK, med, strict=False))
        + "; per-seed slopes "
        + ", ".join(f"{s:.2f}" for s in slopes)
    )
    rec.curve(
        f"{init} init", list(med), x=np.log2(TRAIN_D_QK).tolist(), group="rate(beta=0)/rate(beta=1) vs log2(d_QK)"
    )


@CLAIM
def test_c4_relative_rate_without_residual_falls_as_d_qk_grows(
    claim_record: ClaimRecorder, claim_seeds: list[int], claim_budget: Budget, claim_train: Trainer
) -> None:
    steps = claim_budget.steps // STEP_SHARE
    for init in (COLLAPSING, CONSTANT):
        claim_record.set_regime(
            f"training, {init}",
            **_weights(init, claim_train.model),
            size="N={} n={} d={}".format(*TRAIN_SIZE),
            d_qk=TRAIN_D_QK,
            steps=steps,
            **{"step size": f"mu = {LR_FRACTION} * min over the pair of 2/lambda_max at init (a proxy for the bound)"},
        )
        rels = _relatives(claim_train, claim_seeds, init, steps)
        _record_slowdown(claim_record, rels, init, None if init == COLLAPSING else CONTROL["slowdown"])
