"""Three multi-layer bugs an outside user could write while editing the example model (issue 35).

None is in ``examples/tinyformer/catalogue.toml``; each shows only with ``n_layers > 1`` and builds
the very same model, draw for draw, as the healthy adapter at ``n_layers = 1``:

- ``tied_layers``: the stack is built as ``nn.ModuleList([block(...)] * n)``, so every layer is the
  same module (one set of weights, applied n times);
- ``residual_from_input``: each block's residual adds the network's input X instead of the block's
  own input (``z = attn(h) + beta * x``, the name of the wrong tensor);
- ``qk_init_first_only``: the paper's W_Q, W_K draw is applied to the first block only
  (``blocks[0].reset_qk(...)`` instead of a loop), so later blocks keep ``nn.Linear``'s uniform init
  and ``--qk-init`` is honoured at layer 1 alone.

Each still declares the adapter's ``claim_honours``, as a user who believes the model is fine would.
``docs/mutants.md`` ("An outside user's bugs through the strict gate") gives what the gate said.
"""

from __future__ import annotations

import torch
from claim_adapter import ClaimTinyTransformer, qk_std
from tinyformer import Block, TinyTransformer
from torch import nn

from qin2025.engine.model import ModelConfig


class TiedStack(TinyTransformer):
    """``TinyTransformer`` whose blocks are one module listed ``n_blocks`` times (``[block(...)] * n``)."""

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
        nn.Module.__init__(self)
        hidden = d_hidden or d_model
        self.blocks = nn.ModuleList([block(d_model, d_key, hidden, residual, ffn_residual)] * n_blocks)
        self.head = nn.Linear(d_model, d_out, bias=False)


class InputResidualBlock(Block):
    """The healthy block, but its residual adds ``x`` (the network's input) rather than ``h``."""

    def forward_from(self, h: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return (block output, S, Z) with Z = Attn(h) + beta x."""
        weights, mixed = self.mix(h)
        z = mixed + self.residual * x
        return self.ff_out(torch.relu(self.ff_in(z))) + self.ffn_residual * z, weights, z


class InputResidualStack(TinyTransformer):
    """``TinyTransformer`` that hands every block the network's input along with the previous output."""

    def forward(
        self, x: torch.Tensor, return_internals: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """Map (batch, tokens, d_model) to (batch, tokens, d_out); optionally with per-block internals."""
        weights, zs = [], []
        h = x
        for block in self.blocks:
            assert isinstance(block, InputResidualBlock)
            h, w, z = block.forward_from(h, x)
            weights.append(w)
            zs.append(z)
        out = self.head(h)
        return (out, weights, zs) if return_internals else out


class OutsideModel(ClaimTinyTransformer):
    """The adapter with its stack class swapped and, optionally, W_Q, W_K drawn for the first block only."""

    def __init__(
        self,
        cfg: ModelConfig,
        stack: type[TinyTransformer] = TinyTransformer,
        block: type[Block] = Block,
        *,
        qk_first_only: bool = False,
    ) -> None:
        nn.Module.__init__(self)
        self.net = stack(
            cfg.d,
            cfg.d_qk,
            cfg.d_out,
            n_blocks=cfg.n_layers,
            d_hidden=cfg.hidden,
            residual=cfg.beta,
            ffn_residual=cfg.ffn_residual,
            block=block,
        )
        blocks = list(self.net.blocks)
        for b in blocks[:1] if qk_first_only else blocks:
            assert isinstance(b, Block)
            b.reset_qk(qk_std(cfg))


def tied_layers(cfg: ModelConfig) -> nn.Module:
    """Every layer the same module: ``nn.ModuleList([block(...)] * n_layers)``."""
    return OutsideModel(cfg, TiedStack)


def residual_from_input(cfg: ModelConfig) -> nn.Module:
    """Each block's residual adds the network's input X, not the block's input."""
    return OutsideModel(cfg, InputResidualStack, InputResidualBlock)


def qk_init_first_only(cfg: ModelConfig) -> nn.Module:
    """W_Q, W_K drawn as the paper draws them in the first block only; later blocks keep nn.Linear's init."""
    return OutsideModel(cfg, qk_first_only=True)
