"""Multiply stacks of matrices run by run, with the bits one ``mm`` per run would give.

The one-run engine multiplies activations by a weight with one ``mm`` per projection; the batched
engine stacks B runs and wants one ``bmm`` instead. The two agree bit for bit only if every product
of the forward pass, the backward pass and the Hessian-vector products sums in the same order.
``matrixwise_mm`` follows ``mm``'s derivative rules matrix by matrix, and takes one ``bmm`` for a
product only where a probe finds that ``bmm`` reproduces ``mm`` for its shape and layout.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

ALIGNMENT = 64  # bytes: torch's CPU allocator starts every tensor at such a boundary


def _residue(t: torch.Tensor) -> int:
    """Return how many elements past an ALIGNMENT boundary ``t``'s matrices would start in ``train``.

    A stack's matrices are views at one offset into every run's block, the offset at which the
    same view of a run's own tensor starts: its storage offset.
    """
    return int(t.storage_offset()) % (ALIGNMENT // t.element_size())


def _placed(m: torch.Tensor, residue: int) -> torch.Tensor:
    """Return the matrix ``m`` held ``residue`` elements past an ALIGNMENT boundary, copying if need be.

    A copy keeps ``m``'s storage by rows or by columns.
    """
    rows, cols = m.shape
    strides = (1, rows) if m.stride(0) == 1 and m.stride(1) == rows and cols > 1 else (cols, 1)
    if m.stride() == strides and m.data_ptr() % ALIGNMENT == residue * m.element_size():
        return m
    buf = torch.empty(residue + rows * cols, dtype=m.dtype, device=m.device)
    out = buf.as_strided((rows, cols), strides, storage_offset=residue)
    out.copy_(m)
    return out


def _per_run_mm(a: torch.Tensor, b: torch.Tensor, residues: tuple[int, int]) -> torch.Tensor:
    """Return a_i @ b_i for every i of the stacks a (B, r, s) and b (B, s, c): one ``mm`` each.

    BLAS's small and matrix-vector kernels round according to memory alignment, so each factor is
    first copied to where ``train`` would hold it (``residues``, as ``_residue`` gives them).
    """
    pairs = zip(a.unbind(0), b.unbind(0), strict=True)
    return torch.stack([_placed(ai, residues[0]).mm(_placed(bi, residues[1])) for ai, bi in pairs])


def _column_major(t: torch.Tensor) -> bool:
    """Return whether every matrix of the (B, r, c) stack ``t`` is stored column by column."""
    return t.stride(1) == 1 and t.stride(2) == t.shape[1]


def _packed(t: torch.Tensor, column_major: bool) -> torch.Tensor:
    """Return the (B, r, c) stack ``t`` with its matrices back to back from the start of its memory.

    Each matrix keeps its storage by columns or by rows; so laid out, a stack has the alignments
    of a fresh one, which is what ``bmm_matches_mm`` probes.
    """
    if t.storage_offset() == 0 and t.stride(0) == t.shape[1] * t.shape[2]:
        return t
    return _stored(t, column_major)


def _stored(t: torch.Tensor, column_major: bool) -> torch.Tensor:
    """Return a fresh packed copy of the (B, r, c) stack ``t``, its matrices stored as asked."""
    return t.mT.contiguous().mT if column_major else t.contiguous()


@functools.cache
def bmm_matches_mm(
    shape: tuple[int, int, int, int],
    column_major: tuple[bool, bool],
    residues: tuple[int, int],
    dtype: torch.dtype,
    device: str,
    threads: int,
) -> bool:
    """Return whether ``bmm`` of two packed stacks gives one ``mm`` per matrix bit for bit.

    ``shape`` is (matrices, rows, inner, columns) of one product, ``column_major`` says how each
    factor is stored and ``residues`` where ``train`` would hold it (``_residue``). BLAS libraries
    choose kernels by shape, layout and batch size, and round small or matrix-vector products
    according to alignment; the probe multiplies random stacks once per case.
    """
    count, rows, inner, cols = shape
    gen = torch.Generator().manual_seed(0)
    a, b = (
        _stored(torch.randn(count, r, c, generator=gen, dtype=dtype).to(device), col)
        for (r, c), col in zip(((rows, inner), (inner, cols)), column_major, strict=True)
    )
    return torch.equal(torch.bmm(a, b), _per_run_mm(a, b, residues))


def _multiply(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return a_i @ b_i for every i, by one ``bmm`` where it matches ``mm``, else by one ``mm`` each."""
    layout, residues = (_column_major(a), _column_major(b)), (_residue(a), _residue(b))
    a, b = _packed(a, layout[0]), _packed(b, layout[1])
    shape = (a.shape[0], a.shape[1], a.shape[2], b.shape[2])
    if bmm_matches_mm(shape, layout, residues, a.dtype, str(a.device), torch.get_num_threads()):
        return torch.bmm(a, b)
    return _per_run_mm(a, b, residues)


class _MatrixwiseMm(torch.autograd.Function):
    """A batched product whose derivatives take, matrix by matrix, the products ``mm``'s do.

    ``mm``'s backward returns a column-major gradient for a column-major input, computing
    (W G^T)^T rather than G W^T; ``bmm``'s does not. Second derivatives meet such inputs, so this
    backward follows ``mm``'s rule, and being made of this product itself, so do its own.
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        ctx.column_major = (_column_major(a), _column_major(b))
        return _multiply(a, b)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        a, b = ctx.saved_tensors
        a_col, b_col = ctx.column_major
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = matrixwise_mm(b, grad.mT).mT if a_col else matrixwise_mm(grad, b.mT)
        if ctx.needs_input_grad[1]:
            grad_b = matrixwise_mm(grad.mT, a).mT if b_col else matrixwise_mm(a.mT, grad)
        return grad_a, grad_b


def matrixwise_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return a_i @ b_i for the stacks a (B, r, s) and b (B, s, c), with ``mm``'s bits to second order."""
    out = _MatrixwiseMm.apply(a, b)  # type: ignore[no-untyped-call]  # torch leaves Function.apply untyped
    assert isinstance(out, torch.Tensor)
    return out


def project(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Return h W per run for h (B, N, n, d) and w (B, d, k), with the bits of ``forward``'s ``h_b @ w_b``.

    ``h_b @ w_b`` folds the tokens into one (N n, d) @ (d, k) ``mm``; here every run's fold is one
    matrix of a stack.
    """
    b, big_n, n, d = h.shape
    return matrixwise_mm(h.reshape(b, big_n * n, d), w).view(b, big_n, n, w.shape[-1])
