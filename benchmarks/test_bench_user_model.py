"""A ``--claim-model``'s sweep: vmapped (``qin2025.vmapped``) against one at a time, beside the paper's batched model.

The sweep is one look of C8 at L = 3 (``claims/test_c8_multilayer.py``): 10 seeds, N = 4 samples of
n = 8 tokens, d = 64, d_QK = 16, mu = 1/3 x 2/lambda_max(0), trained for ``STEPS`` steps (C8 runs
2,000; fewer here, so the rounds stay short: the cost per step is what is compared). Three ways,
each through a ``Trainer`` without a cache, one thread:

- ``paper``: the suite's own model, ``Trainer.batch`` (``qin2025.batched``);
- ``vmapped``: ``examples/tinyformer``'s adapter, ``Trainer.batch`` as it is now (one vmap per look);
- ``one_at_a_time``: the same adapter trained run by run (``train(..., model=...)``), as ``Trainer.batch``
  did for a user's model before.

Target (issue 34): the user's model as fast as the paper's (vmapped / paper near 1), where one at a
time was 7-9x slower per claim.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from claimcheck.store import ResultCache
from qin2025.batched import Run
from qin2025.data import make_synthetic
from qin2025.model import ModelConfig
from qin2025.train import TrainConfig, Trajectory, train
from qin2025.trainer import Trainer
from qin2025.usermodel import ModelSpec, load_model

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tinyformer"
SEEDS = tuple(range(10))  # one look of C8 (batches of 10)
STEPS = 200
ROUNDS = 3
CFG = ModelConfig(d=64, d_qk=16, d_out=1, n_layers=3, beta=1.0)
TRAIN = TrainConfig(steps=STEPS, lr_fraction=1 / 3)


def _runs() -> list[Run]:
    return [Run(CFG, TRAIN, make_synthetic(4, 8, 64, 1, seed=1000 + s), s) for s in SEEDS]


ADAPTER: list[ModelSpec] = []  # loaded once, outside the timing (load_model runs the start-up probe)


def _adapter() -> ModelSpec:
    if not ADAPTER:
        ADAPTER.append(load_model(f"{EXAMPLE / 'claim_adapter.py'}:build"))
    return ADAPTER[0]


def paper() -> list[Trajectory]:
    return Trainer(ResultCache(None)).batch(_runs())


def vmapped() -> list[Trajectory]:
    return Trainer(ResultCache(None), model=_adapter()).batch(_runs())


def one_at_a_time() -> list[Trajectory]:
    model = _adapter()
    return [train(r.model, r.train, r.data, r.seed, model=model) for r in _runs()]


WAYS = {"paper": paper, "vmapped": vmapped, "one_at_a_time": one_at_a_time}


@pytest.mark.parametrize("threads", [1], ids=["1thread"], indirect=True)
@pytest.mark.parametrize("how", list(WAYS))
def test_c8_look(benchmark: BenchmarkFixture, how: str, threads: int) -> None:
    benchmark.group = f"C8 look at L = 3: {len(SEEDS)} runs, {STEPS} steps, {threads} thread"
    benchmark.extra_info.update(runs=len(SEEDS), steps=STEPS, threads=threads)
    _adapter()
    trajs = benchmark.pedantic(WAYS[how], rounds=ROUNDS, warmup_rounds=0)
    assert len(trajs) == len(SEEDS) and all(len(t.loss) == STEPS + 1 for t in trajs)


def test_vmapped_and_one_at_a_time_agree() -> None:
    """Check, outside the timing, that the vmapped sweep is the one-at-a-time sweep to rounding."""
    for got, want in zip(vmapped(), one_at_a_time(), strict=True):
        np.testing.assert_allclose(got.loss, want.loss, rtol=1e-9)
