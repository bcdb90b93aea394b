"""The outside user's multi-layer bugs (examples/tinyformer/outside.py) build, need depth, and pass the probe."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from qin2025.engine.model import ModelConfig
from qin2025.engine.usermodel import load_model

FOLDER = Path(__file__).parents[1] / "examples" / "tinyformer"
BUGS = ("tied_layers", "residual_from_input", "qk_init_first_only")


def _factories(name: str) -> tuple[Callable[[ModelConfig], nn.Module], Callable[[ModelConfig], nn.Module]]:
    if str(FOLDER) not in sys.path:
        sys.path.insert(0, str(FOLDER))
    import claim_adapter
    import outside

    return claim_adapter.build, getattr(outside, name)


def _output(factory: Callable[[ModelConfig], nn.Module], cfg: ModelConfig, x: torch.Tensor) -> torch.Tensor:
    torch.manual_seed(3)
    with torch.no_grad():
        out: torch.Tensor = factory(cfg).double()(x).out
    return out


@pytest.mark.parametrize("name", BUGS)
def test_a_bug_agrees_with_the_healthy_model_at_one_layer_and_differs_with_more(name: str) -> None:
    healthy, bug = _factories(name)
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    one = ModelConfig(d=8, d_qk=4, n_layers=1)
    assert torch.equal(_output(healthy, one, x), _output(bug, one, x))
    for layers in (2, 3):
        deep = ModelConfig(d=8, d_qk=4, n_layers=layers)
        assert not torch.allclose(_output(healthy, deep, x), _output(bug, deep, x), atol=1e-6), (name, layers)


def test_tied_layers_hold_one_layer_of_weights() -> None:
    healthy, bug = _factories("tied_layers")
    cfg = ModelConfig(d=8, d_qk=4, n_layers=3)
    count = sum(p.numel() for p in bug(cfg).parameters())
    per_block = sum(p.numel() for p in healthy(cfg).net.blocks[0].parameters())  # type: ignore[union-attr,index]
    assert count == sum(p.numel() for p in healthy(cfg).parameters()) - 2 * per_block


@pytest.mark.parametrize("name", BUGS)
def test_a_bug_passes_the_models_probe(name: str) -> None:
    """Each loads through --claim-model's checks, so the claims and the gate, not the probe, must see it."""
    spec = load_model(f"{FOLDER / 'outside.py'}:{name}")
    assert spec is not None
