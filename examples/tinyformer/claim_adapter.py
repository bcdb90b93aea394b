"""Wrap ``TinyTransformer`` for claimcheck: build it from the suite's ``ModelConfig``, expose S and Z.

    pytest claims/ --claim-model examples/tinyformer/claim_adapter.py:build --claim-report

The adapter is the only file that knows about claimcheck; ``tinyformer.py`` does not.
"""

from __future__ import annotations

import torch
from tinyformer import TinyTransformer
from torch import nn

from qin2025.model import Forward, ModelConfig


class ClaimTinyTransformer(nn.Module):
    """``TinyTransformer`` built from a ``ModelConfig``; its forward returns a ``claimcheck`` ``Forward``."""

    claim_honours = ("beta", "n_layers")  # it reads cfg.beta and cfg.n_layers, but keeps its own init

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.net = TinyTransformer(
            cfg.d,
            cfg.d_qk,
            cfg.d_out,
            n_blocks=cfg.n_layers,
            d_hidden=cfg.hidden,
            residual=cfg.beta,
            ffn_residual=cfg.ffn_residual,
        )

    def forward(self, x: torch.Tensor) -> Forward:
        """Return the output with each block's attention weights S and Z = Attn(X) + beta X."""
        out, weights, zs = self.net(x, return_internals=True)
        return Forward(out=out, attn=weights, z=zs)


def build(cfg: ModelConfig) -> nn.Module:
    """The factory ``--claim-model`` names."""
    return ClaimTinyTransformer(cfg)
