"""V1 (C7 v5 design): how far can rotating W_V's singular vectors move kinv(Z), at init and over the fitted steps?

Run: nice -n 10 python records/c7_design/v5_rotation.py [seeds...]   (default 0-7)

The lever: W_V(t) = expm(t A) W_V expm(t B), A and B skew, t in 0..1; t = 0 is the seed's Gaussian
draw. W_V's singular values are the draw's at every t (a rotation of its singular vectors) and X is
untouched (its spectrum and everything else), as are W_Q, W_K, W_1, W_2, W_U. (A, B) minimise
log kinv(Z) at init (Adam on the skew parts). Each setting trains as the claim trains (mu = 0.5 *
2/lambda_max at init, T = 200), with sigma(Z) recorded every 10 steps, so kinv(Z) is read over the
steps the rate is fitted on ([50, 200]) as well as at step 0.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from qin2025.c7.conditioning import LR_FRACTION, MODEL, Setting, build, steady_rate
from qin2025.engine.batched import Run, train_batch_from
from qin2025.engine.model import forward
from qin2025.engine.train import TrainConfig

T = (0.0, 0.25, 0.5, 0.75, 1.0)
torch.set_num_threads(1)


def log_kinv(z: torch.Tensor) -> torch.Tensor:
    s = torch.linalg.svdvals(z)  # (N, n)
    return torch.log(s[:, -1].min()) - torch.log(s[:, 0].max())


def rotation(seed: int, iters: int = 300) -> tuple[torch.Tensor, torch.Tensor]:
    params, data = build(Setting(), seed)
    wv = params["0.W_V"]
    d = wv.shape[0]
    a = torch.zeros(d, d, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(d, d, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([a, b], lr=0.02)
    for _ in range(iters):
        opt.zero_grad()
        p = dict(params)
        p["0.W_V"] = torch.matrix_exp(a - a.T) @ wv @ torch.matrix_exp(b - b.T)
        loss = log_kinv(forward(p, data.x, MODEL).z[0])
        loss.backward()
        opt.step()
    return (a - a.T).detach(), (b - b.T).detach()


def main(seeds: list[int]) -> None:
    train = TrainConfig(steps=200, lr_fraction=LR_FRACTION, sigma_every=10)
    for seed in seeds:
        a, b = rotation(seed)
        runs, ps = [], []
        for t in T:
            params, data = build(Setting(), seed)
            params["0.W_V"] = torch.matrix_exp(t * a) @ params["0.W_V"] @ torch.matrix_exp(t * b)
            runs.append(Run(MODEL, train, data, seed))
            ps.append(params)
        trajs = train_batch_from(runs, ps)
        rows = []
        for t, tr, p in zip(T, trajs, ps, strict=True):
            kinv = tr.sigma_min[:, 0] / tr.sigma_max[:, 0]
            win = tr.sigma_steps >= 50
            sv = np.linalg.svd(p["0.W_V"].numpy(), compute_uv=False)
            rows.append(
                f"t={t:<4g} kinv0 {kinv[0]:.3g} kinv10 {kinv[1]:.3g} kinv_win {np.exp(np.log(kinv[win]).mean()):.3g} "
                f"smin(W_V) {sv[-1]:.3g} lam {tr.lambda_max:.3g} rate {steady_rate(tr.loss, 200):.4f}"
            )
        print(f"seed {seed}:\n  " + "\n  ".join(rows), flush=True)


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or list(range(8)))
