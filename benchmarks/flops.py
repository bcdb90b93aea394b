"""Count the matrix-multiply FLOPs of one GD step of the engine, analytically.

A product of an (r, s) and an (s, c) matrix costs 2 r s c FLOPs. Backward takes one product of the
same size per factor that needs a gradient: the weight always, the activation unless it is the
data X. So a product costs 2, or 3, times its forward FLOPs. Softmax, ReLU, sums and the update
are left out: they are O(N n (n + d)) and small beside the products.
"""

from __future__ import annotations

from qin2025.engine.model import ModelConfig


def step_flops(cfg: ModelConfig, n_samples: int, n_tokens: int) -> int:
    """Return the matmul FLOPs of forward + backward of one full-batch step on (N, n, d) data."""
    tokens = n_samples * n_tokens  # N n rows of every projection
    d, k, h, pairs = cfg.d, cfg.d_qk, cfg.hidden, n_samples * n_tokens * n_tokens
    total = 0
    for layer in range(cfg.n_layers):
        passes = 2 if layer == 0 else 3  # layer 0 reads X, which needs no gradient
        total += passes * 2 * tokens * d * (2 * k + d)  # X W_Q, X W_K, X W_V
        total += 3 * 2 * pairs * (k + d)  # Q K^T and S (X W_V): both factors need gradients
        ffn = tokens * d * h * (2 if cfg.ffn_matrices == 2 else 1)  # Z W_1 (and relu(.) W_2)
        total += 3 * 2 * ffn
    return total + 3 * 2 * tokens * d * cfg.d_out  # H W_U
