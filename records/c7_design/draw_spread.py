"""E7: how far kinv(Z) spreads over Gaussian draws of W_V (or W_Q, W_K) with X and beta fixed (no training).

Run: python records/c7_design/draw_spread.py   (seeds 0-3; the 400 further draws of each seed's own generator)
A lever inside the theorem's premise (Gaussian weights) could select draws at quantiles of kinv(Z).
"""

from __future__ import annotations

import numpy as np
import torch

from qin2025.engine.model import forward, init_params
from records.c7_design.common import Config, build, model_cfg

for beta in (1.0, 0.3):
    for seed in range(4):
        c = Config(beta=beta)
        params, data = build(c, seed)
        cfg = model_cfg(c)
        out = {"W_V": [], "W_QK": []}
        g = torch.Generator().manual_seed(seed)  # one stream per exploratory seed: draws 1..400 after the base one
        init_params(cfg, g, torch.float64)
        for _ in range(400):
            other = init_params(cfg, g, torch.float64)
            for name, keys in (("W_V", ("0.W_V",)), ("W_QK", ("0.W_Q", "0.W_K"))):
                p = dict(params) | {k: other[k] for k in keys}
                with torch.no_grad():
                    z = forward(p, data.x, cfg).z[0].numpy()
                sv = np.linalg.svd(z, compute_uv=False)
                out[name].append(sv[:, -1].min() / sv[:, 0].max())
        for name, v in out.items():
            q = np.quantile(v, [0, 0.05, 0.5, 0.95, 1])
            print(
                f"beta {beta} seed {seed} {name:<5} kinv(Z) min/5%/median/95%/max "
                + " ".join(f"{x:.3g}" for x in q)
                + f"  5-95% span {q[3] / q[1]:.2f}x, full span {q[4] / q[0]:.1f}x"
            )
