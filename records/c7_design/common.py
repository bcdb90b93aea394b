"""Build and train the C7 v3 design's configurations: levers on the conditioning of Z with beta fixed.

Exploration code for records/claims/c7-v3-design.md, not part of the test suite. A configuration moves
one or more levers away from a seed's base draw (Gaussian X, the model's Gaussian init):

- ``kx``: every X_i = U_i diag(s) V_i^T keeps the singular vectors of the seed's Gaussian X_i, with
  singular values geometric from 1 to 1/kx, Frobenius norm sqrt(n d) (kx = 0: the Gaussian X as drawn);
- ``kv``: W_V keeps its singular vectors, singular values geometric from 1 to 1/kv, its own Frobenius
  norm (kv = 0: W_V as drawn);
- ``s``: X -> s X and W_Q, W_K -> W_Q / s, W_K / s: S and the conditioning of Z are unchanged,
  sigma(Z) moves by s;
- ``ug``: W_U -> ug W_U (moves lambda_max and the rate, leaves Z alone);
- ``qg``: W_Q, W_K -> qg W_Q, qg W_K (X untouched): sharper or flatter attention, X's spectrum fixed;
- ``vc``: W_V -> (1 - vc)(-beta I) + vc W_V (X untouched): as vc -> 0, Z -> beta (I - S) X, rank n - 1;
- ``beta``, ``d_qk``, ``qk_init``: the model's own.

Training goes through the batched engine's stack, from parameters built here (``train_from``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from qin2025.data.synthetic import TensorData, make_synthetic
from qin2025.engine.batched import Run, _stack, check_batchable, descend, top_eigenvalues
from qin2025.engine.model import ModelConfig, Params, forward, init_params
from qin2025.engine.spectral import mean_rate
from qin2025.engine.train import TrainConfig, Trajectory, TrajectoryLog, step_size
from records.c7_design.decide import steady_rate

torch.set_num_threads(1)  # as the claim suite runs; threads on a shared 2-core machine cost 15x in CPU time

SIZE = (2, 8, 32)  # N samples, n tokens, d (N n <= d, as v2)


@dataclass(frozen=True)
class Config:
    """One configuration of one seed: which levers moved and by how much."""

    kx: float = 0.0  # condition number imposed on every X_i (0: Gaussian as drawn)
    kv: float = 0.0  # condition number imposed on W_V (0: as drawn)
    s: float = 1.0  # scale of X, with W_Q, W_K divided by it
    ug: float = 1.0  # gain on W_U
    qg: float = 1.0  # gain on W_Q and W_K (X untouched): the sharpness of attention
    vc: float = 1.0  # W_V -> (1 - vc)(-beta I) + vc W_V: at vc -> 0 the attention cancels the residual's
    #                  token-mean part, Z -> beta (I - S) X of rank n - 1 (X and beta untouched)
    fg: float = 1.0  # FFN gain (ModelConfig.ffn_gain); 0 switches the FFN off (W_1 = W_2 = 0 get no gradient)
    vp: bool = False  # with vc: cancel with -beta (I - p p^T), p a unit vector orthogonal to every row of X,
    #                   so that W_V keeps a small singular value (as a Gaussian W_V has) while Z is the same
    beta: float = 1.0
    d_qk: int = 16
    qk_init: str = "normal"


def geometric(k: int, kappa: float, norm: float) -> np.ndarray:
    """Return k singular values geometric from 1 to 1/kappa, rescaled to Euclidean norm ``norm``."""
    s = kappa ** (-np.arange(k) / max(k - 1, 1))
    return np.asarray(s * norm / np.linalg.norm(s))


def respectrum(m: np.ndarray, kappa: float, norm: float | None = None) -> np.ndarray:
    """Return ``m`` (..., a, b) with its singular vectors and geometric singular values (condition kappa)."""
    u, sv, vt = np.linalg.svd(m, full_matrices=False)
    out = np.empty_like(m)
    for idx in np.ndindex(m.shape[:-2]):
        target = float(np.linalg.norm(sv[idx])) if norm is None else norm
        out[idx] = (u[idx] * geometric(sv.shape[-1], kappa, target)) @ vt[idx]
    return out


def model_cfg(c: Config) -> ModelConfig:
    """Return the ModelConfig of a configuration (shape of v2: d = 32, d_out = 1)."""
    return ModelConfig(d=SIZE[2], d_qk=c.d_qk, beta=c.beta, qk_init=c.qk_init, ffn_gain=c.fg)  # type: ignore[arg-type]


def build(c: Config, seed: int) -> tuple[Params, TensorData]:
    """Return the initial parameters and the data of configuration ``c`` of ``seed``."""
    n_s, n, d = SIZE
    base = make_synthetic(n_s, n, d, 1, seed)
    x = base.x.numpy()
    if c.kx:
        x = respectrum(x, c.kx, math.sqrt(n * d))
    x = x * c.s
    cfg = model_cfg(c)
    params = init_params(cfg, torch.Generator().manual_seed(seed), torch.float64)
    if c.kv:
        params["0.W_V"] = torch.from_numpy(respectrum(params["0.W_V"].numpy(), c.kv))
    params["0.W_Q"] = params["0.W_Q"] * c.qg / c.s
    params["0.W_K"] = params["0.W_K"] * c.qg / c.s
    params["W_U"] = params["W_U"] * c.ug
    if c.vc != 1.0:
        eye = torch.eye(SIZE[2], dtype=torch.float64)
        if c.vp:
            p = torch.from_numpy(np.linalg.svd(x.reshape(-1, d))[2][-1] / c.s)
            p = p / p.norm()
            eye = eye - torch.outer(p, p)
        params["0.W_V"] = (1 - c.vc) * (-c.beta * eye) + c.vc * params["0.W_V"]
    return params, TensorData(torch.from_numpy(x), base.y, f"{base.name} {c}")


def train_from(runs: list[Run], params: list[Params]) -> list[Trajectory]:
    """Train ``runs`` from the given initial parameters with the batched engine (as ``train_batch``)."""
    check_batchable(runs)
    datas = [r.data for r in runs]
    stack = _stack(runs, params, datas)
    cfg = runs[0].model
    lams = top_eigenvalues(stack, cfg, runs)
    sizes = [step_size(r.train, lam) for r, lam in zip(runs, lams, strict=True)]
    logs = [TrajectoryLog(r.train) for r in runs]
    descend(stack.with_lr([lr for lr, _ in sizes]), cfg, logs)
    return [
        log.trajectory(r.model, data, r.seed, lam, lr, rule)
        for log, r, data, lam, (lr, rule) in zip(logs, runs, datas, lams, sizes, strict=True)
    ]


def ntk_condition(params: Params, data: TensorData, cfg: ModelConfig) -> float:
    """Return lambda_min / lambda_max of the NTK Gram J J^T (outputs x outputs) at ``params``."""
    lo, hi = ntk_extremes(params, data, cfg)
    return lo / hi


def ntk_extremes(params: Params, data: TensorData, cfg: ModelConfig) -> tuple[float, float]:
    """Return (lambda_min, lambda_max) of the NTK Gram J J^T (outputs x outputs) at ``params``."""
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    out = forward(leaves, data.x, cfg).out.reshape(-1)
    rows = []
    for i in range(out.numel()):
        g = torch.autograd.grad(out[i], list(leaves.values()), retain_graph=True, allow_unused=True)
        rows.append(
            torch.cat(
                [
                    (t if t is not None else torch.zeros_like(p)).reshape(-1)
                    for t, p in zip(g, leaves.values(), strict=True)
                ]
            )
        )
    jac = torch.stack(rows)
    ev = torch.linalg.eigvalsh(jac @ jac.T)
    return float(ev[0]), float(ev[-1])


@dataclass(frozen=True)
class Measured:
    """What one run gave: the rates and the spectra at initialisation."""

    seed: int
    config: Config
    rate: float  # mean_rate: orders of decrease per step at mu = f * 2/lambda_max
    steady: float  # steady_rate: minus the slope of log10 L over the last three quarters
    tail: float  # orders per step over the second half of the run
    rate_per_mu: float  # rate / mu
    lam: float
    mu: float
    kinv: float  # min_i sigma_min(Z_i) / max_i sigma_max(Z_i) at init
    kinv_stacked: float  # sigma_min / sigma_max of the stacked (N n, d) Z
    smin: float  # min_i sigma_min(Z_i)
    smax: float  # max_i sigma_max(Z_i)
    kinv_x: float  # the same measure on X
    ntk: float  # lambda_min / lambda_max of J J^T at init (NaN when not measured)
    ok: bool  # finite and decreasing
    steps: int

    def row(self) -> dict[str, object]:
        """Return a flat dict (config fields first) for tables."""
        return {**asdict(self.config), **{k: v for k, v in asdict(self).items() if k != "config"}}


def _kinv(z: np.ndarray) -> tuple[float, float, float, float]:
    sv = np.linalg.svd(z, compute_uv=False)  # (N, n)
    stacked = np.linalg.svd(z.reshape(-1, z.shape[-1]), compute_uv=False)
    return (
        float(sv[:, -1].min() / sv[:, 0].max()),
        float(stacked[-1] / stacked[0]),
        float(sv[:, -1].min()),
        float(sv[:, 0].max()),
    )


def run_grid(
    configs: list[Config], seeds: list[int], steps: int = 100, fraction: float = 0.5, ntk: bool = False
) -> list[Measured]:
    """Train every configuration of every seed (one batch per shape) and measure each run."""
    out: list[Measured] = []
    tcfg = TrainConfig(steps=steps, lr_fraction=fraction)
    for d_qk in sorted({c.d_qk for c in configs}):
        mine = [(c, s) for s in seeds for c in configs if c.d_qk == d_qk]
        built = [build(c, s) for c, s in mine]
        runs = [Run(model_cfg(c), tcfg, data, s) for (c, s), (_, data) in zip(mine, built, strict=True)]
        trajs = train_from(runs, [p for p, _ in built])
        for (c, s), (params, data), traj in zip(mine, built, trajs, strict=True):
            cfg = model_cfg(c)
            with torch.no_grad():
                z = forward(params, data.x, cfg).z[0].numpy()
            kinv, kst, smin, smax = _kinv(z)
            xs = np.linalg.svd(data.x.numpy(), compute_uv=False)
            loss = traj.loss
            rate = mean_rate(loss)
            half = len(loss) // 2
            tail = mean_rate(loss[half:]) if len(loss) - half >= 2 else math.nan
            ok = traj.diverged_at is None and math.isfinite(rate) and rate > 0 and bool(loss[-1] < loss[0])
            out.append(
                Measured(
                    s,
                    c,
                    rate,
                    steady_rate(loss),
                    tail,
                    rate / traj.lr,
                    traj.lambda_max,
                    traj.lr,
                    kinv,
                    kst,
                    smin,
                    smax,
                    float(xs[:, -1].min() / xs[:, 0].max()),
                    ntk_condition(params, data, cfg) if ntk else math.nan,
                    ok,
                    len(loss) - 1,
                )
            )
    return out


def with_(c: Config, **kw: object) -> Config:
    """Return ``c`` with fields replaced."""
    return replace(c, **kw)  # type: ignore[arg-type]
