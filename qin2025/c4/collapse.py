"""Measure C4: attention's fall towards rank one as d_QK grows, and how GD without the residual keeps pace.

Two instruments over one grid of d_QK = d x ``SPAN`` (d, 4 d, 16 d, 64 d, 256 d):

- the *collapse sweep* (no training): one weight draw per d_QK and shape, and ``WEIGHT_DRAWS`` of
  them, each applied to ``SAMPLES`` inputs; the medians of sigma_2/sigma_1 of Attn(X) and of
  sigma_min(Attn(X))/sigma_min(X) at each d_QK (``sweep``);
- the *rate table* (training): per seed and d_QK one pair of GD runs, beta = 0 and beta = 1, from
  the same data and weight draw, at one step size stable for both; each run's mean rate (orders of
  loss decrease per step over the horizon, ``spectral.mean_rate``) and the relative rate
  rate(beta=0)/rate(beta=1) (``rate_tables``).

The unit decisions (``collapse_decision``, ``slows_decision``, ``stops_decision``) are plain
functions of one unit's measurements; the claim scores real units with them and ``claimcheck
calibrate`` runs them on the families of ``qin2025.c4.calibration``. The collapse statistics
are read twice: the far end of the grid against the lowest saturation level the reading names
(``LOWEST_LEVEL``), and the trend over the grid's last 16x of d_QK against ``TREND``. The relative
rate's far end is read by its trend and its level (``stops_decision``, protocol v6): the trend
bounds the part (still falling over 16 d .. 256 d, or at a stall, against levelled off), the level
resolves it (at a stall by 256 d, ``STALL``). A fall still going at 256 d above the stall may
tend to 0 or level off below its 256 d value, which is not resolvable on this grid (``STOPS_ZONE``):
the part is then undecided, "not resolved".

How W_Q, W_K are drawn is a ``QK``: the paper model's ``qk_init`` and an optional *logit floor*
c (Xavier's variance 2/(d + d_QK) plus c/d, so the logit standard deviation 2d/(d + d_QK) + c
falls as Xavier's and levels off at c): the world the discriminating controls run in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from claimcheck.decide.record import ClaimRecorder
from claimcheck.errors import ConfigError
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig, QKInit
from qin2025.engine.spectral import (
    derive_seed,
    distance_from_uniform,
    floor_ratio,
    loglog_slope,
    mean_rate,
    sigma_ratio,
)
from qin2025.engine.train import TrainConfig, Trajectory
from qin2025.engine.trainer import Trainer
from qin2025.engine.usermodel import PAPER, ModelSpec

SPAN = (1, 4, 16, 64, 256)  # d_QK / d over the grid
NEAR = SPAN[:4]  # d .. 64 d: where "slows" is read (v2's grid)
FAR = SPAN[2:]  # 16 d .. 256 d: the grid's last 16x, where "still falling" is read
TREND = math.log10(0.5) / math.log10(64)  # -1/6: "falls" = at least halves over 64x of d_QK
LOWEST_LEVEL = 0.1  # the lowest level at which the reading's saturating alternatives level off (0.1 .. 0.5)
COLLAPSE_LEVEL = LOWEST_LEVEL / 2  # a sweep that levels off at 0.1 of its start cannot reach half of it
REL_FLOOR = 1e-6  # a relative rate below this (a beta = 0 run that made no progress) is counted as this
BOUNDS = (-3.0, 1.0)  # every value of a mean part: log10 relative rates and log-log slopes, clipped here

RATIO_LEVEL = "sigma_2/sigma_1 of Attn(X) at 256 d over its value at d"
RATIO_TREND = "log-log slope of sigma_2/sigma_1 of Attn(X) over d_QK = 16 d .. 256 d"
FLOOR_LEVEL = "sigma_min(Attn(X))/sigma_min(X) at 256 d over its value at d"
FLOOR_TREND = "log-log slope of sigma_min(Attn(X))/sigma_min(X) over d_QK = 16 d .. 256 d"
SLOWS = "log-log slope of rate(beta=0)/rate(beta=1) over d_QK = d .. 64 d"
STOPS_TREND = "log-log slope of rate(beta=0)/rate(beta=1) over d_QK = 16 d .. 256 d"
STOPS_FAR = "log10 rate(beta=0)/rate(beta=1) at 256 d"

STOPS_ZONE = (
    "a fall still going over 16-256 d may tend to 0 or level off later (inside the last 4x, 64-256 d, or beyond "
    "it): not resolvable up to 256 d; a level l is seen once the falling part drops under l, from d_QK ~ 256 d "
    "(r_256/l)^(1/s): about 800 d for l = 0.02 and 4,700 d for l = 0.005 at the measured r_256 = 0.05, s = 0.8"
)

SHAPES = ((8, 32), (16, 64))  # (n tokens, d) of the collapse sweep: n <= d/2, full row rank
WEIGHT_DRAWS = 2  # weight draws per d_QK and shape
SAMPLES = 8  # inputs X per weight draw
TRAIN_SIZE = (2, 8, 16)  # N samples, n tokens, d of the training runs: N n <= d
STEPS = 100  # GD steps per run, at every budget: the relative rate is read at one horizon
# A relative rate at or below 1/STEPS is a stall within the horizon: over its STEPS steps the beta = 0 run makes
# at most one step of the beta = 1 run's progress (the resolution of "stops" at this horizon, not a magnitude).
STALL = math.log10(1 / STEPS)
LR_FRACTION = 0.5  # mu = LR_FRACTION * the smaller of the pair's two bounds 2/lambda_max at init


# --- how W_Q, W_K are drawn -------------------------------------------------------------------------


@dataclass(frozen=True)
class QK:
    """How W_Q, W_K are drawn: ``qk_init``, and a logit floor c (Xavier only; 0 for none)."""

    init: QKInit
    floor: float = 0.0  # c: the W_Q, W_K variance grows by c/d, so the logit sd 2d/(d + d_QK) + c levels off at c

    def __post_init__(self) -> None:
        if self.floor and self.init != "xavier":
            raise ConfigError(f"a logit floor is defined on Xavier W_Q, W_K; got qk_init={self.init!r}")

    @classmethod
    def floored(cls, k: int) -> QK:
        """Return Xavier with its logit sd floored at its own value at d_QK = k d, c = 2/(1 + k)."""
        return cls("xavier", 2.0 / (1 + k))

    def config(self, d: int, d_qk: int, beta: float = 1.0) -> ModelConfig:
        """Return the model config at (d, d_QK, beta); the floor enters as ``qk_gain``^2 = 1 + c (d + d_QK)/(2 d)."""
        gain = math.sqrt(1 + self.floor * (d + d_qk) / (2 * d)) if self.floor else 1.0
        return ModelConfig(d=d, d_qk=d_qk, beta=beta, qk_init=self.init, qk_gain=gain)

    @property
    def label(self) -> str:
        """Return e.g. ``xavier`` or ``xavier, logit floor 0.0308``."""
        return f"{self.init}, logit floor {self.floor:.3g}" if self.floor else self.init

    def runs_on(self, model: ModelSpec) -> bool:
        """Return whether ``model`` draws W_Q, W_K this way (a floor needs a model that reads ``qk_gain``)."""
        return "qk_init" in model.capabilities and (not self.floor or model.honours("qk_gain"))

    def weights(self, model: ModelSpec) -> dict[str, object]:
        """Return how the weights were drawn, for the report's regime table."""
        if model is not PAPER:
            return {"model": model.name, "W_Q, W_K": f"qk_init={self.init}", "W_V, logit scale": "the model's own"}
        qk = "N(0, 2/(d + d_qk))" if self.init == "xavier" else "N(0, 1/d)"
        if self.floor:
            qk = f"N(0, 2/(d + d_qk) + {self.floor:.3g}/d): logit sd 2d/(d + d_qk) + {self.floor:.3g}"
        return {"model": model.name, "W_Q, W_K": qk, "W_V": "N(0, 1/d)", "logit scale": "1/sqrt(d_qk)"}


