"""Define the paper's Transformer: softmax attention + ReLU FFN + scaled residual, no LayerNorm.

One block maps an (N, n, d) batch of token matrices X to

    S = softmax(scale * (X W_Q)(X W_K)^T)       # (N, n, n), rows sum to one
    Z = S X W_V + beta * X                      # attention output with residual, Attn(X) + beta X
    H = FFN(Z) + gamma * Z                      # FFN(Z) = relu(Z W_1) W_2  (or relu(Z W_1))

and L blocks are stacked; the output is F(X) = H_L W_U. The paper (summary) writes the residual
with coefficient 1 and varies beta in its experiments; gamma is the FFN residual switch.

The model is functional: parameters live in a ``dict[str, Tensor]`` so that the training engine
can differentiate, batch and cache without module state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal

import torch

from claimcheck.errors import ConfigError

Params = dict[str, torch.Tensor]
Project = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (X, W) -> X W for a weight W
Coefficient = float | torch.Tensor  # a residual coefficient: one number, or one per run of a batch

LogitScale = Literal["inv_sqrt_dqk", "inv_dqk", "one"]
QKInit = Literal["normal", "xavier"]


@dataclass(frozen=True)
class ModelConfig:
    """Shape and every open modelling choice of the paper's model, each with a documented default."""

    d: int = 32  # token width (features per token)
    d_qk: int = 16  # key/query width d_QK
    d_out: int = 1  # output width of W_U
    d_ff: int | None = None  # FFN hidden width; None means d
    n_layers: int = 1  # L stacked blocks (C8 uses 2-4)
    beta: float = 1.0  # attention residual coefficient: Z = Attn(X) + beta X (0 removes it)
    ffn_residual: float = 1.0  # gamma: H = FFN(Z) + gamma Z (the summary's model has 1)
    ffn_matrices: Literal[1, 2] = 2  # 2: relu(Z W_1) W_2; 1: relu(Z W_1) with W_1 (d, d)
    logit_scale: LogitScale = "inv_sqrt_dqk"  # multiplier of Q K^T: 1/sqrt(d_qk), 1/d_qk or 1
    qk_init: QKInit = "normal"  # W_Q, W_K entries: normal var 1/d, or xavier var 2/(d + d_qk)
    qk_gain: float = 1.0  # W_Q, W_K entries' standard deviation times qk_gain (the logit sd times qk_gain^2)
    v_gain: float = 1.0  # W_V entries ~ N(0, v_gain^2 / d)
    ffn_gain: float = 1.0  # W_1, W_2 entries ~ N(0, ffn_gain^2 / fan_in)
    u_gain: float = 1.0  # W_U entries ~ N(0, u_gain^2 / d)
    half_loss: bool = True  # loss = 1/2 sum ||F(X) - Y||_F^2 (False: no 1/2)

    def __post_init__(self) -> None:
        for name in ("d", "d_qk", "d_out", "n_layers"):
            if getattr(self, name) < 1:
                raise ConfigError(f"ModelConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.d_ff is not None and self.d_ff < 1:
            raise ConfigError(f"ModelConfig.d_ff must be >= 1 or None, got {self.d_ff}")
        if self.ffn_matrices not in (1, 2):
            raise ConfigError(f"ModelConfig.ffn_matrices must be 1 or 2, got {self.ffn_matrices}")
        if self.logit_scale not in ("inv_sqrt_dqk", "inv_dqk", "one"):
            raise ConfigError(f"ModelConfig.logit_scale must be inv_sqrt_dqk, inv_dqk or one, got {self.logit_scale!r}")
        if self.qk_init not in ("normal", "xavier"):
            raise ConfigError(f"ModelConfig.qk_init must be normal or xavier, got {self.qk_init!r}")

    @property
    def hidden(self) -> int:
        """Return the FFN hidden width (d when ffn_matrices is 1)."""
        if self.ffn_matrices == 1:
            return self.d
        return self.d if self.d_ff is None else self.d_ff

    @property
    def scale(self) -> float:
        """Return the multiplier applied to the attention logits."""
        return {"inv_sqrt_dqk": 1 / math.sqrt(self.d_qk), "inv_dqk": 1 / self.d_qk, "one": 1.0}[self.logit_scale]

    def to_dict(self) -> dict[str, object]:
        """Return the config as a JSON-ready dict."""
        return asdict(self)


@dataclass
class Forward:
    """What one forward pass exposes: the output and, per layer, S and Z."""

    out: torch.Tensor  # (N, n, d_out)
    attn: list[torch.Tensor] = field(default_factory=list)  # S per layer, (N, n, n)
    z: list[torch.Tensor] = field(default_factory=list)  # Z = Attn(X) + beta X per layer, (N, n, d)


def init_params(cfg: ModelConfig, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> Params:
    """Draw full-rank Gaussian weights as the config states; reproducible from ``generator``."""

    def normal(rows: int, cols: int, std: float) -> torch.Tensor:
        return torch.randn(rows, cols, generator=generator, dtype=dtype) * std

    d, h = cfg.d, cfg.hidden
    qk_std = cfg.qk_gain * (math.sqrt(2.0 / (d + cfg.d_qk)) if cfg.qk_init == "xavier" else 1 / math.sqrt(d))
    params: Params = {}
    for layer in range(cfg.n_layers):
        params[f"{layer}.W_Q"] = normal(d, cfg.d_qk, qk_std)
        params[f"{layer}.W_K"] = normal(d, cfg.d_qk, qk_std)
        params[f"{layer}.W_V"] = normal(d, d, cfg.v_gain / math.sqrt(d))
        params[f"{layer}.W_1"] = normal(d, h, cfg.ffn_gain / math.sqrt(d))
        if cfg.ffn_matrices == 2:
            params[f"{layer}.W_2"] = normal(h, d, cfg.ffn_gain / math.sqrt(h))
    params["W_U"] = normal(d, cfg.d_out, cfg.u_gain / math.sqrt(d))
    return params


def attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    scale: float,
    project: Project = torch.matmul,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (S, Attn(X)) for single-head softmax self-attention; S is row-stochastic."""
    q = project(x, w_q)  # (N, n, d_qk)
    k = project(x, w_k)  # (N, n, d_qk)
    s = torch.softmax(scale * (q @ k.transpose(-1, -2)), dim=-1)  # (N, n, n)
    return s, s @ project(x, w_v)  # (N, n, n), (N, n, d)


def forward(
    params: Params,
    x: torch.Tensor,
    cfg: ModelConfig,
    *,
    project: Project = torch.matmul,
    beta: Coefficient | None = None,
    gamma: Coefficient | None = None,
) -> Forward:
    """Run the L-block model on ``x`` of shape (N, n, d) and expose S and Z of every block.

    ``project`` multiplies activations by a weight; ``beta`` and ``gamma`` stand in for
    ``cfg.beta`` and ``cfg.ffn_residual``. The batched engine passes a per-run product and per-run
    coefficients of shape (B, 1, 1, 1), so the same code runs on (B, N, n, d) stacks.
    """
    beta = cfg.beta if beta is None else beta
    gamma = cfg.ffn_residual if gamma is None else gamma
    result = Forward(out=x)
    h = x  # (N, n, d)
    for layer in range(cfg.n_layers):
        p = f"{layer}."
        s, a = attention(h, params[p + "W_Q"], params[p + "W_K"], params[p + "W_V"], cfg.scale, project)
        z = a + beta * h  # (N, n, d)
        f = torch.relu(project(z, params[p + "W_1"]))  # (N, n, hidden)
        if cfg.ffn_matrices == 2:
            f = project(f, params[p + "W_2"])  # (N, n, d)
        h = f + gamma * z
        result.attn.append(s)
        result.z.append(z)
    result.out = project(h, params["W_U"])  # (N, n, d_out)
    return result


def squared_loss(out: torch.Tensor, y: torch.Tensor, cfg: ModelConfig) -> torch.Tensor:
    """Return sum ||out - y||_F^2 over samples, halved when ``cfg.half_loss``."""
    r = out - y
    total = (r * r).sum()
    return 0.5 * total if cfg.half_loss else total


def loss_fn(params: Params, x: torch.Tensor, y: torch.Tensor, cfg: ModelConfig) -> torch.Tensor:
    """Return the training loss of ``params`` on (x, y)."""
    return squared_loss(forward(params, x, cfg).out, y, cfg)
