"""Train the model by full-batch gradient descent: a pure function of configs, data and seed.

``train(model_cfg, train_cfg, data, seed) -> Trajectory``. The step size is either a number or a
fraction of the local stability bound 2 / lambda_max, where lambda_max is the top eigenvalue of the
loss Hessian at initialisation, measured by Lanczos on Hessian-vector products.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from claimcheck.errors import ConfigError
from qin2025.data.synthetic import TensorData
from qin2025.engine.model import ModelConfig, Params, squared_loss
from qin2025.engine.usermodel import PAPER, ModelSpec

ENGINE_VERSION = "3"  # 3: lambda_max by Lanczos (2: no per-step gradient norm; 1: the first engine)

DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True)
class TrainConfig:
    """How to train: steps, the step size (absolute or relative to 2/lambda_max), what to record."""

    steps: int = 200  # GD steps T; the trajectory holds T + 1 losses
    lr: float | None = None  # absolute step size mu; exactly one of lr, lr_fraction
    lr_fraction: float | None = 0.5  # mu = lr_fraction * 2 / lambda_max(Hessian at init)
    power_iters: int = 200  # cap on Hessian-vector products (Lanczos steps) for lambda_max
    power_tol: float = 1e-7  # stop when the estimate of lambda_max changes by less (relative)
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


class Lanczos:
    """Hold one run's Lanczos iteration for the top eigenvalue of a symmetric H: its basis and its stop rule.

    ``hessian_top_eigenvalue`` and the batched engine both step it, so both stop by the same rule
    and return the same number. The start vector is the next ``size`` normals drawn from the CPU
    ``generator``, in the dtype and on the device of ``like``. Each step takes H v for the last
    basis vector ``v``, orthogonalises it against the whole basis (twice: the basis stays
    orthonormal to rounding), and extends the tridiagonal T = Q^T H Q. The estimate is the top
    eigenvalue of T (a Ritz value), which rises monotonically towards the top eigenvalue of H: the
    largest, not the largest in magnitude, so no shifted second pass is needed. It stops once the
    estimate changes by at most ``tol`` (relative), or when the basis spans an invariant subspace
    (the estimate is then exact). After ``RESTART`` vectors the iteration restarts from its best
    Ritz vector, which bounds the memory at ``RESTART`` vectors of the parameters' size.
    """

    RESTART = 40

    def __init__(self, size: int, generator: torch.Generator, like: torch.Tensor, tol: float) -> None:
        v = torch.randn(size, generator=generator, dtype=like.dtype).to(like.device)
        self.tol = tol
        self._start(v / v.norm())
        self.lam = 0.0  # the estimate after the last step
        self.done = False  # converged, or the basis spans an invariant subspace

    def _start(self, v: torch.Tensor) -> None:
        self.v = v  # the vector whose product H v the next step takes
        self._rows = v.new_empty(min(8, self.RESTART), v.numel())  # the basis, one vector a row, room to grow
        self._count = 0  # basis vectors held in the first rows of ``_rows``
        self._append(v)
        self.alphas: list[float] = []
        self.betas: list[float] = []

    def _append(self, v: torch.Tensor) -> None:
        """Add ``v`` to the basis as the next row, doubling the rows held (up to RESTART) when full."""
        if self._count == len(self._rows):
            rows = self._rows.new_empty(min(2 * self._count, self.RESTART), self._rows.shape[1])
            rows[: self._count] = self._rows
            self._rows = rows
        self._rows[self._count] = v
        self._count += 1

    def update(self, hv: torch.Tensor) -> None:
        """Take one step given ``hv`` = H v; set ``done`` once the estimate changes by at most tol (relative)."""
        w = hv.clone()  # a fresh, aligned vector: the products below round alike in every engine
        self.alphas.append(float(self.v @ w))
        q = self._rows[: self._count]  # (k, size): packed from the start of its memory, as a fresh stack would be
        for _ in range(2):
            w -= q.T @ (q @ w)
        beta = float(w.norm())
        theta, vectors = np.linalg.eigh(_tridiagonal(self.alphas, self.betas))
        new = float(theta[-1])
        invariant = not beta > 1e-12 * max(abs(new), abs(float(theta[0])), 1e-300)
        self.done = invariant or (len(self.alphas) > 1 and abs(new - self.lam) <= self.tol * abs(new))
        self.lam = new
        if self.done:
            return
        if self._count < self.RESTART:
            self.betas.append(beta)
            self.v = w / beta
            self._append(self.v)
        else:  # restart from the best Ritz vector, H-estimate kept
            ritz = q.T @ torch.as_tensor(vectors[:, -1], dtype=q.dtype, device=q.device)
            self._start(ritz / ritz.norm())

    @property
    def value(self) -> float:
        """Return the estimate of the top eigenvalue of H."""
        return self.lam


def _tridiagonal(alphas: list[float], betas: list[float]) -> np.ndarray:
    """Return the symmetric tridiagonal matrix with diagonal ``alphas`` and off-diagonal ``betas``."""
    k = len(alphas)
    t = np.diag(np.asarray(alphas, dtype=np.float64))
    if k > 1:
        off = np.asarray(betas[: k - 1], dtype=np.float64)
        t += np.diag(off, 1) + np.diag(off, -1)
    return t


def hessian_top_eigenvalue(
    params: Params,
    data: TensorData,
    cfg: ModelConfig,
    *,
    iters: int = 200,
    tol: float = 1e-7,
    seed: int = 0,
    model: ModelSpec = PAPER,
) -> float:
    """Return the largest eigenvalue of the loss Hessian at ``params`` by Lanczos on Hessian-vector products.

    Uses Hessian-vector products (double backward), at most ``iters`` of them, stopping once the
    estimate changes by at most ``tol`` (relative); see ``Lanczos``.
    """
    names = list(params)
    leaves = [params[k].detach().clone().requires_grad_(True) for k in names]
    loss = squared_loss(model.forward(dict(zip(names, leaves, strict=True)), data.x, cfg).out, data.y, cfg)
    grads = torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
    flat_grad = _flat(list(grads))

    def hvp(v: torch.Tensor) -> torch.Tensor:
        hv = torch.autograd.grad(
            flat_grad, leaves, grad_outputs=v, retain_graph=True, allow_unused=True, materialize_grads=True
        )
        return _flat(list(hv))

    state = Lanczos(flat_grad.numel(), torch.Generator().manual_seed(seed), flat_grad, tol)
    for _ in range(iters):
        state.update(hvp(state.v))
        if state.done:
            break
    return state.value


def sigma_extremes(z_list: list[torch.Tensor]) -> tuple[list[float], list[float]]:
    """Return, per layer, the min over samples of sigma_min(Z_i) and the max of sigma_max(Z_i)."""
    mins, maxs = [], []
    for z in z_list:
        s = torch.linalg.svdvals(z.detach())  # (N, min(n, d)) descending
        mins.append(float(s[..., -1].min()))
        maxs.append(float(s[..., 0].max()))
    return mins, maxs


def step_size(train_cfg: TrainConfig, lam: float) -> tuple[float, str]:
    """Return (mu, rule): ``lr`` as given, or ``lr_fraction * 2 / lam``; raise ConfigError if lam <= 0."""
    if train_cfg.lr is not None:
        return train_cfg.lr, "absolute"
    assert train_cfg.lr_fraction is not None
    if not lam > 0:
        raise ConfigError(
            f"lr_fraction needs a positive Hessian eigenvalue at init, measured {lam}; "
            "give an absolute TrainConfig.lr instead"
        )
    return train_cfg.lr_fraction * 2 / lam, "fraction of 2/lambda_max"


@dataclass
class TrajectoryLog:
    """Collect what one run records step by step; ``train`` and ``train_batch`` share its stop rules."""

    train_cfg: TrainConfig
    losses: list[float] = field(default_factory=list)
    sigma_steps: list[int] = field(default_factory=list)
    sigma_min: list[list[float]] = field(default_factory=list)
    sigma_max: list[list[float]] = field(default_factory=list)
    diverged_at: int | None = None

    def observe(self, step: int, value: float) -> tuple[bool, bool]:
        """Record the loss before ``step``; return (measure sigma(Z) now, stop after this step).

        A NaN or infinite loss stops the run (no sigma); so do the last step and a loss at or below
        ``rel_floor`` times the first loss (both with sigma).
        """
        self.losses.append(value)
        if not math.isfinite(value):
            self.diverged_at = step
            return False, True
        last = step == self.train_cfg.steps or value <= self.train_cfg.rel_floor * self.losses[0]
        every = self.train_cfg.sigma_every
        return step == 0 or last or bool(every and step % every == 0), last

    def sigma(self, step: int, extremes: tuple[list[float], list[float]]) -> None:
        """Record sigma(Z) extremes per layer, as ``sigma_extremes`` returns them, at ``step``."""
        self.sigma_steps.append(step)
        self.sigma_min.append(extremes[0])
        self.sigma_max.append(extremes[1])

    def trajectory(
        self, model_cfg: ModelConfig, data: TensorData, seed: int, lam: float, lr: float, rule: str
    ) -> Trajectory:
        """Return the finished run as a Trajectory carrying its configs and data fingerprint."""
        n_layers = model_cfg.n_layers
        return Trajectory(
            loss=np.asarray(self.losses, dtype=np.float64),
            sigma_steps=np.asarray(self.sigma_steps, dtype=np.int64),
            sigma_min=np.asarray(self.sigma_min, dtype=np.float64).reshape(-1, n_layers),
            sigma_max=np.asarray(self.sigma_max, dtype=np.float64).reshape(-1, n_layers),
            lr=lr,
            lambda_max=lam,
            lr_rule=rule,
            diverged_at=self.diverged_at,
            seed=seed,
            model=model_cfg.to_dict(),
            train=self.train_cfg.to_dict(),
            data=data.name,
            data_fingerprint=data.fingerprint,
        )


def gd_update(loss: torch.Tensor, leaves: list[torch.Tensor], lr: float) -> None:
    """Move ``leaves`` in place by ``-lr`` times the gradient of ``loss``.

    A leaf the loss does not depend on (a user's model may detach one) has gradient zero and stays.
    """
    grads = torch.autograd.grad(loss, leaves, allow_unused=True, materialize_grads=True)
    with torch.no_grad():
        for leaf, g in zip(leaves, grads, strict=True):
            leaf -= lr * g


def train(
    model_cfg: ModelConfig, train_cfg: TrainConfig, data: TensorData, seed: int, model: ModelSpec = PAPER
) -> Trajectory:
    """Initialise ``model`` from ``seed`` and run full-batch GD on all weights; return the trajectory.

    A NaN or infinite loss stops the run and is recorded in ``diverged_at``; the run stops early
    (converged) once the loss falls below ``rel_floor`` times the initial loss.
    """
    dtype = train_cfg.torch_dtype
    device = torch.device(train_cfg.device)
    gen = torch.Generator().manual_seed(seed)
    params = {k: v.to(device) for k, v in model.init_params(model_cfg, gen, dtype).items()}
    data = TensorData(data.x.to(device, dtype), data.y.to(device, dtype), data.name)

    lam = hessian_top_eigenvalue(
        params, data, model_cfg, iters=train_cfg.power_iters, tol=train_cfg.power_tol, seed=seed, model=model
    )
    lr, rule = step_size(train_cfg, lam)
    names = list(params)
    leaves = [params[k].requires_grad_(True) for k in names]
    log = TrajectoryLog(train_cfg)
    for step in range(train_cfg.steps + 1):
        fwd = model.forward(dict(zip(names, leaves, strict=True)), data.x, model_cfg)
        loss = squared_loss(fwd.out, data.y, model_cfg)
        wants_sigma, stop = log.observe(step, loss.item())
        if wants_sigma and fwd.z:  # a model without the attention capability exposes no Z
            log.sigma(step, sigma_extremes(fwd.z))
        if stop:
            break
        gd_update(loss, leaves, lr)
    return log.trajectory(model_cfg, data, seed, lam, lr, rule)
