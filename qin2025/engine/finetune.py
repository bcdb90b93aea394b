"""Train a truncated pretrained encoder plus a linear head by full-batch GD on +-1 targets.

``finetune(pre, encoder_cfg, finetune_cfg, data, head_seed) -> FinetuneRun``. What trains: every
weight of the kept layers (attention Q/K/V/output with biases, both LayerNorms, the feed-forward)
and a linear head on the mean-pooled output. The embedding tables and the embedding LayerNorm are
frozen, so the encoder's input X is fixed data, as in the paper's model. The loss is

    Phi = 1/(2N) sum_i (w . pool_i + b - y_i)^2,   y_i in {-1, +1}

and the training error is the fraction of sentences with sign(f_i) != y_i. The step size is
mu = lr_fraction * 2 / rho, with rho = max |eigenvalue| of the Hessian of Phi at the starting point
of this very model, measured by power iteration on Hessian-vector products: each variant gets the
same fraction of its own local curvature bound. rho >= lambda_max, so mu is also below the usual
stability bound 2/lambda_max; rho is used because without residuals the pretrained encoder starts
at a point whose largest-magnitude curvature is negative (a saddle-like region).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from claimcheck.errors import ConfigError
from qin2025.data.sst2 import Sst2Sample
from qin2025.data.synthetic import fingerprint_tensors
from qin2025.engine.encoder import (
    EncoderConfig,
    Params,
    Pretrained,
    embed,
    encode,
    layer_params,
    mean_pool,
    read_reference,
    reference_max_abs_diff,
    sha256_file,
    tokenize,
)
from qin2025.engine.trainer import Trainer

DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True)
class FinetuneConfig:
    """How to train: steps, the step size as a fraction of 2/rho(Hessian), dtype and device."""

    steps: int = 100  # GD steps T; the run holds T + 1 losses
    lr_fraction: float = 0.5  # mu = lr_fraction * 2 / rho, rho = max |eig| of the Hessian at the start
    power_iters: int = 20  # cap on Hessian-vector products for rho
    power_tol: float = 1e-2  # stop when the estimate of rho changes by less (relative)
    dtype: str = "float32"
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ConfigError(f"FinetuneConfig.steps must be >= 1, got {self.steps}")
        if not self.lr_fraction > 0:
            raise ConfigError(f"FinetuneConfig.lr_fraction must be > 0, got {self.lr_fraction}")
        if self.power_iters < 1:
            raise ConfigError(f"FinetuneConfig.power_iters must be >= 1, got {self.power_iters}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"FinetuneConfig.dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")

    @property
    def torch_dtype(self) -> torch.dtype:
        """Return the torch dtype named by ``dtype``."""
        return DTYPES[self.dtype]


@dataclass(frozen=True)
class SentenceData:
    """A full batch of embedded sentences: X (N, n, d) from the frozen embeddings, mask (N, n), y (N,)."""

    x: torch.Tensor
    mask: torch.Tensor
    y: torch.Tensor  # +-1
    name: str


def prepare(pre: Pretrained, sample: Sst2Sample, max_tokens: int, dtype: torch.dtype = torch.float32) -> SentenceData:
    """Tokenise ``sample`` (cached), embed it with the frozen embeddings, and attach +-1 targets."""
    batch = tokenize(pre, sample.sentences, max_tokens)
    x = embed(pre, batch.input_ids, dtype)  # (N, n, d)
    y = torch.from_numpy(sample.targets()).to(dtype)  # (N,)
    return SentenceData(x, batch.attention_mask, y, f"{sample.name}, <= {max_tokens} tokens")


@dataclass
class FinetuneRun:
    """What one run produced: per-step loss and training error, the step size and its bound."""

    loss: np.ndarray  # (T' + 1,) Phi before each step and after the last (T' <= T)
    error: np.ndarray  # (T' + 1,) training error at the same points
    lr: float  # the step size mu actually used
    hessian_radius: float  # rho, max |eigenvalue| of the Hessian at the start
    diverged_at: int | None  # first step whose loss was not finite, else None
    head_seed: int
    encoder: dict[str, Any] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)
    data: str = ""

    @property
    def final_loss(self) -> float:
        """Return the loss after the last step (inf when the run diverged)."""
        return math.inf if self.diverged_at is not None else float(self.loss[-1])

    @property
    def final_error(self) -> float:
        """Return the training error after the last step (1 when the run diverged)."""
        return 1.0 if self.diverged_at is not None else float(self.error[-1])


def init_head(d: int, seed: int, dtype: torch.dtype = torch.float32) -> Params:
    """Draw the linear head: weight ~ N(0, 1/d) from ``seed``, bias 0."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(d, generator=gen, dtype=torch.float64) / math.sqrt(d)
    return {"head.weight": w.to(dtype), "head.bias": torch.zeros((), dtype=dtype)}


