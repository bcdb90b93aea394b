"""Train the model by full-batch gradient descent: a pure function of configs, data and seed.

``train(model_cfg, train_cfg, data, seed) -> Trajectory``. The step size is either a number or a
fraction of the local stability bound 2 / lambda_max, where lambda_max is the top eigenvalue of the
loss Hessian at initialisation, measured by power iteration on Hessian-vector products.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from claimcheck.data.synthetic import TensorData
from claimcheck.errors import ConfigError
from claimcheck.model import ModelConfig, Params, forward, init_params, loss_fn, squared_loss

ENGINE_VERSION = "1"

DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True)
class TrainConfig:
    """How to train: steps, the step size (absolute or relative to 2/lambda_max), what to record."""

    steps: int = 200  # GD steps T; the trajectory holds T + 1 losses
    lr: float | None = None  # absolute step size mu; exactly one of lr, lr_fraction
    lr_fraction: float | None = 0.5  # mu = lr_fraction * 2 / lambda_max(Hessian at init)
    power_iters: int = 200  # cap on power-iteration steps for lambda_max
    power_tol: float = 1e-7  # stop when the Rayleigh quotient changes by less (relative)
    sigma_every: int = 0  # record sigma(Z) every k steps (0: at the first and last step only)
    rel_floor: float = 1e-24  # stop early once loss <= rel_floor * loss_0 (float64 noise floor)
    dtype: str = "float64"
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ConfigError(f"TrainConfig.steps must be >= 1, got {self.steps}")
        if (self.lr is None) == (self.lr_fraction is None):
            raise ConfigError(
                "TrainConfig needs exactly one of lr (absolute step size) and lr_fraction "
                f"(fraction of 2/lambda_max); got lr={self.lr}, lr_fraction={self.lr_fraction}"
            )
        for name in ("lr", "lr_fraction"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"TrainConfig.{name} must be > 0, got {value}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"TrainConfig.dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")

    @property
    def torch_dtype(self) -> torch.dtype:
        """Return the torch dtype named by ``dtype``."""
        return DTYPES[self.dtype]

    def to_dict(self) -> dict[str, object]:
        """Return the config as a JSON-ready dict."""
        return asdict(self)


@dataclass
class Trajectory:
    """What one training run produced; arrays are numpy, the configs travel with it."""

    loss: np.ndarray  # (T' + 1,) loss before each step and after the last (T' <= T)
    grad_norm: np.ndarray  # (T',) Euclidean norm of the full gradient at each step
    sigma_steps: np.ndarray  # (k,) steps at which sigma(Z) was measured
    sigma_min: np.ndarray  # (k, L) min over samples of sigma_min(Z_i), per layer
    sigma_max: np.ndarray  # (k, L) max over samples of sigma_max(Z_i), per layer
    lr: float  # the step size mu actually used
    lambda_max: float  # top Hessian eigenvalue at initialisation
    lr_rule: str  # "absolute" or "fraction of 2/lambda_max"
    diverged_at: int | None  # first step whose loss was NaN or infinite, else None
    seed: int
    model: dict[str, object] = field(default_factory=dict)
    train: dict[str, object] = field(default_factory=dict)
    data: str = ""
    data_fingerprint: str = ""

    @property
    def lr_over_bound(self) -> float:
        """Return mu / (2 / lambda_max), the step size relative to the local stability bound."""
        return self.lr * self.lambda_max / 2


def _flat(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def hessian_top_eigenvalue(
    params: Params,
    data: TensorData,
    cfg: ModelConfig,
    *,
    iters: int = 200,
    tol: float = 1e-7,
    seed: int = 0,
) -> float:
    """Return the largest eigenvalue of the loss Hessian at ``params`` by power iteration.

    Uses Hessian-vector products (double backward). If the dominant eigenvalue in magnitude is
    negative, iterates again on H + |lambda| I to find the top (most positive) one.
    """
    names = list(params)
    leaves = [params[k].detach().clone().requires_grad_(True) for k in names]
    loss = loss_fn(dict(zip(names, leaves, strict=True)), data.x, data.y, cfg)
    grads = torch.autograd.grad(loss, leaves, create_graph=True)
    flat_grad = _flat(list(grads))

    def hvp(v: torch.Tensor) -> torch.Tensor:
        hv = torch.autograd.grad(flat_grad, leaves, grad_outputs=v, retain_graph=True)
        return _flat(list(hv))

    gen = torch.Generator().manual_seed(seed)

    def power(shift: float) -> float:
        v = torch.randn(flat_grad.numel(), generator=gen, dtype=flat_grad.dtype)
        v /= v.norm()
        lam = 0.0
        for _ in range(iters):
            w = hvp(v) + shift * v
            new = float(v @ w)
            norm = w.norm()
            if norm == 0:
                return -shift
            v = w / norm
            if abs(new - lam) <= tol * abs(new):
                lam = new
                break
            lam = new
        return lam - shift

    lam = power(0.0)
    if lam < 0:
        lam = power(abs(lam))
    return lam


def _sigma(z_list: list[torch.Tensor]) -> tuple[list[float], list[float]]:
    mins, maxs = [], []
    for z in z_list:
        s = torch.linalg.svdvals(z.detach())  # (N, min(n, d)) descending
        mins.append(float(s[..., -1].min()))
        maxs.append(float(s[..., 0].max()))
    return mins, maxs


def train(model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int) -> Trajectory:
    """Initialise from ``seed`` and run full-batch GD on all weights; return the trajectory.

    A NaN or infinite loss stops the run and is recorded in ``diverged_at``; the run stops early
    (converged) once the loss falls below ``rel_floor`` times the initial loss.
    """
    dtype = train_cfg.torch_dtype
    device = torch.device(train_cfg.device)
    gen = torch.Generator().manual_seed(seed)
    params = {k: v.to(device) for k, v in init_params(model_cfg, gen, dtype).items()}
    data = TensorData(data.x.to(device, dtype), data.y.to(device, dtype), data.name)

    lam = hessian_top_eigenvalue(
        params, data, model_cfg, iters=train_cfg.power_iters, tol=train_cfg.power_tol, seed=seed
    )
    if train_cfg.lr is not None:
        lr, rule = train_cfg.lr, "absolute"
    else:
        assert train_cfg.lr_fraction is not None
        if not lam > 0:
            raise ConfigError(
                f"lr_fraction needs a positive Hessian eigenvalue at init, measured {lam}; "
                "give an absolute TrainConfig.lr instead"
            )
        lr, rule = train_cfg.lr_fraction * 2 / lam, "fraction of 2/lambda_max"

    every = train_cfg.sigma_every
    names = list(params)
    leaves = [params[k].requires_grad_(True) for k in names]
    losses: list[float] = []
    gnorms: list[float] = []
    sig_steps: list[int] = []
    sig_min: list[list[float]] = []
    sig_max: list[list[float]] = []
    diverged_at: int | None = None
    loss0 = math.nan

    def record_sigma(step: int, z_list: list[torch.Tensor]) -> None:
        lo, hi = _sigma(z_list)
        sig_steps.append(step)
        sig_min.append(lo)
        sig_max.append(hi)

    for step in range(train_cfg.steps + 1):
        fwd = forward(dict(zip(names, leaves, strict=True)), data.x, model_cfg)
        loss = squared_loss(fwd.out, data.y, model_cfg)
        value = loss.item()
        losses.append(value)
        if step == 0:
            loss0 = value
        if not math.isfinite(value):
            diverged_at = step
            break
        last = step == train_cfg.steps or value <= train_cfg.rel_floor * loss0
        if step == 0 or last or (every and step % every == 0):
            record_sigma(step, fwd.z)
        if last:
            break
        grads = torch.autograd.grad(loss, leaves)
        gnorms.append(float(_flat(list(grads)).norm()))
        with torch.no_grad():
            for leaf, g in zip(leaves, grads, strict=True):
                leaf -= lr * g

    n_layers = model_cfg.n_layers
    return Trajectory(
        loss=np.asarray(losses, dtype=np.float64),
        grad_norm=np.asarray(gnorms, dtype=np.float64),
        sigma_steps=np.asarray(sig_steps, dtype=np.int64),
        sigma_min=np.asarray(sig_min, dtype=np.float64).reshape(-1, n_layers),
        sigma_max=np.asarray(sig_max, dtype=np.float64).reshape(-1, n_layers),
        lr=lr,
        lambda_max=lam,
        lr_rule=rule,
        diverged_at=diverged_at,
        seed=seed,
        model=model_cfg.to_dict(),
        train=train_cfg.to_dict(),
        data=data.name,
        data_fingerprint=data.fingerprint,
    )
