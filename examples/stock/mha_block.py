"""Check a block built on PyTorch's ``nn.MultiheadAttention`` (no LayerNorm) against the claims.

    pytest claims/ --claim-model examples/stock/mha_block.py:build

One block, as close to the paper's as stock parts allow:

    A, S = MultiheadAttention(X, X, X, need_weights=True)   # one head: A = out_proj(S (X W_V + b_V))
    Z = A + beta X                                           # (N, n, d), beta = cfg.beta
    H = W_2(relu(W_1(Z))) + gamma Z                          # width cfg.hidden, gamma = cfg.ffn_residual
    F = read-out(H)                                          # (N, n, d_out)

It reads ``cfg.beta`` (``claim_honours = ("beta",)``). It does not read d_qk (one head of
``nn.MultiheadAttention`` ties the Q/K width to d), qk_init (PyTorch initialises the weights) or
n_layers (one block). Unlike the paper's, it has biases and an output projection; ``claim_facts``
says so. ``need_weights=True`` makes ``nn.MultiheadAttention`` return S and compute the attention
with explicit matrix products, which have second derivatives; with one head, averaging S over heads
changes nothing.
"""

from __future__ import annotations

import torch
from torch import nn

from qin2025.engine.model import Forward, ModelConfig


class MHABlock(nn.Module):
    """``nn.MultiheadAttention`` (one head) with residual ``beta``, a ReLU FFN and a linear read-out."""

    claim_honours = ("beta",)
    claim_facts = {  # noqa: RUF012 (read by claimcheck, never changed)
        "layernorm": "none",
        "heads": "1",
        "d_qk": "tied to d (one head of nn.MultiheadAttention)",
        "qk_init": "PyTorch's: xavier_uniform_ on in_proj_weight",
        "logit_scale": "1/sqrt(d)",
        "init": "PyTorch's defaults (in_proj xavier_uniform_, nn.Linear's kaiming-uniform for the rest)",
        "biases": "yes: in_proj, out_proj (zero at init), both FFN linears, read-out",
        "output_projection": "out_proj (d x d, with bias)",
        "residual": "Z = out_proj(S (X W_V + b_V)) + beta X",
        "ffn": "W_2(relu(W_1(Z))) + gamma Z, width cfg.hidden, gamma = cfg.ffn_residual",
        "attention_kernel": "nn.MultiheadAttention's explicit softmax path (need_weights=True)",
    }

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(cfg.d, num_heads=1, dropout=0.0, batch_first=True)
        self.ff_in = nn.Linear(cfg.d, cfg.hidden)
        self.ff_out = nn.Linear(cfg.hidden, cfg.d)
        self.readout = nn.Linear(cfg.d, cfg.d_out)
        self.beta = cfg.beta
        self.gamma = cfg.ffn_residual

    def forward(self, x: torch.Tensor) -> Forward:
        """Return the read-out with the block's S and Z = Attn(X) + beta X."""
        a, s = self.attn(x, x, x, need_weights=True)  # (N, n, d), (N, n, n)
        assert s is not None
        z = a + self.beta * x  # (N, n, d)
        h = self.ff_out(torch.relu(self.ff_in(z))) + self.gamma * z  # (N, n, d)
        return Forward(out=self.readout(h), attn=[s], z=[z])  # (N, n, d_out)


def build(cfg: ModelConfig) -> nn.Module:
    """The factory ``--claim-model`` names."""
    return MHABlock(cfg)