def predict(params: Params, data: SentenceData, cfg: EncoderConfig, pre: Pretrained) -> torch.Tensor:
    """Return f_i = w . meanpool(encoder(X_i)) + b, shape (N,)."""
    h = encode(params, data.x, data.mask, cfg, pre.shape)  # (N, n, d)
    return mean_pool(h, data.mask) @ params["head.weight"] + params["head.bias"]


def objective(params: Params, data: SentenceData, cfg: EncoderConfig, pre: Pretrained) -> torch.Tensor:
    """Return Phi = 1/(2N) sum_i (f_i - y_i)^2."""
    r = predict(params, data, cfg, pre) - data.y
    return 0.5 * (r * r).mean()


def hessian_spectral_radius(
    loss_of: Callable[[list[torch.Tensor]], torch.Tensor],
    leaves: list[torch.Tensor],
    *,
    iters: int,
    tol: float,
    seed: int,
) -> float:
    """Return rho(H) = max |eigenvalue| of the Hessian of ``loss_of(leaves)``, by power iteration on HVPs.

    The estimate is ||H v|| for the current unit iterate v; it rises towards rho and the loop stops
    once it changes by less than ``tol`` (relative) or after ``iters`` products. rho bounds the
    top eigenvalue from above (so 2/rho is below GD's stability bound 2/lambda_max) and also the
    most negative curvature, which dominates for the pretrained encoder without residuals.
    """
    xs = [t.detach().clone().requires_grad_(True) for t in leaves]
    grads = torch.autograd.grad(loss_of(xs), xs, create_graph=True)
    flat_grad = torch.cat([g.reshape(-1) for g in grads])
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(flat_grad.numel(), generator=gen, dtype=torch.float64).to(flat_grad)  # device and dtype
    v /= v.norm()
    rho = 0.0
    for _ in range(iters):
        hv = torch.autograd.grad(flat_grad, xs, grad_outputs=v, retain_graph=True)
        w = torch.cat([t.reshape(-1) for t in hv])
        new = float(w.norm())
        if new == 0:
            return 0.0
        v = w / new
        done = abs(new - rho) <= tol * new
        rho = new
        if done:
            break
    return rho


