"""Edits of the example model that must not trip the gate: the same math, or the same distribution of draws.

Two kinds, each a factory for ``--claim-model``:

- the same function, written another way: modules renamed (``renamed``; the same draws, so the
  same bits), attention through ``torch.einsum`` (``einsum``; the same draws, rounding may differ);
- the same distribution of weights, other draws per seed: one fused Q/K/V projection (``fused_qkv``;
  ``nn.Linear`` draws every entry from the same U(-1/sqrt(d), 1/sqrt(d)) whether the projection is
  one matrix or three), and one extra draw before the model is built (``reseeded``).

A gate that compares seed by seed must pass both kinds: its margins are about the claims'
behaviour, not about one seed's draw. ``examples/tinyformer/catalogue.toml`` lists them.
"""

from __future__ import annotations

import torch
from claim_adapter import ClaimTinyTransformer, build
from tinyformer import Block
from torch import nn

from qin2025.engine.model import ModelConfig


class Renamed(Block):
    """The same block with other module names, created in the same order (so the same draws)."""

    def __init__(self, d_model: int, d_key: int, d_hidden: int, residual: float, ffn_residual: float) -> None:
        nn.Module.__init__(self)
        self.w_q = nn.Linear(d_model, d_key, bias=False)
        self.w_k = nn.Linear(d_model, d_key, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.fc1 = nn.Linear(d_model, d_hidden, bias=False)
        self.fc2 = nn.Linear(d_hidden, d_model, bias=False)
        self.residual = residual
        self.ffn_residual = ffn_residual
        self.temperature = d_key**0.5

    def reset_qk(self, std: float) -> None:
        """Draw W_Q and W_K afresh from N(0, std^2), in the healthy block's order."""
        with torch.no_grad():
            self.w_q.weight.normal_(0.0, std)
            self.w_k.weight.normal_(0.0, std)

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (S, S X W_V)."""
        weights = (self.w_q(h) @ self.w_k(h).transpose(-1, -2) / self.temperature).softmax(dim=-1)
        return weights, weights @ self.w_v(h)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return (block output, S, Z)."""
        weights, mixed = self.mix(h)
        z = mixed + self.residual * h
        return self.fc2(torch.relu(self.fc1(z))) + self.ffn_residual * z, weights, z


class Einsum(Block):
    """The healthy block with its attention products written as ``torch.einsum``."""

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (S, S X W_V) through einsum."""
        scores = torch.einsum("...ik,...jk->...ij", self.query(h), self.key(h)) / self.temperature
        weights = scores.softmax(dim=-1)
        return weights, torch.einsum("...ij,...jd->...id", weights, self.value(h))


class FusedQKV(Block):
    """One (2 d_key + d) x d projection computes Q, K and V; each entry drawn as ``nn.Linear`` draws it."""

    def __init__(self, d_model: int, d_key: int, d_hidden: int, residual: float, ffn_residual: float) -> None:
        nn.Module.__init__(self)
        self.qkv = nn.Linear(d_model, 2 * d_key + d_model, bias=False)
        self.ff_in = nn.Linear(d_model, d_hidden, bias=False)
        self.ff_out = nn.Linear(d_hidden, d_model, bias=False)
        self.residual = residual
        self.ffn_residual = ffn_residual
        self.d_key = d_key
        self.temperature = d_key**0.5

    def reset_qk(self, std: float) -> None:
        """Draw the Q and K rows of the fused projection afresh from N(0, std^2)."""
        with torch.no_grad():
            self.qkv.weight[: 2 * self.d_key].normal_(0.0, std)

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (S, S X W_V) from the fused projection."""
        q, k, v = self.qkv(h).split([self.d_key, self.d_key, h.shape[-1]], dim=-1)
        weights = (q @ k.transpose(-1, -2) / self.temperature).softmax(dim=-1)
        return weights, weights @ v


def renamed(cfg: ModelConfig) -> nn.Module:
    """Modules renamed: the same function and the same draws."""
    return ClaimTinyTransformer(cfg, Renamed)


def einsum(cfg: ModelConfig) -> nn.Module:
    """Attention through einsum: the same function and draws, other rounding."""
    return ClaimTinyTransformer(cfg, Einsum)


def fused_qkv(cfg: ModelConfig) -> nn.Module:
    """A fused Q/K/V projection: the same function, other draws from the same distribution."""
    return ClaimTinyTransformer(cfg, FusedQKV)


def reseeded(cfg: ModelConfig) -> nn.Module:
    """One extra draw before building: every weight drawn afresh from the same distribution."""
    torch.rand(())
    return build(cfg)
