"""C5 v3 design (exploratory seeds only): long reference runs of the five betas, saved for ``positive.py``.

    python -m records.c5_design.long_runs 0 8 ci 4000 /tmp/c5/long_ci_4000_0_8.npz

Seeds a..b-1 (plain seeds below 1000, not a block), ci or standard window sizes, one mu per seed
as the claim sets it (0.5 x min over beta of 2/lambda_max at init). Saves every loss curve
("seed-beta"), lambda_max ("lam-seed-beta") and mu ("lr-seed").
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from qin2025.data.jena import WindowSpec, load_jena, locate_jena, window_jena
from qin2025.engine.batched import Run, initial_lambdas, train_batch
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
SIZES = {"ci": (32, 8), "standard": (64, 16)}


def main(first: int, last: int, scale: str, steps: int, out: Path, data_dir: Path) -> None:
    """Train seeds ``first``..``last - 1`` for ``steps`` steps and save the curves to ``out``."""
    torch.set_num_threads(1)
    record = load_jena(locate_jena(data_dir).path, irregular="split")
    n_windows, n_tokens = SIZES[scale]
    data = window_jena(record, WindowSpec(n_windows=n_windows, n_tokens=n_tokens)).tensor_data("jena")
    seeds, k, start = list(range(first, last)), len(BETAS), time.time()
    model = ModelConfig(d=data.x.shape[-1], d_qk=8, d_out=1)
    runs = [Run(replace(model, beta=b), TrainConfig(steps=steps), data, s) for s in seeds for b in BETAS]
    lams = initial_lambdas(runs)
    lrs = [0.5 * 2 / max(lams[i : i + k]) for i in range(0, len(runs), k)]
    runs = [
        replace(r, train=TrainConfig(steps=steps, lr=lrs[i // k], lr_fraction=None, power_iters=1))
        for i, r in enumerate(runs)
    ]
    trained = train_batch(runs)
    saved: dict[str, object] = {}
    for i, s in enumerate(seeds):
        saved[f"lr-{s}"] = lrs[i]
        for j, b in enumerate(BETAS):
            saved[f"{s}-{b}"] = trained[i * k + j].loss
            saved[f"lam-{s}-{b}"] = lams[i * k + j]
    np.savez(out, **saved)  # type: ignore[arg-type]
    print(f"{len(runs)} runs of {steps} steps in {time.time() - start:.0f} s -> {out}")


if __name__ == "__main__":
    a, b, scale, steps, out = sys.argv[1:6]
    data = sys.argv[6] if len(sys.argv) > 6 else os.environ.get("CLAIMCHECK_DATA_DIR", "data")  # the data folder
    main(int(a), int(b), scale, int(steps), Path(out), Path(data))