def finetune(
    pre: Pretrained, enc_cfg: EncoderConfig, cfg: FinetuneConfig, data: SentenceData, head_seed: int
) -> FinetuneRun:
    """Start from the pretrained layers 0..L-1 and a seeded head; run T steps of full-batch GD.

    A non-finite loss stops the run and is recorded in ``diverged_at``.
    """
    dtype, device = cfg.torch_dtype, torch.device(cfg.device)
    params = layer_params(pre, enc_cfg.n_layers, dtype) | init_head(pre.shape.hidden, head_seed, dtype)
    params = {k: v.to(device) for k, v in params.items()}
    data = SentenceData(data.x.to(device, dtype), data.mask.to(device), data.y.to(device, dtype), data.name)
    names = list(params)

    def loss_of(leaves: list[torch.Tensor]) -> torch.Tensor:
        return objective(dict(zip(names, leaves, strict=True)), data, enc_cfg, pre)

    leaves = [params[k] for k in names]
    rho = hessian_spectral_radius(loss_of, leaves, iters=cfg.power_iters, tol=cfg.power_tol, seed=head_seed)
    if not (rho > 0 and math.isfinite(rho)):
        raise ConfigError(f"the step-size rule needs a positive finite Hessian radius at the start, measured {rho}")
    lr = cfg.lr_fraction * 2 / rho
    leaves = [t.requires_grad_(True) for t in leaves]
    losses: list[float] = []
    errors: list[float] = []
    diverged_at: int | None = None
    for step in range(cfg.steps + 1):
        f = predict(dict(zip(names, leaves, strict=True)), data, enc_cfg, pre)
        r = f - data.y
        loss = 0.5 * (r * r).mean()
        value = loss.item()
        losses.append(value)
        errors.append(float((torch.sign(f.detach()) != data.y).to(torch.float64).mean()))
        if not math.isfinite(value):
            diverged_at = step
            break
        if step == cfg.steps:
            break
        grads = torch.autograd.grad(loss, leaves)
        with torch.no_grad():
            for leaf, g in zip(leaves, grads, strict=True):
                leaf -= lr * g
    return FinetuneRun(
        loss=np.asarray(losses, dtype=np.float64),
        error=np.asarray(errors, dtype=np.float64),
        lr=lr,
        hessian_radius=rho,
        diverged_at=diverged_at,
        head_seed=head_seed,
        encoder=enc_cfg.to_dict(),
        train=asdict(cfg),
        data=data.name,
    )


def weights_sha256(pre: Pretrained) -> str:
    """Return the sha256 of ``pre``'s model.safetensors (hashed once per file state in a process)."""
    path = pre.directory / "model.safetensors"
    st = path.stat()
    return _sha256_of(path, st.st_size, st.st_mtime_ns)


@functools.cache
def _sha256_of(path: Path, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


@dataclass(frozen=True)
class ReferenceCheck:
    """How far the compact encoder is from the reference embeddings, with residuals on and off."""

    on: float  # max |mean-pooled embedding - reference| with every residual add (BertModel)
    off: float  # the same with the residual adds off: the comparison's power to fail
    same_weights: bool  # model.safetensors is the file the reference was made from


def check_reference(trainer: Trainer, pre: Pretrained, path: Path, depth: int) -> ReferenceCheck:
    """Return ``reference_max_abs_diff`` at ``depth`` with residuals on and off, through the trainer's cache.

    The key holds the fixture's and the weights' sha256 and the engine's identity, so a warm run
    reads the two numbers instead of running the encoder twice.
    """
    weights = weights_sha256(pre)
    parts = {"kind": "encoder-reference", "reference": sha256_file(path), "weights": weights, "depth": depth}
    parts |= {"tokenizer": pre.tokenizer_sha256}

    def compute() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        ref = read_reference(path)
        on, off = (reference_max_abs_diff(pre, ref, depth, r) for r in (1.0, 0.0))
        return {}, {"on": on, "off": off, "same_weights": weights == ref.model_sha256}

    meta = trainer.memo(parts, compute)[1]
    return ReferenceCheck(float(meta["on"]), float(meta["off"]), bool(meta["same_weights"]))


def cached_finetune(
    trainer: Trainer, pre: Pretrained, enc_cfg: EncoderConfig, cfg: FinetuneConfig, data: SentenceData, head_seed: int
) -> FinetuneRun:
    """Return ``finetune(...)`` on the trainer's device through its result cache.

    The key holds the weights' sha256, both configs, the exact bytes of the batch and the head seed.
    """
    cfg = replace(cfg, device=trainer.device)
    parts = {
        "kind": "finetune",
        "weights": weights_sha256(pre),
        "encoder": enc_cfg.to_dict(),
        "train": asdict(cfg) | {"device": torch.device(cfg.device).type},  # a device type shares its entries
        "data": fingerprint_tensors(data.x, data.mask, data.y),
        "head_seed": head_seed,
    }

    def compute() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        run = finetune(pre, enc_cfg, cfg, data, head_seed)
        meta = {k: v for k, v in asdict(run).items() if k not in ("loss", "error")}
        return {"loss": run.loss, "error": run.error}, meta

    arrays, meta = trainer.memo(parts, compute)
    return FinetuneRun(loss=arrays["loss"], error=arrays["error"], **meta)
