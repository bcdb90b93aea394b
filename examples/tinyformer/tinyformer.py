"""A small Transformer regressor written without claimcheck: plain ``torch.nn``, its own init.

Each block is single-head softmax attention with a scaled residual, then a ReLU feed-forward
layer with its own residual; there is no LayerNorm. ``forward(x, return_internals=True)`` also
returns each block's attention weights and its post-attention activations.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class Block(nn.Module):
    """softmax(Q K^T / sqrt(d_key)) V + residual * h, then relu(. W_in) W_out + ffn_residual * ."""

    def __init__(self, d_model: int, d_key: int, d_hidden: int, residual: float, ffn_residual: float) -> None:
        super().__init__()
        self.query = nn.Linear(d_model, d_key, bias=False)
        self.key = nn.Linear(d_model, d_key, bias=False)
        self.value = nn.Linear(d_model, d_model, bias=False)
        self.ff_in = nn.Linear(d_model, d_hidden, bias=False)
        self.ff_out = nn.Linear(d_hidden, d_model, bias=False)
        self.residual = residual
        self.ffn_residual = ffn_residual
        self.temperature = math.sqrt(d_key)

    def reset_qk(self, std: float) -> None:
        """Draw the query and key weights afresh from N(0, std^2) (torch's global generator)."""
        with torch.no_grad():
            self.query.weight.normal_(0.0, std)
            self.key.weight.normal_(0.0, std)

    def mix(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (attention weights, attention output) for tokens ``h`` (batch, tokens, d_model)."""
        scores = self.query(h) @ self.key(h).transpose(-1, -2) / self.temperature
        weights = scores.softmax(dim=-1)
        return weights, weights @ self.value(h)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return (block output, attention weights, attention output plus residual)."""
        weights, mixed = self.mix(h)
        z = mixed + self.residual * h
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class TinyTransformer(nn.Module):
    """``n_blocks`` blocks (of class ``block``) and a linear read-out applied to every token."""

    def __init__(
        self,
        d_model: int,
        d_key: int,
        d_out: int,
        *,
        n_blocks: int = 1,
        d_hidden: int | None = None,
        residual: float = 1.0,
        ffn_residual: float = 1.0,
        block: type[Block] = Block,
    ) -> None:
        super().__init__()
        hidden = d_hidden or d_model
        self.blocks = nn.ModuleList(block(d_model, d_key, hidden, residual, ffn_residual) for _ in range(n_blocks))
        self.head = nn.Linear(d_model, d_out, bias=False)

    def forward(
        self, x: torch.Tensor, return_internals: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Map (batch, tokens, d_model) to (batch, tokens, d_out); optionally with per-block internals."""
        weights, zs = [], []
        h = x
        for block in self.blocks:
            h, w, z = block(h)
            weights.append(w)
            zs.append(z)
        out = self.head(h)
        return (out, weights, zs) if return_internals else out
