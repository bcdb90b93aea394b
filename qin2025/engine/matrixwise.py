"""Multiply stacks of matrices run by run, with the bits one ``mm`` per run would give.

The one-run engine multiplies activations by a weight with one ``mm`` per projection; the batched
engine stacks B runs and wants one ``bmm`` instead. The two agree bit for bit only if every product
of the forward pass, the backward pass and the Hessian-vector products sums in the same order.
``matrixwise_mm`` follows ``mm``'s derivative rules matrix by matrix, and takes one ``bmm`` for a
product only where a probe finds that ``bmm`` reproduces ``mm`` for its shape and layout.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

ALIGNMENT = 64  # bytes: torch's CPU allocator starts every tensor at such a boundary


def _residue(t: torch.Tensor) -> int:
    """Return how many elements past an ALIGNMENT boundary ``t``'s matrices would start in ``train``.

    A stack's matrices are views at one offset into every run's block, the offset at which the
    same view of a run's own tensor starts: its storage offset.
    """
    return int(t.storage_offset()) % (ALIGNMENT // t.element_size())


def _per_run_mm(a: torch.Tensor, b: torch.Tensor, residues: tuple[int, int]) -> torch.Tensor:
    """Return a_i @ b_i for every i of the stacks a (B, r, s) and b (B, s, c): one ``mm`` each.

    BLAS's small and matrix-vector kernels round according to memory alignment, so each factor is
    first held where ``train`` would hold it (``residues``, as ``_residue`` gives them): every
    matrix of the stack ``_placed_stack`` returns starts there.
    """
    pairs = zip(_placed_stack(a, residues[0]).unbind(0), _placed_stack(b, residues[1]).unbind(0), strict=True)
    return torch.stack([ai.mm(bi) for ai, bi in pairs])


def _placed_stack(t: torch.Tensor, residue: int) -> torch.Tensor:
    """Return the (B, r, c) stack ``t`` with every matrix ``residue`` elements past an ALIGNMENT boundary.

    Each matrix is stored by columns if ``t``'s are (and have more than one), else by rows. The
    stack is used as it is where it already is so, else copied, once, into one buffer whose
    matrices lie a whole number of ALIGNMENT blocks apart.
    """
    count, rows, cols = t.shape
    stride = t.stride()
    strides = (1, rows) if stride[1] == 1 and stride[2] == rows and cols > 1 else (cols, 1)
    size = t.element_size()
    aligned = (t.data_ptr() - residue * size) % ALIGNMENT == 0 and (stride[0] * size) % ALIGNMENT == 0
    if stride[1:] == strides and aligned:
        return t
    step = -(-rows * cols * size // ALIGNMENT) * ALIGNMENT // size  # elements from one matrix to the next
    buf = torch.empty(residue + count * step, dtype=t.dtype, device=t.device)
    out = buf.as_strided((count, rows, cols), (step, *strides), storage_offset=residue)
    out.copy_(t)
    return out


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
    strides: tuple[tuple[int, ...], tuple[int, ...]],
    residues: tuple[int, int],
    dtype: torch.dtype,
    device: str,
    threads: int,
) -> bool:
    """Return whether ``bmm`` of two packed stacks gives one ``mm`` per matrix bit for bit.

    ``shape`` is (matrices, rows, inner, columns) of one product, ``strides`` are the packed
    factors' own strides (a size-1 axis's stride included: BLAS is handed it as a leading
    dimension) and ``residues`` where ``train`` would hold them (``_residue``). BLAS libraries
    choose kernels by shape, layout and batch size, and round small or matrix-vector products
    according to alignment and leading dimension; the probe multiplies random stacks laid out
    exactly as the factors are, once per case. (A probe of normalised strides approved ``bmm``
    for a (160, 32) x (32, 1) column-major product whose second factor had stride (32, 1, 32),
    where MKL on an AMD EPYC rounds ``bmm`` and ``mm`` differently.)
    """
    count, rows, inner, cols = shape
    gen = torch.Generator().manual_seed(0)
    a, b = (
        torch.empty_strided((count, r, c), stride, dtype=dtype, device=device).copy_(
            torch.randn(count, r, c, generator=gen, dtype=dtype)
        )
        for (r, c), stride in zip(((rows, inner), (inner, cols)), strides, strict=True)
    )
    return torch.equal(torch.bmm(a, b), _per_run_mm(a, b, residues))


Project = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Plan = tuple[tuple[bool, bool], tuple[int, int], bool, bool, bool]
_PLANS: dict[tuple[object, ...], Plan] = {}


def _plan(a: torch.Tensor, b: torch.Tensor) -> Plan:
    """Return how ``_multiply`` takes a_i @ b_i: (column_major, residues, pack a, pack b, by one ``bmm``).

    The answer depends only on the factors' shapes, strides and storage offsets, their dtype and
    device, and torch's thread count, so it is worked out once per such key and remembered.
    """
    key = _key(a, b)
    plan = _PLANS.get(key)
    if plan is None:
        layout, residues = (_column_major(a), _column_major(b)), (_residue(a), _residue(b))
        pa, pb = _packed(a, layout[0]), _packed(b, layout[1])
        shape = (a.shape[0], a.shape[1], a.shape[2], b.shape[2])
        strides = (tuple(pa.stride()), tuple(pb.stride()))
        use_bmm = bmm_matches_mm(shape, strides, residues, a.dtype, str(a.device), key[-1])
        plan = _PLANS[key] = (layout, residues, pa is not a, pb is not b, use_bmm)
    return plan


def _key(a: torch.Tensor, b: torch.Tensor) -> tuple[object, ...]:
    """Return what a plan for a_i @ b_i depends on: shapes, strides, storage offsets, dtype, device, threads."""
    threads = torch.get_num_threads()
    return (
        a.shape,
        a.stride(),
        a.storage_offset(),
        b.shape,
        b.stride(),
        b.storage_offset(),
        a.dtype,
        a.device,
        threads,
    )


def _multiply(a: torch.Tensor, b: torch.Tensor, plan: Plan) -> torch.Tensor:
    """Return a_i @ b_i for every i, by one ``bmm`` where it matches ``mm``, else by one ``mm`` each."""
    layout, residues, pack_a, pack_b, use_bmm = plan
    if pack_a:
        a = _stored(a, layout[0])
    if pack_b:
        b = _stored(b, layout[1])
    return torch.bmm(a, b) if use_bmm else _per_run_mm(a, b, residues)


class _MatrixwiseMm(torch.autograd.Function):
    """A batched product whose derivatives take, matrix by matrix, the products ``mm``'s do.

    ``mm``'s backward returns a column-major gradient for a column-major input, computing
    (W G^T)^T rather than G W^T; ``bmm``'s does not. Second derivatives meet such inputs, so this
    backward follows ``mm``'s rule, and being made of this product itself, so do its own.
    """

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        plan = _plan(a, b)
        ctx.save_for_backward(a, b)
        ctx.column_major = plan[0]
        return _multiply(a, b, plan)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        a, b = ctx.saved_tensors
        a_col, b_col = ctx.column_major
        mm = matrixwise_mm if torch.is_grad_enabled() else _product  # no graph to record: skip the Function
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = mm(b, grad.mT).mT if a_col else mm(grad, b.mT)
        if ctx.needs_input_grad[1]:
            grad_b = mm(grad.mT, a).mT if b_col else mm(a.mT, grad)
        return grad_a, grad_b


def matrixwise_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return a_i @ b_i for the stacks a (B, r, s) and b (B, s, c), with ``mm``'s bits to second order."""
    out = _MatrixwiseMm.apply(a, b)  # type: ignore[no-untyped-call]  # torch leaves Function.apply untyped
    assert isinstance(out, torch.Tensor)
    return out