# --- decisions --------------------------------------------------------------------------------------


def _clip(value: float) -> float:
    """Return ``value`` clipped to ``BOUNDS`` (NaN stays NaN)."""
    return value if math.isnan(value) else min(max(value, BOUNDS[0]), BOUNDS[1])


def relative(rates: Sequence[tuple[float, float]]) -> list[float]:
    """Return rate(beta=0)/rate(beta=1) per d_QK: a beta = 0 rate at or below 0 counts as 0, floored at REL_FLOOR."""
    return [max(max(r0, 0.0) / r1, REL_FLOOR) if r1 > 0 else math.nan for r0, r1 in rates]


def collapse_decision(d_qk: Sequence[float], ratio: Sequence[float], floor: Sequence[float]) -> dict[str, float]:
    """Return C4's collapse statistics of one sweep over ``d_qk`` = d x SPAN (ascending).

    ``ratio``: the median sigma_2/sigma_1 of Attn(X) at each d_QK; ``floor``: the median
    sigma_min(Attn(X))/sigma_min(X). For each: its value at 256 d over its value at d (the level,
    against half the lowest saturation level), and its log-log slope over the last three points,
    16 d .. 256 d (the trend, against ``TREND``).
    """
    q, far = list(d_qk), slice(len(SPAN) - len(FAR), None)
    return {
        RATIO_LEVEL: float(ratio[-1] / ratio[0]),
        RATIO_TREND: loglog_slope(q[far], list(ratio)[far]),
        FLOOR_LEVEL: float(floor[-1] / floor[0]),
        FLOOR_TREND: loglog_slope(q[far], list(floor)[far]),
    }


