"""C5's experiment: the Jena windows, one sweep of betas per seed at one step size, and its notes.

The instrument that decides C5 (v4) is ``qin2025.c5.level_speed`` (the loss at equal steps after the
fast phase). This module trains the runs it reads and keeps the descriptive rate the notes and the
premise use:

    steady rate r = minus the least-squares slope of log D_k on the step, D_k = m_k - m_(k+1),

where m_k is the mean loss over the k-th of ``BLOCKS`` equal blocks of [T/2, T]. For
L(t) = F + A e^(-r t) it is exactly r; for an offset power law F + A (1 + t/tau)^(-p) about
(p + 1)/(t + tau). A block that does not lower the loss leaves it undefined (NaN): the run is not
descending there, which is outside C5's premise (``descends``). C5 v3 decided on this rate; on the
Jena runs it does not see a 2x step-size speed-up (records/claims/c5.md), so v4 reads levels.
``qin2025.c5.calibration`` holds the cases the decisions were calibrated on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from claimcheck.decide.stats import spearman
from qin2025.c5.level_speed import late_fall, levels
from qin2025.data.jena import FEATURES, WindowSpec, load_jena, locate_jena, require_features, window_jena
from qin2025.data.jena_sanity import check_jena
from qin2025.data.synthetic import TensorData
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

BLOCKS = 8  # blocks of the steady part [T/2, T]; BLOCKS - 1 decrements enter the fit
STEADY_FROM = 0.5  # the steady part starts at this fraction of the horizon

LR_FRACTION = 0.5  # mu = 0.5 x min over a seed's runs of 2/lambda_max: below every run's bound
# train() measures lambda_max again before its first step; the sweep has measured it already (to the
# engine's default precision) and passes mu absolutely, so one iteration there saves time.
TRAIN_POWER_ITERS = 1

_CENTRED = np.arange(BLOCKS - 1) - (BLOCKS - 2) / 2


def steady_rate(curve: ArrayLike) -> float:
    """Return the rate at which ``curve`` (L_0..L_T) nears its own floor over [T/2, T] (NaN if it does not descend).

    Minus the least-squares slope, per step, of the log of the decrements between the means of
    ``BLOCKS`` equal blocks of the steady part. Needs T >= 2 * BLOCKS; a non-finite loss or a block
    whose mean is not below the previous one's gives NaN.
    """
    loss = np.asarray(curve, dtype=np.float64)
    steps = loss.size - 1
    start = int(steps * STEADY_FROM)
    width = (steps - start) // BLOCKS
    if width < 1:
        raise ValueError(f"steady_rate needs T >= {2 * BLOCKS} steps, got T = {steps}")
    means = loss[start : start + width * BLOCKS].reshape(BLOCKS, width).mean(axis=1)
    drops = means[:-1] - means[1:]
    if not (drops > 0).all():  # also false for NaN
        return math.nan
    k = _CENTRED  # block boundaries, centred: the least-squares slope in closed form
    return float(-(k @ np.log(drops)) / (width * (k @ k)))


def descends(curve: ArrayLike) -> bool:
    """Return whether every block of the steady part lowers the loss (``steady_rate`` is defined)."""
    return math.isfinite(steady_rate(curve))


# --- the experiment: one sweep of betas per seed on the Jena windows -----------------------------


@dataclass(frozen=True)
class Prepared:
    """The Jena windows C5 trains on and how the report names them."""

    data: TensorData
    tag: str  # file, rows and span
    items: dict[str, object]  # the data regime


def prepare_jena(data_dir: Path, n_windows: int, n_tokens: int) -> Prepared:
    """Load the Jena record found in ``data_dir`` and cut it into ``n_windows`` windows of ``n_tokens`` hourly tokens.

    Raises ``JenaNotFound`` (the claim skips with its message) when no record is there, and
    ``JenaSanityError`` when the weather is implausible (the claim errors with the reason).
    """
    choice = locate_jena(data_dir)
    record = load_jena(choice.path, irregular="split")
    require_features(record, FEATURES, "C5")  # the protocol's d = 14
    check_jena(record)
    windows = window_jena(record, WindowSpec(n_windows=n_windows, n_tokens=n_tokens))
    start, end = record.span()
    spec = windows.spec
    items: dict[str, object] = {
        "file": str(record.path),
        "why this file": choice.reason,
        "record": record.describe(),
        "windows": f"N={n_windows} x n={n_tokens} tokens, one token every {spec.every} rows (hourly)",
        "training rows": f"{windows.train_rows[0]} -> {windows.train_rows[1]} (first {spec.train_fraction:.0%})",
        "features (d)": f"{len(windows.features)}: {', '.join(windows.features)}",
        "target": f"{spec.target} {spec.horizon} token(s) after each token",
        "normalisation": "z-score per feature with the training windows' mean and std only",
    }
    tag = f"{record.path.name}, {record.rows:,} rows, {start} -> {end}"
    return Prepared(windows.tensor_data(f"Jena {record.path.name} N={n_windows} n={n_tokens}"), tag, items)


@dataclass(frozen=True)
class Sweep:
    """Loss curves of one group of runs, one per label (a beta, or a group labelled as one), at one step size."""

    labels: tuple[float, ...]
    curves: tuple[np.ndarray, ...]  # per label, L_0 .. L_T
    lambdas: tuple[float, ...]  # per label, lambda_max at initialisation
    lr: float

    def by_start(self) -> Sweep:
        """Return the sweep with its runs relabelled in order of their starting loss (the lowest L_0 gets labels[0])."""
        order = np.argsort([c[0] for c in self.curves], kind="stable")
        return Sweep(self.labels, tuple(self.curves[i] for i in order), tuple(self.lambdas[i] for i in order), self.lr)

    @property
    def measured(self) -> dict[str, object]:
        """Return the decisions' keyword arguments for this sweep."""
        return {"betas": list(self.labels), "curves": list(self.curves)}


