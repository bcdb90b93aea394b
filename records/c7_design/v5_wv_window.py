"""V2 (C7 v5 design): along the rotation lever, does W_V's own conditioning move over the fitted steps?

Run: nice -n 10 python records/c7_design/v5_wv_window.py [seeds...]   (default 0-5)

The lever holds W_V's singular values at init; GD then moves W_V. This retrains each of the
lever's 5 settings by plain full-batch GD (autograd, every weight, the engine's own step size for
the run) and reads sigma_min(W_V_t), sigma_min/sigma_max(W_V_t) and kinv(Z_t) every 10 steps over
[50, 200]; it also checks the loss curve against the engine's (max relative difference).
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from qin2025.c7.conditioning import LR_FRACTION, MODEL, ROTATION, build, window_kinv
from qin2025.engine.batched import Run, train_batch_from
from qin2025.engine.model import forward, loss_fn
from qin2025.engine.train import TrainConfig

torch.set_num_threads(1)


def main(seeds: list[int]) -> None:
    train = TrainConfig(steps=200, lr_fraction=LR_FRACTION, sigma_every=10)
    print("seed rt   smin(W_V) init  window | kinv(W_V) init window | kinv(Z) init window | loss vs engine")
    for seed in seeds:
        settings = ROTATION.settings()[:5]
        built = [build(s, seed) for s in settings]
        trajs = train_batch_from([Run(MODEL, train, d, seed) for _, d in built], [p for p, _ in built])
        for s, (p0, data), tr in zip(settings, built, trajs, strict=True):
            p = {k: v.clone().requires_grad_(True) for k, v in p0.items()}
            wv_min, wv_k, steps, zmin, zmax, loss = [], [], [], [], [], []
            for t in range(201):
                value = loss_fn(p, data.x, data.y, MODEL)
                loss.append(float(value))
                if t % 10 == 0:
                    sv = torch.linalg.svdvals(p["0.W_V"].detach())
                    wv_min.append(float(sv[-1]))
                    wv_k.append(float(sv[-1] / sv[0]))
                    z = torch.linalg.svdvals(forward(p, data.x, MODEL).z[0].detach())
                    steps.append(t)
                    zmin.append(float(z[:, -1].min()))
                    zmax.append(float(z[:, 0].max()))
                if t == 200:
                    break
                grads = torch.autograd.grad(value, list(p.values()))
                with torch.no_grad():
                    for w, g in zip(p.values(), grads, strict=True):
                        w -= tr.lr * g
            st = np.array(steps)
            win = st >= 50
            gm = lambda a, w=win: float(np.exp(np.mean(np.log(np.asarray(a)[w]))))  # noqa: E731
            n = min(len(loss), len(tr.loss))
            diff = float(np.max(np.abs(np.array(loss[:n]) - tr.loss[:n]) / tr.loss[:n]))
            print(
                f"{seed:4d} {s.rt:<4g} {wv_min[0]:9.3g} {gm(wv_min):9.3g} | {wv_k[0]:9.3g} {gm(wv_k):9.3g} | "
                f"{zmin[0] / zmax[0]:7.3g} {window_kinv(st, zmin, zmax, 200):7.3g} | {diff:.1e}",
                flush=True,
            )


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or list(range(6)))
