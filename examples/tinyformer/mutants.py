"""Deliberately broken versions of the example model: does the suite (claims, probe, gate, first screen) notice?

Each factory builds the healthy adapter with a block class that carries one bug, drawing the same
weights as the healthy model wherever the bug leaves the layers alone. All still declare the
adapter's ``claim_honours = ("beta", "n_layers", "qk_init")``, as a user who believes the model is
fine would. ``examples/tinyformer/catalogue.toml`` names each with the check expected to catch it;
``claimcheck mutants --catalogue examples/tinyformer/catalogue.toml`` runs them all (docs/mutants.md).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from claim_adapter import ClaimTinyTransformer
from tinyformer import Block
from torch import nn

from qin2025.engine.model import ModelConfig

GRAD_SCALE = 0.1  # the scaled-down step: gradients reach the weights at a tenth of their size


class NoResidual(Block):
    """The residual is dropped: Z = Attn(X), whatever beta says."""

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, z = self.mix(h)
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class HalfResidual(Block):
    """The residual is scaled by 0.5: Z = Attn(X) + 0.5 beta X."""

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, mixed = self.mix(h)
        z = mixed + 0.5 * self.residual * h
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class HardArgmax(Block):
    """Hard attention: each query takes the value of its highest-scoring key (S one-hot; W_Q, W_K get no gradient)."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature
        weights = F.one_hot(scores.argmax(dim=-1), scores.shape[-1]).to(h.dtype)
        return weights, weights @ self.value(h)


class QKDetached(Block):
    """Q and K are computed from detached weights: the forward is unchanged, W_Q and W_K never learn."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k = F.linear(h, self.query.weight.detach()), F.linear(h, self.key.weight.detach())
        weights = (q @ k.transpose(-1, -2) / self.temperature).softmax(dim=-1)
        return weights, weights @ self.value(h)


class ValueFrozen(Block):
    """W_V is used detached: the forward is unchanged, W_V never learns."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights = (self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature).softmax(dim=-1)
        return weights, weights @ F.linear(h, self.value.weight.detach())


class AttentionDetached(Block):
    """The attention output is detached from the graph: the forward is unchanged, W_Q, W_K, W_V never learn."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, mixed = super().mix(h)
        return weights, mixed.detach()


class NoTemperature(Block):
    """The 1/sqrt(d_QK) scale of the logits is dropped: softmax(Q K^T)."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights = (self.query(h) @ self.key(h).transpose(-1, -2)).softmax(dim=-1)
        return weights, weights @ self.value(h)


class Causal(Block):
    """A causal mask: token i attends to tokens 0..i only."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature
        n = scores.shape[-1]
        later = torch.ones(n, n, dtype=torch.bool, device=h.device).triu(diagonal=1)
        weights = scores.masked_fill(later, float("-inf")).softmax(dim=-1)
        return weights, weights @ self.value(h)


class WithLayerNorm(Block):
    """A LayerNorm inserted after the residual sum (post-norm): Z = LN(Attn(X) + beta X)."""

    def __init__(self, d_model: int, d_key: int, d_hidden: int, residual: float, ffn_residual: float) -> None:
        super().__init__(d_model, d_key, d_hidden, residual, ffn_residual)
        self.norm = nn.LayerNorm(d_model)  # ones and zeros: it draws nothing

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, mixed = self.mix(h)
        z = self.norm(mixed + self.residual * h)
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class TwoHeads(Block):
    """Two attention heads, each with its own d_key-wide Q and K, each mixing one half of the value features.

    ``mix`` returns S per head, (batch, 2, tokens, tokens), as a multi-head layer that exposes its
    weights does; claimcheck averages it over the heads.
    """

    def __init__(self, d_model: int, d_key: int, d_hidden: int, residual: float, ffn_residual: float) -> None:
        super().__init__(d_model, d_key, d_hidden, residual, ffn_residual)
        self.query = nn.Linear(d_model, 2 * d_key, bias=False)
        self.key = nn.Linear(d_model, 2 * d_key, bias=False)
        self.d_key = d_key

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        split = (*h.shape[:-1], 2, self.d_key)
        q = self.query(h).view(split).transpose(-2, -3)  # (batch, 2, tokens, d_key)
        k = self.key(h).view(split).transpose(-2, -3)
        weights = (q @ k.transpose(-1, -2) / self.temperature).softmax(dim=-1)  # (batch, 2, tokens, tokens)
        v = self.value(h)
        half = v.shape[-1] // 2
        mixed = torch.cat([weights[..., 0, :, :] @ v[..., :half], weights[..., 1, :, :] @ v[..., half:]], dim=-1)
        return weights, mixed

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, mixed = self.mix(h)
        z = mixed + self.residual * h
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class WrongAxis(Block):
    """Softmax over the wrong axis: columns of S sum to one instead of rows."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature
        weights = scores.softmax(dim=-2)
        return weights, weights @ self.value(h)


class ScaledStep(Block):
    """Every gradient through the block is scaled by GRAD_SCALE; the forward values are unchanged."""

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out, weights, z = super().forward(h)
        return GRAD_SCALE * out + (1 - GRAD_SCALE) * out.detach(), weights, z


def no_residual(cfg: ModelConfig) -> nn.Module:
    """Residual dropped."""
    return ClaimTinyTransformer(cfg, NoResidual)


def residual_half(cfg: ModelConfig) -> nn.Module:
    """Residual scaled by 0.5."""
    return ClaimTinyTransformer(cfg, HalfResidual)


def hard_argmax(cfg: ModelConfig) -> nn.Module:
    """Hard (argmax) attention."""
    return ClaimTinyTransformer(cfg, HardArgmax)


def qk_detached(cfg: ModelConfig) -> nn.Module:
    """W_Q and W_K detached."""
    return ClaimTinyTransformer(cfg, QKDetached)


def value_frozen(cfg: ModelConfig) -> nn.Module:
    """W_V detached."""
    return ClaimTinyTransformer(cfg, ValueFrozen)


def attention_detached(cfg: ModelConfig) -> nn.Module:
    """Attention output detached from the graph."""
    return ClaimTinyTransformer(cfg, AttentionDetached)


def no_temperature(cfg: ModelConfig) -> nn.Module:
    """1/sqrt(d_QK) dropped from the logits."""
    return ClaimTinyTransformer(cfg, NoTemperature)


def causal_mask(cfg: ModelConfig) -> nn.Module:
    """A causal mask."""
    return ClaimTinyTransformer(cfg, Causal)


def layernorm(cfg: ModelConfig) -> nn.Module:
    """A LayerNorm inserted after the residual."""
    return ClaimTinyTransformer(cfg, WithLayerNorm)


def two_heads(cfg: ModelConfig) -> nn.Module:
    """Two attention heads."""
    return ClaimTinyTransformer(cfg, TwoHeads)


def softmax_wrong_axis(cfg: ModelConfig) -> nn.Module:
    """Softmax over the wrong axis."""
    return ClaimTinyTransformer(cfg, WrongAxis)


def scaled_step(cfg: ModelConfig) -> nn.Module:
    """Gradients (so the GD step) scaled down by GRAD_SCALE."""
    return ClaimTinyTransformer(cfg, ScaledStep)
