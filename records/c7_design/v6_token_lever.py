"""T1 (C7 v6 design): is there a lever inside the Gaussian draw *in law* that moves kinv(Z) 10x with X's spectrum fixed?

Run: nice -n 10 python records/c7_design/v6_token_lever.py [seeds...]   (default 0-3)

With the weights iid Gaussian, the law of Z's singular values depends on X only through its
spectrum and its left singular vectors (the token orientation), so with the spectrum fixed the one
lever left keeps every weight the seed's exact draw and rotates each X_i in token space,
X_i -> expm(C_i) X_i (C_i skew, n x n). This searches the C_i that minimise kinv(Z) at init (Adam
from zero, 300 steps, best iterate kept) and prints the reduction beside the v5 rotation lever's
(W_V's singular vectors rotated, ``qin2025.c7.rotation.worst_rotation``), at init.
"""

from __future__ import annotations

import sys
import time

import torch

from qin2025.c7.conditioning import MODEL, Setting, build
from qin2025.c7.rotation import log_kinv, rotate, worst_rotation
from qin2025.engine.model import Params, forward

torch.set_num_threads(1)


def token_search(params: Params, x: torch.Tensor, iters: int = 300, lr: float = 0.02) -> float:
    """Return the smallest kinv(Z) at init over token rotations of every X_i, the weights fixed."""
    n_samples, n, _ = x.shape
    u = torch.zeros(n_samples, n, n, dtype=x.dtype, requires_grad=True)
    opt = torch.optim.Adam([u], lr=lr)
    fixed = {k: v.detach() for k, v in params.items()}
    best = float("inf")
    for _ in range(iters + 1):
        objective = log_kinv(forward(fixed, torch.matrix_exp(u - u.transpose(1, 2)) @ x, MODEL).z[0])
        best = min(best, float(objective.detach()))
        (u.grad,) = torch.autograd.grad(objective, [u])
        opt.step()
    return float(torch.tensor(best).exp())


def main(seeds: list[int]) -> None:
    for seed in seeds:
        start = time.process_time()
        params, data = build(Setting(), seed)
        k0 = float(log_kinv(forward(params, data.x, MODEL).z[0]).exp())
        by_tokens = token_search(params, data.x)
        a, b = worst_rotation(params, data.x, MODEL)
        turned = {**params, "0.W_V": rotate(params["0.W_V"], a, b, 1.0)}
        by_w_v = float(log_kinv(forward(turned, data.x, MODEL).z[0]).exp())
        print(
            f"seed {seed}: kinv(Z) as drawn {k0:.4g}; token rotation {by_tokens:.4g} ({k0 / by_tokens:.3g}x); "
            f"W_V rotation (v5) {by_w_v:.4g} ({k0 / by_w_v:.3g}x); cpu {time.process_time() - start:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or list(range(4)))
