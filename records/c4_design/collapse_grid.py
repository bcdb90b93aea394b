"""C4 v3 design: medians of sigma_2/sigma_1 of Attn(X) and of sigma_min(Attn(X))/sigma_min(X) over d_QK = d .. 4^K d.

python records/c4_design/collapse_grid.py --seeds 0-3 --init xavier --top 5 --out /tmp/c4/collapse_xavier.npz

Two weight draws x 8 inputs per d_QK and shape (v2's sizes); ``--init floor:K`` as in train_grid.py.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from train_grid import model, seeds_of

from qin2025.data import make_synthetic
from qin2025.engine.spectral import derive_seed, floor_ratio, sample_attention, sigma_ratio

SHAPES = ((8, 32), (16, 64))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0-3")
    ap.add_argument("--init", default="xavier")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    seeds = seeds_of(a.seeds)
    ratio = np.zeros((len(seeds), len(SHAPES), a.top + 1))
    floor = np.zeros_like(ratio)
    t0 = time.time()
    for i, seed in enumerate(seeds):
        for j, (n, d) in enumerate(SHAPES):
            x = make_synthetic(8, n, d, 1, derive_seed(seed, n, d)).x
            for k in range(a.top + 1):
                q = d * 4**k
                cfg = model(a.init, d, q, 1.0)
                draws = [sample_attention(cfg, x, derive_seed(seed, n, d, q, w)) for w in range(2)]
                attn = np.concatenate([s.attn for s in draws])
                xs = np.concatenate([s.x for s in draws])
                ratio[i, j, k] = np.median(sigma_ratio(attn))
                floor[i, j, k] = np.median(floor_ratio(attn, xs))
    print(f"{a.init}: {time.time() - t0:.1f}s for {len(seeds)} seeds")
    for j, (n, d) in enumerate(SHAPES):
        print(f" n={n} d={d} ratio median", np.round(np.median(ratio[:, j], 0), 5).tolist())
        print(f" n={n} d={d} floor median", np.round(np.median(floor[:, j], 0), 5).tolist())
    np.savez(a.out, seeds=np.array(seeds), ratio=ratio, floor=floor)


if __name__ == "__main__":
    main()
