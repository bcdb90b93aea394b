"""The synthetic data the claims train on: full rank unless asked, one draw per seed, named by its shape."""

from __future__ import annotations

import torch

from qin2025.data import TensorData, make_synthetic
from qin2025.data.synthetic import fingerprint_tensors


def test_each_token_matrix_is_full_rank_unless_a_rank_is_asked_for() -> None:
    full = make_synthetic(3, 6, 8, 1, seed=0)
    low = make_synthetic(3, 6, 8, 1, seed=0, rank=2)
    assert [int(torch.linalg.matrix_rank(x)) for x in full.x] == [6, 6, 6]  # n = 6 tokens < d = 8
    assert [int(torch.linalg.matrix_rank(x)) for x in low.x] == [2, 2, 2]
    assert full.x.shape == (3, 6, 8) and full.y.shape == (3, 6, 1) and full.x.dtype == torch.float64
    assert (full.name, low.name) == ("synthetic N=3 n=6 d=8 d_out=1", "synthetic N=3 n=6 d=8 d_out=1 rank=2")


def test_a_seed_gives_one_draw_and_the_fingerprint_follows_the_bytes() -> None:
    a, b, c = (make_synthetic(2, 4, 5, 2, seed=s) for s in (7, 7, 8))
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y) and a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint
    nudged = TensorData(a.x.clone(), a.y.clone(), a.name)
    nudged.y[0, 0, 0] += 1e-12
    assert nudged.fingerprint != a.fingerprint  # exact bytes, not a rounded copy
    assert fingerprint_tensors(a.x.float(), a.y.float()) != a.fingerprint  # the dtype is part of it
