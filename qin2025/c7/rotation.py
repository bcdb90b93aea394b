"""Find the rotation of W_V's singular vectors that worsens the conditioning of Z most, with everything else fixed.

C7's rotation lever moves kinv(Z) = sigma_min(Z)/sigma_max(Z), Z = S X W_V + beta X, while X (its
spectrum and its vectors), W_Q, W_K and W_V's singular values stay the seed's Gaussian draw: it
sets W_V(t) = expm(t A) W_V expm(t B) with A, B skew-symmetric, so W_V(t) has W_V's singular
values at every t (a rotation of its left and right singular vectors) and t = 0 is the draw.
``worst_rotation`` picks (A, B) by minimising log kinv(Z) over them at the initial weights
(Adam from A = B = 0, the best iterate kept): a deterministic function of the seed's draw.

A rotation of a Gaussian matrix by a fixed orthogonal pair is again a Gaussian matrix of the same
law; this one is chosen from the draw, so W_V(t) is a *selected* rotation of a Gaussian draw: every
singular value Theorem 1's alpha reads off the initial weights is the draw's, but W_V(t) is not a
Gaussian draw in law. The claim's regime says so.

The lever holds W_V's singular values at init; GD then moves W_V. ``descend_reading_w_v`` replays
the batched engine's descent (same stack, same product, same update, the engine's step size per
run) and reads sigma_min(W_V_t) every few steps, which the engine does not return: what the claim
needs to hold W_V's own conditioning over the steps its rate is fitted on (v6). A test checks that
its loss curves are the engine's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from qin2025.engine.batched import Run, Stack
from qin2025.engine.model import ModelConfig, Params, forward

ITERS = 200  # Adam steps on (A, B)
LR = 0.02  # Adam's step; about 0.5 s of CPU a seed at d = 32 (one thread)


def log_kinv(z: torch.Tensor) -> torch.Tensor:
    """Return log(min_i sigma_min(Z_i) / max_i sigma_max(Z_i)) of Z (N, n, d), differentiably."""
    s = torch.linalg.svdvals(z)  # (N, min(n, d)), descending
    return torch.log(s[:, -1].min()) - torch.log(s[:, 0].max())


def rotate(w_v: torch.Tensor, a: torch.Tensor, b: torch.Tensor, t: float) -> torch.Tensor:
    """Return expm(t A) W_V expm(t B): W_V with its singular vectors rotated a fraction ``t`` of the way."""
    return torch.matrix_exp(t * a) @ w_v @ torch.matrix_exp(t * b)


def worst_rotation(
    params: Params, x: torch.Tensor, cfg: ModelConfig, iters: int = ITERS, lr: float = LR
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return skew (A, B) whose rotation of layer 0's W_V minimises kinv(Z) at ``params`` on ``x``.

    Only W_V moves, and only through its singular vectors; the other weights and ``x`` are read,
    never changed. The search is deterministic (float64, Adam from zero); the best iterate is kept.
    """
    w_v = params["0.W_V"].detach()
    d = w_v.shape[0]
    ua = torch.zeros(d, d, dtype=w_v.dtype, requires_grad=True)
    ub = torch.zeros(d, d, dtype=w_v.dtype, requires_grad=True)
    opt = torch.optim.Adam([ua, ub], lr=lr)
    best = (float("inf"), torch.zeros(d, d, dtype=w_v.dtype), torch.zeros(d, d, dtype=w_v.dtype))
    fixed = {k: v.detach() for k, v in params.items()}
    for _ in range(iters + 1):
        a, b = ua - ua.T, ub - ub.T
        objective = log_kinv(forward({**fixed, "0.W_V": rotate(w_v, a, b, 1.0)}, x, cfg).z[0])
        if float(objective.detach()) < best[0]:
            best = (float(objective.detach()), a.detach().clone(), b.detach().clone())
        ua.grad, ub.grad = torch.autograd.grad(objective, [ua, ub])
        opt.step()
    return best[1], best[2]


def descend_reading_w_v(
    runs: Sequence[Run], params: Sequence[Params], lrs: Sequence[float], steps: int, every: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return each run's loss curve (B, steps + 1) and sigma_min of layer 0's W_V every ``every`` steps (B, k).

    Full-batch GD from ``params[i]`` at step size ``lrs[i]`` for ``steps`` steps, as one stack, the
    way ``qin2025.engine.batched`` descends (``Stack.losses`` with the once-differentiated product, then
    ``w -= mu * grad``); no stop rule: every run takes every step, and a caller reads only the steps
    the engine's run reached. The runs must share their shapes (``check_batchable``'s rule).
    """
    x = torch.stack([r.data.x for r in runs])

    def col(values: Sequence[float], dims: int) -> torch.Tensor:
        return torch.tensor(list(values), dtype=x.dtype).view(-1, *([1] * dims))

    stack = Stack(
        rows=list(range(len(runs))),
        params={k: torch.stack([p[k].detach().to(x.dtype) for p in params]) for k in params[0]},
        x=x,
        y=torch.stack([r.data.y for r in runs]),
        beta=col([r.model.beta for r in runs], 3),
        gamma=col([r.model.ffn_residual for r in runs], 3),
        lr=col(lrs, 2),
    )
    cfg = runs[0].model
    losses, readings = [], []
    for step in range(steps + 1):
        leaves = [p.requires_grad_(True) for p in stack.params.values()]
        loss, _ = stack.losses(cfg, dict(zip(stack.params, leaves, strict=True)), once=True)
        losses.append(loss.detach().numpy().copy())
        if step % every == 0:
            readings.append(torch.linalg.svdvals(stack.params["0.W_V"].detach())[:, -1].numpy().copy())
        if step == steps:
            break
        grads = torch.autograd.grad(loss.sum(), leaves)
        with torch.no_grad():
            for leaf, g in zip(leaves, grads, strict=True):
                leaf.sub_(g.mul_(stack.lr))
    return np.stack(losses, axis=1), np.stack(readings, axis=1)
