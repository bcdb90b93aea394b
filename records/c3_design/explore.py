"""C3 v3 design: sigma_min(Z)/sigma_min(X) over d_QK, beyond v2's grid and at the collapsed limit (exploratory seeds).

Run: python records/c3_design/explore.py --seeds 0-29 --out /tmp/c23/c3.npz
Seeds are small integers (the exploratory pool, 0-999). For each seed: both W_Q, W_K inits, shapes
(8, 32) and (16, 64), d_QK = 4^0 .. 4^8, beta in {0, 0.5, 1, 2}, 8 inputs per draw (C3 v2's grid, with
d_QK up to 65536 and beta = 0 added), and the collapsed limit S = 11^T/n with a Gaussian W_V.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from qin2025.c3.full_rank import Grid, inputs, sweep
from qin2025.engine.spectral import derive_seed, floor_ratio, rank_deficit
from qin2025.engine.usermodel import PAPER

GRID = Grid(shapes=((8, 32), (16, 64)), d_qks=tuple(4**k for k in range(9)), betas=(0.0, 0.5, 1.0, 2.0), samples=8)


def limit(seed: int, n: int, d: int, beta: float, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (Z, X) at the collapsed limit S = 11^T/n, W_V ~ N(0, 1/d) drawn from the seed."""
    x = inputs(seed, n, d, samples).numpy()
    rng = np.random.default_rng(derive_seed(seed, n, d, 99))
    w_v = rng.normal(0.0, 1 / np.sqrt(d), (d, d))
    attn = np.broadcast_to(x.mean(axis=-2, keepdims=True), x.shape) @ w_v
    return attn + beta * x, x


def main() -> None:
    torch.set_num_threads(1)
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", default="0-29")
    p.add_argument("--out", default="/tmp/c23/c3.npz")
    a = p.parse_args()
    lo, hi = (int(v) for v in a.seeds.split("-"))
    assert hi < 1000
    out: dict[str, np.ndarray] = {}
    for seed in range(lo, hi + 1):
        t0 = time.time()
        points = sweep(PAPER, seed, GRID, ("xavier", "normal"))
        for pt in points:
            key = f"{seed}/{pt.init}/{pt.n}/{pt.d_qk}/{pt.beta:g}"
            out[key + "/ratio"] = pt.floor_z
            out[key + "/deficit"] = pt.deficit
        for n, d in GRID.shapes:
            for beta in GRID.betas:
                z, x = limit(seed, n, d, beta, GRID.samples)
                out[f"{seed}/limit/{n}/inf/{beta:g}/ratio"] = floor_ratio(z, x)
                out[f"{seed}/limit/{n}/inf/{beta:g}/deficit"] = rank_deficit(z)
        print(f"seed {seed}: {time.time() - t0:.1f} s", flush=True)
    np.savez(a.out, **out)


if __name__ == "__main__":
    main()