def _product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return a_i @ b_i as ``matrixwise_mm`` does, recording no graph: for use where grad mode is off."""
    return _multiply(a, b, _plan(a, b))


def project(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Return h W per run for h (B, N, n, d) and w (B, d, k), with the bits of ``forward``'s ``h_b @ w_b``.

    ``h_b @ w_b`` folds the tokens into one (N n, d) @ (d, k) ``mm``; here every run's fold is one
    matrix of a stack.
    """
    b, big_n, n, d = h.shape
    return matrixwise_mm(h.reshape(b, big_n * n, d), w).view(b, big_n, n, w.shape[-1])


_NATIVE: dict[tuple[object, ...], bool] = {}


def _native_matches(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Return whether ``torch.bmm``'s own first derivatives take, for a @ b, the products ``matrixwise_mm``'s do.

    They do when a and b are row-major packed stacks that ``bmm`` multiplies as ``mm`` would, and
    ``bmm`` also multiplies grad @ b^T and a^T @ grad as ``mm`` would, unpacked, for the two
    layouts a gradient reaches it in: fresh (B, r, c), and the transpose of a fresh (B, c, r) that
    a view's backward hands on (the K projection's, at N = 1). Then both backward rules call
    ``bmm`` on the same factors. Remembered per ``_key``.
    """
    key = _key(a, b)
    native = _NATIVE.get(key)
    if native is None:
        count, rows, cols = a.shape[0], a.shape[1], b.shape[2]
        fresh = torch.empty(count, rows, cols, dtype=a.dtype, device=a.device)
        grads = (fresh, torch.empty(count, cols, rows, dtype=a.dtype, device=a.device).mT)
        forward = _plan(a, b)
        backward = [p for g in grads for p in (_plan(g, b.mT), _plan(a.mT, g))]
        native = forward[0] == (False, False) and all(p[2:] == (False, False, True) for p in (forward, *backward))
        _NATIVE[key] = native
    return native


def project_once(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Return ``project(h, w)`` by a product whose first derivatives have ``project``'s bits.

    For graphs differentiated once (no ``create_graph``): where ``_native_matches`` holds, this
    is ``torch.bmm`` with torch's own backward, which skips ``autograd.Function``'s Python cost;
    elsewhere it is ``project``. Its second derivatives need not follow ``mm``'s rule.
    """
    b, big_n, n, d = h.shape
    a = h.reshape(b, big_n * n, d)
    out = torch.bmm(a, w) if _native_matches(a, w) else matrixwise_mm(a, w)
    return out.view(b, big_n, n, w.shape[-1])
