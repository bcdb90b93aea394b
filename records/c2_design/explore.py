"""C2 v4 design: how far GD below the bound gets, and how the candidate controls behave (exploratory seeds only).

Run: python records/c2_design/explore.py --seeds 0-29 --steps 3000 --out /tmp/c23/c2.npz
Seeds are small integers (the exploratory pool, 0-999); nothing here touches a confirmatory block.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from qin2025.curves import increases
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run, train_batch
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig

SIZE = (4, 8, 64, 16)


def runs(
    seeds: list[int], fraction: float, steps: int, layers: int = 1, beta: float = 1.0, size: tuple[int, ...] = SIZE
) -> list[Run]:
    n_samples, n_tokens, d, d_qk = size
    cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1, n_layers=layers, beta=beta)
    tcfg = TrainConfig(steps=steps, lr_fraction=fraction)
    return [Run(cfg, tcfg, make_synthetic(n_samples, n_tokens, d, 1, s), s) for s in seeds]


def first_below(loss: np.ndarray, level: float) -> int:
    hit = np.flatnonzero(loss <= level * loss[0])
    return int(hit[0]) if hit.size else -1


def summary(name: str, trajs: list, wall: float) -> dict[str, np.ndarray]:
    rows = []
    for t in trajs:
        loss = t.loss
        inc = increases(loss)
        r = loss[1:] / loss[:-1]
        rows.append(
            (
                t.seed,
                loss.size - 1,
                loss[-1] / loss[0],
                inc.count,
                first_below(loss, 1e-3),
                first_below(loss, 1e-12),
                first_below(loss, 1e-20),
                first_below(loss, 1e-24),
                float(np.max(r)),
                float(-np.log(loss[-1] / loss[0]) / (loss.size - 1)),
            )
        )
    a = np.asarray(rows, dtype=float)
    print(f"== {name}: {len(trajs)} runs, {wall:.1f} s")
    print("seed steps L_T/L_0 rises t(1e-3) t(1e-12) t(1e-20) t(1e-24) max_ratio mean_nats_per_step")
    for row in a:
        print(" ".join(f"{v:.4g}" for v in row))
    return {name: a}


def main() -> None:
    torch.set_num_threads(1)
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", default="0-29")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--which", default="below,past,beta0L3,beta0L1")
    p.add_argument("--out", default="/tmp/c23/c2.npz")
    a = p.parse_args()
    lo, hi = (int(v) for v in a.seeds.split("-"))
    seeds = list(range(lo, hi + 1))
    assert hi < 1000
    cases = {
        "below": dict(fraction=0.5),
        "past": dict(fraction=1.5),
        "beta0L3": dict(fraction=0.5, layers=3, beta=0.0),
        "beta0L1": dict(fraction=0.5, layers=1, beta=0.0),
        "beta0L2": dict(fraction=0.5, layers=2, beta=0.0),
        "beta0L3f01": dict(fraction=0.1, layers=3, beta=0.0),
        "beta1L3": dict(fraction=0.5, layers=3, beta=1.0),
        "beta0L3f025": dict(fraction=0.25, layers=3, beta=0.0),
        "beta0L2f01": dict(fraction=0.1, layers=2, beta=0.0),
        "N32": dict(fraction=0.5, size=(32, 8, 64, 16)),
        "N16": dict(fraction=0.5, size=(16, 8, 64, 16)),
        "N64": dict(fraction=0.5, size=(64, 8, 64, 16)),
    }
    out: dict[str, np.ndarray] = {}
    for name in a.which.split(","):
        t0 = time.time()
        trajs = train_batch(runs(seeds, steps=a.steps, **cases[name]))
        out |= summary(name, trajs, time.time() - t0)
        for t in trajs:
            out[f"{name}/loss/{t.seed}"] = t.loss
    np.savez(a.out, **out)


if __name__ == "__main__":
    main()
