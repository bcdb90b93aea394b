"""Wrap ``TinyTransformer`` for claimcheck: build it from the suite's ``ModelConfig``, expose S and Z.

    pytest claims/ --claim-model examples/tinyformer/claim_adapter.py:build --claim-report

The adapter is the only file that knows about claimcheck; ``tinyformer.py`` does not. It reads
cfg.beta, cfg.n_layers and cfg.qk_init: W_Q and W_K are drawn as the paper draws them (normal
N(0, 1/d) or xavier N(0, 2/(d + d_qk))), the other weights keep ``nn.Linear``'s own initialisation.
"""

from __future__ import annotations

import math

import torch
from tinyformer import Block, TinyTransformer
from torch import nn

from qin2025.engine.model import Forward, ModelConfig


def qk_std(cfg: ModelConfig) -> float:
    """Return the standard deviation of W_Q, W_K entries under ``cfg.qk_init``."""
    return math.sqrt(2.0 / (cfg.d + cfg.d_qk)) if cfg.qk_init == "xavier" else 1 / math.sqrt(cfg.d)


class ClaimTinyTransformer(nn.Module):
    """``TinyTransformer`` built from a ``ModelConfig``; its forward returns a ``claimcheck`` ``Forward``."""

    claim_honours = ("beta", "n_layers", "qk_init")  # W_V, the FFN and the read-out keep nn.Linear's init

    def __init__(self, cfg: ModelConfig, block: type[Block] = Block) -> None:
        super().__init__()
        self.net = TinyTransformer(
            cfg.d,
            cfg.d_qk,
            cfg.d_out,
            n_blocks=cfg.n_layers,
            d_hidden=cfg.hidden,
            residual=cfg.beta,
            ffn_residual=cfg.ffn_residual,
            block=block,
        )
        for b in self.net.blocks:
            b.reset_qk(qk_std(cfg))

    def forward(self, x: torch.Tensor) -> Forward:
        """Return the output with each block's attention weights S and Z = Attn(X) + beta X."""
        out, weights, zs = self.net(x, return_internals=True)
        return Forward(out=out, attn=weights, z=zs)


def build(cfg: ModelConfig) -> nn.Module:
    """The factory ``--claim-model`` names."""
    return ClaimTinyTransformer(cfg)
