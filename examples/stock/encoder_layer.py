"""Check PyTorch's own ``nn.TransformerEncoderLayer`` against the claims, post-norm or pre-norm.

    pytest claims/ --claim-model examples/stock/encoder_layer.py:build           # post-norm
    pytest claims/ --claim-model examples/stock/encoder_layer.py:build_prenorm   # norm_first=True
    pytest claims/ --claim-model examples/stock/encoder_layer.py:build_bare      # no attention exposed

The layer is stock: d_model = cfg.d, one head, dim_feedforward = cfg.hidden (d unless cfg.d_ff
says otherwise), dropout 0, ReLU, batch_first, PyTorch's own initialisation, followed by a linear
read-out to cfg.d_out. It reads no ``ModelConfig`` knob: its residual coefficient is 1, its Q/K
width is tied to d, and its LayerNorm puts it outside Theorem 1 (``claim_facts`` says so).

How S and Z are exposed without changing the layer's math: the layer calls its ``self_attn``
with ``need_weights=False``, which sends ``nn.MultiheadAttention`` to the fused
``scaled_dot_product_attention``. For the duration of one forward, a pre-hook turns that argument
into ``need_weights=True`` and a hook keeps what ``self_attn`` returns. The layer takes element 0,
the attention output, exactly as before; element 1 is S (one head, so averaging over heads changes
nothing). With weights asked for, ``nn.MultiheadAttention`` computes softmax(Q K^T / sqrt(d)) V
with explicit matrix products instead of the fused kernel: the same function, rounded differently
(to ~1e-16 in float64). Z is the residual sum the layer forms, X + SA(X) post-norm (the input of
norm1) and X + SA(norm1(X)) pre-norm. ``build_bare`` keeps the layer's own call: it exposes nothing,
and the probe runs it on the SDPA math backend, because the fused CPU kernel has no second derivative.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from qin2025.engine.model import Forward, ModelConfig

FACTS: dict[str, str | bool] = {
    "heads": "1",
    "d_qk": "tied to d (nn.MultiheadAttention: Q/K width d / nhead = d)",
    "qk_init": "PyTorch's: xavier_uniform_ on in_proj_weight",
    "logit_scale": "1/sqrt(d)",
    "init": "PyTorch's defaults (in_proj xavier_uniform_, nn.Linear's kaiming-uniform for the rest)",
    "biases": "yes: in_proj, out_proj, both FFN linears, read-out (zero at init for in_proj, out_proj)",
    "output_projection": "out_proj (d x d, with bias)",
    "ffn": "linear2(relu(linear1(.))), width cfg.hidden, residual coefficient 1",
}


class EncoderLayerModel(nn.Module):
    """``nn.TransformerEncoderLayer`` (one head, dropout 0) and a linear read-out; exposes S and Z."""

    claim_honours = ()  # it reads only the shape: d, cfg.hidden and d_out

    def __init__(self, cfg: ModelConfig, *, norm_first: bool = False, expose: bool = True) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model=cfg.d,
            nhead=1,
            dim_feedforward=cfg.hidden,
            dropout=0.0,
            activation="relu",
            batch_first=True,
            norm_first=norm_first,
        )
        self.readout = nn.Linear(cfg.d, cfg.d_out)
        self.expose = expose
        kernel = (
            "the layer's own scaled_dot_product_attention call"
            if not expose
            else ("nn.MultiheadAttention's explicit softmax path (need_weights=True, set by the adapter's hook)")
        )
        residual = "X + SA(norm1(X))" if norm_first else "X + SA(X)"
        self.claim_facts = {
            **FACTS,
            "layernorm": "pre" if norm_first else "post",
            "residual": f"{residual}, coefficient 1 (ModelConfig.beta is not read)",
            "attention_kernel": kernel,
        }

    def forward(self, x: torch.Tensor) -> Forward | torch.Tensor:
        """Return the read-out of the layer's output, with S and Z of its attention when exposed."""
        if not self.expose:
            return self.readout(self.layer(x))  # (N, n, d_out)
        seen: list[tuple[torch.Tensor, torch.Tensor]] = []

        def ask_for_weights(
            module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return args, {**kwargs, "need_weights": True}

        def keep(module: nn.Module, args: tuple[Any, ...], output: tuple[torch.Tensor, torch.Tensor]) -> None:
            seen.append(output)

        attn = self.layer.self_attn
        handles = [attn.register_forward_pre_hook(ask_for_weights, with_kwargs=True), attn.register_forward_hook(keep)]
        try:
            h = self.layer(x)  # (N, n, d)
        finally:
            for handle in handles:
                handle.remove()
        sa, s = seen[0]  # (N, n, d) attention output, (N, n, n) S
        z = x + sa  # the residual sum: post-norm X + SA(X), pre-norm X + SA(norm1(X))
        return Forward(out=self.readout(h), attn=[s], z=[z])


def build(cfg: ModelConfig) -> nn.Module:
    """Return the post-norm layer (PyTorch's default, norm_first=False), exposing S and Z."""
    return EncoderLayerModel(cfg)


def build_prenorm(cfg: ModelConfig) -> nn.Module:
    """Return the pre-norm layer (norm_first=True), exposing S and Z."""
    return EncoderLayerModel(cfg, norm_first=True)


def build_bare(cfg: ModelConfig) -> nn.Module:
    """Return the post-norm layer as PyTorch runs it (need_weights=False), exposing nothing."""
    return EncoderLayerModel(cfg, expose=False)
