"""Check that an SST-2 file's labels follow its sentences' sentiment, before a claim trains on it.

A file can parse cleanly and still be wrong: labels shuffled or flipped by a bad merge, sentences
replaced. ``check_sst2`` trains a cheap linear probe, ridge regression in closed form on the
frozen, mean-pooled output of all six layers of the pretrained all-MiniLM-L6-v2 encoder, on a small
label-balanced sample of the training file, and measures its accuracy on a balanced sample of the
dev file (or, without one, on other rows of the training file). Sentences whose labels carry
sentiment give well above chance; shuffled labels or random words give chance.

Measured on the shared data (train.tsv.gz, dev.tsv; 200 + 200 sentences, ridge 100; 13 sample seeds):
real labels 0.68 to 0.74 (0.705 at the fixed sample seed 0), shuffled training labels 0.41 to 0.60
(mean 0.50 over 160 shuffles). Tested on held-out training rows instead (no dev file), seeds 0-4:
real 0.715 to 0.785, shuffled 0.455 to 0.55. ``MIN_ACCURACY`` = 0.65 lies between, 0.03 below the
lowest real value and 0.05 above the highest shuffled one. It takes about 4 s on one CPU core.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from claimcheck.errors import DataError, DataUnavailable
from claimcheck.store.cache import ResultCache
from claimcheck.store.keys import Key
from qin2025.data.sst2 import Sst2Split, balanced_sample, choose_sst2, load_sst2
from qin2025.engine.encoder import EncoderConfig, Pretrained, sentence_embeddings, sha256_file, tokenize
from qin2025.engine.finetune import weights_sha256
from qin2025.engine.trainer import engine_identity, function_identity

TRAIN_SIZE = 200  # balanced training sentences for the probe
TEST_SIZE = 200  # balanced test sentences
RIDGE = 100.0  # ridge penalty on standardised features (chosen for the widest real-vs-shuffled gap)
MAX_TOKENS = 64  # truncation; SST-2 sentences rarely need more
LAYERS = 6  # all of all-MiniLM-L6-v2
SAMPLE_SEED = 0  # fixed, so a given file always gets the same verdict
MIN_ACCURACY = 0.65  # real: 0.68-0.74; shuffled labels: at most 0.60 (module docstring)


class Sst2SanityError(DataError):
    """The SST-2 file parses, but its labels do not follow its sentences' sentiment."""


@dataclass(frozen=True)
class ProbeResult:
    """The linear probe's accuracy and what it was trained and tested on."""

    accuracy: float
    n_train: int
    n_test: int
    test_source: str  # e.g. "dev.tsv" or "held-out rows of train.tsv.gz"
    seconds: float

    def describe(self) -> str:
        """Return one line, e.g. ``linear probe: 0.705 accuracy on 200 dev.tsv rows (trained on 200; >= 0.65)``."""
        return (
            f"linear probe on frozen all-MiniLM-L6-v2 embeddings: {self.accuracy:.3f} accuracy on {self.n_test} "
            f"balanced rows of {self.test_source} (trained on {self.n_train}; needs >= {MIN_ACCURACY})"
        )


