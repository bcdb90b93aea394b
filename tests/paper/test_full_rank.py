"""C3's instrument: a grid of weight draws, each measured at every beta on the same inputs, as drawn and collapsed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from claimcheck.decide.record import ClaimRecorder
from claimcheck.store.cache import ResultCache
from qin2025.c3.full_rank import (
    COLLAPSED,
    EPS,
    FLOOR,
    INITS,
    Grid,
    adversarial,
    draws,
    floor_decision,
    inputs,
    max_deficit,
    note_grid,
    sweep,
)
from qin2025.engine.model import ModelConfig
from qin2025.engine.spectral import attention_of, floor_ratio, rank_deficit
from qin2025.engine.trainer import Trainer
from qin2025.engine.usermodel import PAPER

GRID = Grid(shapes=((4, 16),), d_qks=(1, 64), betas=(0.5, 1.0), samples=3)
UNCACHED = Trainer(ResultCache(None))


def test_a_sweep_measures_every_shape_init_d_qk_and_beta_on_every_input() -> None:
    points = sweep(UNCACHED, 7, GRID, INITS)
    assert [(p.init, p.d_qk, p.beta) for p in points] == [
        (init, d_qk, beta) for init in INITS for d_qk in (1, 64) for beta in (0.5, 1.0)
    ]
    assert all(p.floor_z.shape == p.floor_collapsed.shape == p.deficit.shape == (3,) for p in points)
    assert max_deficit(points) == 0  # the residual keeps Z at full rank here, with a floor
    got = floor_decision([p.floor_z for p in points], [p.floor_collapsed for p in points])
    assert got[FLOOR] > 0.1 and got[COLLAPSED] > 0.1


def test_a_sweep_is_its_draws_ratios_and_a_warm_read_gives_the_same_bits(tmp_path: Path) -> None:
    raw = [d.point() for d in draws(PAPER, 7, GRID, INITS)]
    cache = ResultCache(tmp_path)
    cold, warm = Trainer(cache), Trainer(cache)
    first, second = sweep(cold, 7, GRID, INITS), sweep(warm, 7, GRID, INITS)
    assert (cold.counts.computed, warm.counts.computed, warm.counts.cached) == (1, 0, 1)
    for a, b, c in zip(raw, first, second, strict=True):
        assert (
            (a.init, a.n, a.d, a.d_qk, a.beta)
            == (b.init, b.n, b.d, b.d_qk, b.beta)
            == (c.init, c.n, c.d, c.d_qk, c.beta)
        )
        for k in ("floor_z", "floor_collapsed", "floor_attn", "deficit"):
            assert np.array_equal(getattr(a, k), getattr(b, k)) and np.array_equal(getattr(b, k), getattr(c, k))
    assert sweep(warm, 8, GRID, INITS)[0].floor_z.tolist() != first[0].floor_z.tolist()  # the seed is in the key


def test_a_point_does_not_depend_on_what_else_the_grid_holds() -> None:
    alone = draws(PAPER, 7, replace(GRID, d_qks=(64,), betas=(1.0,)), INITS[:1])
    within = [p for p in draws(PAPER, 7, GRID, INITS[:1]) if (p.d_qk, p.beta) == (64, 1.0)]
    assert np.array_equal(alone[0].z, within[0].z)
    assert np.array_equal(alone[0].z_collapsed, within[0].z_collapsed)


def test_the_collapse_is_the_draw_with_w_q_zero_whatever_d_qk_and_init() -> None:
    for d_qk, init in ((1, "normal"), (64, "xavier")):
        point = draws(PAPER, 7, replace(GRID, d_qks=(d_qk,), betas=(1.0,)), (init,))[0]
        cfg = ModelConfig(d=16, d_qk=d_qk, qk_init=init)
        params = PAPER.init_params(cfg, torch.Generator().manual_seed(_w_seed(d_qk, init)), torch.float64)
        params["0.W_Q"] = torch.zeros_like(params["0.W_Q"])
        uniform = attention_of(params, inputs(7, 4, 16, 3), cfg)
        assert np.allclose(uniform.s, 1 / 4, rtol=0, atol=1e-15)  # S = 11^T/n exactly
        assert np.allclose(point.z_collapsed, uniform.z, rtol=0, atol=1e-9 * float(np.abs(uniform.z).max()))


def _w_seed(d_qk: int, init: str) -> int:
    from qin2025.engine.spectral import derive_seed

    return derive_seed(7, 4, 16, d_qk, INITS.index(init))  # as sweep seeds a draw


def test_without_the_residual_the_collapsed_z_has_rank_one() -> None:
    bare = draws(PAPER, 7, replace(GRID, betas=(0.0,)), INITS)
    assert all(int(rank_deficit(p.z_collapsed).min()) == 3 for p in bare)  # n = 4: rank 1
    assert all(float(p.point().floor_collapsed.max()) < 1e-9 for p in bare)
    assert EPS == 2.0**-26


def test_adversarial_value_weights_make_z_rank_deficient_as_drawn_and_collapsed() -> None:
    point = adversarial(7, 4, 16, 1.0, 3)  # Z = beta (I - 11^T/n) X: rank n - 1
    assert int(rank_deficit(point.z).min()) == 1 and int(rank_deficit(point.z_collapsed).min()) == 1
    assert float(floor_ratio(point.z, point.x).max()) < 1e-12
    assert float(point.point().floor_z.max()) < 1e-12 and float(point.point().floor_collapsed.max()) < 1e-12


def test_the_grid_note_counts_the_draws_that_held_the_floor_as_drawn_and_collapsed() -> None:
    rec = ClaimRecorder("C3", seed=7)
    note_grid(rec, 7, sweep(UNCACHED, 7, GRID, INITS), floor=0.1)
    assert rec.notes[0].startswith("seed 7: floor held in 24/24 draws, and in 24/24 collapsed; min sigma_min(Z)")