def slows_decision(d_qk: Sequence[float], rates: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Return one seed's "slows" statistic: the log-log slope of the relative rate over ``d_qk`` (d .. 64 d).

    ``rates``: (rate beta=0, rate beta=1) at each d_QK. The slope is clipped to ``BOUNDS``.
    """
    return {SLOWS: _clip(loglog_slope(d_qk, relative(rates)))}


def stops_decision(d_qk: Sequence[float], rates: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Return one seed's "stops" statistics over ``d_qk`` (16 d .. 256 d, ascending; protocol v6).

    ``STOPS_TREND``, what bounds the part: the log-log slope of the relative rate over every point,
    clipped to ``BOUNDS``: a fall that has levelled off inside the grid gives about 0, one still
    falling at its far end a slope below ``TREND``; a seed at a stall at 256 d (relative rate at or
    below ``STALL``) has fallen as far as the horizon shows, and gets the bounds' steepest slope
    (a stall from 16 d on is flat at the floor, and is "stops", not a level-off). ``STOPS_FAR``,
    what resolves it: log10 of the relative rate at 256 d, clipped to ``BOUNDS``, against ``STALL``.
    (v5 read the trend alone and called "still falling" REPRODUCED; v4 read the far end against
    log10 0.1, which accepted levels under 0.1 and rejected slow decays to 0 alike.)
    """
    rel = relative(rates)
    far = _clip(math.log10(rel[-1])) if rel[-1] > 0 else math.nan
    trend = BOUNDS[0] if far <= STALL else _clip(loglog_slope(d_qk, rel))
    return {STOPS_TREND: trend, STOPS_FAR: far}


# --- the collapse sweep -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    """Medians over draws of the collapse measures at each d_QK of one way of drawing W_Q, W_K and one shape."""

    qk: QK
    n: int
    d: int
    d_qk: list[int]
    ratio: list[float]  # sigma_2/sigma_1 of Attn(X)
    floor: list[float]  # sigma_min(Attn(X)) / sigma_min(X)
    uniform: list[float]  # ||S - 11^T/n||_F

    def measurements(self) -> dict[str, list[float]]:
        """Return what ``collapse_decision`` takes."""
        return {"d_qk": [float(q) for q in self.d_qk], "ratio": self.ratio, "floor": self.floor}

    @property
    def label(self) -> str:
        """Return e.g. ``xavier n=8 d=32``."""
        return f"{self.qk.label} n={self.n} d={self.d}"


def _medians(model: ModelSpec, cfg: ModelConfig, x: torch.Tensor, seeds: list[int]) -> tuple[float, float, float]:
    """Return the medians of ratio, floor and distance from uniform over the weight draws ``seeds``."""
    one = replace(cfg, n_layers=1, beta=0.0)
    attn, s = [], []
    for seed in seeds:
        params = model.init_params(cfg, torch.Generator().manual_seed(seed), x.dtype)  # the draw training starts from
        with torch.no_grad():
            fwd = model.forward(params, x, one)
        attn.append(fwd.z[0].cpu().numpy())
        s.append(fwd.attn[0].cpu().numpy())
    a, xs = np.concatenate(attn), np.concatenate([x.cpu().numpy()] * len(seeds))
    ratio, floor = float(np.median(sigma_ratio(a))), float(np.median(floor_ratio(a, xs)))
    return ratio, floor, float(np.median(distance_from_uniform(np.concatenate(s))))


def sweep(model: ModelSpec, qk: QK, n: int, d: int, seed: int, span: Sequence[int] = SPAN) -> Sweep:
    """Measure Attn(X) at d_QK = d x ``span``: ``WEIGHT_DRAWS`` draws x ``SAMPLES`` inputs each (v2's draws)."""
    x = make_synthetic(SAMPLES, n, d, 1, derive_seed(seed, n, d)).x
    d_qks = [d * k for k in span]
    rows = [
        _medians(model, qk.config(d, q), x, [derive_seed(seed, n, d, q, k) for k in range(WEIGHT_DRAWS)]) for q in d_qks
    ]
    ratio, floor, uniform = (list(col) for col in zip(*rows, strict=True))
    return Sweep(qk, n, d, d_qks, ratio, floor, uniform)


def _sweep_arrays(
    model: ModelSpec, init: QKInit, floor: float, n: int, d: int, seed: int, span: list[int]
) -> dict[str, list[float]]:
    """Return ``sweep``'s columns as arrays: what ``Trainer.call`` caches."""
    sw = sweep(model, QK(init, floor), n, d, seed, span)
    return {"d_qk": [float(q) for q in sw.d_qk], "ratio": sw.ratio, "floor": sw.floor, "uniform": sw.uniform}


def cached_sweep(train: Trainer, qk: QK, n: int, d: int, seed: int, span: Sequence[int] = SPAN) -> Sweep:
    """Return ``sweep(train.model, qk, n, d, seed, span)`` through the trainer's cache (it trains nothing)."""
    a = train.call(_sweep_arrays, init=qk.init, floor=qk.floor, n=n, d=d, seed=seed, span=list(span))
    columns = (a["ratio"].tolist(), a["floor"].tolist(), a["uniform"].tolist())
    return Sweep(qk, n, d, [int(q) for q in a["d_qk"]], *columns)


def note_sweeps(rec: ClaimRecorder, seed: int, sweeps: Sequence[Sweep]) -> None:
    """Note each sweep's median sigma_2/sigma_1 by d_QK and draw it and ||S - 11^T/n||_F (one unit's, once)."""
    for sw in sweeps:
        line = ", ".join(f"{q}: {r:.3g}" for q, r in zip(sw.d_qk, sw.ratio, strict=True))
        rec.note(f"seed {seed}, {sw.label}: median sigma_2/sigma_1 of Attn(X) by d_QK {line}")
        x = np.log2(sw.d_qk).tolist()
        group = f"n={sw.n} d={sw.d} vs log2(d_QK)"
        rec.curve(sw.qk.label, sw.ratio, x=x, group=f"sigma_2/sigma_1 of Attn(X), {group}")
        rec.curve(sw.qk.label, sw.uniform, x=x, group=f"||S - 11^T/n||_F, {group}")


def score_sweeps(
    rec: ClaimRecorder, batches: Iterable[list[int]], train: Trainer, qk: QK, part: str, control: str | None = None
) -> None:
    """Sweep every unit of every batch on each of ``SHAPES`` and score it on ``part`` (or on ``control``).

    Each shape's sweep is one set of checks on its unit; the unit passes when both shapes do.
    """
    first: tuple[int, list[Sweep]] | None = None
    for seeds in batches:
        for seed in seeds:
            sweeps = [cached_sweep(train, qk, n, d, seed) for n, d in SHAPES]
            for sw in sweeps:
                rec.score(sw.measurements(), part="" if control else part, control=control, unit=seed, label=sw.label)
            first = first or (seed, sweeps)
    rec.set_regime(qk.label, **qk.weights(train.model), d_qk=f"d x {list(SPAN)}")
    if first:
        note_sweeps(rec, *first)


# --- the rate table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateTable:
    """One seed's pairs over d_QK: the mean rate without and with the residual at each d_QK."""

    seed: int
    d_qk: tuple[int, ...]
    rates: tuple[tuple[float, float], ...]  # (rate beta=0, rate beta=1), orders of loss per step

    @property
    def admissible(self) -> bool:
        """Return whether every run stayed finite and ended below its start (the premise: mu below both bounds)."""
        return all(math.isfinite(r) and r > 0 for pair in self.rates for r in pair)

    def measurements(self, span: Sequence[int]) -> dict[str, list[float] | list[tuple[float, float]]]:
        """Return what the decisions take over d_QK = d x ``span`` (d the training width)."""
        keep = [self.d_qk.index(TRAIN_SIZE[2] * k) for k in span]
        return {"d_qk": [float(self.d_qk[i]) for i in keep], "rates": [self.rates[i] for i in keep]}


def _pairs(train: Trainer, seeds: Sequence[int], qk: QK, d_qk: int) -> list[tuple[Trajectory, Trajectory]]:
    """Train each seed's pair (beta = 0, 1) at mu = LR_FRACTION * the smaller of its two bounds 2/lambda_max."""
    n_samples, n_tokens, d = TRAIN_SIZE
    runs = [
        Run(qk.config(d, d_qk, beta), TrainConfig(steps=STEPS), data, seed)
        for seed in seeds
        for data in [make_synthetic(n_samples, n_tokens, d, 1, seed)]
        for beta in (0.0, 1.0)
    ]
    lams = train.lambda_maxes(runs)
    mus = [LR_FRACTION * 2 / max(lams[i - i % 2], lams[i - i % 2 + 1]) for i in range(len(runs))]
    trained = train.batch(
        [
            replace(run, train=TrainConfig(steps=STEPS, lr=mu, lr_fraction=None, power_iters=1))
            for run, mu in zip(runs, mus, strict=True)
        ]
    )
    return list(zip(trained[::2], trained[1::2], strict=True))


def rate_tables(train: Trainer, seeds: Sequence[int], qk: QK, span: Sequence[int]) -> list[RateTable]:
    """Train every seed's pairs at d_QK = d x ``span`` (one batch per d_QK) and return one table per seed."""
    d = TRAIN_SIZE[2]
    d_qks = tuple(d * k for k in span)
    by_q = {q: _pairs(train, seeds, qk, q) for q in d_qks}
    return [
        RateTable(seed, d_qks, tuple((mean_rate(by_q[q][i][0].loss), mean_rate(by_q[q][i][1].loss)) for q in d_qks))
        for i, seed in enumerate(seeds)
    ]


def score_rates(
    rec: ClaimRecorder,
    batches: Iterable[list[int]],
    train: Trainer,
    qk: QK,
    reads: Mapping[str, Sequence[int]],
    control: str | None = None,
) -> None:
    """Train every unit of every batch and score it on each part of ``reads`` over that part's d_QK (or on ``control``).

    ``reads`` maps a part to the d_QK / d it reads (``NEAR``, ``FAR``); the runs cover their union.
    A seed outside the premise (a run that diverged or ended above its start) is excluded, with its
    rates, from every part it would have been scored on.
    """
    span = tuple(sorted({k for ks in reads.values() for k in ks}))
    kept: list[RateTable] = []
    for seeds in batches:
        for t in rate_tables(train, seeds, qk, span):
            for part, ks in reads.items():
                if not t.admissible:
                    why = f"a run rose or diverged at mu below both bounds at init; rates (beta=0, beta=1) {t.rates}"
                    rec.exclude(why, unit=t.seed, part="" if control else part, control=control)
                else:
                    rec.score(t.measurements(ks), part="" if control else part, control=control, unit=t.seed)
            kept += [t] if t.admissible else []
    size = "N={} n={} d={}".format(*TRAIN_SIZE)
    rec.set_regime(f"training, {qk.label}", **qk.weights(train.model), size=size, steps=STEPS)
    note_rates(rec, kept, qk)


def note_rates(rec: ClaimRecorder, tables: Sequence[RateTable], qk: QK) -> None:
    """Note and draw the median relative rate by d_QK over the tables."""
    if not tables:
        return
    med = np.median(np.array([relative(t.rates) for t in tables]), axis=0)
    d_qk = tables[0].d_qk
    line = ", ".join(f"{q}: {m:.3g}" for q, m in zip(d_qk, med, strict=True))
    rec.note(f"{qk.label}: rate(beta=0)/rate(beta=1), median over {len(tables)} seeds by d_QK {line}")
    rec.curve(qk.label, med.tolist(), x=np.log2(d_qk).tolist(), group="rate(beta=0)/rate(beta=1) vs log2(d_QK)")
