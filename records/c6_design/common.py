"""Shared helpers of the C6 v3 design scripts (exploratory seeds only, 0-999; never a confirmatory block)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from qin2025.data.sst2 import balanced_sample, find_sst2, load_sst2
from qin2025.engine.encoder import EncoderConfig, load_pretrained
from qin2025.engine.finetune import FinetuneConfig, SentenceData, finetune, prepare

OUT = Path(__file__).resolve().parent / "results"
DATA = Path(os.environ.get("CLAIMCHECK_DATA_DIR", "data"))  # the data folder, as the claims find it

torch.set_num_threads(1)
PRE = load_pretrained(None)
SPLIT = load_sst2(find_sst2(DATA, "train"))


def sample(n: int, tokens: int, seed: int) -> SentenceData:
    """Return the seed's label-balanced sample of ``n`` sentences, embedded, truncated to ``tokens``."""
    return prepare(PRE, balanced_sample(SPLIT, n, seed), tokens)


def run(data: SentenceData, depth: int, residual: float, steps: int, head_seed: int, frac: float = 0.5) -> dict:
    """Train one variant; return its curves, step size, radius and wall time."""
    t0 = time.process_time()
    cfg = FinetuneConfig(steps=steps, lr_fraction=frac)
    r = finetune(PRE, EncoderConfig.uniform(depth, residual), cfg, data, head_seed)
    return {
        "error": r.error.tolist(),
        "loss": r.loss.tolist(),
        "lr": r.lr,
        "rho": r.hessian_radius,
        "diverged_at": r.diverged_at,
        "cpu_s": time.process_time() - t0,
    }


def save(name: str, obj: object) -> Path:
    """Write ``obj`` as JSON under results/."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(obj, indent=1))
    return path


def tokens_per_sample(data: SentenceData) -> tuple[int, float]:
    """Return (padded length, mean real tokens) of a sample."""
    m = data.mask.to(torch.float64)
    return int(m.shape[1]), float(m.sum(1).mean())


def first_zero(err: list[float]) -> int | None:
    """Return the first step at zero training error, or None."""
    hits = np.flatnonzero(np.asarray(err) == 0)
    return int(hits[0]) if hits.size else None
