"""C4 v3 design: train beta = 0 / beta = 1 pairs over a d_QK grid and save every loss curve (exploratory seeds only).

python records/c4_design/train_grid.py --seeds 0-3 --d 16 --span 1,4,16,64,256 --init xavier --steps 100 \
    --out /tmp/c4/xavier_d16.npz

Each pair shares its data and weight draw; mu = 0.5 * min over the pair of 2/lambda_max at init (v2's rule).
``--init floor:K`` is Xavier with a logit floor: W_Q, W_K variance 2/(d + d_QK) + c/d, c = 2/(1 + K).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np
import torch

from qin2025.data import make_synthetic
from qin2025.engine.batched import Run, initial_lambdas, train_batch
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def model(init: str, d: int, d_qk: int, beta: float) -> ModelConfig:
    if init.startswith("floor:"):
        c = 2 / (1 + float(init.split(":")[1]))
        gain = math.sqrt(1 + c * (d + d_qk) / (2 * d))
        return ModelConfig(d=d, d_qk=d_qk, beta=beta, qk_init="xavier", qk_gain=gain)
    return ModelConfig(d=d, d_qk=d_qk, beta=beta, qk_init=init)  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0-3")
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--span", default="1,4,16,64,256")
    ap.add_argument("--init", default="xavier")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    seeds, span = seeds_of(a.seeds), [int(k) for k in a.span.split(",")]
    out: dict[str, np.ndarray] = {"seeds": np.array(seeds), "d_qk": np.array([a.d * k for k in span])}
    for k in span:
        q = a.d * k
        t0 = time.time()
        runs = [
            Run(model(a.init, a.d, q, b), TrainConfig(steps=a.steps), make_synthetic(a.samples, a.n, a.d, 1, s), s)
            for s in seeds
            for b in (0.0, 1.0)
        ]
        lams = initial_lambdas(runs)
        t1 = time.time() - t0
        mus = [0.5 * 2 / max(lams[i - i % 2], lams[i - i % 2 + 1]) for i in range(len(runs))]
        runs = [
            replace(r, train=TrainConfig(steps=a.steps, lr=m, lr_fraction=None, power_iters=1))
            for r, m in zip(runs, mus, strict=True)
        ]
        trajs = train_batch(runs)
        loss = np.full((len(runs), a.steps + 1), np.nan)
        for i, t in enumerate(trajs):
            loss[i, : len(t.loss)] = t.loss
        out[f"loss_{q}"] = loss.reshape(len(seeds), 2, a.steps + 1)
        out[f"lam_{q}"] = np.array(lams).reshape(len(seeds), 2)
        out[f"mu_{q}"] = np.array(mus).reshape(len(seeds), 2)
        print(f"{a.init} d={a.d} d_qk={q}: lambda {t1:.1f}s, total {time.time() - t0:.1f}s", flush=True)
    np.savez(a.out, **out)


if __name__ == "__main__":
    main()
