"""The model computes what the paper's formula says, and exposes S and Z."""

from __future__ import annotations

import math

import pytest
import torch

from claimcheck.errors import ConfigError
from qin2025.engine.model import ModelConfig, forward, init_params, loss_fn


def _setup(cfg: ModelConfig, seed: int = 0) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    params = init_params(cfg, torch.Generator().manual_seed(seed))
    x = torch.randn(3, 5, cfg.d, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    return params, x


def test_forward_matches_the_formula_written_out() -> None:
    cfg = ModelConfig(d=6, d_qk=4, d_out=2, beta=0.7, ffn_residual=1.0)
    p, x = _setup(cfg)
    fwd = forward(p, x, cfg)
    logits = (x @ p["0.W_Q"]) @ (x @ p["0.W_K"]).transpose(1, 2) / math.sqrt(4)
    s = torch.exp(logits) / torch.exp(logits).sum(-1, keepdim=True)
    z = s @ x @ p["0.W_V"] + 0.7 * x
    h = torch.relu(z @ p["0.W_1"]) @ p["0.W_2"] + z
    torch.testing.assert_close(fwd.attn[0], s)
    torch.testing.assert_close(fwd.z[0], z)
    torch.testing.assert_close(fwd.out, h @ p["W_U"])


def test_attention_rows_are_probability_vectors() -> None:
    cfg = ModelConfig(d=8, d_qk=3)
    p, x = _setup(cfg)
    s = forward(p, x, cfg).attn[0]
    assert s.shape == (3, 5, 5)
    assert bool((s >= 0).all())
    torch.testing.assert_close(s.sum(-1), torch.ones(3, 5, dtype=torch.float64))


def test_beta_zero_removes_the_residual() -> None:
    cfg = ModelConfig(d=8, d_qk=3, beta=0.0)
    p, x = _setup(cfg)
    fwd = forward(p, x, cfg)
    torch.testing.assert_close(fwd.z[0], fwd.attn[0] @ x @ p["0.W_V"])


def test_stacked_blocks_expose_every_layer() -> None:
    cfg = ModelConfig(d=8, d_qk=3, n_layers=3)
    p, x = _setup(cfg)
    fwd = forward(p, x, cfg)
    assert len(fwd.attn) == len(fwd.z) == 3
    assert sorted(k for k in p if k.startswith("2.")) == ["2.W_1", "2.W_2", "2.W_K", "2.W_Q", "2.W_V"]


def test_single_matrix_ffn_has_no_w2() -> None:
    cfg = ModelConfig(d=8, d_qk=3, ffn_matrices=1)
    assert "0.W_2" not in init_params(cfg, torch.Generator().manual_seed(0))


@pytest.mark.parametrize(
    ("qk_init", "expected_var"),
    [("normal", 1 / 64), ("xavier", 2 / (64 + 256))],
)
def test_query_key_init_has_the_documented_variance(qk_init: str, expected_var: float) -> None:
    cfg = ModelConfig(d=64, d_qk=256, qk_init=qk_init)  # type: ignore[arg-type]
    w = init_params(cfg, torch.Generator().manual_seed(0))["0.W_Q"]
    assert float(w.var()) == pytest.approx(expected_var, rel=0.05)


def test_half_loss_halves_the_loss() -> None:
    cfg = ModelConfig(d=6, d_qk=2)
    p, x = _setup(cfg)
    y = torch.zeros(3, 5, 1, dtype=torch.float64)
    full = loss_fn(p, x, y, ModelConfig(d=6, d_qk=2, half_loss=False))
    torch.testing.assert_close(loss_fn(p, x, y, cfg), 0.5 * full)


def test_gradients_match_finite_differences() -> None:
    cfg = ModelConfig(d=4, d_qk=2, n_layers=2)
    p, x = _setup(cfg)
    y = torch.randn(3, 5, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    names = list(p)

    def f(*tensors: torch.Tensor) -> torch.Tensor:
        return loss_fn(dict(zip(names, tensors, strict=True)), x, y, cfg)

    inputs = tuple(t.clone().requires_grad_(True) for t in p.values())
    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [("d", 0, "ModelConfig.d"), ("logit_scale", "huge", "logit_scale"), ("qk_init", "he", "qk_init")],
)
def test_bad_model_config_names_the_field(field: str, value: object, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        ModelConfig(**{field: value})  # type: ignore[arg-type]
