"""E12: a positive control in the model itself: train W_U alone (the read-out) on both levers.

Run: nice -n 10 python records/c7_design/readout_only.py [seeds...]   (default 0-9)
With every other weight frozen at its initial value, GD on W_U is least squares on the features
H = FFN(Z) + Z, whose conditioning follows Z's; if a lever moves kinv(Z) and the instrument can see
a rate that follows it, the governs statistic must pass here on both levers. Same 9 runs per lever
as the unit (lambda_max is the top eigenvalue of H^T H, the Hessian of this problem). With the FFN off
(ffn_gain 0) H = Z, and the read-out's rate is least squares on Z itself.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import torch
from claimcheck.stats import t_interval

from qin2025.engine.model import forward
from records.c7_design.common import build, model_cfg
from records.c7_design.decide import Table, association, governs, steady_rate
from records.c7_design.unit import configs


def run(c, seed: int, steps: int = 200, fraction: float = 0.5) -> tuple[float, float, float, float, float]:
    """Return (steady rate, kinv(Z), lambda_max, sigma_min(Z), mu) of GD on W_U alone."""
    params, data = build(c, seed)
    cfg = model_cfg(c)
    eye = dict(params) | {"W_U": torch.eye(cfg.d, dtype=torch.float64)}
    with torch.no_grad():
        fwd = forward(eye, data.x, cfg)
    h = fwd.out.reshape(-1, cfg.d).numpy()  # (N n, d) features
    z = fwd.z[0].numpy()
    y = data.y.reshape(-1).numpy()
    lam = float(np.linalg.eigvalsh(h.T @ h)[-1])  # Hessian of 1/2 ||H w - y||^2
    mu = fraction * 2 / lam
    w = params["W_U"].reshape(-1).numpy().copy()
    loss = []
    for _ in range(steps + 1):
        r = h @ w - y
        loss.append(0.5 * float(r @ r))
        w -= mu * h.T @ r
    sv = np.linalg.svd(z, compute_uv=False)
    return steady_rate(np.array(loss)), float(sv[:, -1].min() / sv[:, 0].max()), lam, float(sv[:, -1].min()), mu


def main(seeds: list[int]) -> None:
    for fg, lever in ((1.0, "kx"), (1.0, "vc"), (0.0, "kx"), (0.0, "vc")):
        bs, rhos = [], []
        for seed in seeds:
            cs = [replace(c, fg=fg) for c in configs(lever)]
            m = np.array([run(c, seed) for c in cs])
            lv = np.array([getattr(c, lever) for c in cs])
            t = Table(
                lv,
                np.array([c.s for c in cs]),
                np.array([c.ug for c in cs]),
                m[:, 0],
                m[:, 1],
                m[:, 2],
                m[:, 3],
                m[:, 4],
            )
            bs.append(governs(t).value)
            rhos.append(association(t).value)
        print(
            f"{lever} lever, W_U alone, FFN {'on' if fg else 'off (H = Z)'}: governs b {t_interval(bs).format()} "
            f"(t 90%, {len(seeds)} seeds; >= 0.5 in "
            f"{sum(b >= 0.5 for b in bs)}), association rho >= 0.9 in "
            f"{sum(r >= 0.9 - 1e-9 for r in rhos)}/{len(seeds)}; "
            f"per seed b: " + " ".join(f"{b:.2f}" for b in bs)
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or list(range(10)))