Group = tuple[Sequence[float], Sequence[int]]  # (beta of each run, init seed of each run)


def train_sweeps(
    data: TensorData, labels: Sequence[float], groups: Sequence[Group], steps: int, train: Trainer, model: ModelConfig
) -> list[Sweep]:
    """Train one run per label for every group of (betas, init seeds), each group at its own step size.

    A group's mu is ``LR_FRACTION`` x min over its runs of 2/lambda_max at initialisation, so it is
    below every run's bound. ``model`` gives every setting but beta. All lambda_max are measured
    in one batch and all runs trained in another (``Trainer.lambda_maxes``, ``Trainer.batch``).
    """
    k = len(labels)
    runs = [
        Run(replace(model, beta=beta), TrainConfig(steps=steps), data, s)
        for betas, seeds in groups
        for beta, s in zip(betas, seeds, strict=True)
    ]
    lambdas = train.lambda_maxes(runs)
    lrs = [LR_FRACTION * 2 / max(lambdas[i : i + k]) for i in range(0, len(runs), k)]
    tcfgs = [TrainConfig(steps=steps, lr=lr, lr_fraction=None, power_iters=TRAIN_POWER_ITERS) for lr in lrs]
    trained = train.batch([replace(run, train=tcfgs[i // k]) for i, run in enumerate(runs)])
    return [
        Sweep(tuple(labels), tuple(t.loss for t in trained[g * k : g * k + k]), tuple(lambdas[g * k : g * k + k]), lr)
        for g, lr in enumerate(lrs)
    ]


def train_step_sweeps(
    data: TensorData,
    factors: Sequence[float],
    seeds: Sequence[int],
    steps: int,
    train: Trainer,
    model: ModelConfig,
    base_fraction: float,
) -> list[Sweep]:
    """Train one run per step factor c for every seed: the same init and model, mu = c x base_fraction x 2/lambda_max.

    A speed-up by construction (a larger step is, to first order, the same gradient flow run
    faster). The labels are the factors; lambda_max is measured once per seed.
    """
    base = [Run(model, TrainConfig(steps=steps), data, s) for s in seeds]
    lambdas = train.lambda_maxes(base)
    runs = [
        replace(
            run,
            train=TrainConfig(
                steps=steps, lr=c * base_fraction * 2 / lam, lr_fraction=None, power_iters=TRAIN_POWER_ITERS
            ),
        )
        for run, lam in zip(base, lambdas, strict=True)
        for c in factors
    ]
    trained = train.batch(runs)
    k = len(factors)
    return [
        Sweep(tuple(factors), tuple(t.loss for t in trained[i * k : i * k + k]), (lam,) * k, base_fraction * 2 / lam)
        for i, lam in enumerate(lambdas)
    ]


def second_half_faster(curve: ArrayLike, factor: float, steps: int) -> np.ndarray:
    """Return L_0..L_T of a run whose second half goes ``factor`` times faster: L(t) to T/2, then L(T/2 + c (t - T/2)).

    ``curve`` must run to T/2 + factor x T/2 steps or more (it is interpolated between steps). To
    first order this is the run with its step size multiplied by ``factor`` from T/2 on (gradient
    flow run faster): the same first half, a second half steeper by construction.
    """
    loss = np.asarray(curve, dtype=np.float64)
    half = steps // 2
    need = half + factor * (steps - half)
    if loss.size - 1 < need:
        raise ValueError(f"second_half_faster needs a run of {math.ceil(need)} steps, got {loss.size - 1}")
    t = np.arange(steps + 1, dtype=np.float64)
    return np.interp(np.where(t <= half, t, half + factor * (t - half)), np.arange(loss.size), loss)


def describe(sweep: Sweep, seed: int, what: str) -> str:
    """Return one sweep's note: L_0, L(T/2), L_T, the last quarter's fall, steady rate, log(L_T/L_0) and mu."""

    def per(values: Sequence[float], fmt: str) -> str:
        return ", ".join(f"{b:g}: {v:{fmt}}" for b, v in zip(sweep.labels, values, strict=True))

    bounds = [2 / lam for lam in sweep.lambdas]
    return (
        f"seed {seed}, per {what}: L_0 {per([c[0] for c in sweep.curves], '.4g')}; "
        f"L(T/2) {per([levels(c)[0] for c in sweep.curves], '.4g')}; "
        f"L_T {per([c[-1] for c in sweep.curves], '.4g')}; "
        f"log(L(3T/4)/L_T) {per([late_fall(c) for c in sweep.curves], '.3f')}; "
        f"steady rate {per([steady_rate(c) for c in sweep.curves], '.3g')}; "
        f"log(L_T/L_0) (C5 v2's measure) {per([math.log(c[-1] / c[0]) for c in sweep.curves], '.3f')}; "
        f"mu = {sweep.lr:.4g}, below every bound 2/lambda_max: {all(sweep.lr < b for b in bounds)}"
    )


def naive_order(sweep: Sweep) -> float:
    """Return C5 v2's statistic on ``sweep``: Spearman rho(label, log(L_T/L_0)) (it passed at <= -0.9)."""
    return spearman(sweep.labels, [math.log(c[-1] / c[0]) for c in sweep.curves]).rho
