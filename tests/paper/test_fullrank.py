"""C3's instrument: a grid of weight draws, each measured at every beta on the same inputs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from claimcheck.record import ClaimRecorder
from qin2025.decisions import DEFICIT, FLOOR, floor_decision, full_rank_decision
from qin2025.fullrank import (
    INITS,
    Grid,
    adversarial,
    low_rank_outputs,
    max_deficit,
    note_grid,
    sweep,
)
from qin2025.spectral import rank_deficit
from qin2025.usermodel import PAPER

GRID = Grid(shapes=((4, 16),), d_qks=(1, 64), betas=(0.5, 1.0), samples=3)


def test_a_sweep_measures_every_shape_init_d_qk_and_beta_on_every_input() -> None:
    points = sweep(PAPER, 7, GRID, INITS)
    assert [(p.init, p.d_qk, p.beta) for p in points] == [
        (init, d_qk, beta) for init in INITS for d_qk in (1, 64) for beta in (0.5, 1.0)
    ]
    assert all(p.floor_z.shape == (3,) and p.deficit.shape == (3,) for p in points)
    assert max_deficit(points) == 0  # the residual keeps Z at full rank here, with a floor
    assert full_rank_decision([p.z for p in points])[DEFICIT] == 0
    assert floor_decision([p.z for p in points], [p.x for p in points])[FLOOR] > 0.1


def test_a_point_does_not_depend_on_what_else_the_grid_holds() -> None:
    alone = sweep(PAPER, 7, replace(GRID, d_qks=(64,), betas=(1.0,)), INITS[:1])
    within = [p for p in sweep(PAPER, 7, GRID, INITS[:1]) if (p.d_qk, p.beta) == (64, 1.0)]
    assert np.array_equal(alone[0].floor_z, within[0].floor_z)


def test_rank_deficient_inputs_and_adversarial_value_weights_make_z_rank_deficient() -> None:
    zs = low_rank_outputs(PAPER, 7, GRID, INITS, rank_divisor=4)  # rank(X) = 1 of n = 4
    deficits = [int(v) for z in zs for v in rank_deficit(z)]
    assert len(deficits) == 2 * 2 * 2 * 3 and min(deficits) >= 2  # rank(Z) <= 2 rank(X)
    assert int(rank_deficit(adversarial(7, 4, 16, 1.0, 3).z).min()) == 1  # Z = beta (I - 11^T/n) X: rank n - 1


def test_the_grid_note_counts_the_draws_that_held_the_floor() -> None:
    rec = ClaimRecorder("C3", seed=7)
    note_grid(rec, sweep(PAPER, 7, GRID, INITS), floor=0.1)
    assert rec.notes[0].startswith("seed 7: floor held in 24/24 draws; min sigma_min(Z)/sigma_min(X) ")
