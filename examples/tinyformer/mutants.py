"""Deliberately broken versions of the example model: does the claim suite notice each bug?

Each factory builds the healthy adapter and swaps its blocks' class for a subclass with one bug.
All still declare ``claim_honours = ("beta", "n_layers")``, as a user who believes the model is
fine would. ``claimcheck mutants`` runs the suite on each and tabulates what broke.
"""

from __future__ import annotations

import torch
from claim_adapter import ClaimTinyTransformer
from tinyformer import Block
from torch import nn

from qin2025.model import ModelConfig

GRAD_SCALE = 0.1  # the scaled-down step: gradients reach the weights at a tenth of their size


class NoResidual(Block):
    """The residual is dropped: Z = Attn(X), whatever beta says."""

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, z = self.mix(h)
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class WrongAxis(Block):
    """Softmax over the wrong axis: columns of S sum to one instead of rows."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature
        weights = scores.softmax(dim=-2)
        return weights, weights @ self.value(h)


class Detached(Block):
    """The attention output is detached from the graph: W_Q, W_K, W_V get no gradient."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, mixed = super().mix(h)
        return weights, mixed.detach()


class ScaledStep(Block):
    """Every gradient through the block is scaled by GRAD_SCALE; the forward values are unchanged."""

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        out, weights, z = super().forward(h)
        return GRAD_SCALE * out + (1 - GRAD_SCALE) * out.detach(), weights, z


def _mutant(cfg: ModelConfig, kind: type[Block]) -> nn.Module:
    model = ClaimTinyTransformer(cfg)
    for block in model.net.blocks:
        block.__class__ = kind
    return model


def no_residual(cfg: ModelConfig) -> nn.Module:
    """Residual dropped."""
    return _mutant(cfg, NoResidual)


def softmax_wrong_axis(cfg: ModelConfig) -> nn.Module:
    """Softmax over the wrong axis."""
    return _mutant(cfg, WrongAxis)


def attention_detached(cfg: ModelConfig) -> nn.Module:
    """Attention output detached from the graph."""
    return _mutant(cfg, Detached)


def scaled_step(cfg: ModelConfig) -> nn.Module:
    """Gradients (so the GD step) scaled down by GRAD_SCALE."""
    return _mutant(cfg, ScaledStep)
