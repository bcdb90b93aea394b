"""Fine-tuning: the curvature bound is the Hessian's spectral radius, mu follows it, runs are reproducible."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.pre_tokenizers import Whitespace

from claimcheck.errors import ConfigError
from claimcheck.store.cache import ResultCache
from qin2025.data.sst2 import Sst2Sample
from qin2025.engine import encoder
from qin2025.engine.encoder import EncoderConfig, Pretrained, layer_params, load_pretrained
from qin2025.engine.finetune import (
    FinetuneConfig,
    cached_finetune,
    check_reference,
    finetune,
    hessian_spectral_radius,
    init_head,
    objective,
    prepare,
)
from qin2025.engine.trainer import Trainer

WORDS = ["[PAD]", "[UNK]", "good", "bad", "film", "plot", "dull", "fine"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Pretrained:
    """A random 2-layer BERT with d = 4 and a whitespace WordPiece tokenizer: small enough for exact Hessians."""
    folder = tmp_path_factory.mktemp("tiny")
    config = {
        "hidden_size": 4,
        "num_attention_heads": 2,
        "intermediate_size": 8,
        "num_hidden_layers": 2,
        "vocab_size": len(WORDS),
        "max_position_embeddings": 8,
        "hidden_act": "gelu",
    }
    (folder / "config.json").write_text(json.dumps(config))
    shapes = encoder._expected_shapes(encoder._read_shape(folder / "config.json"))
    gen = torch.Generator().manual_seed(0)
    save_file(
        {k: torch.randn(*(2 if s == -1 else s for s in v), generator=gen) for k, v in shapes.items()},
        str(folder / "model.safetensors"),
    )
    tok = Tokenizer(WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    return load_pretrained(folder)


def _sample() -> Sst2Sample:
    sentences = ("good film", "bad plot", "dull film plot", "fine good film")
    labels = np.array([1, 0, 0, 1], dtype=np.int64)
    return Sst2Sample(sentences, labels, np.arange(4), 0, "toy sample")


def test_spectral_radius_matches_the_exact_hessian(tiny: Pretrained) -> None:
    data = prepare(tiny, _sample(), 8, torch.float64)
    cfg = EncoderConfig.uniform(1, 0.0)
    params = layer_params(tiny, 1, torch.float64) | init_head(4, 0, torch.float64)
    names = list(params)
    sizes = [p.numel() for p in params.values()]

    def flat_loss(theta: torch.Tensor) -> torch.Tensor:
        parts = torch.split(theta, sizes)
        ps = {n: t.reshape(params[n].shape) for n, t in zip(names, parts, strict=True)}
        return objective(ps, data, cfg, tiny)

    theta = torch.cat([p.reshape(-1) for p in params.values()])
    eig = torch.linalg.eigvalsh(torch.autograd.functional.hessian(flat_loss, theta))
    exact = float(eig.abs().max())

    def loss_of(leaves: list[torch.Tensor]) -> torch.Tensor:
        return objective(dict(zip(names, leaves, strict=True)), data, cfg, tiny)

    measured = hessian_spectral_radius(loss_of, list(params.values()), iters=5000, tol=1e-12, seed=0)
    assert measured == pytest.approx(exact, rel=1e-6)


def test_step_size_is_the_fraction_of_two_over_rho_and_the_loss_falls(tiny: Pretrained) -> None:
    data = prepare(tiny, _sample(), 8)
    run = finetune(tiny, EncoderConfig.uniform(2), FinetuneConfig(steps=15, lr_fraction=0.25), data, head_seed=1)
    assert run.lr == pytest.approx(0.25 * 2 / run.hessian_radius)
    assert run.loss.shape == run.error.shape == (16,)
    assert run.diverged_at is None and run.final_loss < run.loss[0]
    assert set(np.unique(run.error)) <= {0.0, 0.25, 0.5, 0.75, 1.0}


def test_same_seed_same_run_other_head_seed_other_run(tiny: Pretrained) -> None:
    data = prepare(tiny, _sample(), 8)
    cfg = FinetuneConfig(steps=5)
    a = finetune(tiny, EncoderConfig.uniform(1), cfg, data, head_seed=3)
    b = finetune(tiny, EncoderConfig.uniform(1), cfg, data, head_seed=3)
    c = finetune(tiny, EncoderConfig.uniform(1), cfg, data, head_seed=4)
    np.testing.assert_array_equal(a.loss, b.loss)
    assert not np.array_equal(a.loss, c.loss)


def test_a_step_far_above_the_bound_diverges_and_is_recorded(tiny: Pretrained) -> None:
    data = prepare(tiny, _sample(), 8)
    run = finetune(tiny, EncoderConfig.uniform(1), FinetuneConfig(steps=200, lr_fraction=50.0), data, head_seed=0)
    assert run.diverged_at is not None
    assert run.final_loss == float("inf") and run.final_error == 1.0


def test_training_leaves_the_loaded_checkpoint_untouched(tiny: Pretrained) -> None:
    before = {k: v.clone() for k, v in tiny.weights.items()}
    finetune(tiny, EncoderConfig.uniform(2), FinetuneConfig(steps=3), prepare(tiny, _sample(), 8), head_seed=0)
    for k, v in tiny.weights.items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ConfigError, match="steps must be >= 1"):
        FinetuneConfig(steps=0)
    with pytest.raises(ConfigError, match="lr_fraction must be > 0"):
        FinetuneConfig(lr_fraction=0.0)
    with pytest.raises(ConfigError, match="dtype must be one of"):
        FinetuneConfig(dtype="float16")


def test_prepare_embeds_each_sentence_and_maps_labels_to_signs(tiny: Pretrained) -> None:
    data = prepare(tiny, _sample(), 8)
    assert data.x.shape[0] == 4 and data.x.shape[2] == 4
    assert data.y.tolist() == [1.0, -1.0, -1.0, 1.0]
    assert data.mask.sum(1).tolist() == [2, 2, 3, 3]


def test_fine_tuning_runs_on_the_trainer_s_device_with_the_same_numbers(tiny: Pretrained, tmp_path: Path) -> None:
    data = prepare(tiny, _sample(), 8)
    cfg = FinetuneConfig(steps=3)
    on = cached_finetune(Trainer(ResultCache(None), device="cpu:0"), tiny, EncoderConfig.uniform(1), cfg, data, 0)
    plain = cached_finetune(Trainer(ResultCache(None)), tiny, EncoderConfig.uniform(1), cfg, data, 0)
    assert on.train["device"] == "cpu:0" and plain.train["device"] == "cpu"
    np.testing.assert_array_equal(on.loss, plain.loss)
    assert on.lr == plain.lr


def test_the_encoder_reference_check_runs_once_per_weights_and_fixture(
    tiny: Pretrained, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qin2025.engine import finetune as finetune_module

    batch = encoder.tokenize(tiny, ["good film", "bad plot dull"], 8)
    pooled = {1: encoder.sentence_embeddings(tiny, batch, EncoderConfig.uniform(1))}
    fixture = tmp_path / "reference.json"
    fixture.write_text(
        json.dumps(
            {
                "sentences": ["good film", "bad plot dull"],
                "input_ids": batch.input_ids.tolist(),
                "attention_mask": batch.attention_mask.tolist(),
                "mean_pooled": {"1": pooled[1].tolist()},
                "model_sha256": "not these weights",
                "tokenizer_sha256": tiny.tokenizer_sha256,
            }
        )
    )
    trainer = Trainer(ResultCache(tmp_path / "cache"))
    first = check_reference(trainer, tiny, fixture, 1)
    assert first.on == 0.0 and first.off > 0 and not first.same_weights
    monkeypatch.setattr(finetune_module, "reference_max_abs_diff", lambda *a: pytest.fail("computed again"))
    assert check_reference(trainer, tiny, fixture, 1) == first
    assert (trainer.counts.computed, trainer.counts.cached) == (1, 1)
