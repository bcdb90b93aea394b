"""Engine overhead: one GD step of the engine against a minimal hand-written PyTorch step.

Both take the same step on the same float64 weights and data: forward, half squared loss, reading
the loss, gradient, update. ``engine`` is ``train``'s loop body (``forward``, ``squared_loss``,
``loss.item()``, ``gd_update``); ``hand`` is plain tensor code with ``backward()``. Target: the
engine within 10% of the hand-written step. Each round times ``STEPS`` steps.

The machine is shared, so each engine round is preceded by one hand-written round (the
benchmark's untimed ``setup``, timed here by hand), and ``extra_info["paired_ratio"]`` is the
median of engine round / the hand round just before it: both met the same load.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import pytest
import torch
from pytest_benchmark.fixture import BenchmarkFixture

from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig, Params, forward, init_params, squared_loss
from qin2025.engine.train import gd_update

STEPS = 5  # GD steps per timed round: short rounds, many of them, so the median shrugs off load bursts
ROUNDS = 60
LR = 1e-5  # small enough that no round diverges
# (label, N, n, d, d_qk): C5 at the CI budget (Jena windows, 14 features), C1's first size, a larger one.
SIZES = [("c5-ci", 32, 8, 14, 8), ("c1", 4, 8, 64, 16), ("large", 16, 16, 128, 32)]


def _setup(n_samples: int, n_tokens: int, d: int, d_qk: int) -> tuple[ModelConfig, Params, torch.Tensor, torch.Tensor]:
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1)
    params = {k: v.requires_grad_(True) for k, v in init_params(cfg, torch.Generator().manual_seed(0)).items()}
    data = make_synthetic(n_samples, n_tokens, d, 1, seed=0)
    return cfg, params, data.x, data.y


def engine_steps(cfg: ModelConfig, params: Params, x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    """Return STEPS steps of the engine's loop body."""
    leaves = list(params.values())

    def run() -> None:
        for _ in range(STEPS):
            loss = squared_loss(forward(params, x, cfg).out, y, cfg)
            loss.item()
            gd_update(loss, leaves, LR)

    return run


def hand_steps(cfg: ModelConfig, params: Params, x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    """Return STEPS steps of the same model written out by hand, as a minimal PyTorch loop would."""
    w_q, w_k, w_v, w_1, w_2, w_u = (params[k] for k in ("0.W_Q", "0.W_K", "0.W_V", "0.W_1", "0.W_2", "W_U"))
    scale = cfg.scale

    def run() -> None:
        for _ in range(STEPS):
            s = torch.softmax(scale * ((x @ w_q) @ (x @ w_k).transpose(-1, -2)), dim=-1)
            z = s @ (x @ w_v) + x
            out = (torch.relu(z @ w_1) @ w_2 + z) @ w_u
            loss = 0.5 * ((out - y) ** 2).sum()
            loss.item()
            loss.backward()
            with torch.no_grad():
                for w in (w_q, w_k, w_v, w_1, w_2, w_u):
                    assert w.grad is not None
                    w -= LR * w.grad
                    w.grad = None

    return run


LOOPS = {"engine": engine_steps, "hand": hand_steps}


@pytest.mark.parametrize("threads", [1, None], ids=["1thread", "default-threads"], indirect=True)
@pytest.mark.parametrize("size", SIZES, ids=[s[0] for s in SIZES])
@pytest.mark.parametrize("loop", list(LOOPS))
def test_gd_step(benchmark: BenchmarkFixture, loop: str, size: tuple[str, int, int, int, int], threads: int) -> None:
    cfg, params, x, y = _setup(*size[1:])
    run, hand = LOOPS[loop](cfg, params, x, y), hand_steps(cfg, params, x, y)
    hand_times: list[float] = []

    def hand_round() -> tuple[tuple[()], dict[str, object]]:
        start = time.perf_counter()
        hand()
        hand_times.append(time.perf_counter() - start)
        return (), {}

    label, n_samples, n_tokens, d, d_qk = size
    benchmark.group = f"gd step x{STEPS}, {threads} thread(s): {label} N={n_samples} n={n_tokens} d={d} d_qk={d_qk}"
    benchmark.pedantic(run, setup=hand_round, rounds=ROUNDS, warmup_rounds=3)
    if benchmark.stats is None:  # --benchmark-disable: the steps ran once, untimed
        return
    timed = benchmark.stats.stats.data
    ratio = statistics.median(t / h for t, h in zip(timed, hand_times[-len(timed) :], strict=True))
    info = {"loop": loop, "size": label, "steps_per_round": STEPS, "threads": threads}
    benchmark.extra_info.update(info, paired_ratio=round(ratio, 4))
