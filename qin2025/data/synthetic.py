"""Make synthetic regression data: full-rank Gaussian token matrices and Gaussian targets."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class TensorData:
    """A full batch for training: inputs (N, n, d), targets (N, n, d_out), and where they came from."""

    x: torch.Tensor
    y: torch.Tensor
    name: str  # what a report shows, e.g. "synthetic N=4 n=8 d=32"

    @property
    def fingerprint(self) -> str:
        """Return a sha256 over the exact bytes of x and y (first 16 hex digits)."""
        return fingerprint_tensors(self.x, self.y)


def fingerprint_tensors(*tensors: torch.Tensor) -> str:
    """Return a sha256 over the shapes, dtypes and exact bytes of ``tensors`` (first 16 hex digits)."""
    h = hashlib.sha256()
    for t in tensors:
        arr = t.detach().cpu().contiguous().numpy()
        h.update(str((arr.shape, arr.dtype.str)).encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def make_synthetic(
    n_samples: int,
    n_tokens: int,
    d: int,
    d_out: int,
    seed: int,
    *,
    rank: int | None = None,
    dtype: torch.dtype = torch.float64,
) -> TensorData:
    """Draw X with i.i.d. N(0, 1) entries and Y with i.i.d. N(0, 1) entries.

    ``rank`` (default: full) makes every X_i of rank ``rank`` by multiplying two Gaussian
    factors, for controls whose premise is a rank-deficient input.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    shape = (n_samples, n_tokens, d)
    if rank is None:
        x = rng.standard_normal(shape)
    else:
        left = rng.standard_normal((n_samples, n_tokens, rank))
        right = rng.standard_normal((n_samples, rank, d))
        x = left @ right / np.sqrt(rank)
    y = rng.standard_normal((n_samples, n_tokens, d_out))
    name = f"synthetic N={n_samples} n={n_tokens} d={d} d_out={d_out}"
    if rank is not None:
        name += f" rank={rank}"
    return TensorData(torch.from_numpy(x).to(dtype), torch.from_numpy(y).to(dtype), name)
