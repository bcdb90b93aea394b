"""Batched against one-at-a-time training for the C5 sweep: 5 betas x 5 seeds.

Both follow C5's procedure (``claims/test_c5_residual_speed.py``) through a ``Trainer`` without
a cache: for each seed, measure lambda_max at initialisation for every beta, take mu = 0.5 * 2 /
(the largest), and train every beta at that mu for the CI budget's steps, with one power step
inside ``train``. Batched is what C5 does now: ``Trainer.lambda_maxes`` and ``Trainer.batch``
once for all 25 runs. One at a time is what C5 did before: ``Trainer.lambda_max`` and the
``Trainer`` call per run. The data has C5's CI shape (N=32 windows of n=8 tokens, d=14
features), drawn at random instead of read from the Jena file. Target: batched >= 3x faster.
(C5 itself runs 3 seeds at the CI budget, so its batches hold 15 runs.)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
SEEDS = (0, 1, 2, 3, 4)
N_WINDOWS, N_TOKENS, D, D_QK = 32, 8, 14, 8  # C5 at the CI budget
STEPS = 400  # the CI budget's steps
LR_FRACTION = 0.5
ROUNDS = 3
DATA = make_synthetic(N_WINDOWS, N_TOKENS, D, 1, seed=0)


def _runs() -> list[Run]:
    """Return the sweep's runs, seed-major; their TrainConfig is the one lambda_max is measured with."""
    models = [ModelConfig(d=D, d_qk=D_QK, d_out=1, beta=b) for b in BETAS]
    return [Run(m, TrainConfig(steps=STEPS), DATA, s) for s in SEEDS for m in models]


def _step_sizes(lambdas: list[float]) -> list[float]:
    """Return every run's mu: LR_FRACTION * 2 / the largest lambda_max among its seed's betas."""
    per_seed = np.asarray(lambdas).reshape(len(SEEDS), len(BETAS))
    return np.repeat(LR_FRACTION * 2 / per_seed.max(axis=1), len(BETAS)).tolist()


def _at(run: Run, lr: float) -> Run:
    return replace(run, train=TrainConfig(steps=STEPS, lr=lr, lr_fraction=None, power_iters=1))


def one_at_a_time() -> list[np.ndarray]:
    """Return every run's loss curve, measuring and training the runs one by one, as C5 did."""
    trainer, runs = Trainer(ResultCache(None)), _runs()
    lambdas = [trainer.lambda_max(r.model, r.data, r.seed) for r in runs]
    trained = [_at(r, lr) for r, lr in zip(runs, _step_sizes(lambdas), strict=True)]
    return [trainer(r.model, r.train, r.data, r.seed).loss for r in trained]


def batched() -> list[np.ndarray]:
    """Return every run's loss curve, measuring and training all runs in one batch each, as C5 does."""
    trainer, runs = Trainer(ResultCache(None)), _runs()
    trained = [_at(r, lr) for r, lr in zip(runs, _step_sizes(trainer.lambda_maxes(runs)), strict=True)]
    return [t.loss for t in trainer.batch(trained)]


@pytest.mark.parametrize("threads", [1, None], ids=["1thread", "default-threads"], indirect=True)
@pytest.mark.parametrize("how", ["batched", "one_at_a_time"])
def test_c5_sweep(benchmark: BenchmarkFixture, how: str, threads: int) -> None:
    benchmark.group = f"C5 sweep 5 betas x 5 seeds, {STEPS} steps, {threads} thread(s)"
    benchmark.extra_info.update(runs=len(BETAS) * len(SEEDS), steps=STEPS, threads=threads)
    curves = benchmark.pedantic(batched if how == "batched" else one_at_a_time, rounds=ROUNDS, warmup_rounds=0)
    assert len(curves) == len(BETAS) * len(SEEDS) and all(len(c) == STEPS + 1 for c in curves)


def test_batched_sweep_gives_the_same_curves() -> None:
    """Check, outside the timing, that the two ways agree (run with ``pytest benchmarks``)."""
    for got, want in zip(batched(), one_at_a_time(), strict=True):
        np.testing.assert_array_equal(got, want)  # C5's records depend on it
