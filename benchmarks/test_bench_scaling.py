"""How the cost of one GD step grows with N, n, d, d_qk and L, and how close it gets to peak.

Each benchmark times one step of the engine's loop body (as ``test_bench_engine``) on a base
configuration with one dimension changed, and records the step's matmul FLOPs (``flops.py``,
checked against ``torch.utils.flop_counter``) in ``extra_info``. ``test_peak`` times one float64
2048 x 2048 ``torch.mm``, 2 * 2048^3 FLOPs: the machine's practical peak. ``table.py`` turns a
``--benchmark-json`` file into the table of ``docs/performance.md``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from flops import step_flops
from pytest_benchmark.fixture import BenchmarkFixture
from torch.utils.flop_counter import FlopCounterMode

from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig, forward, init_params, squared_loss
from qin2025.engine.train import gd_update

BASE = {"N": 32, "n": 8, "d": 64, "d_qk": 16, "L": 1}
SWEEP = {"N": [8, 128], "n": [4, 32], "d": [16, 256], "d_qk": [4, 64], "L": [2, 4]}
LARGEST = {"N": 128, "n": 32, "d": 256, "d_qk": 64, "L": 4}
CASES = [("base", BASE)] + [(f"{k}={v}", {**BASE, k: v}) for k, values in SWEEP.items() for v in values]
PEAK_SIZE = 2048
LR = 1e-6
TARGET_SECONDS = 1.0  # rough time per benchmark; sets the rounds


def _model(dims: dict[str, int]) -> ModelConfig:
    return ModelConfig(d=dims["d"], d_qk=dims["d_qk"], d_out=1, n_layers=dims["L"])


def _step(dims: dict[str, int]) -> tuple[Callable[[], None], int]:
    """Return one engine GD step on ``dims`` as a callable, and its matmul FLOPs."""
    cfg = _model(dims)
    params = {k: v.requires_grad_(True) for k, v in init_params(cfg, torch.Generator().manual_seed(0)).items()}
    data = make_synthetic(dims["N"], dims["n"], dims["d"], 1, seed=0)
    leaves = list(params.values())

    def step() -> None:
        loss = squared_loss(forward(params, data.x, cfg).out, data.y, cfg)
        loss.item()
        gd_update(loss, leaves, LR)

    with FlopCounterMode(display=False) as counter:
        step()
    flops = step_flops(cfg, dims["N"], dims["n"])
    assert counter.get_total_flops() == flops, "flops.py disagrees with torch's FLOP counter"
    return step, flops


def _rounds(flops: int) -> int:
    """Return enough rounds for about TARGET_SECONDS at a guessed 5 GFLOP/s plus 1 ms a step."""
    guess = flops / 5e9 + 1e-3
    return max(3, min(50, int(TARGET_SECONDS / guess)))


def _record(benchmark: BenchmarkFixture, dims: dict[str, int], flops: int, threads: int) -> None:
    benchmark.extra_info.update(dims, flops=flops, threads=threads)


@pytest.mark.parametrize("threads", [1], ids=["1thread"], indirect=True)
@pytest.mark.parametrize(("label", "dims"), CASES, ids=[c[0] for c in CASES])
def test_step_cost(benchmark: BenchmarkFixture, label: str, dims: dict[str, int], threads: int) -> None:
    step, flops = _step(dims)
    benchmark.group = "one GD step against N, n, d, d_qk, L (1 thread)"
    _record(benchmark, dims, flops, threads)
    benchmark.pedantic(step, rounds=_rounds(flops), warmup_rounds=1)


@pytest.mark.parametrize("threads", [1, None], ids=["1thread", "default-threads"], indirect=True)
def test_largest_step(benchmark: BenchmarkFixture, threads: int) -> None:
    step, flops = _step(LARGEST)
    benchmark.group = "largest step and peak"
    _record(benchmark, LARGEST, flops, threads)
    benchmark.pedantic(step, rounds=3, warmup_rounds=1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("threads", [1, None], ids=["1thread", "default-threads"], indirect=True)
def test_peak(benchmark: BenchmarkFixture, threads: int, dtype: torch.dtype) -> None:
    """Time one 2048 x 2048 product: the practical peak in float64 (the engine's) and float32 (C6's)."""
    gen = torch.Generator().manual_seed(0)
    a, b = (torch.randn(PEAK_SIZE, PEAK_SIZE, generator=gen, dtype=dtype) for _ in range(2))
    benchmark.group = "largest step and peak" if dtype == torch.float64 else "peak, float32"
    kind = {"peak": True} if dtype == torch.float64 else {"peak_float32": True}  # table.py's shares use float64
    benchmark.extra_info.update(flops=2 * PEAK_SIZE**3, threads=threads, **kind)
    benchmark.pedantic(torch.mm, args=(a, b), rounds=5, warmup_rounds=1)


def test_largest_is_the_sweep_corner() -> None:
    """Keep LARGEST at the top of every swept dimension."""
    assert LARGEST == {k: max([BASE[k], *SWEEP[k]]) for k in BASE}
