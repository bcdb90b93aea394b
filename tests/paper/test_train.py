"""The training engine: stability bound, step-size rules, divergence, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from claimcheck.errors import ConfigError
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig, init_params, loss_fn
from qin2025.engine.train import Lanczos, TrainConfig, hessian_top_eigenvalue, train

CFG = ModelConfig(d=4, d_qk=2, d_out=1)


def test_power_iteration_finds_the_top_hessian_eigenvalue() -> None:
    data = make_synthetic(2, 3, 4, 1, seed=0)
    params = init_params(CFG, torch.Generator().manual_seed(0))
    names = list(params)
    sizes = [p.numel() for p in params.values()]

    def flat_loss(theta: torch.Tensor) -> torch.Tensor:
        parts = torch.split(theta, sizes)
        ps = {n: t.reshape(params[n].shape) for n, t in zip(names, parts, strict=True)}
        return loss_fn(ps, data.x, data.y, CFG)

    theta = torch.cat([p.reshape(-1) for p in params.values()])
    hess = torch.autograd.functional.hessian(flat_loss, theta)
    exact = float(torch.linalg.eigvalsh(hess).max())
    measured = hessian_top_eigenvalue(params, data, CFG, iters=2000, tol=1e-12)
    assert measured == pytest.approx(exact, rel=1e-6)


def test_lanczos_keeps_its_basis_orthonormal_past_its_first_rows_and_through_a_restart() -> None:
    gen = torch.Generator().manual_seed(0)
    spectrum = torch.linspace(0.0, 1.0, 200, dtype=torch.float64)
    spectrum[-1] = 1.01
    basis, _ = torch.linalg.qr(torch.randn(200, 200, generator=gen, dtype=torch.float64))
    h = basis @ torch.diag(spectrum) @ basis.T  # a narrow gap at the top: many steps to converge
    state = Lanczos(200, torch.Generator().manual_seed(1), h, tol=0.0)
    steps = 0
    while not state.done and steps < Lanczos.RESTART + 10:
        if steps < Lanczos.RESTART:
            q = state._rows[: state._count]
            assert torch.allclose(q @ q.T, torch.eye(len(q), dtype=torch.float64), atol=1e-12)
        state.update(h @ state.v)
        steps += 1
    assert steps == Lanczos.RESTART + 10  # ran past the first rows held and through one restart
    assert state.value == pytest.approx(1.01, rel=1e-6)


def test_lr_fraction_sets_mu_relative_to_the_bound() -> None:
    data = make_synthetic(2, 3, 4, 1, seed=0)
    traj = train(CFG, TrainConfig(steps=3, lr_fraction=0.25), data, seed=0)
    assert traj.lr == pytest.approx(0.25 * 2 / traj.lambda_max)
    assert traj.lr_over_bound == pytest.approx(0.25)
    assert traj.lr_rule == "fraction of 2/lambda_max"


def test_absolute_lr_is_used_as_given() -> None:
    data = make_synthetic(2, 3, 4, 1, seed=0)
    traj = train(CFG, TrainConfig(steps=3, lr=1e-3, lr_fraction=None), data, seed=0)
    assert traj.lr == 1e-3 and traj.lr_rule == "absolute"
    assert len(traj.loss) == 4


def test_same_seed_same_trajectory_other_seed_other_trajectory() -> None:
    data = make_synthetic(2, 3, 4, 1, seed=0)
    a = train(CFG, TrainConfig(steps=20), data, seed=5)
    b = train(CFG, TrainConfig(steps=20), data, seed=5)
    c = train(CFG, TrainConfig(steps=20), data, seed=6)
    np.testing.assert_array_equal(a.loss, b.loss)
    assert not np.array_equal(a.loss, c.loss)


def test_divergence_stops_the_run_and_records_the_step() -> None:
    data = make_synthetic(2, 3, 4, 1, seed=0)
    traj = train(CFG, TrainConfig(steps=500, lr_fraction=50.0), data, seed=0)
    assert traj.diverged_at is not None
    assert len(traj.loss) == traj.diverged_at + 1
    assert not np.isfinite(traj.loss[-1])


def test_sigma_of_z_is_recorded_at_the_chosen_steps() -> None:
    data = make_synthetic(2, 3, 8, 1, seed=0)
    traj = train(ModelConfig(d=8, d_qk=2, n_layers=2), TrainConfig(steps=10, sigma_every=5), data, seed=0)
    assert traj.sigma_steps.tolist() == [0, 5, 10]
    assert traj.sigma_min.shape == (3, 2)
    assert bool(np.all(traj.sigma_min <= traj.sigma_max))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"lr": 0.1, "lr_fraction": 0.5}, "exactly one"),
        ({"lr": None, "lr_fraction": None}, "exactly one"),
        ({"lr_fraction": -1.0}, "lr_fraction"),
        ({"steps": 0}, "steps"),
        ({"dtype": "float16"}, "dtype"),
    ],
)
def test_bad_train_config_names_the_field(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        TrainConfig(**kwargs)  # type: ignore[arg-type]