def ridge_predict(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Fit ridge regression of +-1 targets on standardised ``train_x`` (n, d); return 0/1 predictions for ``test_x``.

    Features are centred and scaled by the training statistics; the intercept is penalised like the
    weights (it barely matters on balanced data). Closed form: w = (Z'Z + ridge I)^-1 Z'(2y - 1).
    """
    mean = train_x.mean(axis=0)
    std = train_x.std(axis=0) + 1e-8
    z = np.c_[(train_x - mean) / std, np.ones(len(train_x))]  # (n, d + 1)
    w = np.linalg.solve(z.T @ z + ridge * np.eye(z.shape[1]), z.T @ (2.0 * train_y - 1.0))
    scores: np.ndarray = np.c_[(test_x - mean) / std, np.ones(len(test_x))] @ w  # (m,)
    return (scores > 0).astype(np.int64)


_EMBEDDINGS: dict[str, np.ndarray] = {}


def embed_sentences(pre: Pretrained, sentences: Sequence[str]) -> np.ndarray:
    """Return the mean-pooled six-layer embeddings (n, d) of ``sentences`` as float64 (cached in-process by content)."""
    h = hashlib.sha256(f"{pre.directory}\0{id(pre)}\0{pre.tokenizer_sha256}\0{MAX_TOKENS}\0{LAYERS}".encode())
    for s in sentences:
        h.update(b"\0" + s.encode("utf-8"))
    key = h.hexdigest()
    if key not in _EMBEDDINGS:
        _EMBEDDINGS[key] = _by_length(pre, list(sentences))
    return _EMBEDDINGS[key]


def _by_length(pre: Pretrained, sentences: list[str], chunk: int = 50) -> np.ndarray:
    """Return the embeddings of ``sentences`` in their order, run in chunks of similar length.

    A batch pads to its longest sentence and the padding is masked out of attention and pooling,
    so chunks sorted by length give the same embeddings (to float32 rounding) for a third of the
    products a single batch padded to the longest sentence of all takes.
    """
    lengths = tokenize(pre, sentences, MAX_TOKENS).attention_mask.sum(1).tolist()
    order = sorted(range(len(sentences)), key=lambda i: lengths[i])
    out = np.empty((len(sentences), pre.shape.hidden), dtype=np.float64)
    for start in range(0, len(order), chunk):
        rows = order[start : start + chunk]
        batch = tokenize(pre, [sentences[i] for i in rows], MAX_TOKENS)
        out[rows] = sentence_embeddings(pre, batch, EncoderConfig.uniform(LAYERS, 1.0)).double().numpy()
    return out


def probe_sst2(
    pre: Pretrained, train: Sst2Split, test: Sst2Split | None = None, seed: int = SAMPLE_SEED
) -> ProbeResult:
    """Train the probe on a balanced sample of ``train`` and return its accuracy on a balanced sample of ``test``.

    Without ``test``, the probe is tested on other rows of ``train``: a balanced sample of
    TRAIN_SIZE + TEST_SIZE rows is split, per label, into a training and a test half.
    """
    start = time.perf_counter()
    if test is None:
        both = balanced_sample(train, TRAIN_SIZE + TEST_SIZE, seed)
        first = np.zeros(len(both.labels), dtype=bool)
        for label in (0, 1):
            first[np.flatnonzero(both.labels == label)[: TRAIN_SIZE // 2]] = True
        sentences = np.asarray(both.sentences, dtype=object)
        train_s, train_y = list(sentences[first]), both.labels[first]
        test_s, test_y = list(sentences[~first]), both.labels[~first]
        source = f"held-out rows of {train.path.name}"
    else:
        a, b = balanced_sample(train, TRAIN_SIZE, seed), balanced_sample(test, TEST_SIZE, seed)
        train_s, train_y, test_s, test_y = list(a.sentences), a.labels, list(b.sentences), b.labels
        source = test.path.name
    predicted = ridge_predict(embed_sentences(pre, train_s), train_y, embed_sentences(pre, test_s))
    accuracy = float((predicted == test_y).mean())
    return ProbeResult(accuracy, len(train_y), len(test_y), source, time.perf_counter() - start)


def check_sst2(pre: Pretrained, train: Sst2Split, test: Sst2Split | None = None) -> ProbeResult:
    """Return ``probe_sst2``'s result; raise Sst2SanityError when its accuracy is below ``MIN_ACCURACY``."""
    result = probe_sst2(pre, train, test)
    _hold(train, result)
    return result


def _hold(train: Sst2Split, result: ProbeResult) -> None:
    """Raise Sst2SanityError when the probe's accuracy is below ``MIN_ACCURACY``."""
    if not result.accuracy >= MIN_ACCURACY:
        raise Sst2SanityError(
            f"{train.path}: the labels do not follow the sentences' sentiment: a {result.describe()}; real SST-2 "
            "gives about 0.70, shuffled labels or random text about 0.50. Check the file against SOURCES.md "
            "(its sha256) and fetch it again"
        )


def check_sst2_data(pre: Pretrained, data_dir: Path, train_path: Path, cache: ResultCache | None = None) -> ProbeResult:
    """Run ``check_sst2`` on the file ``train_path``, tested on the data folder's dev split if it has a valid one.

    With ``cache``, the probe's result is stored under the sha256 of both files, of the model's
    weights and tokenizer, and of the code (this module's and the engine's), so it runs once per
    data file; the accuracy is held to ``MIN_ACCURACY`` every time.
    """
    try:
        test: Sst2Split | None = load_sst2(choose_sst2(data_dir, "dev").path)
    except (DataUnavailable, DataError):
        test = None  # no usable dev file: test on held-out training rows
    train = load_sst2(train_path)
    if cache is None:
        return check_sst2(pre, train, test)
    inputs = {
        "kind": "sst2-sanity",
        "train": sha256_file(train.path),
        "test": None if test is None else sha256_file(test.path),
        "weights": weights_sha256(pre),
        "tokenizer": pre.tokenizer_sha256,
    }

    def compute() -> tuple[dict[str, np.ndarray], dict[str, object]]:
        return {}, asdict(probe_sst2(pre, train, test))

    key = Key(engine=engine_identity(), model="", function=function_identity(check_sst2_data), inputs=inputs)
    result = ProbeResult(**cache.memo(key, compute)[1])
    _hold(train, result)
    return result
