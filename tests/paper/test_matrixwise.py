"""Matrixwise products give one ``mm`` per matrix, bit for bit, however their factors are laid out."""

from __future__ import annotations

import pytest
import torch

from qin2025.engine import matrixwise
from qin2025.engine.matrixwise import ALIGNMENT, matrixwise_mm


def _stack(count: int, rows: int, cols: int, *, column_major: bool = False, offset: int = 0) -> torch.Tensor:
    """Return a random (count, rows, cols) float64 stack, its matrices by columns if asked, ``offset`` elements in."""
    gen = torch.Generator().manual_seed(rows * 100 + cols)
    values = torch.randn(count, rows, cols, generator=gen, dtype=torch.float64)
    shape, stride = (count, rows, cols), ((rows * cols, 1, rows) if column_major else (rows * cols, cols, 1))
    out = torch.empty(offset + count * rows * cols, dtype=torch.float64).as_strided(shape, stride, offset)
    return out.copy_(values)


def _own_memory(m: torch.Tensor) -> torch.Tensor:
    """Return the matrix ``m`` copied to where ``train`` holds a fresh one: its own aligned memory, by rows."""
    return m.contiguous().clone()


@pytest.mark.parametrize("rows, inner, cols", [(6, 8, 4), (48, 32, 16), (160, 32, 1), (1, 8, 8)])
@pytest.mark.parametrize("a_col, b_col", [(False, False), (True, False), (False, True), (True, True)])
def test_a_product_is_one_mm_per_matrix_bit_for_bit(rows: int, inner: int, cols: int, a_col: bool, b_col: bool) -> None:
    a, b = _stack(5, rows, inner, column_major=a_col), _stack(5, inner, cols, column_major=b_col)
    got = matrixwise_mm(a, b)
    for i in range(5):
        placed = [m.clone() for m in (a[i], b[i])]  # each in its own fresh memory, strides kept
        assert torch.equal(got[i], placed[0].mm(placed[1]))


def test_a_stack_is_placed_each_matrix_at_its_residue_and_left_alone_when_already_there() -> None:
    t = _stack(3, 5, 3, offset=1)  # matrices 15 elements apart: only one can start at a given residue
    placed = matrixwise._placed_stack(t, 2)
    assert torch.equal(placed, t)
    assert all(m.data_ptr() % ALIGNMENT == 2 * t.element_size() for m in placed.unbind(0))
    assert placed.stride()[1:] == (3, 1)
    assert matrixwise._placed_stack(placed, 2) is placed


def test_a_column_major_stack_is_placed_by_columns() -> None:
    placed = matrixwise._placed_stack(_stack(3, 5, 3, column_major=True, offset=3), 0)
    assert placed.stride()[1:] == (1, 5)
    assert all(m.data_ptr() % ALIGNMENT == 0 for m in placed.unbind(0))


def test_a_layout_is_planned_once_and_the_plan_reused() -> None:
    a, b = _stack(4, 9, 5, offset=2)[:, 1:8], _stack(4, 5, 3)  # a's matrices start 7 elements into 45-element blocks
    plan = matrixwise._plan(a, b)
    assert matrixwise._plan(_stack(4, 9, 5, offset=2)[:, 1:8], _stack(4, 5, 3)) is plan
    assert plan[:4] == ((False, False), (7, 0), True, False)  # a is packed afresh, b used as it is


def test_gradients_taken_without_a_graph_have_the_bits_of_those_taken_with_one() -> None:
    a = _stack(4, 6, 8, column_major=True).requires_grad_(True)
    b = _stack(4, 8, 3).requires_grad_(True)
    weight = _stack(4, 6, 3)
    plain = torch.autograd.grad((matrixwise_mm(a, b) * weight).sum(), (a, b))
    graphed = torch.autograd.grad((matrixwise_mm(a, b) * weight).sum(), (a, b), create_graph=True)
    for p, g in zip(plain, graphed, strict=True):
        assert torch.equal(p, g.detach())
        assert p.stride() == g.stride()


def test_a_stack_product_is_a_run_by_run_product_of_matrices_in_their_own_memory() -> None:
    a, b = _stack(3, 6, 8, offset=5), _stack(3, 8, 1)
    residues = (matrixwise._residue(a), matrixwise._residue(b))
    got = matrixwise._per_run_mm(a, b, residues)
    assert residues == (5, 0)
    for i in range(3):  # a run's own a starts 5 elements in: hold it there, as train's view would be
        own = torch.empty(5 + 48, dtype=torch.float64)[5:].view(6, 8).copy_(a[i])
        assert torch.equal(got[i], own.mm(_own_memory(b[i])))


def _value_and_grads(product: matrixwise.Project, h: torch.Tensor, w: torch.Tensor) -> list[torch.Tensor]:
    """Return product(h, w) and the first derivatives of a loss of it with respect to h and w."""
    h, w = h.detach().requires_grad_(True), w.detach().requires_grad_(True)
    out = product(h, w)
    loss = (torch.relu(out) * out).sum()
    return [out.detach(), *torch.autograd.grad(loss, [h, w])]


@pytest.mark.parametrize("count, tokens, d, k", [(5, 12, 8, 4), (3, 40, 16, 16), (4, 10, 8, 1), (2, 3, 2, 2)])
@pytest.mark.parametrize("w_col", [False, True])
def test_a_projection_differentiated_once_has_the_bits_of_project(
    count: int, tokens: int, d: int, k: int, w_col: bool
) -> None:
    h = _stack(count, 2 * tokens, d).view(count, 2, tokens, d)
    w = _stack(count, d, k, column_major=w_col)
    once, full = _value_and_grads(matrixwise.project_once, h, w), _value_and_grads(matrixwise.project, h, w)
    assert all(torch.equal(x, y) for x, y in zip(once, full, strict=True))


def test_torchs_own_backward_is_taken_only_for_row_major_packed_stacks() -> None:
    a = _stack(3, 40, 16)
    assert not matrixwise._native_matches(a, _stack(3, 16, 16, column_major=True))
    assert not matrixwise._native_matches(_stack(3, 40, 16, offset=1), _stack(3, 16, 16))
    assert not matrixwise._native_matches(a.mT.contiguous().mT, _stack(3, 16, 16))


@pytest.mark.parametrize("count, tokens, d, k", [(5, 12, 8, 4), (3, 40, 16, 16), (2, 3, 2, 2)])
def test_a_projection_whose_gradient_arrives_transposed_has_the_bits_of_project(
    count: int, tokens: int, d: int, k: int
) -> None:
    """As the K projection's at N = 1: its output is used transposed, so its gradient arrives column-major."""

    def through_transpose(product: matrixwise.Project, h: torch.Tensor, w: torch.Tensor) -> list[torch.Tensor]:
        h, w = h.detach().requires_grad_(True), w.detach().requires_grad_(True)
        out = product(h, w).view(count, tokens, k).transpose(-1, -2)  # (B, k, tokens), as K^T
        loss = (torch.relu(out) * out).sum()
        return [out.detach(), *torch.autograd.grad(loss, [h, w])]

    h = _stack(count, tokens, d).view(count, 1, tokens, d)
    w = _stack(count, d, k)
    once, full = through_transpose(matrixwise.project_once, h, w), through_transpose(matrixwise.project, h, w)
    assert all(torch.equal(x, y) for x, y in zip(once, full, strict=True))
